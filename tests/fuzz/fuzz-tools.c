/* Tool argument validation: sr_mcp_tool_call (src/mcp/tools.c) with
 * fuzzed arguments, and sr_code_validate (src/sandbox/code.c) with raw
 * requests.  The first input byte picks the target:
 *
 *   0 run_code, 1 list_supported_languages, 2 get_execution_history,
 *   3 a tool name that does not exist: the rest is the arguments' JSON;
 *   4 to 7, sr_code_validate: the rest is "LANGUAGE\0CODE", the code's first
 *     two bytes also giving the timeout in tenths of a second.
 *
 * Bit 3 of the first byte turns the history off (a service whose
 * history_db is empty), as when it cannot open.
 * run_code goes to the stand-in of fake-run.h.  Whatever the arguments,
 * the result is a CallToolResult: content with one text block holding
 * JSON, isError, and structuredContent exactly when it is no error.  */
#include "config.h"

#include <unistd.h>

#include <cjson/cJSON.h>

#include "mcp/tools.h"
#include "tests/fuzz/fake-run.h"
#include "tests/fuzz/fuzz.h"

#define RENEW_EVERY 512

static struct sr_config cfg, cfg_off;
static char *dir;
static struct sr_service *service, *service_off;
static unsigned int inputs;

static void
history_renew (void)
{
  _cleanup_free_ char *wal = sr_xasprintf ("%s-wal", cfg.history_db);
  _cleanup_free_ char *shm = sr_xasprintf ("%s-shm", cfg.history_db);
  sr_error_t err = NULL;

  sr_service_close (service);
  service = NULL;
  unlink (cfg.history_db);
  unlink (wal);
  unlink (shm);
  if (sr_service_open (&cfg, SR_SERVICE_ONE_SHOT, "mcp", &service, &err) < 0)
    fuzz_die ("sr_service_open", &err);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  sr_error_t err = NULL;

  dir = fuzz_tmpdir ("tools");
  fuzz_config (&cfg, dir);
  fuzz_config (&cfg_off, dir);
  if (sr_config_set (&cfg_off, "history_db", "", SR_ORIGIN_FLAG, "fuzz", &err) < 0
      || sr_service_open (&cfg_off, SR_SERVICE_ONE_SHOT, "mcp", &service_off, &err) < 0)
    fuzz_die ("the service without history", &err);
  history_renew ();
  return 0;
}

static void
on_progress (const char *stage, uint64_t output_bytes, const char *stream, const char *chunk,
             size_t len, void *userdata)
{
  fuzz_check (stage && *stage, "progress without a stage");
  fuzz_check ((stream == NULL) == (chunk == NULL), "a chunk without its stream");
}

/* A CallToolResult as the registry builds it: text for the model first
 * (then any other blocks), structuredContent on a result, and on a
 * refusal the JSON of its error, with a code, as the only block.  */
static void
check_result (const cJSON *r)
{
  const cJSON *content = cJSON_GetObjectItemCaseSensitive (r, "content");
  const cJSON *is_error = cJSON_GetObjectItemCaseSensitive (r, "isError");
  const cJSON *structured = cJSON_GetObjectItemCaseSensitive (r, "structuredContent");
  const cJSON *block = cJSON_GetArrayItem (content, 0);
  const cJSON *text = cJSON_GetObjectItemCaseSensitive (block, "text");
  cJSON *parsed;

  fuzz_check (cJSON_IsObject (r), "the result is not an object");
  fuzz_check (cJSON_IsArray (content) && cJSON_GetArraySize (content) >= 1,
              "content has no block");
  fuzz_check (cJSON_IsBool (is_error), "isError is not a boolean");
  fuzz_check (cJSON_IsTrue (is_error) == (structured == NULL),
              "structuredContent present on an error, or missing on a result");
  fuzz_check (cJSON_IsString (text), "the first block has no text");
  if (!cJSON_IsTrue (is_error))
    return;
  fuzz_check (cJSON_GetArraySize (content) == 1, "a refusal with more than one block");
  parsed = cJSON_Parse (text->valuestring);
  fuzz_check (cJSON_IsObject (parsed), "a refusal's text is not JSON: %s", text->valuestring);
  {
    const cJSON *e = cJSON_GetObjectItemCaseSensitive (parsed, "error");
    const cJSON *code = cJSON_GetObjectItemCaseSensitive (e, "code");

    fuzz_check (cJSON_IsString (code) && *code->valuestring, "an error without a code: %s",
                text->valuestring);
  }
  cJSON_Delete (parsed);
}

static void
fuzz_validate (const uint8_t *data, size_t size)
{
  _cleanup_free_ char *copy = sr_xmalloc (size + 1);
  struct sr_code_request req = { .cancel_fd = -1 };
  const struct sr_language *l = NULL;
  sr_error_t err = NULL;
  size_t lang_len;
  int r;

  memcpy (copy, data, size);
  copy[size] = '\0';
  lang_len = strlen (copy);
  req.language = copy;
  if (lang_len < size)
    {
      req.code = copy + lang_len + 1;
      req.code_len = size - lang_len - 1;
      if (req.code_len >= 2)
        req.timeout_ms = 100u * (((unsigned) (uint8_t) req.code[0] << 8) | (uint8_t) req.code[1]);
    }
  r = sr_code_validate (&cfg, &req, &l, &err);
  if (r == 0)
    {
      fuzz_check (err == NULL && l != NULL, "a valid request with an error");
      fuzz_check (strcmp (l->name, req.language) == 0, "validated as another language");
      fuzz_check (req.code_len > 0 && req.code_len <= cfg.max_code_size
                      && req.timeout_ms <= cfg.max_timeout_ms,
                  "a request over the limits passed");
    }
  else
    {
      fuzz_check (r == -1 && err && err->errnum == EINVAL && sr_error_code (err),
                  "a refusal without reason");
      sr_error_free (&err);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const char *const names[] = {
    "run_code", "list_supported_languages", "get_execution_history", "no_such_tool",
  };
  struct sr_mcp_tool_ctx ctx = {
    .cfg = &cfg, .service = service,
    .cancel_fd = -1, .on_progress = on_progress,
  };
  cJSON *args = NULL, *result;
  bool cancelled = true;
  unsigned int sel;

  if (size == 0)
    return 0;
  sel = data[0] & 7;
  if (data[0] & 8)
    ctx.service = service_off;
  data++, size--;
  if (sel >= 4)
    {
      fuzz_validate (data, size);
      return 0;
    }
  if (++inputs % RENEW_EVERY == 0)
    {
      history_renew ();
      ctx.service = data[-1] & 8 ? service_off : service;
    }
  if (size > 0)
    {
      args = cJSON_ParseWithLength ((const char *) data, size);
      if (args == NULL)
        return 0;
    }
  result = sr_mcp_tool_call (&ctx, names[sel], args, &cancelled);
  fuzz_check (result != NULL, "a tool call returned NULL");
  check_result (result);
  fuzz_check (!cancelled || sel == 0, "a call that runs nothing was cancelled");
  cJSON_Delete (result);
  cJSON_Delete (args);
  return 0;
}
