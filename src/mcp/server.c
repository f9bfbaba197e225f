#include "config.h"

#include "mcp/server-internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/utf8.h"
#include "common/json.h"
#include "common/util.h"
#include "mcp/download-link.h"
#include "mcp/jsonrpc.h"
#include "mcp/resources.h"
#include "mcp/rpc-id.h"
#include "mcp/tasks.h"
#include "mcp/tools.h"
#include "sandbox/service.h"

const char *const sr_mcp_protocol_versions[] = {
  SR_MCP_PROTOCOL_LATEST, "2025-06-18", "2025-03-26", "2024-11-05", NULL,
};

static const char *const log_levels[] = {
  "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", NULL,
};
#define LOG_DEFAULT 3 /* warning */

const char sr_mcp_instructions[]
  = "Runs code snippets in disposable sandboxes without network access. "
    "Call list_supported_languages for the languages, run_code to run "
    "one snippet; each run starts from a clean filesystem. For work over "
    "several steps on the same files, create_session (or upload_file) "
    "gives a session whose /mnt/data persists; pass its session_id to "
    "run_code and the file tools, and close_session when done.";

/* Progress notifications of one call come at most this often (one per
 * stream with output), but every stage change is sent.  */
#define PROGRESS_INTERVAL_NS (100u * 1000u * 1000u)
/* The output all of a call's notifications carry; after that they give
 * only the bytes so far.  The result has the output anyway: this is for
 * watching it come.  */
#define PROGRESS_OUTPUT_MAX (64u * 1024u)

/* --- the server --- */

int
sr_mcp_server_new (const struct sr_config *cfg, struct sr_mcp_server **ret, sr_error_t *err)
{
  struct sr_mcp_server *s = sr_xcalloc (1, sizeof *s);

  s->cfg = cfg;
  if (sr_mcp_link_key_init (&s->link_key, err) < 0
      || sr_service_open (cfg, SR_SERVICE_SERVER, "mcp", &s->service, err) < 0)
    {
      free (s);
      return -1;
    }
  pthread_mutex_init (&s->lock, NULL);
  pthread_cond_init (&s->slot_freed, NULL);
  s->tasks = sr_mcp_tasks_new (cfg->task_keep_ms);
  *ret = s;
  return 0;
}

void
sr_mcp_server_free (struct sr_mcp_server *s)
{
  if (s == NULL)
    return;
  /* A task's run may wait for a slot: wake it to see it is cancelled.  */
  pthread_mutex_lock (&s->lock);
  pthread_cond_broadcast (&s->slot_freed);
  pthread_mutex_unlock (&s->lock);
  sr_mcp_tasks_free (s->tasks);
  sr_service_close (s->service);
  explicit_bzero (&s->link_key, sizeof s->link_key);
  pthread_mutex_destroy (&s->lock);
  pthread_cond_destroy (&s->slot_freed);
  free (s);
}

void
sr_mcp_server_drain (struct sr_mcp_server *s)
{
  pthread_mutex_lock (&s->lock);
  s->draining = true;
  pthread_mutex_unlock (&s->lock);
}

bool
sr_mcp_server_draining (struct sr_mcp_server *s)
{
  bool draining;

  pthread_mutex_lock (&s->lock);
  draining = s->draining;
  pthread_mutex_unlock (&s->lock);
  return draining;
}

struct sr_sessions *
sr_mcp_server_sessions (struct sr_mcp_server *s)
{
  return sr_service_sessions (s->service);
}

const struct sr_mcp_link_key *
sr_mcp_server_link_key (const struct sr_mcp_server *s)
{
  return &s->link_key;
}

char *
sr_mcp_oversized_error (const cJSON *id, uint64_t size, size_t limit)
{
  _cleanup_free_ char *got = size ? sr_xasprintf (": it has %llu bytes", (unsigned long long) size)
                                  : sr_xstrdup ("");
  _cleanup_free_ char *msg = sr_xasprintf (
      "Invalid Request: the message is larger than the limit of %zu bytes "
      "(max_message_size)%s; send a large file in pieces (upload_file with offset)",
      limit, got);

  return sr_rpc_error (id, SR_RPC_INVALID_REQUEST, msg, NULL);
}

