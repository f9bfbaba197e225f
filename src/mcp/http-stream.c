/* What goes back to the client: a plain reply, or the stream of a request
 * (or of the GET), which the conn's send callback fills from any thread
 * and MHD's content reader drains on one of MHD's threads.  */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/util.h"
#include "mcp/http-internal.h"
#include "mcp/jsonrpc.h"

/* How often a waiting stream looks whether its client hung up or its
 * request ended without a response (cancelled): at each tick that
 * resumes it (HTTP_PARK_TICK_MS), a little under it so none is skipped.  */
#define STREAM_POLL_MS (HTTP_PARK_TICK_MS * 4 / 5)
/* An SSE comment this often keeps proxies and idle timers away.  */
#define KEEPALIVE_NS (15ull * 1000 * 1000 * 1000)

/* The request being handed to sr_mcp_conn_handle on this thread: a
 * response sent synchronously with its id belongs to it even when another
 * request in flight has the same id.  */
static __thread struct stream *handling;

/* --- replies --- */

enum MHD_Result
sr_http_reply_body (struct MHD_Connection *c, unsigned status, const char *type, char *body,
                    const char *header, const char *value)
{
  struct MHD_Response *r;
  enum MHD_Result ret;

  if (body)
    r = MHD_create_response_from_buffer (strlen (body), body, MHD_RESPMEM_MUST_FREE);
  else
    r = MHD_create_response_from_buffer (0, (void *) "", MHD_RESPMEM_PERSISTENT);
  if (r == NULL)
    {
      free (body);
      return MHD_NO;
    }
  if (type)
    MHD_add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (header)
    MHD_add_response_header (r, header, value);
  ret = sr_http_queue (c, status, r);
  MHD_destroy_response (r);
  return ret;
}

enum MHD_Result
sr_http_reply_error (struct MHD_Connection *c, unsigned status, int code, const char *message,
                     const char *header, const char *value)
{
  return sr_http_reply_body (c, status, "application/json",
                             sr_rpc_error (NULL, code, message, NULL), header, value);
}

enum MHD_Result
sr_http_reply_failure (struct MHD_Connection *c, sr_error_t *err)
{
  enum MHD_Result ret = sr_http_reply_error (c, MHD_HTTP_INTERNAL_SERVER_ERROR,
                                             SR_RPC_INTERNAL_ERROR, (*err)->msg, NULL, NULL);

  sr_error_free (err);
  return ret;
}

/* --- streams --- */

static struct stream *
stream_new (struct session *se, const cJSON *id, bool sse, struct MHD_Connection *connection)
{
  struct stream *st = sr_xcalloc (1, sizeof *st);
  const union MHD_ConnectionInfo *info
      = MHD_get_connection_info (connection, MHD_CONNECTION_INFO_CONNECTION_FD);

  st->se = se;
  st->refs = 1;
  st->id = id ? cJSON_Duplicate (id, 1) : NULL;
  st->sse = sse;
  st->tail = &st->head;
  st->connection = connection;
  st->fd = info ? info->connect_fd : -1;
  st->last_write_ns = st->checked_ns = sr_now_ns ();
  pthread_cond_init (&st->cond, NULL);
  return st;
}

void
sr_http_stream_unlink_locked (struct stream *st)
{
  struct session *se = st->se;

  if (!st->linked)
    return;
  for (struct stream **p = &se->streams; *p; p = &(*p)->next)
    if (*p == st)
      {
        *p = st->next;
        break;
      }
  if (se->get_stream == st)
    se->get_stream = NULL;
  st->linked = false;
}

void
sr_http_stream_unref (struct stream *st)
{
  struct session *se = st->se;
  bool last;

  pthread_mutex_lock (&se->lock);
  last = --st->refs == 0;
  if (last)
    sr_http_stream_unlink_locked (st);
  pthread_mutex_unlock (&se->lock);
  if (!last)
    return;
  while (st->head)
    {
      struct msg *m = st->head;

      st->head = m->next;
      free (m->text);
      free (m);
    }
  free (st->out);
  cJSON_Delete (st->id);
  pthread_cond_destroy (&st->cond);
  free (st);
  sr_http_session_unref (se);
}

