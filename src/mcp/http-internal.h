/* What the pieces of the MCP Streamable HTTP transport share (http.c and
 * http-*.c, on libmicrohttpd):
 *   http.c           the server: listen, start, route, stop
 *   http-check.c     the checks on the headers: Host, Origin, token, Accept
 *   http-session.c   the table of MCP sessions and their expiry
 *   http-stream.c    the replies: plain ones, and the streams of a request
 *   http-endpoint.c  POST, GET and DELETE of /mcp
 *   http-files.c     GET /files/{session}/{path}
 *   http-sse.c       the HTTP+SSE transport of 2024-11-05: /sse, /messages
 *   http-health.c    the server's id for a balancer, GET /healthz, draining
 *
 *   http-park.c      streams waiting for something to send, off MHD's threads
 *
 * MHD runs a few threads over epoll for every connection (HTTP_THREADS),
 * not one a connection: an idle socket costs a slot, never a thread, and
 * a stream with nothing to send is parked (http-park.h) until something
 * comes.  Handlers must not wait long: tools/call runs on the core's
 * worker threads.
 *
 * Objects and their locks:
 *   struct http      the table of sessions, under http.lock
 *   struct session   one Mcp-Session-Id and its sr_mcp_conn.  conn_lock
 *                    guards the conn (handle and close take it); lock
 *                    guards its streams.  Never take conn_lock while
 *                    holding lock: closing a conn waits for call threads
 *                    that send, and sending takes lock.
 *   struct stream    what one POST request (or the GET) will receive: a
 *                    queue of messages the send callback fills from any
 *                    thread, and the response reader drains on one of
 *                    MHD's threads (parked between).  A resumable one (an SSE
 *                    stream of a request, for a client of 2025-11-25)
 *                    numbers its events and keeps the last of them, and
 *                    outlives its connection for HTTP_RESUME_GRACE_MS:
 *                    a GET with Last-Event-ID takes it up where it
 *                    broke off (spec 2025-11-25, resumability).
 * Sessions and streams are refcounted (under http.lock and session.lock
 * respectively), so a DELETE or a disconnect in the middle of a request
 * is safe.  */
#ifndef SR_MCP_HTTP_INTERNAL_H
#define SR_MCP_HTTP_INTERNAL_H

#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/defaults.h"
#include "common/error.h"
#include "mcp/http-park.h"
#include "mcp/rpc-id.h"
#include "mcp/server.h"

/* GET HTTP_FILES_PREFIX{session}/{path}: a session's artifact.  */
#define HTTP_FILES_PREFIX "/files/"
/* Seconds an idle connection (no stream open) is kept.  */
#define HTTP_IDLE_TIMEOUT_S 60u
#define HTTP_SESSION_ID_BYTES 16
/* GET HTTP_HEALTH: whether the server takes new sessions.  */
#define HTTP_HEALTH "/healthz"
/* The server's id (server_id), on every response, for the balancer and
 * for whoever reads its log; and the longest id.  An Mcp-Session-Id is
 * "{server_id}.{random}", a download link's session part
 * "{server_id}.{session}".  */
#define HTTP_SERVER_HEADER "Sandbox-Runner-Server"
/* Without tokens, the owner of the sandbox sessions of stateless
 * requests (2026-07-28): they have no identity but the sessions' ids.  */
#define HTTP_STATELESS_OWNER "mcp:stateless"
/* The HTTP+SSE transport's stream, and where its messages are POSTed.  */
#define HTTP_SSE_STREAM "/sse"
#define HTTP_SSE_MESSAGES "/messages"
/* A POST body over max_message_size is read to its end and thrown away
 * (its ends kept, for its id) up to this size, so that the client reads
 * the 413 rather than a reset connection; a larger one (or one whose
 * Content-Length says so) is answered at once and the connection
 * closed.  */
#define HTTP_MAX_DISCARD (128ull << 20)
/* How long a resumable stream whose client went away waits for it to
 * come back with Last-Event-ID before its request is cancelled.  */
#define HTTP_RESUME_GRACE_MS 3000u
/* The events a resumable stream keeps for a replay, at most.  */
#define HTTP_RESUME_KEPT 256u
/* The reconnection delay a resumable stream asks for (SSE retry:).  */
#define HTTP_RESUME_RETRY_MS 500u

struct msg
{
  struct msg *next;
  char *text;            /* already framed (SSE event or bare JSON) */
  bool response;
  uint64_t seq;          /* its event id's number, when the stream is resumable */
};

struct session;