char *
sr_mcp_oversized_reply (const char *json, size_t len, size_t limit)
{
  size_t keep = len < SR_RPC_ID_KEEP ? len : SR_RPC_ID_KEEP;
  _cleanup_json_ cJSON *id = sr_rpc_find_id (json, keep, json + len - keep, keep);

  return sr_mcp_oversized_error (id, len, limit);
}

/* --- sending --- */

void
sr_mcp_send_text (struct sr_mcp_conn *c, const cJSON *related_id, char *json)
{
  c->send (c->transport, related_id, json);
  free (json);
}

void
sr_mcp_send_error (struct sr_mcp_conn *c, const cJSON *id, int code, const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = sr_xvasprintf (fmt, ap);
  va_end (ap);
  sr_mcp_send_text (c, id, sr_rpc_error (id, code, msg, NULL));
}

int
sr_mcp_log_level_index (const char *name)
{
  for (int i = 0; log_levels[i]; i++)
    if (strcmp (log_levels[i], name) == 0)
      return i;
  return -1;
}

/* notifications/message, when the client asked for this level.  */
static void
log_message (struct sr_mcp_conn *c, int level, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
static void
log_message (struct sr_mcp_conn *c, int level, const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  cJSON *params;
  va_list ap;
  int wanted;

  pthread_mutex_lock (&c->lock);
  wanted = c->log_level;
  pthread_mutex_unlock (&c->lock);
  if (level < wanted)
    return;
  va_start (ap, fmt);
  msg = sr_xvasprintf (fmt, ap);
  va_end (ap);
  params = cJSON_CreateObject ();
  cJSON_AddStringToObject (params, "level", log_levels[level]);
  cJSON_AddStringToObject (params, "logger", "sandbox-runner");
  cJSON_AddStringToObject (params, "data", msg);
  sr_mcp_send_text (c, NULL, sr_rpc_notification ("notifications/message", params));
}

/* --- calls --- */

static void
call_free (struct call *call)
{
  cJSON_Delete (call->id);
  cJSON_Delete (call->params);
  cJSON_Delete (call->progress_token);
  free (call->nul_member);
  free (call->pending);
  free (call->files_url);
  if (call->cancel_fd >= 0)
    close (call->cancel_fd);
  free (call);
}

static void
send_progress (struct call *call, const char *message, const struct pending *p)
{
  cJSON *params = cJSON_CreateObject ();

  call->progress++;
  cJSON_AddItemToObject (params, "progressToken", cJSON_Duplicate (call->progress_token, 1));
  cJSON_AddNumberToObject (params, "progress", (double) call->progress);
  cJSON_AddStringToObject (params, "message", message);
  if (p)
    {
      cJSON *meta = cJSON_AddObjectToObject (params, "_meta");

      cJSON_AddStringToObject (meta, "sandbox-runner/stream", p->stream);
      if (p->skipped)
        cJSON_AddNumberToObject (meta, "sandbox-runner/skipped", (double) p->skipped);
    }
  sr_mcp_send_text (call->conn, call->id, sr_rpc_notification ("notifications/progress", params));
}

/* How many of the last bytes of buf[0..len) begin a UTF-8 sequence that
 * has not come whole yet: they wait for the rest, so that a character
 * split between chunks is not mangled.  */
static size_t
utf8_incomplete_tail (const char *buf, size_t len)
{
  for (size_t back = 1; back <= 3 && back <= len; back++)
    {
      unsigned char c = (unsigned char) buf[len - back];
      size_t need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;

      if ((c & 0xc0) != 0x80)
        return need > back ? back : 0;
    }
  return 0;
}

/* Sends what p holds (but an incomplete last character), as text.  */
static void
send_pending (struct call *call, struct pending *p)
{
  size_t keep = utf8_incomplete_tail (p->data, p->len), len = p->len - keep, clean_len;
  _cleanup_free_ char *clean = NULL;

  if (len == 0)
    return;
  clean = sr_utf8_sanitize (p->data, len, &clean_len);
  send_progress (call, clean, p);
  call->streamed += len;
  memmove (p->data, p->data + len, keep);
  p->len = keep;
  p->skipped = 0;
}

static void
on_progress (const char *stage, uint64_t output_bytes, const char *stream, const char *chunk,
             size_t len, void *userdata)
{
  struct call *call = userdata;
  uint64_t now = sr_now_ns ();
  _cleanup_free_ char *message = NULL;
  bool streaming;

  if (call->progress_token == NULL)
    return;
  streaming = call->streamed < PROGRESS_OUTPUT_MAX;
  if (chunk && streaming)
    {
      struct pending *p;
      size_t room;

      if (call->pending == NULL)
        call->pending = sr_xcalloc (2, sizeof *call->pending);
      p = &call->pending[strcmp (stream, "stderr") == 0];
      room = sizeof p->data - p->len;
      p->stream = stream;
      memcpy (p->data + p->len, chunk, len < room ? len : room);
      p->len += len < room ? len : room;
      p->skipped += len < room ? 0 : len - room;
    }
  if (call->last_stage == stage && now - call->last_progress_ns < PROGRESS_INTERVAL_NS)
    return;
  call->last_stage = stage;
  call->last_progress_ns = now;
  if (chunk && streaming)
    {
      send_pending (call, &call->pending[0]);
      send_pending (call, &call->pending[1]);
      return;
    }
  message = output_bytes ? sr_xasprintf ("%s: %llu bytes of output", stage,
                                         (unsigned long long) output_bytes)
                         : sr_xasprintf ("%s", stage);
  send_progress (call, message, NULL);
}

bool
sr_mcp_call_cancelled (void *arg)
{
  struct call *call = arg;
  bool cancelled;

  pthread_mutex_lock (&call->conn->lock);
  cancelled = call->cancelled;
  pthread_mutex_unlock (&call->conn->lock);
  return cancelled;
}

/* Waits for one of the max_concurrent run slots; false when the run was
 * cancelled (cancelled (arg) says it) while it queued.  */
bool
sr_mcp_take_slot (struct sr_mcp_server *s, bool (*cancelled) (void *), void *arg)
{
  bool got = false;

  pthread_mutex_lock (&s->lock);
  for (;;)
    {
      if (cancelled (arg))
        break;
      if (s->running < s->cfg->max_concurrent)
        {
          s->running++;
          got = true;
          break;
        }
      pthread_cond_wait (&s->slot_freed, &s->lock);
    }
  pthread_mutex_unlock (&s->lock);
  return got;
}

void
sr_mcp_give_slot (struct sr_mcp_server *s)
{
  pthread_mutex_lock (&s->lock);
  s->running--;
  pthread_cond_broadcast (&s->slot_freed);
  pthread_mutex_unlock (&s->lock);
}

static void
on_warning (const char *message, void *userdata)
{
  struct call *call = userdata;

  log_message (call->conn, 3, "%s", message);
}

/* What a tool or a resource of connection c works with.  */
static struct sr_mcp_tool_ctx
conn_ctx (struct sr_mcp_conn *c, int cancel_fd, const char *files_url, void *userdata)
{
  struct sr_mcp_server *s = c->s;

  /* Without a call (userdata) there is nothing to report progress of.  */
  return (struct sr_mcp_tool_ctx) {
    .cfg = s->cfg, .service = s->service, .sessions = sr_service_sessions (s->service),
    .owner = c->owner, .files_url = files_url, .link_key = &s->link_key,
    .client = c->client, .cancel_fd = cancel_fd,
    .on_progress = userdata ? on_progress : NULL, .on_warning = userdata ? on_warning : NULL,
    .userdata = userdata,
  };
}

/* Starts fn (arg) on a detached thread with a small stack, as a call's
 * or a task's run; false when it could not start.  */
bool
sr_mcp_spawn (void *(*fn) (void *), void *arg)
{
  pthread_attr_t attr;
  pthread_t thread;
  bool started;

  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&attr, 256u << 10);
  started = pthread_create (&thread, &attr, fn, arg) == 0;
  pthread_attr_destroy (&attr);
  return started;
}