/* Whether the conn's client speaks 2025-11-25 or later, which knows
 * priming events and resumes a stream with Last-Event-ID.  */
static bool
client_resumes (struct session *se)
{
  const char *protocol;
  bool yes;

  pthread_mutex_lock (&se->conn_lock);
  protocol = se->conn ? sr_mcp_conn_protocol (se->conn) : NULL;
  yes = protocol && strcmp (protocol, "2025-11-25") >= 0;
  pthread_mutex_unlock (&se->conn_lock);
  return yes;
}

void
sr_http_stream_append_locked (struct stream *st, struct msg *m)
{
  *st->tail = m;
  st->tail = &m->next;
  if (st->cursor == NULL)
    st->cursor = m;
  st->n_msgs++;
}

struct stream *
sr_http_stream_attach (struct session *se, const cJSON *id, bool sse, struct MHD_Connection *c)
{
  struct stream *st = stream_new (se, id, sse, c);

  /* A stream of a request can be resumed; the GET stream is only
   * opened again.  */
  st->resumable = sse && id && client_resumes (se);
  sr_http_session_ref (se); /* the stream's */
  pthread_mutex_lock (&se->lock);
  st->no = ++se->n_streams;
  st->linked = true;
  st->next = se->streams;
  se->streams = st;
  if (st->resumable)
    {
      /* The priming event: an id, and no data, first, so that the
       * client can resume even before anything else came.  */
      struct msg *m = sr_xcalloc (1, sizeof *m);

      m->seq = ++se->event_seq;
      m->text = sr_xasprintf ("id: %u-%llu\nretry: %u\ndata: \n\n", st->no,
                              (unsigned long long) m->seq, HTTP_RESUME_RETRY_MS);
      sr_http_stream_append_locked (st, m);
    }
  pthread_mutex_unlock (&se->lock);
  return st;
}

/* The message as st sends it; seq numbers its event when st is
 * resumable.  */
static char *
frame (const struct stream *st, const char *json, uint64_t seq)
{
  _cleanup_free_ char *head = NULL;

  if (!st->sse)
    return sr_xstrdup (json);
  head = st->resumable ? sr_xasprintf ("id: %u-%llu\nevent: message\ndata: ", st->no,
                                       (unsigned long long) seq)
                       : sr_xstrdup ("event: message\ndata: ");
  /* A JSON text from cJSON has no raw newline, but be safe: each line of
   * the data is its own data: field.  */
  if (strchr (json, '\n') == NULL)
    return sr_xasprintf ("%s%s\n\n", head, json);
  {
    size_t n = strlen (head);
    char *out, *p;

    for (const char *s = json; *s; s++)
      n += *s == '\n' ? 7 : 1;
    out = sr_xmalloc (n + 4);
    p = stpcpy (out, head);
    for (const char *s = json; *s; s++)
      p = *s == '\n' ? stpcpy (p, "\ndata: ") : (*p = *s, p + 1);
    strcpy (p, "\n\n");
    return out;
  }
}

/* se->lock held.  */
static void
stream_push_locked (struct stream *st, const char *json, bool response)
{
  struct msg *m;

  /* A resumable stream whose client went away keeps what comes, for
   * when it is back.  */
  if ((st->gone && !st->resumable) || st->ended || st->answered || (!st->sse && !response))
    return;
  m = sr_xcalloc (1, sizeof *m);
  if (st->resumable)
    m->seq = ++st->se->event_seq;
  m->text = frame (st, json, m->seq);
  m->response = response;
  sr_http_stream_append_locked (st, m);
  /* The GET stream of an HTTP+SSE session carries every response.  */
  if (response && st->id)
    st->answered = true;
  pthread_cond_broadcast (&st->cond);
  sr_http_unpark (st->se->h->parked, &st->park);
}

