#include "config.h"

#include "mcp/tools.h"
#include "mcp/tools-internal.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "common/json.h"
#include "common/utf8.h"
#include "common/util.h"
#include "mcp/session-tools.h"
#include "sandbox/service.h"

/* The tool definitions, as tools/list sends them.  */
static const char tool_definitions[] =
  "["
  "{\"name\":\"run_code\",\"title\":\"Run code\","
  "\"description\":\"Runs a code snippet in a fresh, disposable sandbox (no network, limited "
  "memory, CPU and processes) and returns its stdout, stderr, exit code and status: success, "
  "error (non-zero exit), timeout, compile_error or oom. Compiled languages compile first; the "
  "timeout covers the run. Languages: see list_supported_languages.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
  "\"code\":{\"type\":\"string\",\"description\":\"The program's source code\"},"
  "\"language\":{\"type\":\"string\",\"description\":\"A language of list_supported_languages, "
  "such as python or cpp\"},"
  "\"timeout_seconds\":{\"type\":\"number\",\"exclusiveMinimum\":0,"
  "\"description\":\"Wall-clock limit of the run in seconds (default and ceiling: the "
  "server's configuration)\"},"
  "\"session_id\":{\"type\":\"string\",\"description\":\"Run inside this session (see "
  "create_session): files in /mnt/data, the working directory, persist; the result lists the "
  "files the run created or changed\"}},"
  "\"required\":[\"code\",\"language\"],\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{"
  "\"status\":{\"type\":\"string\",\"enum\":[\"success\",\"error\",\"timeout\",\"compile_error\","
  "\"oom\",\"cancelled\"]},"
  "\"exit_code\":{\"type\":\"integer\"},"
  "\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
  "\"stdout_truncated\":{\"type\":\"boolean\"},\"stderr_truncated\":{\"type\":\"boolean\"},"
  "\"stdout_encoding\":{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"]},"
  "\"stderr_encoding\":{\"type\":\"string\",\"enum\":[\"utf-8\",\"base64\"]},"
  "\"duration_ms\":{\"type\":\"number\"},\"compile_ms\":{\"type\":\"number\"},"
  "\"language\":{\"type\":\"string\"},\"run_id\":{\"type\":\"string\"},"
  "\"history\":{\"type\":\"string\"},\"session_id\":{\"type\":\"string\"},"
  "\"artifacts\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
  "\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},"
  "\"mtime\":{\"type\":\"string\"},\"mime_type\":{\"type\":\"string\"},"
  "\"download_url\":{\"type\":\"string\"}}}}},"
  "\"required\":[\"status\",\"exit_code\",\"stdout\",\"stderr\",\"stdout_truncated\","
  "\"stderr_truncated\",\"duration_ms\",\"language\"]},"
  "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":false,\"idempotentHint\":false,"
  "\"openWorldHint\":false}},"

  "{\"name\":\"list_supported_languages\",\"title\":\"List supported languages\","
  "\"description\":\"Lists the languages run_code accepts, with the image each runs in and "
  "whether that image is installed.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"languages\":{\"type\":\"array\","
  "\"items\":{\"type\":\"object\",\"properties\":{\"language\":{\"type\":\"string\"},"
  "\"image\":{\"type\":\"string\"},\"description\":{\"type\":\"string\"},"
  "\"compiled\":{\"type\":\"boolean\"},\"available\":{\"type\":\"boolean\"}},"
  "\"required\":[\"language\",\"image\",\"description\"]}}},\"required\":[\"languages\"]},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}},"

  "{\"name\":\"get_execution_history\",\"title\":\"Get execution history\","
  "\"description\":\"Returns the most recent runs, newest first: id, timestamp (ISO 8601 UTC), "
  "language, a preview of the code, status, exit code, duration and output sizes.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
  "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":1000,"
  "\"description\":\"How many runs (default 20)\"},"
  "\"status\":{\"type\":\"string\",\"description\":\"Only runs with this status\"},"
  "\"language\":{\"type\":\"string\",\"description\":\"Only runs of this language\"}},"
  "\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"runs\":{\"type\":\"array\","
  "\"items\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"},"
  "\"timestamp\":{\"type\":\"string\"},\"language\":{\"type\":\"string\"},"
  "\"code_preview\":{\"type\":\"string\"},\"status\":{\"type\":\"string\"},"
  "\"exit_code\":{\"type\":\"integer\"},\"duration_ms\":{\"type\":\"number\"},"
  "\"stdout_size\":{\"type\":\"integer\"},\"stderr_size\":{\"type\":\"integer\"}}}}},"
  "\"required\":[\"runs\"]},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}}"
  "]";