static void *
call_main (void *arg)
{
  struct call *call = arg;
  struct sr_mcp_conn *c = call->conn;
  struct sr_mcp_server *s = c->s;
  const cJSON *name = cJSON_GetObjectItemCaseSensitive (call->params, "name");
  const cJSON *args = cJSON_GetObjectItemCaseSensitive (call->params, "arguments");
  struct sr_mcp_tool_ctx ctx = conn_ctx (c, call->cancel_fd, call->files_url, call);
  bool slot = sr_mcp_tool_runs_code (name->valuestring), cancelled = false, tasked;
  cJSON *result = NULL;

  ctx.nul_argument = call->nul_member;
  tasked = call->taskable && sr_mcp_task_call (call, &ctx, name->valuestring, args, &result);
  if (!tasked && (!slot || sr_mcp_take_slot (s, sr_mcp_call_cancelled, call)))
    {
      uint64_t start = sr_now_ns ();

      result = sr_mcp_tool_call (&ctx, name->valuestring, args, &cancelled);
      if (slot)
        sr_mcp_give_slot (s);
      /* Output held back by the rate goes out before the result.  */
      if (call->pending && !cancelled)
        {
          send_pending (call, &call->pending[0]);
          send_pending (call, &call->pending[1]);
        }
      sr_mcp_resources_after_call (c->resources, &ctx, args, result);
      log_message (c, 0, "tools/call %s took %.1f ms", name->valuestring,
                   (double) (sr_now_ns () - start) / 1e6);
    }
  /* A cancelled request gets no response, as the protocol asks.  */
  if (result && !cancelled && !sr_mcp_call_cancelled (call))
    sr_mcp_send_text (c, call->id,
                      sr_mcp_result_reply (call->id, "tools/call", result, call->modern));
  else
    cJSON_Delete (result);

  sr_mcp_call_end (call);
  return NULL;
}