void
sr_http_on_send (void *transport, const cJSON *related_id, const char *json)
{
  struct session *se = transport;
  bool response = !sr_rpc_is_notification (json);
  struct stream *st = NULL;

  pthread_mutex_lock (&se->lock);
  if (related_id == NULL || se->sse)
    st = se->get_stream;
  else if (handling && handling->se == se && sr_rpc_same_id (handling->id, related_id))
    st = handling;
  else
    for (struct stream *s = se->streams; s && st == NULL; s = s->next)
      if (!s->answered && !s->ended && sr_rpc_same_id (s->id, related_id))
        st = s;
  /* A message for a stream that is gone (or never was) is dropped.  */
  if (st && !(response && related_id == NULL && !se->sse))
    stream_push_locked (st, json, response);
  pthread_mutex_unlock (&se->lock);
}

bool
sr_http_session_handle (struct session *se, struct stream *st, const char *files_url,
                        const char *body, size_t len)
{
  bool open;

  pthread_mutex_lock (&se->conn_lock);
  open = se->conn != NULL;
  if (open)
    {
      if (files_url)
        sr_mcp_conn_set_files_url (se->conn, files_url);
      handling = st;
      sr_mcp_conn_handle (se->conn, body, len);
      handling = NULL;
    }
  pthread_mutex_unlock (&se->conn_lock);
  return open;
}

/* se->lock held.  Frees the messages sent that st need not keep: all of
 * them, or for a resumable stream all but the last HTTP_RESUME_KEPT.  */
static void
forget_sent_locked (struct stream *st)
{
  while (st->head && st->head != st->cursor
         && (!st->resumable || st->n_msgs > HTTP_RESUME_KEPT))
    {
      struct msg *m = st->head;

      st->head = m->next;
      if (st->head == NULL)
        st->tail = &st->head;
      free (m->text);
      free (m);
      st->n_msgs--;
    }
}