cJSON *
sr_mcp_tools_list (void)
{
  cJSON *o = cJSON_CreateObject ();
  cJSON *tools = cJSON_Parse (tool_definitions);

  if (tools == NULL)
    sr_oom ();
  sr_mcp_session_tools_add (tools);
  cJSON_AddItemToObject (o, "tools", tools);
  return o;
}

bool
sr_mcp_tool_exists (const char *name)
{
  return strcmp (name, "run_code") == 0 || strcmp (name, "list_supported_languages") == 0
         || strcmp (name, "get_execution_history") == 0 || sr_mcp_session_tool_exists (name);
}

bool
sr_mcp_tool_runs_code (const char *name)
{
  return strcmp (name, "run_code") == 0;
}

/* A result: structured content, and the same as JSON text for clients
 * that read only content.  An error carries its JSON in the text only:
 * clients check structured content against the tool's output schema,
 * which describes results, not refusals.  */
cJSON *
sr_mcp_tool_result (cJSON *structured, bool is_error)
{
  cJSON *r = cJSON_CreateObject ();
  cJSON *content = cJSON_AddArrayToObject (r, "content");
  cJSON *text = cJSON_CreateObject ();
  _cleanup_free_ char *s = cJSON_PrintUnformatted (structured);

  cJSON_AddStringToObject (text, "type", "text");
  cJSON_AddStringToObject (text, "text", s);
  cJSON_AddItemToArray (content, text);
  if (is_error)
    cJSON_Delete (structured);
  else
    cJSON_AddItemToObject (r, "structuredContent", structured);
  cJSON_AddBoolToObject (r, "isError", is_error);
  return r;
}

cJSON *
sr_mcp_tool_error (const char *code, const char *fmt, ...)
{
  cJSON *o = cJSON_CreateObject (), *e = cJSON_AddObjectToObject (o, "error");
  _cleanup_free_ char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = sr_xvasprintf (fmt, ap);
  va_end (ap);
  cJSON_AddStringToObject (e, "code", code);
  cJSON_AddStringToObject (e, "message", msg);
  return sr_mcp_tool_result (o, true);
}

cJSON *
sr_mcp_tool_refusal (sr_error_t *err)
{
  const char *code = sr_error_code (*err);
  cJSON *r = sr_mcp_tool_error (code ? code : "sandbox_error", "%s",
                                *err ? (*err)->msg : "failed");

  sr_error_free (err);
  return r;
}

/* Only the arguments of the schema, each of its type.  */
cJSON *
sr_mcp_check_arguments (const cJSON *args, const char *const *known)
{
  const cJSON *a;

  if (args == NULL)
    return NULL;
  if (!cJSON_IsObject (args))
    return sr_mcp_tool_error ("invalid_arguments", "arguments must be an object");
  cJSON_ArrayForEach (a, args)
    {
      bool ok = false;

      for (const char *const *k = known; *k; k++)
        ok |= strcmp (a->string, *k) == 0;
      if (!ok)
        return sr_mcp_tool_error ("invalid_arguments", "unknown argument '%s'", a->string);
    }
  return NULL;
}

/* Output that is valid UTF-8 goes as it is, anything else as base64.  */
void
sr_mcp_add_output (cJSON *o, const char *key, const char *encoding_key,
                   const struct sr_captured *c)
{
  const char *data = c->data ? c->data : "";
  size_t clean_len;
  _cleanup_free_ char *clean = sr_utf8_sanitize (data, c->len, &clean_len);

  if (clean_len == c->len && memcmp (clean, data, c->len) == 0)
    {
      cJSON_AddStringToObject (o, key, clean);
      cJSON_AddStringToObject (o, encoding_key, "utf-8");
      return;
    }
  {
    _cleanup_free_ char *b64 = sr_base64_encode (data, c->len);

    cJSON_AddStringToObject (o, key, b64);
    cJSON_AddStringToObject (o, encoding_key, "base64");
  }
}

