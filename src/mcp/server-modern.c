/* The requests of revision 2026-07-28 (no initialize, no session: each
 * carries its version and the client's capabilities in params._meta),
 * and the tasks (mcp/tasks.h) their calls may become.  */
#include "config.h"

#include "mcp/server-internal.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/utf8.h"
#include "common/json.h"
#include "common/util.h"
#include "mcp/stdin-pipe.h"
#include "mcp/tasks.h"
#include "sandbox/service.h"

static const char *const modern_versions[] = { SR_MCP_PROTOCOL_MODERN, NULL };

/* The keys of a modern request's params._meta, and of a result's.  */
#define META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define META_LOG_LEVEL "io.modelcontextprotocol/logLevel"
#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"
#define META_SUBSCRIPTION_ID "io.modelcontextprotocol/subscriptionId"

/* --- the eras --- */

static bool
listed (const char *const *list, const char *v)
{
  for (const char *const *p = list; *p; p++)
    if (strcmp (*p, v) == 0)
      return true;
  return false;
}

bool
sr_mcp_protocol_known (const char *v)
{
  return listed (modern_versions, v) || listed (sr_mcp_protocol_versions, v);
}

static const cJSON *
request_meta (const struct sr_rpc_message *m)
{
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive (m->params, "_meta");

  return cJSON_IsObject (meta) ? meta : NULL;
}

bool
sr_mcp_request_modern (const struct sr_rpc_message *m, const char *header_version)
{
  if (m->kind == SR_RPC_RESPONSE)
    return false;
  if (cJSON_GetObjectItemCaseSensitive (request_meta (m), SR_MCP_META_VERSION))
    return true;
  if (strcmp (m->method, "server/discover") == 0)
    return true;
  /* A version of the modern era, or one newer than we know: dates sort
   * as strings.  */
  return header_version && strcmp (header_version, SR_MCP_PROTOCOL_MODERN) >= 0;
}

bool
sr_mcp_request_streams (const struct sr_rpc_message *m)
{
  return m->kind == SR_RPC_REQUEST
         && (sr_rpc_progress_token (m) || strcmp (m->method, "subscriptions/listen") == 0);
}

/* Whether the client of m declares the Tasks extension.  */
static bool
declares_tasks (const struct sr_rpc_message *m)
{
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive (request_meta (m), META_CAPABILITIES);
  const cJSON *ext = cJSON_GetObjectItemCaseSensitive (caps, "extensions");

  return cJSON_IsObject (cJSON_GetObjectItemCaseSensitive (ext, SR_MCP_TASKS_EXTENSION));
}

/* Whether m is the Tasks extension's, for a client that takes it: a
 * task method, or a subscriptions/listen to the status of tasks.  */
static bool
of_tasks (const struct sr_rpc_message *m)
{
  const cJSON *filter = cJSON_GetObjectItemCaseSensitive (m->params, "notifications");

  if (strcmp (m->method, "subscriptions/listen") == 0)
    return cJSON_GetObjectItemCaseSensitive (filter, "taskIds") != NULL;
  return strncmp (m->method, "tasks/", strlen ("tasks/")) == 0 && sr_mcp_modern_method (m->method);
}

