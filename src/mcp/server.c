#include "config.h"

#include "mcp/server.h"

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

static const char *const modern_versions[] = { SR_MCP_PROTOCOL_MODERN, NULL };

/* The keys of a modern request's params._meta, and of a result's.  */
#define META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"
#define META_LOG_LEVEL "io.modelcontextprotocol/logLevel"
#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"

static const char *const log_levels[] = {
  "debug", "info", "notice", "warning", "error", "critical", "alert", "emergency", NULL,
};
#define LOG_DEFAULT 3 /* warning */
/* A modern request that names no _meta logLevel gets no log message.  */
#define LOG_OFF 8

static const char instructions[]
  = "Runs code snippets in disposable sandboxes without network access. "
    "Call list_supported_languages for the languages, run_code to run "
    "one snippet; each run starts from a clean filesystem. For work over "
    "several steps on the same files, create_session (or upload_file) "
    "gives a session whose /mnt/data persists; pass its session_id to "
    "run_code and the file tools, and close_session when done.";

/* Progress notifications of one call come at most this often (one per
 * stream with output), but every stage change is sent.  */
#define PROGRESS_INTERVAL_NS (100u * 1000u * 1000u)
/* The output a call's notifications carry: at most this much of a stream
 * in one (what came beyond it meanwhile is left out, and counted), and
 * this much in all; after that they give only the bytes so far.  The
 * result has the output anyway: this is for watching it come.  */
#define PROGRESS_CHUNK_MAX (16u * 1024u)
#define PROGRESS_OUTPUT_MAX (64u * 1024u)

/* Output of one stream not sent yet.  */
struct pending
{
  const char *stream;          /* "stdout", "stderr", "output"; NULL: none */
  char data[PROGRESS_CHUNK_MAX];
  size_t len;
  uint64_t skipped;            /* left out since the last one sent */
};

struct sr_mcp_server
{
  const struct sr_config *cfg;
  struct sr_service *service;
  struct sr_mcp_link_key link_key;
  pthread_mutex_t lock;
  pthread_cond_t slot_freed;
  uint64_t running;            /* runs holding a slot */
  struct sr_mcp_tasks *tasks;
};

/* A tools/call in flight, on its own thread.  */
struct call
{
  struct sr_mcp_conn *conn;
  cJSON *id, *params, *progress_token;
  char *nul_member;            /* the message's: see struct sr_rpc_message */
  char *files_url;             /* of the request that made the call */
  int cancel_fd;               /* eventfd, written to cancel */
  bool cancelled;              /* under conn->lock */
  uint64_t progress;
  uint64_t last_progress_ns;
  const char *last_stage;
  struct pending *pending;     /* [2]: stdout (or a shell's output), stderr */
  uint64_t streamed;           /* output bytes the notifications carried */
  bool modern;                 /* a request of 2026-07-28 */
  bool taskable;               /* of a client that takes tasks: may become one */
  struct call *next;
};

struct sr_mcp_conn
{
  struct sr_mcp_server *s;
  sr_mcp_send_fn send;
  void *transport;
  pthread_mutex_t lock;
  pthread_cond_t idle;
  struct call *calls;
  struct sr_mcp_resources *resources;
  bool initialized;
  bool closing;
  /* It served a request of 2026-07-28, which has no notification but on
   * a subscription (not served): no resource notification goes out.  */
  bool modern;
  char *owner;                 /* of the sessions it makes; NULL: every session */
  char *files_url;             /* of the request being handled */
  char protocol[16];
  int log_level;
  char *client;                /* the caller, as the audit trail records it */
};

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