void
sr_mcp_call_end (struct call *call)
{
  struct sr_mcp_conn *c = call->conn;

  pthread_mutex_lock (&c->lock);
  for (struct call **p = &c->calls; *p; p = &(*p)->next)
    if (*p == call)
      {
        *p = call->next;
        break;
      }
  pthread_cond_broadcast (&c->idle);
  pthread_mutex_unlock (&c->lock);
  call_free (call);
}

bool
sr_mcp_conn_pending (struct sr_mcp_conn *c, const cJSON *id)
{
  bool found = false;

  pthread_mutex_lock (&c->lock);
  for (struct call *call = c->calls; call && !found; call = call->next)
    found = sr_rpc_same_id (call->id, id);
  pthread_mutex_unlock (&c->lock);
  return found;
}

size_t
sr_mcp_conn_in_flight (struct sr_mcp_conn *c)
{
  size_t n = 0;

  pthread_mutex_lock (&c->lock);
  for (struct call *call = c->calls; call; call = call->next)
    n += !call->listen;
  pthread_mutex_unlock (&c->lock);
  return n;
}

/* Marks a call cancelled and kills its run.  conn->lock held.  */
static void
cancel_locked (struct call *call)
{
  uint64_t one = 1;

  call->cancelled = true;
  (void) !write (call->cancel_fd, &one, sizeof one);
}

static void
start_call (struct sr_mcp_conn *c, const struct sr_rpc_message *m, bool modern, bool taskable)
{
  const cJSON *name = cJSON_GetObjectItemCaseSensitive (m->params, "name");
  const cJSON *token = sr_rpc_progress_token (m);
  const cJSON *args = cJSON_GetObjectItemCaseSensitive (m->params, "arguments");

  if (!cJSON_IsString (name))
    return sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                              "Invalid params: name must be a string");
  if (!sr_mcp_tool_exists (c->s->cfg, name->valuestring))
    return sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS, "Unknown tool: %s",
                              name->valuestring);
  if (args && !cJSON_IsObject (args) && !cJSON_IsNull (args))
    return sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                              "Invalid params: arguments must be an object");
  if (token && !cJSON_IsString (token) && !cJSON_IsNumber (token))
    return sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                              "Invalid params: _meta.progressToken must be a string or a number");
  sr_mcp_call_start (c, m, call_main,
                     (modern ? SR_MCP_CALL_MODERN : 0) | (taskable ? SR_MCP_CALL_TASKABLE : 0));
}

