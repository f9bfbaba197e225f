/* The MCP endpoint, /mcp: POST carries one JSON-RPC message (initialize
 * opens a session; a request of 2026-07-28 needs none), GET opens the
 * session's own SSE stream, DELETE ends the session; and the end of a
 * request, which cancels a run whose client went away.  */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "mcp/http-internal.h"
#include "mcp/jsonrpc.h"

/* initialize is answered at once; this only bounds a broken core.  */
#define INITIALIZE_WAIT_S 10
/* The ticks (http-park.h) a GET with Last-Event-ID waits for the old
 * connection of its stream to let go of it: its reader notices a client
 * gone within a tick.  */
#define RESUME_TICKS 4u

/* A refusal with a JSON-RPC error answering rpc_id (NULL: null).  */
static enum MHD_Result
refuse (struct MHD_Connection *c, unsigned status, const cJSON *rpc_id, int code,
        const char *message)
{
  return sr_http_reply_body (c, status, "application/json",
                             sr_rpc_error (rpc_id, code, message, NULL), NULL, NULL);
}

/* The session the request names, or a refusal answering rpc_id.  */
static enum MHD_Result
check_session (struct http *h, struct MHD_Connection *c, const cJSON *rpc_id,
               struct session **ret)
{
  const char *id = MHD_lookup_connection_value (c, MHD_HEADER_KIND, "Mcp-Session-Id");

  *ret = NULL;
  if (id == NULL || *id == '\0')
    return refuse (c, MHD_HTTP_BAD_REQUEST, rpc_id, -32000,
                   "Bad Request: the Mcp-Session-Id header is required (or send the "
                   "request as protocol " SR_MCP_PROTOCOL_MODERN ", which needs no session)");
  *ret = sr_http_session_find (h, c, id);
  if (*ret == NULL)
    return refuse (c, MHD_HTTP_NOT_FOUND, rpc_id, -32001, "Session not found");
  return MHD_YES;
}

/* A request of 2026-07-28: checked against its headers, then served by a
 * session of its own that ends with it.  Whatever sandbox sessions it
 * makes outlive it: they are its token's, or without tokens every
 * stateless client's (their ids are the secret).  */
static enum MHD_Result
post_modern (struct http *h, struct MHD_Connection *c, struct request *rq,
             const struct sr_rpc_message *m, bool sse)
{
  _cleanup_free_ char *files_url = sr_http_files_url (c);
  sr_error_t err = NULL;
  struct session *se;
  char *error = NULL;
  enum MHD_Result ret;

  if (sr_http_modern_check (c, m, &error) != 0)
    return sr_http_reply_body (c, MHD_HTTP_BAD_REQUEST, "application/json", error, NULL, NULL);
  /* A notification has nothing to act on: cancelling is closing the
   * request's connection.  */
  if (m->kind != SR_RPC_REQUEST)
    return sr_http_reply_body (c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL, NULL);
  if (!sr_mcp_modern_method (m->method))
    {
      _cleanup_free_ char *msg = sr_xasprintf ("Method not found: %s", m->method);

      return refuse (c, MHD_HTTP_NOT_FOUND, m->id, SR_RPC_METHOD_NOT_FOUND, msg);
    }
  se = sr_http_session_new (h, sr_http_token_owner (h, c), true, &err);
  if (se == NULL)
    return sr_http_reply_failure (c, &err);
  /* A draining server finishes it before it exits (sr_http_drained);
   * sr_http_request_done counts it out.  */
  pthread_mutex_lock (&h->lock);
  h->stateless_requests++;
  pthread_mutex_unlock (&h->lock);
  rq->stream = sr_http_stream_attach (se, m->id, sse, c);
  sr_http_session_handle (se, rq->stream, files_url, rq->body, rq->len);
  ret = sr_http_reply_stream (c, rq->stream, NULL);
  sr_http_session_unref (se); /* the stream holds its own */
  return ret;
}