struct stream
{
  struct session *se;    /* holds a reference */
  unsigned refs;         /* under se->lock */
  cJSON *id;             /* the request's id; NULL for the GET stream */
  bool sse;
  bool resumable;        /* numbered events, kept for Last-Event-ID */
  unsigned no;           /* its number in the session, in its event ids */
  /* head .. cursor were sent (kept when resumable, up to
   * HTTP_RESUME_KEPT), cursor .. tail are to send; cursor NULL: all
   * were.  */
  struct msg *head, **tail, *cursor;
  size_t n_msgs;
  bool reading;          /* a response is reading it */
  bool answered;         /* the response is queued */
  bool ended;            /* nothing more will come: the request or session ended */
  bool gone;             /* the client went away */
  bool linked;           /* in se->streams */
  char *out;             /* the message being written */
  size_t out_len, out_pos;
  uint64_t last_write_ns;
  struct MHD_Connection *connection;
  int fd;
  pthread_cond_t cond;
  uint64_t checked_ns;   /* when the reader last looked at its client and request */
  struct http_park park; /* its connection, while it waits for something to send */
  struct stream *next;
};

struct http;

struct session
{
  struct http *h;
  unsigned refs;         /* under h->lock */
  char id[SR_SERVER_ID_MAX + 1 + 2 * HTTP_SESSION_ID_BYTES + 1];
  /* Whose it is, and so its sandbox sessions (sandbox/session.h): the id
   * of the bearer token that opened it, or "mcp:ID" without tokens.  */
  char *owner;
  bool in_table;         /* under h->lock */
  uint64_t last_used_ns; /* under h->lock */
  struct session *next;  /* in h->sessions */

  pthread_mutex_t conn_lock;
  struct sr_mcp_conn *conn;  /* NULL once closed */

  pthread_mutex_t lock;
  struct stream *streams;
  struct stream *get_stream;
  unsigned n_streams;    /* streams made, for their numbers */
  uint64_t event_seq;    /* events numbered, for their ids */
  bool closed;
  bool sse;              /* of the HTTP+SSE transport: every message goes on
                          * get_stream, and the session ends with it */
  bool stateless;        /* of one request of 2026-07-28, never in the table:
                          * it ends with its request */
};

struct http
{
  struct sr_mcp_server *mcp;
  size_t max_message_size;
  uint64_t max_download_size;
  uint64_t idle_ns;      /* an MCP session unused this long expires */
  bool authenticated;    /* a token file was given: every request needs a token */
  const char *token_file;
  /* The tokens now (sr_http_tokens); SIGHUP puts a new set in, and the
   * sets it replaced stay, on its `older` chain, until the server ends:
   * a request may hold an owner id of one.  */
  struct http_tokens *_Atomic tokens;
  char **origins;        /* allowed besides localhost */
  bool loopback;
  bool sse;              /* serve the HTTP+SSE transport too */
  unsigned max_connections_per_ip; /* 0: none */
  uint64_t header_timeout_ms;       /* http-deadline.h; 0: none */
  struct http_parked *parked;       /* http-park.h */
  pthread_mutex_t lock;
  struct session *sessions;
  size_t n_sessions;
  unsigned waiting;      /* streams waiting for their client to resume */
  pthread_cond_t resumed; /* one of them is done waiting */
  bool stopping;
  bool draining;         /* no new session (http-health.c) */
  size_t stateless_requests; /* requests of 2026-07-28 being served */
};

/* What MHD keeps per request (its con_cls).  */
struct request
{
  char *body;
  size_t len, cap;
  struct sr_rpc_id_scan *over;  /* the body is past max_message_size */
  struct stream *stream;   /* the POST's or GET's stream, a reference */
  /* A GET with Last-Event-ID waits, parked, for the stream's old
   * connection to let go of it, this many ticks at most.  */
  struct http_park park;
  unsigned resume_ticks;
};

/* --- http.c --- */

/* The 413 of a POST whose body went past max_message_size (rq->over):
 * a JSON-RPC error answering its id when its ends show it.  */
enum MHD_Result sr_http_reply_oversized (const struct http *h, struct MHD_Connection *c,
                                         const struct request *rq);

/* --- http-check.c --- */

/* Compares secret with the presented text in a time that depends only on
 * the presented length.  */
bool sr_http_ct_equal (const char *secret, const char *given);

/* Whether an Accept header admits type ("application/json" or
 * "text/event-stream"); explicit is set when it names it.  No header, or
 * a wildcard, admits everything.  */
bool sr_http_accepts (const char *accept, const char *type, bool *explicit);

/* The checks on who calls, made on every request before it is routed:
 * Host and Origin (DNS rebinding), then the bearer token, unless the
 * request is a signed download link (signed_link), whose signature
 * http-files.c checks instead.  False when the request is refused: the
 * refusal is queued and *ret is its result.  */
bool sr_http_caller_ok (const struct http *h, struct MHD_Connection *c, bool signed_link,
                        enum MHD_Result *ret);

