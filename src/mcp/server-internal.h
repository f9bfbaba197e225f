/* What server.c (the server, its connections and their calls, the
 * legacy era) and server-modern.c (the requests of 2026-07-28 and the
 * tasks of their calls) share.  Not for anything else.  */
#ifndef SR_MCP_SERVER_INTERNAL_H
#define SR_MCP_SERVER_INTERNAL_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "mcp/download-link.h"
#include "mcp/jsonrpc.h"
#include "mcp/server.h"
#include "mcp/tools.h"

/* A modern request that names no _meta logLevel gets no log message.  */
#define SR_MCP_LOG_OFF 8

/* The output a call's notifications carry: at most this much of a stream
 * in one (what came beyond it meanwhile is left out, and counted), and
 * PROGRESS_OUTPUT_MAX in all (server.c).  */
#define SR_MCP_PROGRESS_CHUNK_MAX (16u * 1024u)

/* Output of one stream not sent yet.  */
struct pending
{
  const char *stream;          /* "stdout", "stderr", "output"; NULL: none */
  char data[SR_MCP_PROGRESS_CHUNK_MAX];
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
  bool draining;               /* it is about to stop: listens end */
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
  bool listen;                 /* a subscriptions/listen: it lasts until cancelled */
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
   * a subscription (which carries those of tasks only): no resource
   * notification goes out.  */
  bool modern;
  char *owner;                 /* of the sessions it makes; NULL: every session */
  char *files_url;             /* of the request being handled */
  char protocol[16];
  int log_level;
  char *client;                /* the caller, as the audit trail records it */
};

/* --- server.c --- */

extern const char sr_mcp_instructions[];
/* Sends json (taken over) on c.  */
void sr_mcp_send_text (struct sr_mcp_conn *c, const cJSON *related_id, char *json);
void sr_mcp_send_error (struct sr_mcp_conn *c, const cJSON *id, int code, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));
/* The index of a log level's name in the protocol's order, -1: none.  */
int sr_mcp_log_level_index (const char *name);
/* What the server offers, to a client of either era.  */
cJSON *sr_mcp_capabilities (bool modern);
cJSON *sr_mcp_server_info (void);
void sr_mcp_do_tools_call (struct sr_mcp_conn *c, const struct sr_rpc_message *m, bool modern);
void sr_mcp_do_resources (struct sr_mcp_conn *c, const struct sr_rpc_message *m, bool modern);
bool sr_mcp_call_cancelled (void *call);
/* Whether sr_mcp_server_drain was called.  */
bool sr_mcp_server_draining (struct sr_mcp_server *s);
/* Waits for one of the max_concurrent run slots; false when the run was
 * cancelled (cancelled (arg) says it) while it queued.  */
bool sr_mcp_take_slot (struct sr_mcp_server *s, bool (*cancelled) (void *), void *arg);
void sr_mcp_give_slot (struct sr_mcp_server *s);
/* A request m of c in flight, as a tools/call is: fn (the call) runs on
 * its own thread until it ends it with sr_mcp_call_end; the call is
 * pending (sr_mcp_conn_pending) until then, and cancelled with its
 * request or its connection (cancel_fd).  m is answered with an error
 * when it cannot start.  */
enum
{
  SR_MCP_CALL_MODERN = 1 << 0,   /* a request of 2026-07-28 */
  SR_MCP_CALL_TASKABLE = 1 << 1, /* of a client that takes tasks: may become one */
  SR_MCP_CALL_LISTEN = 1 << 2,   /* a subscriptions/listen, no tools/call */
};
void sr_mcp_call_start (struct sr_mcp_conn *c, const struct sr_rpc_message *m,
                        void *(*fn) (void *), unsigned flags);
void sr_mcp_call_end (struct call *call);
/* Starts fn (arg) on a detached thread with a small stack, as a call's
 * or a task's run; false when it could not start.  */
bool sr_mcp_spawn (void *(*fn) (void *), void *arg);

/* --- server-modern.c --- */

/* Handles a request of 2026-07-28.  */
void sr_mcp_handle_modern (struct sr_mcp_conn *c, const struct sr_rpc_message *m);
/* Whether the call of m may become a task.  */
bool sr_mcp_takes_tasks (const struct sr_rpc_message *m);
/* A call of a client that takes tasks: the run goes on a task's thread,
 * and the call waits task_after for it.  *ret_result is its result when
 * it ended by then; else the task is announced (the response sent here)
 * and lives on without the call, and *ret_result is NULL, as it is when
 * the call was cancelled.  False when no task could be made: the call
 * runs as any other.  */
bool sr_mcp_task_call (struct call *call, const struct sr_mcp_tool_ctx *ctx, const char *name,
                       const cJSON *args, cJSON **ret_result);
/* The response to a request of method: the result (taken over), with
 * the modern fields when the request was modern.  */
char *sr_mcp_result_reply (const cJSON *id, const char *method, cJSON *result, bool modern);
/* A serialised response (taken over) made for a legacy request, as a
 * modern one gets it.  */
char *sr_mcp_modernize_reply (char *reply, const char *method);

#endif