static enum MHD_Result
post_initialize (struct http *h, struct MHD_Connection *c, struct request *rq,
                 const cJSON *id, bool sse)
{
  _cleanup_free_ char *files_url = NULL;
  sr_error_t err = NULL;
  struct session *se;
  struct stream *st;
  struct timespec ts;
  bool ok, inserted = false;
  cJSON *root = NULL;
  enum MHD_Result ret;

  /* The client initializes again elsewhere: the balancer sends it to
   * another server (HAProxy's retry-on 503).  */
  if (sr_http_draining (h))
    return refuse (c, MHD_HTTP_SERVICE_UNAVAILABLE, id, -32000,
                   "Service Unavailable: server_draining: this server takes no new sessions "
                   "(it is draining before it stops); initialize again on another server");
  se = sr_http_session_new (h, sr_http_token_owner (h, c), false, &err);
  files_url = sr_http_files_url (c);
  if (se == NULL)
    return sr_http_reply_failure (c, &err);
  st = rq->stream = sr_http_stream_attach (se, id, sse, c);
  sr_http_session_handle (se, st, files_url, rq->body, rq->len);

  sr_deadline_after (CLOCK_REALTIME, INITIALIZE_WAIT_S * 1000L, &ts);
  pthread_mutex_lock (&se->lock);
  while (!st->answered)
    if (pthread_cond_timedwait (&st->cond, &se->lock, &ts) == ETIMEDOUT)
      break;
  /* Whether it succeeded: the last queued message is the response.  */
  if (st->answered)
    {
      struct msg *m = st->head;

      while (m->next)
        m = m->next;
      root = cJSON_Parse (sse ? strstr (m->text, "data: ") + 6 : m->text);
    }
  pthread_mutex_unlock (&se->lock);
  ok = cJSON_GetObjectItemCaseSensitive (root, "result") != NULL;
  cJSON_Delete (root);

  if (!st->answered)
    ret = sr_http_reply_error (c, MHD_HTTP_INTERNAL_SERVER_ERROR, SR_RPC_INTERNAL_ERROR,
                               "initialize was not answered", NULL, NULL);
  else if (ok && !(inserted = sr_http_session_insert (h, se)))
    ret = sr_http_reply_error (c, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                               "Service Unavailable: too many sessions", NULL, NULL);
  else
    ret = sr_http_reply_stream (c, st, ok ? se->id : NULL);
  if (!inserted)
    sr_http_session_close (se);
  sr_http_session_unref (se); /* ours; the table and the stream hold their own */
  return ret;
}

enum MHD_Result
sr_http_post_message (struct http *h, struct MHD_Connection *c, struct request *rq)
{
  const char *accept = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
  const char *version = MHD_lookup_connection_value (c, MHD_HEADER_KIND, "MCP-Protocol-Version");
  _cleanup_free_ char *files_url = sr_http_files_url (c);
  struct sr_rpc_message m;
  struct session *se = NULL;
  char *error = NULL;
  bool json_x, sse_x, sse;
  enum MHD_Result ret;

  if (rq->over)
    return sr_http_reply_oversized (h, c, rq);
  if (sr_rpc_parse (rq->body ? rq->body : "", rq->len, &m, &error) < 0)
    return sr_http_reply_body (c, MHD_HTTP_BAD_REQUEST, "application/json", error, NULL, NULL);

  /* One JSON body unless there is something to stream before the
   * response and the client takes SSE, or unless it takes nothing but
   * SSE: a JSON body costs a client less to read than an event stream.  */
  sse = !sr_http_accepts (accept, "application/json", &json_x)
        || (sr_mcp_request_streams (&m) && sr_http_accepts (accept, "text/event-stream", &sse_x));

  if (sr_mcp_request_modern (&m, version))
    ret = post_modern (h, c, rq, &m, sse);
  else if (version && !sr_mcp_protocol_known (version))
    {
      _cleanup_free_ char *msg = sr_xasprintf (
          "Bad Request: unsupported MCP-Protocol-Version %s (supported: %s, %s, ...)", version,
          SR_MCP_PROTOCOL_MODERN, SR_MCP_PROTOCOL_LATEST);

      ret = refuse (c, MHD_HTTP_BAD_REQUEST, m.id, SR_RPC_UNSUPPORTED_VERSION, msg);
    }
  else if (m.kind == SR_RPC_REQUEST && strcmp (m.method, "initialize") == 0)
    ret = post_initialize (h, c, rq, m.id, sse);
  else
    ret = check_session (h, c, m.id, &se);
  if (se == NULL)
    {
      sr_rpc_message_done (&m);
      return ret;
    }
  if (m.kind != SR_RPC_REQUEST)
    {
      if (sr_http_session_handle (se, NULL, files_url, rq->body, rq->len))
        ret = sr_http_reply_body (c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL, NULL);
      else
        ret = refuse (c, MHD_HTTP_NOT_FOUND, m.id, -32001, "Session not found");
    }
  else
    {
      rq->stream = sr_http_stream_attach (se, m.id, sse, c);
      if (sr_http_session_handle (se, rq->stream, files_url, rq->body, rq->len))
        ret = sr_http_reply_stream (c, rq->stream, NULL);
      else
        ret = refuse (c, MHD_HTTP_NOT_FOUND, m.id, -32001, "Session not found");
    }
  sr_rpc_message_done (&m);
  sr_http_session_unref (se);
  return ret;
}

