/* The audit trail of tool calls: recording every call (sr_mcp_audit_call,
 * which the dispatch in tools.c calls once per call, and which logs it)
 * and the tool audit_query, which shows a caller its own calls.  */
#include "config.h"

#include "mcp/tools-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "sandbox/service.h"
#include "sandbox/session.h"

static int
compare_names (const void *a, const void *b)
{
  const cJSON *x = *(const cJSON *const *) a, *y = *(const cJSON *const *) b;

  return strcmp (x->string, y->string);
}

/* v with the members of every object sorted by name: the same arguments
 * in another order hash the same.  */
static cJSON *
canonical (const cJSON *v)
{
  const cJSON *c;
  cJSON *out;

  if (cJSON_IsObject (v))
    {
      size_t n = 0, i = 0;
      _cleanup_free_ const cJSON **members = NULL;

      cJSON_ArrayForEach (c, v)
        n++;
      members = sr_xcalloc (n ? n : 1, sizeof *members);
      cJSON_ArrayForEach (c, v)
        members[i++] = c;
      qsort (members, n, sizeof *members, compare_names);
      out = cJSON_CreateObject ();
      for (i = 0; i < n; i++)
        cJSON_AddItemToObject (out, members[i]->string, canonical (members[i]));
      return out;
    }
  if (cJSON_IsArray (v))
    {
      out = cJSON_CreateArray ();
      cJSON_ArrayForEach (c, v)
        cJSON_AddItemToArray (out, canonical (c));
      return out;
    }
  return cJSON_Duplicate (v, true);
}

char *
sr_mcp_canonical_json (const cJSON *v)
{
  cJSON *c = v ? canonical (v) : cJSON_CreateObject ();
  char *s = cJSON_PrintUnformatted (c);

  cJSON_Delete (c);
  return s;
}

/* "ok", or the code of a refusal (its text block is {"error": {"code":
 * ...}}, sr_mcp_tool_error), into a new string.  */
static char *
status_of (const cJSON *result)
{
  const cJSON *content = cJSON_GetObjectItemCaseSensitive (result, "content");
  const cJSON *text = cJSON_GetObjectItemCaseSensitive (cJSON_GetArrayItem (content, 0), "text");
  cJSON *body;
  const cJSON *code;
  char *status;

  if (!cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (result, "isError")))
    return sr_xstrdup ("ok");
  body = cJSON_IsString (text) ? cJSON_Parse (text->valuestring) : NULL;
  code = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (body, "error"),
                                           "code");
  status = sr_xstrdup (cJSON_IsString (code) ? code->valuestring : "error");
  cJSON_Delete (body);
  return status;
}

/* Where the call acted, in a new string: its machine or session_id
 * argument (env's name), the session of its shell_id, else the machine
 * its result names (a created session, a default machine's shell).  */
static char *
machine_of (const char *tool, const cJSON *args, const cJSON *result)
{
  const cJSON *structured = cJSON_GetObjectItemCaseSensitive (result, "structuredContent");
  const char *m = sr_mcp_arg_string (args, "machine");
  char *shell_session;

  if (m == NULL)
    m = sr_mcp_arg_string (args, "session_id");
  if (m == NULL && strcmp (tool, "env") == 0)
    m = sr_mcp_arg_string (args, "name");
  if (m)
    return sr_xstrdup (m);
  if ((shell_session = sr_session_of_shell (sr_mcp_arg_string (args, "shell_id"))))
    return shell_session;
  if ((m = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (structured, "machine")))
      || (m = cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (structured,
                                                                       "session_id"))))
    return sr_xstrdup (m);
  shell_session = sr_session_of_shell (
      cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (structured, "shell_id")));
  return shell_session ? shell_session : sr_xstrdup ("");
}