void
sr_mcp_call_start (struct sr_mcp_conn *c, const struct sr_rpc_message *m, void *(*fn) (void *),
                   unsigned flags)
{
  const cJSON *token = sr_rpc_progress_token (m);
  struct call *call;

  if (sr_mcp_conn_pending (c, m->id))
    return sr_mcp_send_error (c, m->id, SR_RPC_INVALID_REQUEST,
                              "Invalid Request: a request with this id is still in flight");

  call = sr_xcalloc (1, sizeof *call);
  call->conn = c;
  call->id = cJSON_Duplicate (m->id, 1);
  call->params = cJSON_Duplicate (m->params, 1);
  call->progress_token = token ? cJSON_Duplicate (token, 1) : NULL;
  call->nul_member = m->nul_member ? sr_xstrdup (m->nul_member) : NULL;
  call->modern = flags & SR_MCP_CALL_MODERN;
  call->taskable = flags & SR_MCP_CALL_TASKABLE;
  call->listen = flags & SR_MCP_CALL_LISTEN;
  call->cancel_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (call->cancel_fd < 0)
    {
      sr_mcp_send_error (c, m->id, SR_RPC_INTERNAL_ERROR, "eventfd: %s", strerror (errno));
      call_free (call);
      return;
    }

  pthread_mutex_lock (&c->lock);
  if (c->closing)
    {
      pthread_mutex_unlock (&c->lock);
      call_free (call);
      return;
    }
  call->files_url = c->files_url ? sr_xstrdup (c->files_url) : NULL;
  call->next = c->calls;
  c->calls = call;
  pthread_mutex_unlock (&c->lock);

  if (!sr_mcp_spawn (fn, call))
    {
      pthread_mutex_lock (&c->lock);
      c->calls = call->next;
      pthread_mutex_unlock (&c->lock);
      sr_mcp_send_error (c, m->id, SR_RPC_INTERNAL_ERROR, "could not start a worker thread");
      call_free (call);
    }
}

static void
cancel_request (struct sr_mcp_conn *c, const cJSON *params)
{
  const cJSON *id = cJSON_GetObjectItemCaseSensitive (params, "requestId");

  if (id == NULL)
    return;
  pthread_mutex_lock (&c->lock);
  for (struct call *call = c->calls; call; call = call->next)
    if (sr_rpc_same_id (call->id, id))
      cancel_locked (call);
  pthread_mutex_unlock (&c->lock);
  /* A queued call waits on the slot condition: wake it to see.  */
  pthread_mutex_lock (&c->s->lock);
  pthread_cond_broadcast (&c->s->slot_freed);
  pthread_mutex_unlock (&c->s->lock);
}

/* --- methods --- */

/* What the server offers, to a client of either era.  A modern one gets
 * no resource subscriptions (resources/subscribe is gone, and a
 * subscriptions/listen carries the status of tasks only), the empty list
 * of prompts it may ask for, and tasks.  */
cJSON *
sr_mcp_capabilities (bool modern)
{
  cJSON *caps = cJSON_CreateObject ();

  cJSON_AddBoolToObject (cJSON_AddObjectToObject (caps, "tools"), "listChanged", false);
  cJSON_AddObjectToObject (caps, "logging");
  if (modern)
    {
      cJSON_AddObjectToObject (caps, "resources");
      cJSON_AddObjectToObject (caps, "prompts");
      cJSON_AddObjectToObject (cJSON_AddObjectToObject (caps, "extensions"),
                               SR_MCP_TASKS_EXTENSION);
    }
  else
    cJSON_AddItemToObject (caps, "resources", sr_mcp_resources_capability ());
  return caps;
}

cJSON *
sr_mcp_server_info (void)
{
  cJSON *info = cJSON_CreateObject ();

  cJSON_AddStringToObject (info, "name", "sandbox-runner");
  cJSON_AddStringToObject (info, "title", "sandbox-runner");
  cJSON_AddStringToObject (info, "version", PACKAGE_VERSION);
  return info;
}

