/* The tools of runs: run_code, list_supported_languages and
 * get_execution_history.  */
#include "config.h"

#include "mcp/tools-internal.h"

#include <string.h>

#include "common/util.h"
#include "sandbox/code.h"
#include "sandbox/service.h"

/* What a request's inputs decode to, held for the run.  */
struct run_inputs
{
  char *stdin_data;
  char **args;
  struct sr_code_file *files;
  char **decoded;          /* the files' decoded contents */
  size_t n;
};

static void
run_inputs_done (struct run_inputs *in)
{
  free (in->stdin_data);
  free (in->args);
  for (size_t i = 0; i < in->n; i++)
    free (in->decoded[i]);
  free (in->decoded);
  free (in->files);
}

/* text as encoding says (NULL or "utf-8": itself; "base64": its bytes),
 * refusing more than max bytes without decoding them: *ret_len then is
 * max + 1.  what names it in the refusal.  */
static cJSON *
decode_arg (const char *text, const char *encoding, uint64_t max, const char *what,
            char **ret_decoded, const char **ret, size_t *ret_len)
{
  size_t len = strlen (text);

  *ret_decoded = NULL;
  *ret = text;
  *ret_len = len;
  if (encoding == NULL || strcmp (encoding, "base64") != 0)
    return NULL;
  /* Whitespace aside, base64 of more than max bytes is longer than this.  */
  if (len / 4 * 3 > max + 3)
    *ret_len = max + 1;
  else if (sr_base64_decode (text, len, ret_decoded, ret_len) < 0)
    return sr_mcp_tool_error ("invalid_arguments", "%s is not valid base64 (encoding \"base64\")",
                              what);
  else
    *ret = *ret_decoded;
  return NULL;
}

/* stdin, args and files of args into req, their buffers into in.  */
static cJSON *
run_inputs (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, struct sr_code_request *req,
            struct run_inputs *in)
{
  const char *stdin_text = sr_mcp_arg_string (args, "stdin");
  const cJSON *list = sr_mcp_arg (args, "args"), *files = sr_mcp_arg (args, "files"), *e;
  cJSON *bad;
  size_t i = 0;

  if (stdin_text)
    {
      if ((bad = decode_arg (stdin_text, sr_mcp_arg_string (args, "stdin_encoding"),
                             ctx->cfg->max_stdin_size, "stdin", &in->stdin_data,
                             &req->stdin_data, &req->stdin_len)))
        return bad;
    }
  if (list)
    {
      in->args = sr_xcalloc ((size_t) cJSON_GetArraySize (list) + 1, sizeof *in->args);
      cJSON_ArrayForEach (e, list)
        in->args[i++] = e->valuestring;   /* strings: the schema says so */
      req->args = in->args;
      req->n_args = i;
    }
  if (files)
    {
      size_t n = (size_t) cJSON_GetArraySize (files);

      in->files = sr_xcalloc (n + 1, sizeof *in->files);
      in->decoded = sr_xcalloc (n + 1, sizeof *in->decoded);
      cJSON_ArrayForEach (e, files)
        {
          const cJSON *content = cJSON_GetObjectItemCaseSensitive (e, "content");
          const cJSON *encoding = cJSON_GetObjectItemCaseSensitive (e, "encoding");
          struct sr_code_file *f = &in->files[in->n];
          _cleanup_free_ char *what = sr_xasprintf ("files[\"%s\"].content", e->string);

          f->name = e->string;
          bad = decode_arg (content->valuestring,
                            cJSON_IsString (encoding) ? encoding->valuestring : NULL,
                            ctx->cfg->max_code_file_size, what, &in->decoded[in->n], &f->content,
                            &f->len);
          in->n++;
          if (bad)
            return bad;
        }
      req->files = in->files;
      req->n_files = in->n;
    }
  return NULL;
}

/* The request of args, checked as sr_code_validate checks it.  */
static cJSON *
run_request (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, struct sr_code_request *req,
             struct run_inputs *in)
{
  const struct sr_language *lang;
  sr_error_t err = NULL;
  cJSON *bad;