enum MHD_Result
sr_http_open_get_stream (struct http *h, struct MHD_Connection *c, struct request *rq)
{
  const char *last_event_id = MHD_lookup_connection_value (c, MHD_HEADER_KIND, "Last-Event-ID");
  struct session *se;
  enum MHD_Result ret = check_session (h, c, NULL, &se);
  bool busy;

  if (se == NULL)
    return ret;
  if (last_event_id)
    {
      unsigned status;

      /* A stream of a request broke off: take it up where it did.  An id
       * that names none opens the GET stream, as a GET without it.  */
      rq->stream = sr_http_stream_resume (se, last_event_id, c, &status);
      if (status == HTTP_RESUME_LATER && rq->resume_ticks++ < RESUME_TICKS
          && sr_http_park (h->parked, &rq->park, c))
        {
          sr_http_session_unref (se);
          return MHD_YES; /* here again after a tick */
        }
      if (rq->stream)
        ret = sr_http_reply_resumed (c, rq->stream);
      else if (status)
        ret = sr_http_reply_error (c, MHD_HTTP_CONFLICT, -32000,
                                   "Conflict: this stream cannot be resumed now (it is still "
                                   "being read, or the events after Last-Event-ID are no "
                                   "longer kept)",
                                   NULL, NULL);
      if (rq->stream || status)
        {
          sr_http_session_unref (se);
          return ret;
        }
    }
  pthread_mutex_lock (&se->lock);
  busy = se->get_stream != NULL || se->closed;
  pthread_mutex_unlock (&se->lock);
  if (busy)
    {
      sr_http_session_unref (se);
      return sr_http_reply_error (c, MHD_HTTP_CONFLICT, -32000,
                                  "Conflict: this session has its GET stream open already", NULL,
                                  NULL);
    }
  rq->stream = sr_http_stream_attach (se, NULL, true, c);
  pthread_mutex_lock (&se->lock);
  if (se->get_stream == NULL)
    se->get_stream = rq->stream;
  busy = se->get_stream != rq->stream;
  pthread_mutex_unlock (&se->lock);
  if (busy)
    ret = sr_http_reply_error (c, MHD_HTTP_CONFLICT, -32000,
                               "Conflict: this session has its GET stream open already", NULL,
                               NULL);
  else
    ret = sr_http_reply_stream (c, rq->stream, NULL);
  sr_http_session_unref (se);
  return ret;
}

enum MHD_Result
sr_http_delete_session (struct http *h, struct MHD_Connection *c)
{
  struct session *se;
  enum MHD_Result ret = check_session (h, c, NULL, &se);

  if (se == NULL)
    return ret;
  sr_http_session_end (se);
  sr_http_session_unref (se);
  return sr_http_reply_body (c, MHD_HTTP_OK, NULL, NULL, NULL, NULL);
}