/* Whether the client of m declares the Tasks extension.  */
static bool
declares_tasks (const struct sr_rpc_message *m)
{
  const cJSON *caps = cJSON_GetObjectItemCaseSensitive (request_meta (m), META_CAPABILITIES);
  const cJSON *ext = cJSON_GetObjectItemCaseSensitive (caps, "extensions");

  return cJSON_IsObject (cJSON_GetObjectItemCaseSensitive (ext, SR_MCP_TASKS_EXTENSION));
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
      /* The task methods are the extension's, for a client that takes it.  */
      if (strncmp (m->method, "tasks/", strlen ("tasks/")) != 0
          || !sr_mcp_modern_method (m->method) || declares_tasks (m))
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
static char *
result_reply (const cJSON *id, const char *method, cJSON *result, bool modern)
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
static char *
modernize_reply (char *reply, const char *method)
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

/* --- sending --- */

static void
send_text (struct sr_mcp_conn *c, const cJSON *related_id, char *json)
{
  c->send (c->transport, related_id, json);
  free (json);
}

static void
send_error (struct sr_mcp_conn *c, const cJSON *id, int code, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));
static void
send_error (struct sr_mcp_conn *c, const cJSON *id, int code, const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = sr_xvasprintf (fmt, ap);
  va_end (ap);
  send_text (c, id, sr_rpc_error (id, code, msg, NULL));
}

static int
level_index (const char *name)
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
  send_text (c, NULL, sr_rpc_notification ("notifications/message", params));
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
  send_text (call->conn, call->id, sr_rpc_notification ("notifications/progress", params));
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

static bool
call_cancelled (void *arg)
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
static bool
take_slot (struct sr_mcp_server *s, bool (*cancelled) (void *), void *arg)
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