static bool
peer_hung_up (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

  if (fd < 0 || poll (&p, 1, 0) <= 0)
    return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

bool
sr_http_request_pending (struct stream *st)
{
  struct session *se = st->se;
  bool pending = false;

  pthread_mutex_lock (&se->conn_lock);
  if (se->conn)
    pending = sr_mcp_conn_pending (se->conn, st->id);
  pthread_mutex_unlock (&se->conn_lock);
  return pending;
}

/* MHD's content reader for a streamed response: what there is to write,
 * or 0 with the connection parked (http-park.h) until there is some.  */
static ssize_t
stream_read (void *cls, uint64_t pos, char *buf, size_t max)
{
  struct stream *st = cls;
  struct session *se = st->se;
  ssize_t ret;

  (void) pos;
  pthread_mutex_lock (&se->lock);
  for (;;)
    {
      uint64_t now;

      if (st->out_pos < st->out_len)
        {
          size_t n = st->out_len - st->out_pos;

          if (n > max)
            n = max;
          memcpy (buf, st->out + st->out_pos, n);
          st->out_pos += n;
          st->last_write_ns = sr_now_ns ();
          ret = (ssize_t) n;
          break;
        }
      free (st->out);
      st->out = NULL;
      st->out_len = st->out_pos = 0;
      if (st->cursor)
        {
          struct msg *m = st->cursor;

          st->cursor = m->next;
          /* A resumable stream keeps the text for a replay.  */
          st->out = st->resumable ? sr_xstrdup (m->text) : TAKE_PTR (m->text);
          st->out_len = strlen (st->out);
          forget_sent_locked (st);
          continue;
        }
      if (st->gone)
        {
          ret = MHD_CONTENT_READER_END_WITH_ERROR;
          break;
        }
      if (st->answered || st->ended || se->closed)
        {
          st->ended = true;
          /* Back to the idle timeout for whatever comes next on it.  */
          MHD_set_connection_option (st->connection, MHD_CONNECTION_OPTION_TIMEOUT,
                                     (unsigned int) HTTP_IDLE_TIMEOUT_S);
          ret = MHD_CONTENT_READER_END_OF_STREAM;
          break;
        }
      /* Nothing to send: at most every STREAM_POLL_MS, a look at the
       * client and the request, then the connection waits off MHD's
       * threads until something comes or the next tick.  */
      now = sr_now_ns ();
      if (now - st->checked_ns < STREAM_POLL_MS * 1000000ull)
        {
          if (sr_http_park (se->h->parked, &st->park, st->connection))
            {
              ret = 0;
              break;
            }
          st->gone = true; /* the server stops */
          continue;
        }
      st->checked_ns = now;
      if (peer_hung_up (st->fd))
        {
          st->gone = true;
          continue;
        }
      if (st->id && !st->answered && st->cursor == NULL)
        {
          bool pending;

          pthread_mutex_unlock (&se->lock);
          pending = sr_http_request_pending (st);
          pthread_mutex_lock (&se->lock);
          /* The core sends the response before it forgets the request,
           * so a request that is not pending and not answered was
           * cancelled: it gets no response, and its stream ends.  */
          if (!pending && !st->answered && st->cursor == NULL)
            st->ended = true;
        }
      if (st->sse && !st->ended && now - st->last_write_ns > KEEPALIVE_NS)
        {
          st->out = sr_xstrdup (": keepalive\n\n");
          st->out_len = strlen (st->out);
        }
    }
  pthread_mutex_unlock (&se->lock);
  return ret;
}

static void
stream_read_done (void *cls)
{
  struct stream *st = cls;

  pthread_mutex_lock (&st->se->lock);
  st->reading = false;
  pthread_cond_broadcast (&st->cond);
  pthread_mutex_unlock (&st->se->lock);
  sr_http_stream_unref (st);
}

/* se->lock held: the queued messages as one body (the request was
 * answered before we replied).  */
static char *
stream_drain_locked (struct stream *st)
{
  size_t len = 0;
  char *body, *p;

  for (struct msg *m = st->head; m; m = m->next)
    len += strlen (m->text);
  p = body = sr_xmalloc (len + 1);
  *p = '\0';
  while (st->head)
    {
      struct msg *m = st->head;

      st->head = m->next;
      p = stpcpy (p, m->text);
      free (m->text);
      free (m);
    }
  st->tail = &st->head;
  st->cursor = NULL;
  st->n_msgs = 0;
  st->ended = true;
  return body;
}

/* The streamed response of st, which holds a reference of it.  */
static struct MHD_Response *
stream_response (struct MHD_Connection *c, struct stream *st)
{
  struct MHD_Response *r;

  pthread_mutex_lock (&st->se->lock);
  st->refs++;
  st->reading = true;
  pthread_mutex_unlock (&st->se->lock);
  r = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, 16384, stream_read, st,
                                         stream_read_done);
  if (r == NULL)
    stream_read_done (st);
  else
    {
      /* A run may be silent for longer than the idle timeout.  */
      MHD_set_connection_option (c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned int) 0);
      MHD_add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE,
                               st->sse ? "text/event-stream" : "application/json");
      if (st->sse)
        MHD_add_response_header (r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    }
  return r;
}