/* Tells the core that the client of request id went away.  */
static void
send_cancelled (struct session *se, const cJSON *id)
{
  cJSON *params = cJSON_CreateObject ();
  char *text;

  cJSON_AddItemToObject (params, "requestId", cJSON_Duplicate (id, 1));
  cJSON_AddStringToObject (params, "reason", "client disconnected");
  text = sr_rpc_notification ("notifications/cancelled", params);
  sr_http_session_handle (se, NULL, NULL, text, strlen (text));
  free (text);
}

/* A resumable stream whose client went away, waiting for it to come back
 * (sr_http_stream_resume) for HTTP_RESUME_GRACE_MS; its request is
 * cancelled when it does not.  Holds a reference of st.  */
static void *
wait_for_resume (void *arg)
{
  struct stream *st = arg;
  struct session *se = st->se;
  struct http *h = se->h;
  struct timespec ts;
  bool cut;

  sr_deadline_after (CLOCK_REALTIME, HTTP_RESUME_GRACE_MS, &ts);
  pthread_mutex_lock (&se->lock);
  while (st->gone && !se->closed)
    if (pthread_cond_timedwait (&st->cond, &se->lock, &ts) == ETIMEDOUT)
      break;
  cut = st->gone;
  if (cut)
    sr_http_stream_unlink_locked (st);
  pthread_mutex_unlock (&se->lock);
  if (cut && sr_http_request_pending (st))
    send_cancelled (se, st->id);
  sr_http_stream_unref (st);
  pthread_mutex_lock (&h->lock);
  h->waiting--;
  pthread_cond_broadcast (&h->resumed);
  pthread_mutex_unlock (&h->lock);
  return NULL;
}

/* Starts wait_for_resume on st, which holds a reference for it.  False
 * when the thread cannot start (the reference is dropped).  */
static bool
start_waiting (struct stream *st)
{
  struct http *h = st->se->h;
  pthread_attr_t attr;
  pthread_t thread;
  bool started;

  pthread_mutex_lock (&h->lock);
  h->waiting++;
  pthread_mutex_unlock (&h->lock);
  pthread_attr_init (&attr);
  pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize (&attr, 64u << 10);
  started = pthread_create (&thread, &attr, wait_for_resume, st) == 0;
  pthread_attr_destroy (&attr);
  if (!started)
    {
      pthread_mutex_lock (&h->lock);
      h->waiting--;
      pthread_mutex_unlock (&h->lock);
    }
  return started;
}

void
sr_http_request_done (struct stream *st, bool aborted)
{
  struct session *se = st->se;
  bool cut, wait;

  pthread_mutex_lock (&se->lock);
  if (aborted)
    st->gone = true;
  /* A resumable stream with something still to send outlives its
   * connection for a while, linked, so that what comes for it is kept.  */
  wait = st->gone && st->resumable && !st->ended && !se->closed;
  if (wait)
    st->refs++; /* wait_for_resume's */
  pthread_mutex_unlock (&se->lock);
  if (wait && !start_waiting (st))
    {
      wait = false;
      sr_http_stream_unref (st);
    }
  pthread_mutex_lock (&se->lock);
  cut = st->gone && st->id != NULL && !wait;
  if (!wait)
    sr_http_stream_unlink_locked (st);
  pthread_mutex_unlock (&se->lock);
  /* Idle time counts from the end of the last request, not its start: a
   * run of two hours is no idle session.  */
  pthread_mutex_lock (&se->h->lock);
  se->last_used_ns = sr_now_ns ();
  pthread_mutex_unlock (&se->h->lock);
  if (cut && sr_http_request_pending (st))
    send_cancelled (se, st->id);
  /* An HTTP+SSE session lives as long as its stream, a stateless one as
   * long as its request.  */
  if (se->sse && st->id == NULL)
    sr_http_session_end (se);
  if (se->stateless)
    {
      sr_http_session_close (se);
      pthread_mutex_lock (&se->h->lock);
      se->h->stateless_requests--;
      pthread_mutex_unlock (&se->h->lock);
    }
  sr_http_stream_unref (st);
}