static void
give_slot (struct sr_mcp_server *s)
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
static bool
spawn (void *(*fn) (void *), void *arg)
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
    .on_progress = task_progress, .userdata = run->task,
  };
  cJSON *result = NULL;

  if (!slot || take_slot (s, task_cancelled, run->task))
    {
      result = sr_mcp_tool_call (&ctx, run->name, run->args, &cancelled);
      if (slot)
        give_slot (s);
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
static bool
task_call (struct call *call, const struct sr_mcp_tool_ctx *ctx, const char *name,
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
  if (!spawn (task_main, run))
    {
      sr_mcp_task_end (task, NULL, "could not start a worker thread");
      task_run_free (run);
    }

  while (!ended && sr_now_ns () < deadline)
    {
      if (call_cancelled (call))
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
  if (ended || call_cancelled (call))
    *ret_result = sr_mcp_task_forget (task);
  else
    send_text (c, call->id, result_reply (call->id, "tools/call", sr_mcp_task_created (task),
                                          true));
  sr_mcp_task_unref (task);
  return true;
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
  tasked = call->taskable && task_call (call, &ctx, name->valuestring, args, &result);
  if (!tasked && (!slot || take_slot (s, call_cancelled, call)))
    {
      uint64_t start = sr_now_ns ();

      result = sr_mcp_tool_call (&ctx, name->valuestring, args, &cancelled);
      if (slot)
        give_slot (s);
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
  if (result && !cancelled && !call_cancelled (call))
    send_text (c, call->id, result_reply (call->id, "tools/call", result, call->modern));
  else
    cJSON_Delete (result);

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
  return NULL;
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
    n++;
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
  struct call *call;
  bool duplicate;

  if (!cJSON_IsString (name))
    return send_error (c, m->id, SR_RPC_INVALID_PARAMS, "Invalid params: name must be a string");
  if (!sr_mcp_tool_exists (c->s->cfg, name->valuestring))
    return send_error (c, m->id, SR_RPC_INVALID_PARAMS, "Unknown tool: %s", name->valuestring);
  if (args && !cJSON_IsObject (args) && !cJSON_IsNull (args))
    return send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                       "Invalid params: arguments must be an object");
  if (token && !cJSON_IsString (token) && !cJSON_IsNumber (token))
    return send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                       "Invalid params: _meta.progressToken must be a string or a number");
  duplicate = sr_mcp_conn_pending (c, m->id);
  if (duplicate)
    return send_error (c, m->id, SR_RPC_INVALID_REQUEST,
                       "Invalid Request: a request with this id is still in flight");

  call = sr_xcalloc (1, sizeof *call);
  call->conn = c;
  call->id = cJSON_Duplicate (m->id, 1);
  call->params = cJSON_Duplicate (m->params, 1);
  call->progress_token = token ? cJSON_Duplicate (token, 1) : NULL;
  call->nul_member = m->nul_member ? sr_xstrdup (m->nul_member) : NULL;
  call->modern = modern;
  call->taskable = taskable;
  call->cancel_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (call->cancel_fd < 0)
    {
      send_error (c, m->id, SR_RPC_INTERNAL_ERROR, "eventfd: %s", strerror (errno));
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

  if (!spawn (call_main, call))
    {
      pthread_mutex_lock (&c->lock);
      c->calls = call->next;
      pthread_mutex_unlock (&c->lock);
      send_error (c, m->id, SR_RPC_INTERNAL_ERROR, "could not start a worker thread");
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
 * no subscriptions (resources/subscribe is gone, and subscriptions/listen
 * is not served), the empty list of prompts it may ask for, and tasks.  */
static cJSON *
capabilities (bool modern)
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

static cJSON *
server_info (void)
{
  cJSON *info = cJSON_CreateObject ();

  cJSON_AddStringToObject (info, "name", "sandbox-runner");
  cJSON_AddStringToObject (info, "title", "sandbox-runner");
  cJSON_AddStringToObject (info, "version", PACKAGE_VERSION);
  return info;
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
  cJSON_AddItemToObject (result, "capabilities", capabilities (true));
  cJSON_AddStringToObject (result, "instructions", instructions);
  cJSON_AddItemToObject (cJSON_AddObjectToObject (result, "_meta"), META_SERVER_INFO,
                         server_info ());
  return result;
}

static void
do_initialize (struct sr_mcp_conn *c, const struct sr_rpc_message *m)
{
  const cJSON *version = cJSON_GetObjectItemCaseSensitive (m->params, "protocolVersion");
  const char *chosen = SR_MCP_PROTOCOL_LATEST;
  cJSON *result;

  if (!cJSON_IsString (version))
    return send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                       "Invalid params: protocolVersion must be a string");
  /* The client's version when we speak it, else our latest: the client
   * then decides whether it can go on.  */
  for (const char *const *v = sr_mcp_protocol_versions; *v; v++)
    if (strcmp (*v, version->valuestring) == 0)
      chosen = *v;

  result = cJSON_CreateObject ();
  cJSON_AddStringToObject (result, "protocolVersion", chosen);
  cJSON_AddItemToObject (result, "capabilities", capabilities (false));
  cJSON_AddItemToObject (result, "serverInfo", server_info ());
  cJSON_AddStringToObject (result, "instructions", instructions);
  pthread_mutex_lock (&c->lock);
  c->initialized = true;
  snprintf (c->protocol, sizeof c->protocol, "%s", chosen);
  pthread_mutex_unlock (&c->lock);
  send_text (c, m->id, sr_rpc_result (m->id, result));
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
  int i = cJSON_IsString (level) ? level_index (level->valuestring) : -1;

  if (i < 0)
    return send_error (c, m->id, SR_RPC_INVALID_PARAMS,
                       "Invalid params: level must be one of debug, info, notice, warning, "
                       "error, critical, alert, emergency");
  pthread_mutex_lock (&c->lock);
  c->log_level = i;
  pthread_mutex_unlock (&c->lock);
  send_text (c, m->id, sr_rpc_result (m->id, NULL));
}

static void
do_resources (struct sr_mcp_conn *c, const struct sr_rpc_message *m, bool modern)
{
  struct sr_mcp_tool_ctx ctx = conn_ctx (c, -1, c->files_url, NULL);
  char *reply = sr_mcp_resources_handle (c->resources, &ctx, m->method, m->id, m->params);

  if (reply == NULL)
    return send_error (c, m->id, SR_RPC_METHOD_NOT_FOUND, "Method not found: %s", m->method);
  send_text (c, m->id, modern ? modernize_reply (reply, m->method) : reply);
}

/* Whether the call of m may become a task: a run (run_code, shell_exec)
 * of a client whose capabilities name the Tasks extension.  */
static bool
takes_tasks (const struct sr_rpc_message *m)
{
  const cJSON *name = cJSON_GetObjectItemCaseSensitive (m->params, "name");

  return declares_tasks (m) && cJSON_IsString (name)
         && (strcmp (name->valuestring, "run_code") == 0
             || strcmp (name->valuestring, "shell_exec") == 0);
}

static void
do_tools_call (struct sr_mcp_conn *c, const struct sr_rpc_message *m, bool modern)
{
  if (m->params == NULL)
    send_error (c, m->id, SR_RPC_INVALID_PARAMS, "Invalid params: tools/call needs params");
  else
    start_call (c, m, modern, modern && takes_tasks (m));
}

/* A request of 2026-07-28: its _meta says all the server needs to know
 * of the client, nothing of it is kept for the next.  */
static void
handle_modern (struct sr_mcp_conn *c, const struct sr_rpc_message *m)
{
  const cJSON *level = cJSON_GetObjectItemCaseSensitive (request_meta (m), META_LOG_LEVEL);
  char *error;
  int wanted;

  if (sr_mcp_modern_check (m, &error) != 0)
    return send_text (c, m->id, error);
  if (!sr_mcp_modern_method (m->method))
    return send_error (c, m->id, SR_RPC_METHOD_NOT_FOUND, "Method not found: %s", m->method);
  wanted = cJSON_IsString (level) ? level_index (level->valuestring) : -1;
  pthread_mutex_lock (&c->lock);
  c->log_level = wanted >= 0 ? wanted : LOG_OFF;
  c->modern = true;
  pthread_mutex_unlock (&c->lock);

  if (strcmp (m->method, "server/discover") == 0)
    send_text (c, m->id, result_reply (m->id, m->method, discover_result (), true));
  else if (strcmp (m->method, "tools/list") == 0)
    send_text (c, m->id, result_reply (m->id, m->method, sr_mcp_tools_list (c->s->cfg), true));
  else if (strcmp (m->method, "tools/call") == 0)
    do_tools_call (c, m, true);
  else if (strcmp (m->method, "prompts/list") == 0)
    {
      cJSON *result = cJSON_CreateObject ();

      cJSON_AddArrayToObject (result, "prompts");
      send_text (c, m->id, result_reply (m->id, m->method, result, true));
    }
  else if (strcmp (m->method, "prompts/get") == 0)
    send_error (c, m->id, SR_RPC_INVALID_PARAMS, "Invalid params: this server has no prompts");
  else if (strncmp (m->method, "tasks/", strlen ("tasks/")) == 0)
    {
      send_text (c, m->id, sr_mcp_tasks_handle (c->s->tasks, c->owner, m->method, m->id,
                                                m->params));
      /* A cancelled task may be queued for a slot: wake it to see.  */
      pthread_mutex_lock (&c->s->lock);
      pthread_cond_broadcast (&c->s->slot_freed);
      pthread_mutex_unlock (&c->s->lock);
    }
  else
    do_resources (c, m, true);
}

static void
handle_request (struct sr_mcp_conn *c, const struct sr_rpc_message *m)
{
  if (sr_mcp_request_modern (m, NULL))
    handle_modern (c, m);
  else if (strcmp (m->method, "initialize") == 0)
    do_initialize (c, m);
  else if (strcmp (m->method, "ping") == 0)
    send_text (c, m->id, sr_rpc_result (m->id, NULL));
  else if (strcmp (m->method, "tools/list") == 0)
    send_text (c, m->id, sr_rpc_result (m->id, sr_mcp_tools_list (c->s->cfg)));
  else if (strcmp (m->method, "tools/call") == 0)
    do_tools_call (c, m, false);
  else if (strcmp (m->method, "logging/setLevel") == 0)
    do_set_level (c, m);
  else if (strncmp (m->method, "resources/", strlen ("resources/")) == 0)
    do_resources (c, m, false);
  else
    send_error (c, m->id, SR_RPC_METHOD_NOT_FOUND, "Method not found: %s", m->method);
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
    send_text (c, NULL, json);
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
    return send_text (c, NULL, sr_mcp_oversized_reply (json, len, c->s->cfg->max_message_size));
  if (sr_rpc_parse (json, len, &m, &error) < 0)
    return send_text (c, NULL, error);
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
