/* The drop-in tools: mcp-code-sandbox's five under its names, each one of
 * our handlers (the registry's CODE_SANDBOX rows in tools.c) with its
 * arguments and results mapped here, in one place.  The names of its
 * arguments are ours already (session_id, code, filename,
 * content_base64, path); what differs is that its run is always Python
 * in a session, and the fields its results had besides ours.  */
#include "config.h"

#include "mcp/tools-internal.h"

#include <string.h>

#include "common/defaults.h"
#include "common/json.h"
#include "common/util.h"
#include "sandbox/session.h"

/* sandbox_run_python's arguments as run_code takes them: python, in the
 * session given or a new one on session_image.  NULL, or the refusal.  */
static cJSON *
run_python_args (const struct sr_mcp_tool_ctx *ctx, cJSON *args)
{
  struct sr_session *s = NULL;
  sr_error_t err = NULL;

  cJSON_AddStringToObject (args, "language", "python");
  if (sr_mcp_arg_string (args, "session_id"))
    return NULL;
  if (sr_sessions_acquire (ctx->sessions, ctx->owner, NULL, NULL, ctx->cancel_fd, &s, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  cJSON_DeleteItemFromObjectCaseSensitive (args, "session_id");
  cJSON_AddStringToObject (args, "session_id", sr_session_id (s));
  sr_session_release (s);
  return NULL;
}

/* The fields mcp-code-sandbox's results had and ours name otherwise, on
 * o and its artifacts: path under /mnt/data (ours is relative to it),
 * filename, size_bytes, a closed session's status, and the exit_code -1
 * it gave a run that timed out.  */
static void
as_code_sandbox (cJSON *o)
{
  const cJSON *path = cJSON_GetObjectItemCaseSensitive (o, "path");
  const cJSON *size = cJSON_GetObjectItemCaseSensitive (o, "size");
  const cJSON *status = cJSON_GetObjectItemCaseSensitive (o, "status");
  cJSON *a;

  if (cJSON_IsString (path))
    {
      _cleanup_free_ char *abs = *path->valuestring == '/'
                                   ? sr_xstrdup (path->valuestring)
                                   : sr_xasprintf ("%s/%s", SR_DATA_DIR, path->valuestring);
      const char *slash = strrchr (abs, '/');

      cJSON_AddStringToObject (o, "filename", slash + 1);
      cJSON_ReplaceItemInObjectCaseSensitive (o, "path", cJSON_CreateString (abs));
    }
  if (cJSON_IsNumber (size))
    cJSON_AddNumberToObject (o, "size_bytes", size->valuedouble);
  cJSON_ArrayForEach (a, cJSON_GetObjectItemCaseSensitive (o, "artifacts"))
    as_code_sandbox (a);
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (o, "closed")))
    cJSON_AddStringToObject (o, "status", "closed");
  if (cJSON_IsString (status) && strcmp (status->valuestring, "timeout") == 0)
    cJSON_ReplaceItemInObjectCaseSensitive (o, "exit_code", cJSON_CreateNumber (-1));
}

cJSON *
sr_mcp_code_sandbox_call (const struct sr_mcp_tool_ctx *ctx, sr_mcp_tool_fn *call, cJSON *args,
                          bool *ret_cancelled)
{
  _cleanup_json_ cJSON *none = NULL, *ours = NULL;
  cJSON *structured, *bad;

  if (args == NULL)
    args = none = cJSON_CreateObject ();
  if (call == sr_mcp_call_run_code && (bad = run_python_args (ctx, args)))
    return bad;
  ours = call (ctx, args, ret_cancelled);
  structured = cJSON_GetObjectItemCaseSensitive (ours, "structuredContent");
  if (structured == NULL || cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (ours, "isError")))
    return TAKE_PTR (ours);
  structured = cJSON_DetachItemViaPointer (ours, structured);
  as_code_sandbox (structured);
  return sr_mcp_tool_result (structured, false);
}