int
sr_mcp_modern_check (const struct sr_rpc_message *m, char **ret_error)
{
  const cJSON *meta = request_meta (m);
  const cJSON *version = cJSON_GetObjectItemCaseSensitive (meta, SR_MCP_META_VERSION);
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive (meta, META_CAPABILITIES);
  _cleanup_free_ char *msg = NULL;
  cJSON *data, *supported;

  *ret_error = NULL;
  if (m->kind != SR_RPC_REQUEST)
    return 0;
  if (!cJSON_IsString (version) || !cJSON_IsObject (caps))
    {
      msg = sr_xasprintf ("Invalid params: params._meta must carry %s%s%s",
                          cJSON_IsString (version) ? "" : SR_MCP_META_VERSION " (a string)",
                          !cJSON_IsString (version) && !cJSON_IsObject (caps) ? " and " : "",
                          cJSON_IsObject (caps) ? "" : META_CAPABILITIES " (an object)");
      *ret_error = sr_rpc_error (m->id, SR_RPC_INVALID_PARAMS, msg, NULL);
      return SR_RPC_INVALID_PARAMS;
    }
  if (listed (modern_versions, version->valuestring))
    {
      if (!of_tasks (m) || declares_tasks (m))
        return 0;
      data = cJSON_CreateObject ();
      cJSON_AddObjectToObject (
          cJSON_AddObjectToObject (cJSON_AddObjectToObject (data, "requiredCapabilities"),
                                   "extensions"),
          SR_MCP_TASKS_EXTENSION);
      *ret_error = sr_rpc_error (m->id, SR_RPC_MISSING_CAPABILITY,
                                 "Missing required client capability: the extension "
                                 SR_MCP_TASKS_EXTENSION,
                                 data);
      return SR_RPC_MISSING_CAPABILITY;
    }
  data = cJSON_CreateObject ();
  supported = cJSON_AddArrayToObject (data, "supported");
  for (const char *const *v = modern_versions; *v; v++)
    cJSON_AddItemToArray (supported, cJSON_CreateString (*v));
  sr_utf8_add_text (data, "requested", version->valuestring);
  msg = sr_xasprintf ("Unsupported protocol version: this server speaks %s per request "
                      "(and %s and older with initialize)",
                      SR_MCP_PROTOCOL_MODERN, SR_MCP_PROTOCOL_LATEST);
  *ret_error = sr_rpc_error (m->id, SR_RPC_UNSUPPORTED_VERSION, msg, data);
  return SR_RPC_UNSUPPORTED_VERSION;
}

/* The modern methods, and how long a client may keep their results
 * (ttlMs; -1: not cacheable) and for whom (cacheScope).  What every
 * caller sees alike (the tools, the template of resource URIs) is public
 * for a minute; a caller's files are private and change any time.  */
static const struct
{
  const char *method;
  int ttl_ms;
  const char *scope;
} modern_methods[] = {
  { "server/discover", 60000, "public" },
  { "tools/list", 60000, "public" },
  { "tools/call", -1, NULL },
  { "prompts/list", 60000, "public" },
  { "prompts/get", -1, NULL },
  { "resources/list", 0, "private" },
  { "resources/templates/list", 60000, "public" },
  { "resources/read", 0, "private" },
  { "tasks/get", -1, NULL },
  { "tasks/cancel", -1, NULL },
  { "tasks/update", -1, NULL },
  { "subscriptions/listen", -1, NULL },
};

static int
modern_index (const char *method)
{
  for (size_t i = 0; i < SR_ARRAY_SIZE (modern_methods); i++)
    if (strcmp (modern_methods[i].method, method) == 0)
      return (int) i;
  return -1;
}

bool
sr_mcp_modern_method (const char *method)
{
  return modern_index (method) >= 0;
}

/* What a modern result carries besides the legacy one: resultType, and
 * the caching hints of a cacheable method.  */
static void
add_modern_fields (cJSON *result, const char *method)
{
  int i = modern_index (method);

  if (cJSON_GetObjectItemCaseSensitive (result, "resultType") == NULL)
    cJSON_AddStringToObject (result, "resultType", "complete");
  if (i >= 0 && modern_methods[i].ttl_ms >= 0)
    {
      cJSON_AddNumberToObject (result, "ttlMs", modern_methods[i].ttl_ms);
      cJSON_AddStringToObject (result, "cacheScope", modern_methods[i].scope);
    }
}

/* The response to a request of method: the result (taken over), with
 * the modern fields when the request was modern.  */
char *
sr_mcp_result_reply (const cJSON *id, const char *method, cJSON *result, bool modern)
{
  if (modern)
    {
      if (result == NULL)
        result = cJSON_CreateObject ();
      add_modern_fields (result, method);
    }
  return sr_rpc_result (id, result);
}

/* A serialised response (taken over) made for a legacy request, as a
 * modern one gets it: the modern fields on a result, and a resource not
 * found as invalid params (-32602, data.uri naming it; SEP-2164).  */