static void
do_initialize (struct sr_mcp_conn *c, const struct sr_rpc_message *m)
{
  const cJSON *version = cJSON_GetObjectItemCaseSensitive (m->params, "protocolVersion");
  const char *chosen = SR_MCP_PROTOCOL_LATEST;
  cJSON *result;

  if (!cJSON_IsString (version))
    return sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                              "Invalid params: protocolVersion must be a string");
  /* The client's version when we speak it, else our latest: the client
   * then decides whether it can go on.  */
  for (const char *const *v = sr_mcp_protocol_versions; *v; v++)
    if (strcmp (*v, version->valuestring) == 0)
      chosen = *v;

  result = cJSON_CreateObject ();
  cJSON_AddStringToObject (result, "protocolVersion", chosen);
  cJSON_AddItemToObject (result, "capabilities", sr_mcp_capabilities (false));
  cJSON_AddItemToObject (result, "serverInfo", sr_mcp_server_info ());
  cJSON_AddStringToObject (result, "instructions", sr_mcp_instructions);
  pthread_mutex_lock (&c->lock);
  c->initialized = true;
  snprintf (c->protocol, sizeof c->protocol, "%s", chosen);
  pthread_mutex_unlock (&c->lock);
  sr_mcp_send_text (c, m->id, sr_rpc_result (m->id, result));
  const char *history_problem = sr_service_history_problem (c->s->service);

  if (history_problem)
    log_message (c, 3, "the run history is unavailable: %s", history_problem);
  if (sr_service_sessions (c->s->service) == NULL)
    log_message (c, 3, "sessions are unavailable: %s",
                 sr_service_sessions_problem (c->s->service));
}

static void
do_set_level (struct sr_mcp_conn *c, const struct sr_rpc_message *m)
{
  const cJSON *level = cJSON_GetObjectItemCaseSensitive (m->params, "level");
  int i = cJSON_IsString (level) ? sr_mcp_log_level_index (level->valuestring) : -1;

  if (i < 0)
    return sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                              "Invalid params: level must be one of debug, info, notice, warning, "
                              "error, critical, alert, emergency");
  pthread_mutex_lock (&c->lock);
  c->log_level = i;
  pthread_mutex_unlock (&c->lock);
  sr_mcp_send_text (c, m->id, sr_rpc_result (m->id, NULL));
}

void
sr_mcp_do_resources (struct sr_mcp_conn *c, const struct sr_rpc_message *m, bool modern)
{
  struct sr_mcp_tool_ctx ctx = conn_ctx (c, -1, c->files_url, NULL);
  char *reply = sr_mcp_resources_handle (c->resources, &ctx, m->method, m->id, m->params);

  if (reply == NULL)
    return sr_mcp_send_error (c, m->id, SR_RPC_METHOD_NOT_FOUND, "Method not found: %s", m->method);
  sr_mcp_send_text (c, m->id, modern ? sr_mcp_modernize_reply (reply, m->method) : reply);
}

void
sr_mcp_do_tools_call (struct sr_mcp_conn *c, const struct sr_rpc_message *m, bool modern)
{
  if (m->params == NULL)
    sr_mcp_send_error (c, m->id, SR_RPC_INVALID_PARAMS, "Invalid params: tools/call needs params");
  else
    start_call (c, m, modern, modern && sr_mcp_takes_tasks (m));
}

static void
handle_request (struct sr_mcp_conn *c, const struct sr_rpc_message *m)
{
  if (sr_mcp_request_modern (m, NULL))
    sr_mcp_handle_modern (c, m);
  else if (strcmp (m->method, "initialize") == 0)
    do_initialize (c, m);
  else if (strcmp (m->method, "ping") == 0)
    sr_mcp_send_text (c, m->id, sr_rpc_result (m->id, NULL));
  else if (strcmp (m->method, "tools/list") == 0)
    sr_mcp_send_text (c, m->id, sr_rpc_result (m->id, sr_mcp_tools_list (c->s->cfg)));
  else if (strcmp (m->method, "tools/call") == 0)
    sr_mcp_do_tools_call (c, m, false);
  else if (strcmp (m->method, "logging/setLevel") == 0)
    do_set_level (c, m);
  else if (strncmp (m->method, "resources/", strlen ("resources/")) == 0)
    sr_mcp_do_resources (c, m, false);
  else
    sr_mcp_send_error (c, m->id, SR_RPC_METHOD_NOT_FOUND, "Method not found: %s", m->method);
}