  *req = (struct sr_code_request) {
    .cancel_fd = ctx->cancel_fd, .on_progress = ctx->on_progress, .userdata = ctx->userdata,
    .language = sr_mcp_arg_string (args, "language"), .code = sr_mcp_arg_string (args, "code"),
  };
  req->code_len = strlen (req->code);
  req->max_output = sr_mcp_max_output_arg (ctx, args);
  if ((bad = sr_mcp_timeout_arg (ctx, args, "timeout_seconds", 0, &req->timeout_ms)))
    return bad;
  if ((bad = run_inputs (ctx, args, req, in)))
    return bad;
  /* Every refusal of sr_code_validate has its code.  */
  if (sr_code_validate (ctx->cfg, req, &lang, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  return NULL;
}

/* Says on o whether the history recorded the run.  */
static void
run_recorded (const struct sr_mcp_tool_ctx *ctx, const struct sr_service_run *run, cJSON *o)
{
  _cleanup_free_ char *msg = NULL, *warning = NULL;

  if (run->run_id[0])
    {
      cJSON_AddStringToObject (o, "run_id", run->run_id);
      cJSON_AddStringToObject (o, "history", "recorded");
      return;
    }
  msg = sr_xasprintf ("unavailable: %s", run->history_problem);
  cJSON_AddStringToObject (o, "history", msg);
  if (run->history_failed && ctx->on_warning)
    {
      warning = sr_xasprintf ("the run history could not record a run: %s",
                              run->history_problem);
      ctx->on_warning (warning, ctx->userdata);
    }
}

/* The result of a run that ran, its output cut to max_output bytes in
 * all; its files changed as resource_link blocks too.  */
static cJSON *
run_result (const struct sr_mcp_tool_ctx *ctx, struct sr_service_run *run, uint64_t max_output)
{
  struct sr_code_result *res = &run->code;
  cJSON *o = cJSON_CreateObject (), *r;

  sr_mcp_fit_output (&res->run.out, &res->run.err, max_output);
  cJSON_AddStringToObject (o, "status", sr_code_status_name (res->status));
  cJSON_AddNumberToObject (o, "exit_code",
                           res->run.signal ? 128 + res->run.signal : res->run.exit_code);
  if (res->run.signal)
    cJSON_AddNumberToObject (o, "signal", res->run.signal);
  sr_mcp_add_output (o, "stdout", "stdout_encoding", &res->run.out);
  sr_mcp_add_output (o, "stderr", "stderr_encoding", &res->run.err);
  cJSON_AddBoolToObject (o, "stdout_truncated", res->run.out.truncated);
  cJSON_AddBoolToObject (o, "stderr_truncated", res->run.err.truncated);
  cJSON_AddNumberToObject (o, "stdout_bytes", (double) res->run.out.total);
  cJSON_AddNumberToObject (o, "stderr_bytes", (double) res->run.err.total);
  cJSON_AddNumberToObject (o, "max_output", (double) max_output);
  cJSON_AddNumberToObject (o, "duration_ms", (double) res->duration_ms);
  if (res->compiled)
    {
      cJSON_AddNumberToObject (o, "compile_ms", (double) res->compile_ms);
      cJSON_AddBoolToObject (o, "compile_cached", res->compile_cached);
    }
  if (res->prestarted)
    cJSON_AddBoolToObject (o, "prestarted", true);
  cJSON_AddStringToObject (o, "language", res->language);
  if (run->session_id)
    {
      cJSON_AddStringToObject (o, "session_id", run->session_id);
      sr_mcp_add_artifacts (o, ctx, run->session_id, run->artifacts, run->n_artifacts);
    }
  run_recorded (ctx, run, o);
  r = sr_mcp_tool_result (o, false);
  if (run->session_id)
    sr_mcp_add_artifact_links (r, run->session_id, run->artifacts, run->n_artifacts);
  return r;
}

cJSON *
sr_mcp_call_run_code (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, bool *ret_cancelled)
{
  const char *session_id = sr_mcp_arg_string (args, "session_id");
  struct sr_code_request req;
  struct run_inputs in = { 0 };
  struct sr_service_run run;
  sr_error_t err = NULL;
  cJSON *o;

  if ((o = run_request (ctx, args, &req, &in)))
    goto out;
  if (session_id && *session_id == '\0')
    {
      o = sr_mcp_tool_error ("invalid_arguments", "session_id must be a non-empty string");
      goto out;
    }
  /* A session may live in Docker or on an SSH host, where the program's
   * stdin is not this pipe and its waits on it cannot be seen: only a
   * one-shot run is fed as it goes.  */
  if (req.stdin_data == NULL && session_id == NULL)
    req.stdin_pipe = ctx->stdin_pipe;
  if (sr_service_run_code (ctx->service, &req, ctx->owner, session_id, &run, &err) < 0)
    {
      sr_service_run_done (&run);
      o = sr_mcp_tool_refusal (&err);
      goto out;
    }
  *ret_cancelled = run.code.status == SR_CODE_CANCELLED;
  o = run_result (ctx, &run, req.max_output);
  sr_service_run_done (&run);
out:
  run_inputs_done (&in);
  return o;
}

cJSON *
sr_mcp_call_list_languages (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                            bool *ret_cancelled)
{
  cJSON *o = cJSON_CreateObject (), *list = cJSON_AddArrayToObject (o, "languages");

  for (size_t i = 0; i < ctx->cfg->n_languages; i++)
    {
      const struct sr_language *l = &ctx->cfg->languages[i];
      cJSON *e = cJSON_CreateObject ();
      _cleanup_free_ char *version = NULL;
      bool available = sr_service_image_available (ctx->service, l->image, &version);

      cJSON_AddStringToObject (e, "language", l->name);
      cJSON_AddStringToObject (e, "image", l->image);
      cJSON_AddStringToObject (e, "description", l->description);
      if (version)
        cJSON_AddStringToObject (e, "version", version);
      cJSON_AddBoolToObject (e, "compiled", l->compile[0] != '\0');
      cJSON_AddBoolToObject (e, "available", available);
      cJSON_AddItemToArray (list, e);
    }
  return sr_mcp_tool_result (o, false);
}

static cJSON *
history_runs (const struct sr_history_entry *v, size_t n)
{
  cJSON *o = cJSON_CreateObject (), *runs = cJSON_AddArrayToObject (o, "runs");

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
      if (v[i].session_id)
        cJSON_AddStringToObject (e, "session_id", v[i].session_id);
      cJSON_AddItemToArray (runs, e);
    }
  return o;
}

cJSON *
sr_mcp_call_history (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, bool *ret_cancelled)
{
  struct sr_history_filter f = {
    .limit = sr_mcp_arg_count (args, "limit", 0),
    .status = sr_mcp_arg_string (args, "status"),
    .language = sr_mcp_arg_string (args, "language"),
    .session_id = sr_mcp_arg_string (args, "session_id"),
    /* A client of a shared server sees its own runs; stdio's sees all.  */
    .owner = ctx->owner,
  };
  struct sr_history_entry *v = NULL;
  size_t n = 0;
  sr_error_t err = NULL;
  cJSON *o;

  if (f.status && sr_history_check_status (f.status, &err) < 0)
    {
      sr_error_recode (&err, "invalid_arguments");
      return sr_mcp_tool_refusal (&err);
    }
  if (sr_service_history_list (ctx->service, &f, &v, &n, &err) < 0)
    {
      o = sr_mcp_tool_error ("history_unavailable", "the run history is unavailable: %s",
                             err->msg);
      sr_error_free (&err);
      return o;
    }
  o = history_runs (v, n);
  sr_history_entries_free (v, n);
  return sr_mcp_tool_result (o, false);
}