char *
sr_mcp_modernize_reply (char *reply, const char *method)
{
  _cleanup_json_ cJSON *root = cJSON_Parse (reply);
  cJSON *result = cJSON_GetObjectItemCaseSensitive (root, "result");
  cJSON *code = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (root, "error"),
                                                  "code");
  char *out;

  if (cJSON_IsObject (result))
    add_modern_fields (result, method);
  else if (cJSON_IsNumber (code) && code->valueint == SR_RPC_RESOURCE_NOT_FOUND)
    cJSON_SetNumberValue (code, SR_RPC_INVALID_PARAMS);
  else
    return reply;
  out = cJSON_PrintUnformatted (root);
  if (out == NULL)
    sr_oom ();
  free (reply);
  return out;
}

/* --- tasks --- */

/* The run of a task, on its own thread: what it needs of its call, kept
 * past the call and its connection.  */
struct task_run
{
  struct sr_mcp_server *s;
  struct sr_mcp_task *task;    /* a reference */
  char *name, *owner, *client, *files_url, *nul_member;
  cJSON *args;
  int cancel_fd;
};

static void
task_run_free (struct task_run *run)
{
  if (run->task)
    sr_mcp_task_unref (run->task);
  free (run->name);
  free (run->owner);
  free (run->client);
  free (run->files_url);
  free (run->nul_member);
  cJSON_Delete (run->args);
  if (run->cancel_fd >= 0)
    close (run->cancel_fd);
  free (run);
}

static bool
task_cancelled (void *task)
{
  return sr_mcp_task_cancelled (task);
}

static void
task_progress (const char *stage, uint64_t output_bytes, const char *stream, const char *chunk,
               size_t len, void *userdata)
{
  (void) stream, (void) chunk, (void) len;
  sr_mcp_task_progress (userdata, stage, output_bytes);
}

/* The read end of a pipe for the stdin of run's program, its write end
 * the task's (tasks/update feeds it): for a run_code on the native
 * backend, whose program's stdin is this pipe and whose waits on it can
 * be seen (mcp/stdin-pipe.h).  -1 for any other run, and when no pipe
 * could be made: the program's stdin is empty, as without a task.  */
static int
task_stdin (const struct sr_config *cfg, struct task_run *run)
{
  sr_error_t err = NULL;
  int r, w;

  if (strcmp (run->name, "run_code") != 0 || cfg->backend_kind != SR_BACKEND_NATIVE)
    return -1;
  if (sr_stdin_pipe_new (cfg->max_stdin_size, &r, &w, &err) < 0)
    {
      sr_error_free (&err);
      return -1;
    }
  sr_mcp_task_set_stdin (run->task, w);
  return r;
}

static void
task_shell (struct sr_shell *sh, void *userdata)
{
  sr_mcp_task_set_shell (userdata, sh);
}

static void *
task_main (void *arg)
{
  struct task_run *run = arg;
  struct sr_mcp_server *s = run->s;
  bool slot = sr_mcp_tool_runs_code (run->name), cancelled = false;
  struct sr_mcp_tool_ctx ctx = {
    .cfg = s->cfg, .service = s->service, .sessions = sr_service_sessions (s->service),
    .owner = run->owner, .files_url = run->files_url, .link_key = &s->link_key,
    .client = run->client, .cancel_fd = run->cancel_fd, .nul_argument = run->nul_member,
    .on_progress = task_progress, .on_shell = task_shell, .userdata = run->task,
  };
  _cleanup_close_ int stdin_read = -1;
  cJSON *result = NULL;

  stdin_read = task_stdin (s->cfg, run);
  ctx.stdin_pipe = stdin_read < 0 ? 0 : stdin_read;
  if (!slot || sr_mcp_take_slot (s, task_cancelled, run->task))
    {
      result = sr_mcp_tool_call (&ctx, run->name, run->args, &cancelled);
      if (slot)
        sr_mcp_give_slot (s);
    }
  if (cancelled)
    cJSON_Delete (TAKE_PTR (result));
  else if (result)
    add_modern_fields (result, "tools/call");
  /* Before cancel_fd closes: nothing writes to it after this.  */
  sr_mcp_task_end (run->task, result, "the run was cancelled before it started");
  task_run_free (run);
  return NULL;
}