/* The owner of sandbox sessions the request's bearer token stands for:
 * "token:" and 16 hex digits of the token's SHA-256 (the token itself is
 * kept nowhere else), or NULL when tokens are not configured or the
 * request presents none that is valid.  */
const char *sr_http_token_owner (const struct http *h, struct MHD_Connection *c);

/* One reading of the token file: each token and the owner it stands for.  */
struct http_tokens
{
  char **tokens;
  char **ids;
  struct http_tokens *older;
};

/* Reads the token file path into a new set (sr_http_tokens_free).  */
int sr_http_tokens_read (const char *path, struct http_tokens **ret, sr_error_t *err);
/* Frees t and every older set, wiping the tokens.  */
void sr_http_tokens_free (struct http_tokens *t);

/* "http://" and the request's Host, where it reaches this server, for
 * the download_url of artifacts; NULL when it has no Host, or one that
 * is not a plain host[:port].  */
char *sr_http_files_url (struct MHD_Connection *c);

/* The checks on the headers of a request to /mcp with an allowed method,
 * before its body is read: MCP-Protocol-Version, Accept, and for a POST
 * Content-Type and Content-Length.  As sr_http_caller_ok.  */
bool sr_http_mcp_headers_ok (const struct http *h, struct MHD_Connection *c, const char *method,
                             enum MHD_Result *ret);

/* The checks of a request of the modern era (2026-07-28) to /mcp, with
 * its body m: the MCP-Protocol-Version header present and the same as
 * params._meta's version, the _meta itself (sr_mcp_modern_check), and
 * for a request Mcp-Method, and Mcp-Name where the method has a name,
 * saying what the body does (SEP-2243).  0, or the JSON-RPC error code
 * and *ret_error the reply answering m's id; HTTP 400 either way.  */
int sr_http_modern_check (struct MHD_Connection *c, const struct sr_rpc_message *m,
                          char **ret_error);

/* The comma-separated allowed_origins as a vector without trailing
 * slashes, or NULL when it names none.  */
char **sr_http_parse_origins (const char *list);

/* --- http-session.c --- */

/* A new session with a random id and its conn, holding one reference (the
 * caller's); not in the table yet.  token_owner is the owner the bearer
 * token of its request stands for (NULL without tokens: the session is
 * then its own owner, or a stateless one HTTP_STATELESS_OWNER).  */
struct session *sr_http_session_new (struct http *h, const char *token_owner, bool stateless,
                                     sr_error_t *err);
void sr_http_session_ref (struct session *se);
/* Drops a reference; the last one frees the session (closed before).  */
void sr_http_session_unref (struct session *se);
/* Ends a session: its runs are cancelled, its streams end, and the
 * sandbox sessions it owns (without tokens) are closed: nobody else can
 * name them, so they would only hold their containers and their slots
 * of max_sessions until their idle timeout.  */
void sr_http_session_close (struct session *se);
/* Takes a session out of the table and ends it (DELETE, eviction).  */
void sr_http_session_end (struct session *se);
/* The session with this id, with a reference, or NULL (also when it
 * expired, or when tokens are configured and the request c presents
 * another token than the one that opened it: an MCP session is not
 * found by another owner).  */
struct session *sr_http_session_find (struct http *h, struct MHD_Connection *c, const char *id);
/* Puts a new session in the table, making room by ending the least
 * recently used one without an open stream.  False when there is no room
 * or the server stops.  */
bool sr_http_session_insert (struct http *h, struct session *se);
/* The server stops: no new session, and every session in the table is
 * ended (its runs cancelled, its streams finished).  */
void sr_http_sessions_stop (struct http *h);

/* The sessions in the table, the room left in it (*free_slots), and
 * whether a new one would be refused (*full: no room, and none idle to
 * end for it).  */
void sr_http_session_slots (struct http *h, size_t *sessions, size_t *free_slots, bool *full);

/* --- http-health.c --- */

/* Checks (sr_config_check_server_id) and sets the server's id.  */
int sr_http_server_id_set (const char *id, sr_error_t *err);
const char *sr_http_server_id (void);
/* Sets, from the header deadline (header_timeout_ms, 0: none), the
 * Keep-Alive every response has.  */
void sr_http_keep_alive_set (uint64_t header_timeout_ms);
/* MHD_queue_response, with the HTTP_SERVER_HEADER and the Keep-Alive
 * (sr_http_keep_alive_set) every response has.  */
enum MHD_Result sr_http_queue (struct MHD_Connection *c, unsigned status, struct MHD_Response *r);
/* What follows "{server_id}." in id when it starts so, else NULL: an id
 * of another server, or one without the prefix.  */
const char *sr_http_routed_id (const char *id);
/* GET /healthz: JSON saying whether the server takes new sessions, 200
 * when it does, 503 when it drains or is full.  */