void
sr_mcp_audit_call (const struct sr_mcp_tool_ctx *ctx, const char *name, const cJSON *args,
                   const cJSON *result, uint64_t duration_ns)
{
  _cleanup_free_ char *status = status_of (result);
  _cleanup_free_ char *args_json = sr_mcp_canonical_json (args);
  _cleanup_free_ char *machine = machine_of (name, args, result);
  struct sr_service_call call = {
    .client = ctx->client ? ctx->client : "stdio",
    .machine = machine,
    .tool = name,
    .status = status,
    .duration_ms = (int64_t) (duration_ns / 1000000),
    .args_json = args_json,
  };
  sr_error_t err = NULL;
  char ms[32];

  snprintf (ms, sizeof ms, "%.1f", (double) duration_ns / 1e6);
  sr_log (SR_LOG_INFO, "request", "method", "tools/call", "tool", name, "status", status,
          "duration_ms", ms, "client", call.client, "machine", *machine ? machine : NULL, NULL);
  /* A context without a service (the registry's own tests) records
   * nothing.  */
  if (ctx->service == NULL || sr_service_audit (ctx->service, &call, &err) == 0)
    return;
  if (ctx->on_warning)
    {
      _cleanup_free_ char *msg = sr_xasprintf ("the audit trail could not record a call of %s: %s",
                                               name, err->msg);

      ctx->on_warning (msg, ctx->userdata);
    }
  sr_error_free (&err);
}

static cJSON *
audit_rows (const struct sr_audit_entry *v, size_t n)
{
  cJSON *o = cJSON_CreateObject (), *calls = cJSON_AddArrayToObject (o, "calls");

  for (size_t i = 0; i < n; i++)
    {
      cJSON *e = cJSON_CreateObject ();
      _cleanup_free_ char *when = sr_history_format_time (v[i].timestamp_ms);

      cJSON_AddStringToObject (e, "timestamp", when);
      cJSON_AddStringToObject (e, "client", v[i].client);
      cJSON_AddStringToObject (e, "machine", v[i].machine);
      cJSON_AddStringToObject (e, "tool", v[i].tool);
      cJSON_AddStringToObject (e, "status", v[i].status);
      cJSON_AddNumberToObject (e, "duration_ms", (double) v[i].duration_ms);
      cJSON_AddStringToObject (e, "args_sha256", v[i].args_sha256);
      cJSON_AddItemToArray (calls, e);
    }
  return o;
}

/* since: an ISO 8601 time, or a number of seconds back (as a number or
 * its digits).  */
static int
since_arg (const cJSON *args, int64_t *ret_ms, sr_error_t *err)
{
  const cJSON *since = sr_mcp_arg (args, "since");
  _cleanup_free_ char *digits = NULL;
  int64_t now = sr_now_realtime_ms ();

  *ret_ms = 0;
  if (since == NULL)
    return 0;
  if (cJSON_IsNumber (since) && since->valuedouble >= 0 && since->valuedouble <= 1e12)
    digits = sr_xasprintf ("%.0f", since->valuedouble);
  else if (!cJSON_IsString (since))
    return sr_error_set_plain (err, "invalid_arguments", EINVAL,
                               "since must be an ISO 8601 time or a number of seconds");
  if (sr_history_parse_since (digits ? digits : since->valuestring, now, ret_ms, err) < 0)
    return sr_error_recode (err, "invalid_arguments");
  return 0;
}

cJSON *
sr_mcp_call_audit_query (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                         bool *ret_cancelled)
{
  struct sr_audit_filter f = {
    .limit = sr_mcp_arg_count (args, "limit", 0),
    .client = ctx->client ? ctx->client : "stdio",
    .machine = sr_mcp_arg_string (args, "machine"),
    .tool = sr_mcp_arg_string (args, "tool"),
    .status = sr_mcp_arg_string (args, "status"),
  };
  struct sr_audit_entry *v = NULL;
  size_t n = 0;
  sr_error_t err = NULL;
  cJSON *o;

  if (since_arg (args, &f.since_ms, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  if (sr_service_audit_list (ctx->service, &f, &v, &n, &err) < 0)
    {
      sr_error_recode (&err, "audit_unavailable");
      return sr_mcp_tool_refusal (&err);
    }
  o = audit_rows (v, n);
  sr_audit_entries_free (v, n);
  return sr_mcp_tool_result (o, false);
}