/* A call of a client that takes tasks: the run goes on a task's thread,
 * and the call waits task_after for it.  *ret_result is its result when
 * it ended by then; else the task is announced (the response sent here)
 * and lives on without the call, and *ret_result is NULL, as it is when
 * the call was cancelled.  False when no task could be made: the call
 * runs as any other.  */
bool
sr_mcp_task_call (struct call *call, const struct sr_mcp_tool_ctx *ctx, const char *name,
                  const cJSON *args, cJSON **ret_result)
{
  struct sr_mcp_conn *c = call->conn;
  struct sr_mcp_server *s = c->s;
  struct task_run *run = sr_xcalloc (1, sizeof *run);
  uint64_t deadline = sr_now_ns () + s->cfg->task_after_ms * 1000000u;
  struct sr_mcp_task *task;
  sr_error_t err = NULL;
  bool ended = false;

  run->s = s;
  run->name = sr_xstrdup (name);
  run->owner = ctx->owner ? sr_xstrdup (ctx->owner) : NULL;
  run->client = sr_xstrdup (ctx->client);
  run->files_url = ctx->files_url ? sr_xstrdup (ctx->files_url) : NULL;
  run->nul_member = call->nul_member ? sr_xstrdup (call->nul_member) : NULL;
  run->args = args ? cJSON_Duplicate (args, 1) : NULL;
  run->cancel_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  task = run->cancel_fd < 0 ? NULL : sr_mcp_task_new (s->tasks, c->owner, run->cancel_fd, &err);
  if (task == NULL)
    {
      sr_error_free (&err);
      task_run_free (run);
      return false;
    }
  sr_mcp_task_ref (task);
  run->task = task;
  if (!sr_mcp_spawn (task_main, run))
    {
      sr_mcp_task_end (task, NULL, "could not start a worker thread");
      task_run_free (run);
    }

  while (!ended && sr_now_ns () < deadline)
    {
      if (sr_mcp_call_cancelled (call))
        {
          sr_mcp_task_cancel (task);
          pthread_mutex_lock (&s->lock);
          pthread_cond_broadcast (&s->slot_freed);
          pthread_mutex_unlock (&s->lock);
          break;
        }
      /* A tenth of a second at a time, to see a cancelled call.  */
      uint64_t until = sr_now_ns () + 100000000u;

      ended = sr_mcp_task_wait (task, until < deadline ? until : deadline);
    }
  *ret_result = NULL;
  if (ended || sr_mcp_call_cancelled (call))
    *ret_result = sr_mcp_task_forget (task);
  else
    sr_mcp_send_text (c, call->id,
                      sr_mcp_result_reply (call->id, "tools/call", sr_mcp_task_created (task),
                                           true));
  sr_mcp_task_unref (task);
  return true;
}

/* server/discover: every version we speak, modern first, and what a
 * modern client gets.  */
static cJSON *
discover_result (void)
{
  cJSON *result = cJSON_CreateObject ();
  cJSON *versions = cJSON_AddArrayToObject (result, "supportedVersions");

  for (const char *const *v = modern_versions; *v; v++)
    cJSON_AddItemToArray (versions, cJSON_CreateString (*v));
  for (const char *const *v = sr_mcp_protocol_versions; *v; v++)
    cJSON_AddItemToArray (versions, cJSON_CreateString (*v));
  cJSON_AddItemToObject (result, "capabilities", sr_mcp_capabilities (true));
  cJSON_AddStringToObject (result, "instructions", sr_mcp_instructions);
  cJSON_AddItemToObject (cJSON_AddObjectToObject (result, "_meta"), META_SERVER_INFO,
                         sr_mcp_server_info ());
  return result;
}

/* Whether the call of m may become a task: a run (run_code, shell_exec)
 * of a client whose capabilities name the Tasks extension.  */
bool
sr_mcp_takes_tasks (const struct sr_rpc_message *m)
{
  const cJSON *name = cJSON_GetObjectItemCaseSensitive (m->params, "name");

  return declares_tasks (m) && cJSON_IsString (name)
         && (strcmp (name->valuestring, "run_code") == 0
             || strcmp (name->valuestring, "shell_exec") == 0);
}

/* --- subscriptions/listen --- */

/* How often a listen looks at the status of its tasks: a program's wait
 * for input is seen only by looking (mcp/stdin-pipe.h).  */