enum MHD_Result sr_http_healthz (struct http *h, struct MHD_Connection *c);
/* Draining: no new MCP session from now (initialize is refused with
 * 503), those in the table carry on.  */
void sr_http_drain_start (struct http *h);
bool sr_http_draining (struct http *h);
/* Whether nothing is left to finish: no session in the table, no
 * request of 2026-07-28 being served.  */
bool sr_http_drained (struct http *h);

/* --- http-stream.c --- */

/* A reply with body (taken over; NULL: empty) of type, and one more
 * header when header is not NULL.  */
enum MHD_Result sr_http_reply_body (struct MHD_Connection *c, unsigned status, const char *type,
                                    char *body, const char *header, const char *value);
/* An HTTP error with a JSON-RPC error body, as the SDKs answer.  */
enum MHD_Result sr_http_reply_error (struct MHD_Connection *c, unsigned status, int code,
                                     const char *message, const char *header, const char *value);

/* A 500 with the message of *err, which it frees.  */
enum MHD_Result sr_http_reply_failure (struct MHD_Connection *c, sr_error_t *err);

/* The send callback of every session's conn; any thread.  */
void sr_http_on_send (void *transport, const cJSON *related_id, const char *json);

/* A stream for the request id (NULL: the GET stream) on connection c,
 * linked in se->streams; the caller holds its one reference.  */
struct stream *sr_http_stream_attach (struct session *se, const cJSON *id, bool sse,
                                      struct MHD_Connection *c);
/* se->lock held.  Appends m (its text framed already) to what st is to
 * send.  */
void sr_http_stream_append_locked (struct stream *st, struct msg *m);
/* se->lock held.  Takes st out of se->streams.  */
void sr_http_stream_unlink_locked (struct stream *st);
/* Drops a reference; the last one frees st and its session reference.  */
void sr_http_stream_unref (struct stream *st);
/* Whether the request of st is still running in the core.  No lock held. */
bool sr_http_request_pending (struct stream *st);
/* Hands the message to the conn on behalf of st (may be NULL), the
 * request having reached us at files_url (sr_http_files_url; NULL: as
 * before).  False when the session was closed meanwhile.  */
bool sr_http_session_handle (struct session *se, struct stream *st, const char *files_url,
                             const char *body, size_t len);
/* Replies to a POST request or the GET with st: at once when it is
 * answered already, else as a stream.  */
enum MHD_Result sr_http_reply_stream (struct MHD_Connection *c, struct stream *st,
                                      const char *session_id);
/* The resumable stream of se that last_event_id ("S-N") names, whose
 * client went away, with a reference, taken up by connection c: what
 * came after event N is sent again, then what comes.  NULL when there is
 * none (*ret_status 0), when its old connection has not let go of it yet
 * (*ret_status HTTP_RESUME_LATER: ask again after a tick, http-park.h)
 * or it cannot be taken up (*ret_status: 409, another connection still
 * reads it, or the events after N are no longer kept).  */
#define HTTP_RESUME_LATER 1u
struct stream *sr_http_stream_resume (struct session *se, const char *last_event_id,
                                      struct MHD_Connection *c, unsigned *ret_status);
/* Replies with a stream sr_http_stream_resume took up.  */
enum MHD_Result sr_http_reply_resumed (struct MHD_Connection *c, struct stream *st);

/* --- http-endpoint.c --- */

/* POST /mcp with its whole body in rq.  */
enum MHD_Result sr_http_post_message (struct http *h, struct MHD_Connection *c,
                                      struct request *rq);
/* GET /mcp: the session's own SSE stream.  */
enum MHD_Result sr_http_open_get_stream (struct http *h, struct MHD_Connection *c,
                                         struct request *rq);
/* DELETE /mcp: the session ends.  */
enum MHD_Result sr_http_delete_session (struct http *h, struct MHD_Connection *c);
/* The request of st is over (aborted: it did not complete).  One whose
 * client went away before its response is cancelled, as a
 * notifications/cancelled from the client would.  Drops the request's
 * reference to st.  */
void sr_http_request_done (struct stream *st, bool aborted);

/* --- http-sse.c --- */

/* GET /sse: a new session and its stream, announcing its endpoint.  */
enum MHD_Result sr_http_sse_open (struct http *h, struct MHD_Connection *c, struct request *rq);
/* POST /messages?sessionId=ID with its whole body in rq: handed to the
 * session, 202; what it brings comes on the session's stream.  */
enum MHD_Result sr_http_sse_post (struct http *h, struct MHD_Connection *c, struct request *rq);

/* --- http-files.c --- */

/* Answers GET HTTP_FILES_PREFIX{session}/{path} with the artifact's bytes.  */
enum MHD_Result sr_http_serve_file (struct http *h, struct MHD_Connection *c, const char *url);

#endif