static cJSON *
call_run_code (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, bool *ret_cancelled)
{
  static const char *const known[] = { "code", "language", "timeout_seconds", "session_id",
                                       NULL };
  const cJSON *session_id = cJSON_GetObjectItemCaseSensitive (args, "session_id");
  const cJSON *code = cJSON_GetObjectItemCaseSensitive (args, "code");
  const cJSON *language = cJSON_GetObjectItemCaseSensitive (args, "language");
  const cJSON *timeout = cJSON_GetObjectItemCaseSensitive (args, "timeout_seconds");
  struct sr_code_request req = {
    .cancel_fd = ctx->cancel_fd, .on_progress = ctx->on_progress, .userdata = ctx->userdata,
  };
  struct sr_service_run run;
  const struct sr_language *lang;
  sr_error_t err = NULL;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)))
    return bad;
  if (!cJSON_IsString (code))
    return sr_mcp_tool_error ("invalid_arguments", "code is required and must be a string");
  if (!cJSON_IsString (language))
    return sr_mcp_tool_error ("invalid_arguments", "language is required and must be a string");
  if (timeout && !cJSON_IsNull (timeout))
    {
      if (!cJSON_IsNumber (timeout) || !isfinite (timeout->valuedouble)
          || timeout->valuedouble <= 0)
        return sr_mcp_tool_error ("invalid_arguments", "timeout_seconds must be a number above 0");
      if (timeout->valuedouble * 1000 > (double) ctx->cfg->max_timeout_ms)
        return sr_mcp_tool_error ("timeout_too_large", "timeout %g s is over the ceiling of %g s",
                           timeout->valuedouble, (double) ctx->cfg->max_timeout_ms / 1000);
      req.timeout_ms = (uint64_t) ceil (timeout->valuedouble * 1000);
    }
  req.language = language->valuestring;
  req.code = code->valuestring;
  req.code_len = strlen (code->valuestring);
  /* Every refusal of sr_code_validate has its code.  */
  if (sr_code_validate (ctx->cfg, &req, &lang, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  if (session_id && !cJSON_IsNull (session_id)
      && (!cJSON_IsString (session_id) || *session_id->valuestring == '\0'))
    return sr_mcp_tool_error ("invalid_arguments", "session_id must be a non-empty string");
  if (sr_service_run_code (ctx->service, &req,
                           cJSON_IsString (session_id) ? session_id->valuestring : NULL, &run,
                           &err)
      < 0)
    {
      sr_service_run_done (&run);
      return sr_mcp_tool_refusal (&err);
    }
  *ret_cancelled = run.code.status == SR_CODE_CANCELLED;

  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "status", sr_code_status_name (run.code.status));
  cJSON_AddNumberToObject (o, "exit_code",
                           run.code.run.signal ? 128 + run.code.run.signal
                                               : run.code.run.exit_code);
  sr_mcp_add_output (o, "stdout", "stdout_encoding", &run.code.run.out);
  sr_mcp_add_output (o, "stderr", "stderr_encoding", &run.code.run.err);
  cJSON_AddBoolToObject (o, "stdout_truncated", run.code.run.out.truncated);
  cJSON_AddBoolToObject (o, "stderr_truncated", run.code.run.err.truncated);
  cJSON_AddNumberToObject (o, "duration_ms", (double) run.code.duration_ms);
  if (run.code.compiled)
    cJSON_AddNumberToObject (o, "compile_ms", (double) run.code.compile_ms);
  cJSON_AddStringToObject (o, "language", run.code.language);
  if (run.session_id)
    {
      cJSON_AddStringToObject (o, "session_id", run.session_id);
      sr_mcp_add_artifacts (o, ctx, run.session_id, run.artifacts, run.n_artifacts);
    }
  if (run.run_id[0])
    {
      cJSON_AddStringToObject (o, "run_id", run.run_id);
      cJSON_AddStringToObject (o, "history", "recorded");
    }
  else
    {
      _cleanup_free_ char *msg = sr_xasprintf ("unavailable: %s", run.history_problem);

      cJSON_AddStringToObject (o, "history", msg);
      if (run.history_failed && ctx->on_warning)
        {
          _cleanup_free_ char *w = sr_xasprintf ("the run history could not record a run: %s",
                                                 run.history_problem);

          ctx->on_warning (w, ctx->userdata);
        }
    }
  sr_service_run_done (&run);
  return sr_mcp_tool_result (o, false);
}