#define LISTEN_POLL_MS 250

/* params._meta of a notification on the stream of listen.  */
static void
add_subscription_meta (cJSON *params, const struct call *listen)
{
  cJSON_AddItemToObject (cJSON_AddObjectToObject (params, "_meta"), META_SUBSCRIPTION_ID,
                         cJSON_Duplicate (listen->id, 1));
}

/* What tells one notification of a task from the next: its status and
 * the key of the input it asks for.  *ended: the status is final.  */
static char *
task_state (const cJSON *detailed, bool *ended)
{
  const cJSON *status = cJSON_GetObjectItemCaseSensitive (detailed, "status");
  const cJSON *asked = cJSON_GetObjectItemCaseSensitive (detailed, "inputRequests");
  const char *name = cJSON_IsString (status) ? status->valuestring : "";

  *ended = strcmp (name, "completed") == 0 || strcmp (name, "failed") == 0
           || strcmp (name, "cancelled") == 0;
  return sr_xasprintf ("%s %s", name, asked && asked->child ? asked->child->string : "");
}

/* A subscriptions/listen (SEP-2575) on its own thread, until it is
 * cancelled (its request, or its connection gone) or the server drains
 * (then it answers, with the subscription's id): it acknowledges the
 * notifications it will send, of those asked for the status of the
 * caller's tasks (taskIds; the Tasks extension's notifications/tasks),
 * then sends each task's DetailedTask, as tasks/get gives it, now and at
 * each change of its status (and of the input it asks for), until it
 * ends.  Every other notification type is left out of the
 * acknowledgement: the tools never change, and resources are notified
 * to a legacy client only.  */
static void *
listen_main (void *arg)
{
  struct call *call = arg;
  struct sr_mcp_conn *c = call->conn;
  const cJSON *filter = cJSON_GetObjectItemCaseSensitive (call->params, "notifications");
  const cJSON *ids = cJSON_GetObjectItemCaseSensitive (filter, "taskIds"), *id;
  size_t n = (size_t) cJSON_GetArraySize (ids), i = 0;
  cJSON **now = sr_xcalloc (n + 1, sizeof *now);
  char **sent = sr_xcalloc (n + 1, sizeof *sent);
  bool *watched = sr_xcalloc (n + 1, sizeof *watched);
  struct pollfd p = { .fd = call->cancel_fd, .events = POLLIN };
  cJSON *params = cJSON_CreateObject ();
  cJSON *agreed = cJSON_AddArrayToObject (cJSON_AddObjectToObject (params, "notifications"),
                                          "taskIds");

  /* The acknowledgement comes first, naming the tasks found.  */
  cJSON_ArrayForEach (id, ids)
    {
      now[i] = sr_mcp_tasks_detailed (c->s->tasks, c->owner, id->valuestring);
      watched[i] = now[i] != NULL;
      if (now[i])
        cJSON_AddItemToArray (agreed, cJSON_CreateString (id->valuestring));
      i++;
    }
  if (cJSON_GetArraySize (agreed) == 0)
    cJSON_DeleteItemFromObjectCaseSensitive (cJSON_GetObjectItemCaseSensitive (params,
                                                                               "notifications"),
                                             "taskIds");
  add_subscription_meta (params, call);
  sr_mcp_send_text (c, call->id,
                    sr_rpc_notification ("notifications/subscriptions/acknowledged", params));
  do
    for (i = 0, id = ids ? ids->child : NULL; id; i++, id = id->next)
      {
        _cleanup_free_ char *state = NULL;
        bool ended;

        if (watched[i] && now[i] == NULL)
          now[i] = sr_mcp_tasks_detailed (c->s->tasks, c->owner, id->valuestring);
        state = now[i] ? task_state (now[i], &ended) : NULL;
        if (state && (sent[i] == NULL || strcmp (state, sent[i]) != 0))
          {
            add_subscription_meta (now[i], call);
            sr_mcp_send_text (c, call->id,
                              sr_rpc_notification ("notifications/tasks", TAKE_PTR (now[i])));
            free (sent[i]);
            sent[i] = TAKE_PTR (state);
            watched[i] = !ended;
          }
        cJSON_Delete (TAKE_PTR (now[i]));
      }
  while (!sr_mcp_call_cancelled (call) && !sr_mcp_server_draining (c->s)
         && poll (&p, 1, LISTEN_POLL_MS) == 0);
  /* A server about to stop ends the subscription with its result (a
   * cancelled request gets none).  */
  if (!sr_mcp_call_cancelled (call))
    {
      cJSON *result = cJSON_CreateObject ();

      add_subscription_meta (result, call);
      sr_mcp_send_text (c, call->id,
                        sr_mcp_result_reply (call->id, "subscriptions/listen", result, true));
    }
  for (i = 0; i < n; i++)
    free (sent[i]);
  free (sent);
  free (now);
  free (watched);
  sr_mcp_call_end (call);
  return NULL;
}