enum MHD_Result
sr_http_reply_stream (struct MHD_Connection *c, struct stream *st, const char *session_id)
{
  struct session *se = st->se;
  struct MHD_Response *r;
  enum MHD_Result ret;
  char *body = NULL;

  pthread_mutex_lock (&se->lock);
  if (st->id && st->answered)
    body = stream_drain_locked (st);
  else if (st->sse && !st->resumable)
    {
      /* A comment first, so the headers go out now (a resumable stream
       * has its priming event for that).  */
      struct msg *m = sr_xcalloc (1, sizeof *m);

      m->text = sr_xstrdup (": stream open\n\n");
      m->next = st->head;
      if (st->head == NULL)
        st->tail = &m->next;
      st->head = st->cursor = m;
      st->n_msgs++;
    }
  pthread_mutex_unlock (&se->lock);

  if (body)
    {
      r = MHD_create_response_from_buffer (strlen (body), body, MHD_RESPMEM_MUST_FREE);
      if (r == NULL)
        free (body);
      else
        MHD_add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE,
                                 st->sse ? "text/event-stream" : "application/json");
    }
  else
    r = stream_response (c, st);
  if (r == NULL)
    return MHD_NO;
  if (session_id)
    MHD_add_response_header (r, "Mcp-Session-Id", session_id);
  ret = sr_http_queue (c, MHD_HTTP_OK, r);
  MHD_destroy_response (r);
  return ret;
}

/* se->lock held.  The resumable stream of se that "S-N" names, or NULL;
 * *ret_n is N.  */
static struct stream *
find_resumable_locked (struct session *se, const char *last_event_id, uint64_t *ret_n)
{
  unsigned no;
  unsigned long long n;
  int used = 0;

  if (sscanf (last_event_id, "%u-%llu%n", &no, &n, &used) != 2 || last_event_id[used] != '\0')
    return NULL;
  *ret_n = n;
  for (struct stream *st = se->streams; st; st = st->next)
    if (st->no == no && st->resumable)
      return st;
  return NULL;
}

struct stream *
sr_http_stream_resume (struct session *se, const char *last_event_id, struct MHD_Connection *c,
                       unsigned *ret_status)
{
  const union MHD_ConnectionInfo *info
      = MHD_get_connection_info (c, MHD_CONNECTION_INFO_CONNECTION_FD);
  struct stream *st;
  struct msg *from;
  uint64_t n = 0;
  bool taken = false;

  *ret_status = 0;
  pthread_mutex_lock (&se->lock);
  st = find_resumable_locked (se, last_event_id, &n);
  if (st == NULL)
    {
      pthread_mutex_unlock (&se->lock);
      return NULL;
    }
  /* A client may be back before its old connection's reader noticed it
   * left (within STREAM_POLL_MS) and let go of the stream: the caller
   * asks again after a tick, off MHD's threads, one of which that
   * reader may need.  */
  if (st->reading && !se->closed)
    {
      *ret_status = HTTP_RESUME_LATER;
      pthread_mutex_unlock (&se->lock);
      return NULL;
    }
  st->refs++; /* the caller's when taken */
  if (st->linked && st->gone && !st->reading && !se->closed)
    {
      /* The events after N must all be kept: the first kept is N or
       * before.  */
      if (st->head == NULL || st->head->seq > n)
        *ret_status = MHD_HTTP_CONFLICT;
      else
        {
          for (from = st->head; from && from->seq <= n; from = from->next)
            ;
          st->gone = false;
          st->cursor = from;
          st->connection = c;
          st->fd = info ? info->connect_fd : -1;
          free (TAKE_PTR (st->out));
          st->out_len = st->out_pos = 0;
          st->last_write_ns = sr_now_ns ();
          pthread_cond_broadcast (&st->cond);
          taken = true;
        }
    }
  else if (st->linked && !se->closed)
    *ret_status = MHD_HTTP_CONFLICT; /* another connection reads it */
  pthread_mutex_unlock (&se->lock);
  if (taken)
    return st;
  sr_http_stream_unref (st);
  return NULL;
}

enum MHD_Result
sr_http_reply_resumed (struct MHD_Connection *c, struct stream *st)
{
  struct MHD_Response *r = stream_response (c, st);
  enum MHD_Result ret;

  if (r == NULL)
    return MHD_NO;
  ret = sr_http_queue (c, MHD_HTTP_OK, r);
  MHD_destroy_response (r);
  return ret;
}