static cJSON *
call_list_languages (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { NULL };
  cJSON *o, *list, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)))
    return bad;
  o = cJSON_CreateObject ();
  list = cJSON_AddArrayToObject (o, "languages");
  for (size_t i = 0; i < ctx->cfg->n_languages; i++)
    {
      const struct sr_language *l = &ctx->cfg->languages[i];
      cJSON *e = cJSON_CreateObject ();
      bool available = sr_service_image_available (ctx->service, l->image);

      cJSON_AddStringToObject (e, "language", l->name);
      cJSON_AddStringToObject (e, "image", l->image);
      cJSON_AddStringToObject (e, "description", l->description);
      cJSON_AddBoolToObject (e, "compiled", l->compile[0] != '\0');
      cJSON_AddBoolToObject (e, "available", available);
      cJSON_AddItemToArray (list, e);
    }
  return sr_mcp_tool_result (o, false);
}

static cJSON *
call_history (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "limit", "status", "language", NULL };
  const cJSON *limit = cJSON_GetObjectItemCaseSensitive (args, "limit");
  const cJSON *status = cJSON_GetObjectItemCaseSensitive (args, "status");
  const cJSON *language = cJSON_GetObjectItemCaseSensitive (args, "language");
  struct sr_history_filter f = { 0 };
  struct sr_history_entry *v = NULL;
  size_t n = 0;
  sr_error_t err = NULL;
  cJSON *o, *runs, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)))
    return bad;
  if (limit && !cJSON_IsNull (limit))
    {
      if (!cJSON_IsNumber (limit) || limit->valuedouble != floor (limit->valuedouble)
          || limit->valuedouble < 1 || limit->valuedouble > SR_HISTORY_LIMIT_MAX)
        return sr_mcp_tool_error ("invalid_arguments", "limit must be an integer from 1 to %d",
                           SR_HISTORY_LIMIT_MAX);
      f.limit = (size_t) limit->valuedouble;
    }
  if (status && !cJSON_IsNull (status))
    {
      if (!cJSON_IsString (status))
        return sr_mcp_tool_error ("invalid_arguments", "status must be a string");
      if (sr_history_check_status (status->valuestring, &err) < 0)
        {
          o = sr_mcp_tool_error ("invalid_arguments", "%s", err->msg);
          sr_error_free (&err);
          return o;
        }
      f.status = status->valuestring;
    }
  if (language && !cJSON_IsNull (language))
    {
      if (!cJSON_IsString (language))
        return sr_mcp_tool_error ("invalid_arguments", "language must be a string");
      f.language = language->valuestring;
    }
  if (sr_service_history_list (ctx->service, &f, &v, &n, &err) < 0)
    {
      o = sr_mcp_tool_error ("history_unavailable", "the run history is unavailable: %s", err->msg);
      sr_error_free (&err);
      return o;
    }
  o = cJSON_CreateObject ();
  runs = cJSON_AddArrayToObject (o, "runs");
  for (size_t i = 0; i < n; i++)
    {
      cJSON *e = cJSON_CreateObject ();
      _cleanup_free_ char *when = sr_history_format_time (v[i].timestamp_ms);

      cJSON_AddStringToObject (e, "id", v[i].id);
      cJSON_AddStringToObject (e, "timestamp", when);
      cJSON_AddStringToObject (e, "language", v[i].language);
      cJSON_AddStringToObject (e, "code_preview", v[i].code_preview);
      cJSON_AddStringToObject (e, "status", v[i].status);
      cJSON_AddNumberToObject (e, "exit_code", v[i].exit_code);
      cJSON_AddNumberToObject (e, "duration_ms", (double) v[i].duration_ms);
      cJSON_AddNumberToObject (e, "stdout_size", (double) v[i].stdout_size);
      cJSON_AddNumberToObject (e, "stderr_size", (double) v[i].stderr_size);
      cJSON_AddItemToArray (runs, e);
    }
  sr_history_entries_free (v, n);
  return sr_mcp_tool_result (o, false);
}

cJSON *
sr_mcp_tool_call (const struct sr_mcp_tool_ctx *ctx, const char *name, const cJSON *args,
                  bool *ret_cancelled)
{
  *ret_cancelled = false;
  if (strcmp (name, "run_code") == 0)
    return call_run_code (ctx, args, ret_cancelled);
  if (strcmp (name, "list_supported_languages") == 0)
    return call_list_languages (ctx, args);
  if (strcmp (name, "get_execution_history") == 0)
    return call_history (ctx, args);
  {
    cJSON *r = sr_mcp_session_tool_call (ctx, name, args);

    if (r)
      return r;
  }
  return sr_mcp_tool_error ("unknown_tool", "no tool %s", name);
}