static void
handle_notification (struct sr_mcp_conn *c, const struct sr_rpc_message *m)
{
  if (strcmp (m->method, "notifications/cancelled") == 0)
    cancel_request (c, m->params);
  /* notifications/initialized and anything unknown need nothing.  */
}

/* --- connections --- */

/* Resource notifications go on the connection's own stream (the GET
 * stream over HTTP): they belong to no request.  */
static void
resources_notify (void *userdata, char *json)
{
  struct sr_mcp_conn *c = userdata;
  bool modern;

  pthread_mutex_lock (&c->lock);
  modern = c->modern;
  pthread_mutex_unlock (&c->lock);
  if (modern)
    free (json);
  else
    sr_mcp_send_text (c, NULL, json);
}

struct sr_mcp_conn *
sr_mcp_conn_new (struct sr_mcp_server *s, sr_mcp_send_fn send, void *transport)
{
  struct sr_mcp_conn *c = sr_xcalloc (1, sizeof *c);

  c->s = s;
  c->send = send;
  c->transport = transport;
  c->log_level = LOG_DEFAULT;
  c->resources = sr_mcp_resources_new (resources_notify, c);
  c->client = sr_service_audit_client ("stdio");
  pthread_mutex_init (&c->lock, NULL);
  pthread_cond_init (&c->idle, NULL);
  return c;
}

void
sr_mcp_conn_set_client (struct sr_mcp_conn *c, const char *identity)
{
  free (c->client);
  c->client = sr_service_audit_client (identity);
}

void
sr_mcp_conn_handle (struct sr_mcp_conn *c, const char *json, size_t len)
{
  struct sr_rpc_message m;
  char *error = NULL;

  if (len > c->s->cfg->max_message_size)
    return sr_mcp_send_text (c, NULL,
                             sr_mcp_oversized_reply (json, len, c->s->cfg->max_message_size));
  if (sr_rpc_parse (json, len, &m, &error) < 0)
    return sr_mcp_send_text (c, NULL, error);
  switch (m.kind)
    {
    case SR_RPC_REQUEST:
      handle_request (c, &m);
      break;
    case SR_RPC_NOTIFICATION:
      handle_notification (c, &m);
      break;
    case SR_RPC_RESPONSE:
      break; /* we send no requests */
    }
  sr_rpc_message_done (&m);
}

void
sr_mcp_conn_set_owner (struct sr_mcp_conn *c, const char *owner)
{
  free (c->owner);
  c->owner = owner ? sr_xstrdup (owner) : NULL;
}

void
sr_mcp_conn_set_files_url (struct sr_mcp_conn *c, const char *url)
{
  pthread_mutex_lock (&c->lock);
  free (c->files_url);
  c->files_url = url ? sr_xstrdup (url) : NULL;
  pthread_mutex_unlock (&c->lock);
}

bool
sr_mcp_conn_initialized (const struct sr_mcp_conn *c)
{
  return c->initialized;
}

const char *
sr_mcp_conn_protocol (const struct sr_mcp_conn *c)
{
  return c->initialized ? c->protocol : NULL;
}

void
sr_mcp_conn_close (struct sr_mcp_conn *c)
{
  if (c == NULL)
    return;
  pthread_mutex_lock (&c->lock);
  c->closing = true;
  for (struct call *call = c->calls; call; call = call->next)
    cancel_locked (call);
  pthread_mutex_unlock (&c->lock);
  pthread_mutex_lock (&c->s->lock);
  pthread_cond_broadcast (&c->s->slot_freed);
  pthread_mutex_unlock (&c->s->lock);

  pthread_mutex_lock (&c->lock);
  while (c->calls)
    pthread_cond_wait (&c->idle, &c->lock);
  pthread_mutex_unlock (&c->lock);
  sr_mcp_resources_free (c->resources);
  pthread_mutex_destroy (&c->lock);
  pthread_cond_destroy (&c->idle);
  free (c->client);
  free (c->owner);
  free (c->files_url);
  free (c);
}