static void
do_listen (struct sr_mcp_conn *c, const struct sr_rpc_message *m)
{
  const cJSON *filter = cJSON_GetObjectItemCaseSensitive (m->params, "notifications");
  const cJSON *ids = cJSON_GetObjectItemCaseSensitive (filter, "taskIds"), *id;

  if (!cJSON_IsObject (filter))
    return sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                              "Invalid params: notifications must be an object");
  if (ids && !cJSON_IsArray (ids))
    return sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                              "Invalid params: notifications.taskIds must be an array of strings");
  cJSON_ArrayForEach (id, ids)
    if (!cJSON_IsString (id))
      return sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                                "Invalid params: notifications.taskIds must be an array of "
                                "strings");
  sr_mcp_call_start (c, m, listen_main, SR_MCP_CALL_MODERN | SR_MCP_CALL_LISTEN);
}

/* A request of 2026-07-28: its _meta says all the server needs to know
 * of the client, nothing of it is kept for the next.  */
void
sr_mcp_handle_modern (struct sr_mcp_conn *c, const struct sr_rpc_message *m)
{
  const cJSON *level = cJSON_GetObjectItemCaseSensitive (request_meta (m), META_LOG_LEVEL);
  char *error;
  int wanted;

  if (sr_mcp_modern_check (m, &error) != 0)
    return sr_mcp_send_text (c, m->id, error);
  if (!sr_mcp_modern_method (m->method))
    return sr_mcp_send_error (c, m->id, SR_RPC_METHOD_NOT_FOUND, "Method not found: %s", m->method);
  wanted = cJSON_IsString (level) ? sr_mcp_log_level_index (level->valuestring) : -1;
  pthread_mutex_lock (&c->lock);
  c->log_level = wanted >= 0 ? wanted : SR_MCP_LOG_OFF;
  c->modern = true;
  pthread_mutex_unlock (&c->lock);

  if (strcmp (m->method, "server/discover") == 0)
    sr_mcp_send_text (c, m->id, sr_mcp_result_reply (m->id, m->method, discover_result (), true));
  else if (strcmp (m->method, "tools/list") == 0)
    sr_mcp_send_text (c, m->id,
                      sr_mcp_result_reply (m->id, m->method, sr_mcp_tools_list (c->s->cfg), true));
  else if (strcmp (m->method, "tools/call") == 0)
    sr_mcp_do_tools_call (c, m, true);
  else if (strcmp (m->method, "prompts/list") == 0)
    {
      cJSON *result = cJSON_CreateObject ();

      cJSON_AddArrayToObject (result, "prompts");
      sr_mcp_send_text (c, m->id, sr_mcp_result_reply (m->id, m->method, result, true));
    }
  else if (strcmp (m->method, "prompts/get") == 0)
    sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                       "Invalid params: this server has no prompts");
  else if (strcmp (m->method, "subscriptions/listen") == 0)
    do_listen (c, m);
  else if (strncmp (m->method, "tasks/", strlen ("tasks/")) == 0)
    {
      sr_mcp_send_text (c, m->id,
                        sr_mcp_tasks_handle (c->s->tasks, c->owner, m->method, m->id, m->params));
      /* A cancelled task may be queued for a slot: wake it to see.  */
      pthread_mutex_lock (&c->s->lock);
      pthread_cond_broadcast (&c->s->slot_freed);
      pthread_mutex_unlock (&c->s->lock);
    }
  else
    sr_mcp_do_resources (c, m, true);
}
