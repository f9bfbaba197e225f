/* MCP Streamable HTTP on libmicrohttpd, one thread per connection.
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
 *                    thread, and the response reader drains on the
 *                    connection's thread.
 * Sessions and streams are refcounted (under http.lock and session.lock
 * respectively), so a DELETE or a disconnect in the middle of a request
 * is safe.  */
#include "config.h"

#include "mcp/http.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "mcp/jsonrpc.h"
#include "sandbox/files.h"
#include "sandbox/session.h"

#define ENDPOINT "/mcp"
/* GET FILES_PREFIX{session}/{path}: a session's artifact.  */
#define FILES_PREFIX "/files/"
/* Sessions kept at once; past it the least recently used idle one goes.  */
#define MAX_SESSIONS 64u
/* Connections at once (each is a thread; an open SSE stream holds one).  */
#define MAX_CONNECTIONS 128u
/* Seconds an idle connection (no stream open) is kept.  */
#define IDLE_TIMEOUT_S 60u
/* How often a waiting stream looks whether its client hung up or its
 * request ended without a response (cancelled).  */
#define STREAM_POLL_MS 250
/* An SSE comment this often keeps proxies and idle timers away.  */
#define KEEPALIVE_NS (15ull * 1000 * 1000 * 1000)
/* initialize is answered at once; this only bounds a broken core.  */
#define INITIALIZE_WAIT_S 10
#define SESSION_ID_BYTES 16
/* An MCP session nobody used for this long is forgotten (when the
 * options do not say otherwise): a client that went away without DELETE
 * must not hold its slot and its conn until the server stops.  An hour
 * outlasts any pause of an agent that is still there; it reinitializes
 * on the 404 anyway.  */
#define HTTP_SESSION_IDLE_DEFAULT_MS (60ull * 60 * 1000)

struct msg
{
  struct msg *next;
  char *text;            /* already framed (SSE event or bare JSON) */
  bool response;
};

struct session;

struct stream
{
  struct session *se;    /* holds a reference */
  unsigned refs;         /* under se->lock */
  cJSON *id;             /* the request's id; NULL for the GET stream */
  bool sse;
  struct msg *head, **tail;
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
  struct stream *next;
};

struct http;

struct session
{
  struct http *h;
  unsigned refs;         /* under h->lock */
  char id[2 * SESSION_ID_BYTES + 1];
  bool in_table;         /* under h->lock */
  uint64_t last_used_ns; /* under h->lock */
  struct session *next;  /* in h->sessions */

  pthread_mutex_t conn_lock;
  struct sr_mcp_conn *conn;  /* NULL once closed */

  pthread_mutex_t lock;
  struct stream *streams;
  struct stream *get_stream;
  bool closed;
};

struct http
{
  struct sr_mcp_server *mcp;
  size_t max_message_size;
  uint64_t max_download_size;
  uint64_t idle_ns;      /* an MCP session unused this long expires */
  char **tokens;         /* NULL: no authentication */
  char **origins;        /* allowed besides localhost */
  bool loopback;
  pthread_mutex_t lock;
  struct session *sessions;
  size_t n_sessions;
  bool stopping;
};

/* The request being handed to sr_mcp_conn_handle on this thread: a
 * response sent synchronously with its id belongs to it even when another
 * request in flight has the same id.  */
static __thread struct stream *handling;

/* What MHD keeps per request (its con_cls).  */
struct request
{
  char *body;
  size_t len, cap;
  bool too_big;
  struct stream *stream;   /* the POST's or GET's stream, a reference */
};

/* --- small helpers --- */

/* Compares secret with the presented text in a time that depends only on
 * the presented length.  */
static bool
ct_equal (const char *secret, const char *given)
{
  size_t slen = strlen (secret), glen = strlen (given);
  volatile unsigned char d = slen != glen;

  for (size_t i = 0; i < glen; i++)
    d |= (unsigned char) given[i] ^ (unsigned char) (i < slen ? secret[i] : 0);
  return d == 0;
}

static char *
trim (char *s)
{
  char *e;

  while (*s && isspace ((unsigned char) *s))
    s++;
  e = s + strlen (s);
  while (e > s && isspace ((unsigned char) e[-1]))
    *--e = '\0';
  return s;
}

static bool
is_loopback_name (const char *host, size_t len)
{
  static const char *const names[] = { "localhost", "127.0.0.1", "[::1]" };

  for (size_t i = 0; i < SR_ARRAY_SIZE (names); i++)
    if (len == strlen (names[i]) && strncasecmp (host, names[i], len) == 0)
      return true;
  return false;
}

/* The host part of "host[:port]" or "[v6][:port]": its start and length. */
static size_t
host_part (const char *hostport)
{
  const char *colon;

  if (hostport[0] == '[')
    {
      const char *end = strchr (hostport, ']');
      return end ? (size_t) (end - hostport) + 1 : strlen (hostport);
    }
  colon = strchr (hostport, ':');
  return colon ? (size_t) (colon - hostport) : strlen (hostport);
}

/* "http(s)://host[:port]" -> the host[:port], or NULL.  */
static const char *
origin_authority (const char *origin)
{
  if (strncasecmp (origin, "http://", 7) == 0)
    return origin + 7;
  if (strncasecmp (origin, "https://", 8) == 0)
    return origin + 8;
  return NULL;
}

static bool
origin_listed (const struct http *h, const char *origin)
{
  size_t len = strlen (origin);

  while (len && origin[len - 1] == '/')
    len--;
  for (char **o = h->origins; o && *o; o++)
    if (strlen (*o) == len && strncasecmp (*o, origin, len) == 0)
      return true;
  return false;
}

static bool
origin_ok (const struct http *h, const char *origin)
{
  const char *auth = origin_authority (origin);

  if (auth && strchr (auth, '/') == NULL && is_loopback_name (auth, host_part (auth)))
    return true;
  return origin_listed (h, origin);
}

/* Host names the server answers to when it listens on loopback: the
 * loopback names and the hosts of allowed_origins.  */
static bool
host_ok (const struct http *h, const char *hostport)
{
  size_t len = host_part (hostport);

  if (is_loopback_name (hostport, len))
    return true;
  for (char **o = h->origins; o && *o; o++)
    {
      const char *auth = origin_authority (*o);

      if (auth && host_part (auth) == len && strncasecmp (auth, hostport, len) == 0)
        return true;
    }
  return false;
}

/* Whether an Accept header admits type ("application/json" or
 * "text/event-stream"); explicit is set when it names it.  No header, or
 * a wildcard, admits everything.  */
static bool
accepts (const char *accept, const char *type, bool *explicit)
{
  _cleanup_free_ char *copy = NULL;
  size_t slash = (size_t) (strchr (type, '/') - type);
  bool ok = false;
  char *save = NULL;

  *explicit = false;
  if (accept == NULL)
    return true;
  copy = sr_xstrdup (accept);
  for (char *item = strtok_r (copy, ",", &save); item; item = strtok_r (NULL, ",", &save))
    {
      char *params = strchr (item, ';'), *mt;
      bool zero = false;

      if (params)
        {
          char *q;

          *params++ = '\0';
          q = strstr (params, "q=");
          zero = q && strtod (q + 2, NULL) <= 0.0;
        }
      mt = trim (item);
      if (zero)
        continue;
      if (strcasecmp (mt, type) == 0)
        {
          *explicit = true;
          ok = true;
        }
      else if (strcmp (mt, "*/*") == 0
               || (strlen (mt) == slash + 2 && strncasecmp (mt, type, slash + 1) == 0
                   && mt[slash + 1] == '*'))
        ok = true;
    }
  return ok;
}

static bool
protocol_known (const char *v)
{
  for (const char *const *p = sr_mcp_protocol_versions; *p; p++)
    if (strcmp (*p, v) == 0)
      return true;
  return false;
}

/* --- replies --- */

static enum MHD_Result
reply_body (struct MHD_Connection *c, unsigned status, const char *type, char *body,
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
  ret = MHD_queue_response (c, status, r);
  MHD_destroy_response (r);
  return ret;
}

/* An HTTP error with a JSON-RPC error body, as the SDKs answer.  */
static enum MHD_Result
reply_error (struct MHD_Connection *c, unsigned status, int code, const char *message,
             const char *header, const char *value)
{
  return reply_body (c, status, "application/json", sr_rpc_error (NULL, code, message, NULL),
                     header, value);
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
  st->last_write_ns = sr_now_ns ();
  pthread_cond_init (&st->cond, NULL);
  return st;
}

static void session_unref (struct session *se);

/* se->lock held.  */
static void
stream_unlink_locked (struct stream *st)
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

static void
stream_unref (struct stream *st)
{
  struct session *se = st->se;
  bool last;

  pthread_mutex_lock (&se->lock);
  last = --st->refs == 0;
  if (last)
    stream_unlink_locked (st);
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
  session_unref (se);
}

static char *
frame (const struct stream *st, const char *json)
{
  if (!st->sse)
    return sr_xstrdup (json);
  /* A JSON text from cJSON has no raw newline, but be safe: each line of
   * the data is its own data: field.  */
  if (strchr (json, '\n') == NULL)
    return sr_xasprintf ("event: message\ndata: %s\n\n", json);
  {
    size_t n = 0;
    char *out, *p;

    for (const char *s = json; *s; s++)
      n += *s == '\n' ? 7 : 1;
    out = sr_xmalloc (n + 32);
    p = stpcpy (out, "event: message\ndata: ");
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

  if (st->gone || st->ended || st->answered || (!st->sse && !response))
    return;
  m = sr_xcalloc (1, sizeof *m);
  m->text = frame (st, json);
  m->response = response;
  *st->tail = m;
  st->tail = &m->next;
  if (response)
    st->answered = true;
  pthread_cond_broadcast (&st->cond);
}

/* The send callback of every session's conn; any thread.  */
static void
on_send (void *transport, const cJSON *related_id, const char *json)
{
  struct session *se = transport;
  cJSON *root = cJSON_Parse (json);
  bool response = root && cJSON_GetObjectItemCaseSensitive (root, "method") == NULL;
  struct stream *st = NULL;

  cJSON_Delete (root);
  pthread_mutex_lock (&se->lock);
  if (related_id == NULL)
    st = se->get_stream;
  else if (handling && handling->se == se && sr_rpc_same_id (handling->id, related_id))
    st = handling;
  else
    for (struct stream *s = se->streams; s && st == NULL; s = s->next)
      if (!s->answered && !s->ended && sr_rpc_same_id (s->id, related_id))
        st = s;
  /* A message for a stream that is gone (or never was) is dropped.  */
  if (st && !(response && related_id == NULL))
    stream_push_locked (st, json, response);
  pthread_mutex_unlock (&se->lock);
}

static bool
peer_hung_up (int fd)
{
  struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

  if (fd < 0 || poll (&p, 1, 0) <= 0)
    return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/* Whether the request of st is still running in the core.  No lock held. */
static bool
request_pending (struct stream *st)
{
  struct session *se = st->se;
  bool pending = false;

  pthread_mutex_lock (&se->conn_lock);
  if (se->conn)
    pending = sr_mcp_conn_pending (se->conn, st->id);
  pthread_mutex_unlock (&se->conn_lock);
  return pending;
}

static void
deadline_in_ms (struct timespec *ts, long ms)
{
  clock_gettime (CLOCK_REALTIME, ts);
  ts->tv_sec += ms / 1000;
  ts->tv_nsec += (ms % 1000) * 1000000L;
  if (ts->tv_nsec >= 1000000000L)
    {
      ts->tv_sec++;
      ts->tv_nsec -= 1000000000L;
    }
}

/* MHD's content reader for a streamed response: blocks (this is the
 * connection's own thread) until there is something to write.  */
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
      struct timespec ts;

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
      if (st->head)
        {
          struct msg *m = st->head;

          st->head = m->next;
          if (st->head == NULL)
            st->tail = &st->head;
          st->out = m->text;
          st->out_len = strlen (m->text);
          free (m);
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
                                     (unsigned int) IDLE_TIMEOUT_S);
          ret = MHD_CONTENT_READER_END_OF_STREAM;
          break;
        }
      deadline_in_ms (&ts, STREAM_POLL_MS);
      if (pthread_cond_timedwait (&st->cond, &se->lock, &ts) != ETIMEDOUT)
        continue;

      if (peer_hung_up (st->fd))
        {
          st->gone = true;
          continue;
        }
      if (st->id && !st->answered && st->head == NULL)
        {
          bool pending;

          pthread_mutex_unlock (&se->lock);
          pending = request_pending (st);
          pthread_mutex_lock (&se->lock);
          /* The core sends the response before it forgets the request,
           * so a request that is not pending and not answered was
           * cancelled: it gets no response, and its stream ends.  */
          if (!pending && !st->answered && st->head == NULL)
            st->ended = true;
        }
      if (st->sse && !st->ended && sr_now_ns () - st->last_write_ns > KEEPALIVE_NS)
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
  stream_unref (cls);
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
  st->ended = true;
  return body;
}

/* Replies to a POST request or the GET with st: at once when it is
 * answered already, else as a stream.  */
static enum MHD_Result
reply_stream (struct MHD_Connection *c, struct stream *st, const char *session_id)
{
  struct session *se = st->se;
  const char *type = st->sse ? "text/event-stream" : "application/json";
  struct MHD_Response *r;
  enum MHD_Result ret;
  char *body = NULL;

  pthread_mutex_lock (&se->lock);
  if (st->id && st->answered)
    body = stream_drain_locked (st);
  else if (st->sse)
    {
      /* A comment first, so the headers go out now.  */
      struct msg *m = sr_xcalloc (1, sizeof *m);

      m->text = sr_xstrdup (": stream open\n\n");
      m->next = st->head;
      if (st->head == NULL)
        st->tail = &m->next;
      st->head = m;
    }
  if (body == NULL)
    st->refs++; /* the response's */
  pthread_mutex_unlock (&se->lock);

  if (body)
    r = MHD_create_response_from_buffer (strlen (body), body, MHD_RESPMEM_MUST_FREE);
  else
    {
      r = MHD_create_response_from_callback (MHD_SIZE_UNKNOWN, 16384, stream_read, st,
                                             stream_read_done);
      if (r == NULL)
        stream_unref (st);
      else
        /* A run may be silent for longer than the idle timeout.  */
        MHD_set_connection_option (c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned int) 0);
    }
  if (r == NULL)
    {
      free (body);
      return MHD_NO;
    }
  MHD_add_response_header (r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
  if (st->sse)
    MHD_add_response_header (r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
  if (session_id)
    MHD_add_response_header (r, "Mcp-Session-Id", session_id);
  ret = MHD_queue_response (c, MHD_HTTP_OK, r);
  MHD_destroy_response (r);
  return ret;
}

/* --- sessions --- */

static struct session *
session_new (struct http *h, sr_error_t *err)
{
  unsigned char raw[SESSION_ID_BYTES];
  struct session *se;
  size_t got = 0;

  while (got < sizeof raw)
    {
      ssize_t n = getrandom (raw + got, sizeof raw - got, 0);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          sr_error_set (err, errno, "getrandom");
          return NULL;
        }
      got += (size_t) n;
    }
  se = sr_xcalloc (1, sizeof *se);
  se->h = h;
  se->refs = 1;
  for (size_t i = 0; i < sizeof raw; i++)
    snprintf (se->id + 2 * i, 3, "%02x", raw[i]);
  pthread_mutex_init (&se->conn_lock, NULL);
  pthread_mutex_init (&se->lock, NULL);
  se->conn = sr_mcp_conn_new (h->mcp, on_send, se);
  return se;
}

static void
session_ref (struct session *se)
{
  pthread_mutex_lock (&se->h->lock);
  se->refs++;
  pthread_mutex_unlock (&se->h->lock);
}

static void
session_unref (struct session *se)
{
  struct http *h = se->h;
  bool last;

  pthread_mutex_lock (&h->lock);
  last = --se->refs == 0;
  pthread_mutex_unlock (&h->lock);
  if (!last)
    return;
  /* The conn was closed before the table let go of it.  */
  sr_mcp_conn_close (se->conn);
  pthread_mutex_destroy (&se->conn_lock);
  pthread_mutex_destroy (&se->lock);
  free (se);
}

/* Ends a session: its runs are cancelled, its streams end.  */
static void
session_close (struct session *se)
{
  struct sr_mcp_conn *conn;

  pthread_mutex_lock (&se->lock);
  se->closed = true;
  pthread_mutex_unlock (&se->lock);

  pthread_mutex_lock (&se->conn_lock);
  conn = TAKE_PTR (se->conn);
  pthread_mutex_unlock (&se->conn_lock);
  /* Not under conn_lock: closing waits for call threads, and a reader
   * may be waiting for conn_lock.  Nobody else uses conn now.  */
  sr_mcp_conn_close (conn);

  pthread_mutex_lock (&se->lock);
  for (struct stream *st = se->streams; st; st = st->next)
    {
      st->ended = true;
      pthread_cond_broadcast (&st->cond);
    }
  pthread_mutex_unlock (&se->lock);
}

/* h->lock held.  */
static void
table_unlink_locked (struct http *h, struct session *se)
{
  for (struct session **p = &h->sessions; *p; p = &(*p)->next)
    if (*p == se)
      {
        *p = se->next;
        h->n_sessions--;
        se->in_table = false;
        return;
      }
}

/* Takes a session out of the table and ends it (DELETE, eviction).  */
static void
session_end (struct session *se)
{
  struct http *h = se->h;
  bool was_in;

  pthread_mutex_lock (&h->lock);
  was_in = se->in_table;
  if (was_in)
    table_unlink_locked (h, se);
  pthread_mutex_unlock (&h->lock);
  if (!was_in)
    return;
  session_close (se);
  session_unref (se); /* the table's */
}

/* Whether a session in the table has been unused past the idle timeout:
 * no request or stream open (an SSE stream or a long run is use), and
 * none for idle_ns.  h->lock held.  */
static bool
expired_locked (const struct http *h, struct session *se, uint64_t now)
{
  bool open;

  if (se->last_used_ns >= now || now - se->last_used_ns < h->idle_ns)
    return false;
  pthread_mutex_lock (&se->lock);
  open = se->streams != NULL;
  pthread_mutex_unlock (&se->lock);
  return !open;
}

/* Ends the sessions that expired, so that a client that never comes back
 * does not keep its conn.  Runs at every request: the table holds at
 * most MAX_SESSIONS.  */
static void
expire_sessions (struct http *h)
{
  struct session *gone = NULL;
  uint64_t now;

  pthread_mutex_lock (&h->lock);
  /* Under the lock, as every update of last_used_ns is.  */
  now = sr_now_ns ();
  for (struct session **p = &h->sessions; *p;)
    {
      struct session *se = *p;

      if (expired_locked (h, se, now))
        {
          *p = se->next;
          h->n_sessions--;
          se->in_table = false;
          se->next = gone;
          gone = se;
        }
      else
        p = &se->next;
    }
  pthread_mutex_unlock (&h->lock);
  while (gone)
    {
      struct session *se = gone;

      gone = se->next;
      session_close (se);
      session_unref (se); /* the table's */
    }
}

/* The session with this id, with a reference, or NULL (also when it
 * expired: expire_sessions ran first).  Every id is compared, in
 * constant time.  */
static struct session *
session_find (struct http *h, const char *id)
{
  struct session *found = NULL;

  expire_sessions (h);
  pthread_mutex_lock (&h->lock);
  for (struct session *se = h->sessions; se; se = se->next)
    if (ct_equal (se->id, id) && found == NULL)
      found = se;
  if (found)
    {
      found->refs++;
      found->last_used_ns = sr_now_ns ();
    }
  pthread_mutex_unlock (&h->lock);
  return found;
}

/* Puts a new session in the table, making room by ending the least
 * recently used one without an open stream.  False when there is no room
 * or the server stops.  */
static bool
session_insert (struct http *h, struct session *se)
{
  struct session *victim = NULL;
  bool ok = true;

  pthread_mutex_lock (&h->lock);
  if (h->stopping)
    ok = false;
  else if (h->n_sessions >= MAX_SESSIONS)
    {
      for (struct session *s = h->sessions; s; s = s->next)
        {
          bool idle;

          pthread_mutex_lock (&s->lock);
          idle = s->streams == NULL;
          pthread_mutex_unlock (&s->lock);
          if (idle && (victim == NULL || s->last_used_ns < victim->last_used_ns))
            victim = s;
        }
      if (victim)
        table_unlink_locked (h, victim);
      else
        ok = false;
    }
  if (ok)
    {
      se->refs++;
      se->in_table = true;
      se->last_used_ns = sr_now_ns ();
      se->next = h->sessions;
      h->sessions = se;
      h->n_sessions++;
    }
  pthread_mutex_unlock (&h->lock);
  if (victim)
    {
      session_close (victim);
      session_unref (victim);
    }
  return ok;
}

/* --- the handler --- */

static enum MHD_Result
check_session (struct http *h, struct MHD_Connection *c, struct session **ret)
{
  const char *id = MHD_lookup_connection_value (c, MHD_HEADER_KIND, "Mcp-Session-Id");

  *ret = NULL;
  if (id == NULL || *id == '\0')
    return reply_error (c, MHD_HTTP_BAD_REQUEST, -32000,
                        "Bad Request: the Mcp-Session-Id header is required", NULL, NULL);
  *ret = session_find (h, id);
  if (*ret == NULL)
    return reply_error (c, MHD_HTTP_NOT_FOUND, -32001, "Session not found", NULL, NULL);
  return MHD_YES;
}

static bool
authorized (const struct http *h, struct MHD_Connection *c)
{
  const char *auth = MHD_lookup_connection_value (c, MHD_HEADER_KIND,
                                                  MHD_HTTP_HEADER_AUTHORIZATION);
  bool ok = false;

  if (h->tokens == NULL)
    return true;
  if (auth == NULL || strncasecmp (auth, "Bearer ", 7) != 0)
    return false;
  auth += 7;
  while (*auth == ' ')
    auth++;
  if (*auth == '\0')
    return false;
  /* Against every token, without stopping at a match.  */
  for (char **t = h->tokens; *t; t++)
    ok |= ct_equal (*t, auth);
  return ok;
}

/* Hands the message to the conn on behalf of st (may be NULL).  False
 * when the session was closed meanwhile.  */
static bool
session_handle (struct session *se, struct stream *st, const char *body, size_t len)
{
  bool open;

  pthread_mutex_lock (&se->conn_lock);
  open = se->conn != NULL;
  if (open)
    {
      handling = st;
      sr_mcp_conn_handle (se->conn, body, len);
      handling = NULL;
    }
  pthread_mutex_unlock (&se->conn_lock);
  return open;
}

static struct stream *
stream_attach (struct session *se, const cJSON *id, bool sse, struct MHD_Connection *c)
{
  struct stream *st = stream_new (se, id, sse, c);

  session_ref (se); /* the stream's */
  pthread_mutex_lock (&se->lock);
  st->linked = true;
  st->next = se->streams;
  se->streams = st;
  pthread_mutex_unlock (&se->lock);
  return st;
}

static enum MHD_Result
post_initialize (struct http *h, struct MHD_Connection *c, struct request *rq,
                 const cJSON *id, bool sse)
{
  sr_error_t err = NULL;
  struct session *se = session_new (h, &err);
  struct stream *st;
  struct timespec ts;
  bool ok, inserted = false;
  cJSON *root = NULL;
  enum MHD_Result ret;

  if (se == NULL)
    {
      ret = reply_error (c, MHD_HTTP_INTERNAL_SERVER_ERROR, SR_RPC_INTERNAL_ERROR, err->msg,
                         NULL, NULL);
      sr_error_free (&err);
      return ret;
    }
  st = rq->stream = stream_attach (se, id, sse, c);
  session_handle (se, st, rq->body, rq->len);

  deadline_in_ms (&ts, INITIALIZE_WAIT_S * 1000L);
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
    ret = reply_error (c, MHD_HTTP_INTERNAL_SERVER_ERROR, SR_RPC_INTERNAL_ERROR,
                       "initialize was not answered", NULL, NULL);
  else if (ok && !(inserted = session_insert (h, se)))
    ret = reply_error (c, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                       "Service Unavailable: too many sessions", NULL, NULL);
  else
    ret = reply_stream (c, st, ok ? se->id : NULL);
  if (!inserted)
    session_close (se);
  session_unref (se); /* ours; the table and the stream hold their own */
  return ret;
}

static enum MHD_Result
post_message (struct http *h, struct MHD_Connection *c, struct request *rq)
{
  const char *accept = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
  struct sr_rpc_message m;
  struct session *se = NULL;
  char *error = NULL;
  bool json_x, sse_x, sse;
  enum MHD_Result ret;

  if (rq->too_big)
    return reply_body (c, MHD_HTTP_CONTENT_TOO_LARGE, "application/json",
                       sr_mcp_oversized_error (h->max_message_size), NULL, NULL);
  if (sr_rpc_parse (rq->body ? rq->body : "", rq->len, &m, &error) < 0)
    return reply_body (c, MHD_HTTP_BAD_REQUEST, "application/json", error, NULL, NULL);

  /* One JSON body unless there is something to stream before the
   * response (the progress of a request with a progressToken) and the
   * client takes SSE, or unless it takes nothing but SSE: a JSON body
   * costs a client less to read than an event stream.  */
  sse = !accepts (accept, "application/json", &json_x)
        || (m.kind == SR_RPC_REQUEST && sr_rpc_progress_token (&m)
            && accepts (accept, "text/event-stream", &sse_x));

  if (m.kind == SR_RPC_REQUEST && strcmp (m.method, "initialize") == 0)
    {
      ret = post_initialize (h, c, rq, m.id, sse);
      sr_rpc_message_done (&m);
      return ret;
    }
  ret = check_session (h, c, &se);
  if (se == NULL)
    {
      sr_rpc_message_done (&m);
      return ret;
    }
  if (m.kind != SR_RPC_REQUEST)
    {
      if (session_handle (se, NULL, rq->body, rq->len))
        ret = reply_body (c, MHD_HTTP_ACCEPTED, NULL, NULL, NULL, NULL);
      else
        ret = reply_error (c, MHD_HTTP_NOT_FOUND, -32001, "Session not found", NULL, NULL);
    }
  else
    {
      rq->stream = stream_attach (se, m.id, sse, c);
      if (session_handle (se, rq->stream, rq->body, rq->len))
        ret = reply_stream (c, rq->stream, NULL);
      else
        ret = reply_error (c, MHD_HTTP_NOT_FOUND, -32001, "Session not found", NULL, NULL);
    }
  sr_rpc_message_done (&m);
  session_unref (se);
  return ret;
}

static enum MHD_Result
open_get_stream (struct http *h, struct MHD_Connection *c, struct request *rq)
{
  struct session *se;
  enum MHD_Result ret = check_session (h, c, &se);
  bool busy;

  if (se == NULL)
    return ret;
  pthread_mutex_lock (&se->lock);
  busy = se->get_stream != NULL || se->closed;
  pthread_mutex_unlock (&se->lock);
  if (busy)
    {
      session_unref (se);
      return reply_error (c, MHD_HTTP_CONFLICT, -32000,
                          "Conflict: this session has its GET stream open already", NULL, NULL);
    }
  rq->stream = stream_attach (se, NULL, true, c);
  pthread_mutex_lock (&se->lock);
  if (se->get_stream == NULL)
    se->get_stream = rq->stream;
  busy = se->get_stream != rq->stream;
  pthread_mutex_unlock (&se->lock);
  if (busy)
    ret = reply_error (c, MHD_HTTP_CONFLICT, -32000,
                       "Conflict: this session has its GET stream open already", NULL, NULL);
  else
    ret = reply_stream (c, rq->stream, NULL);
  session_unref (se);
  return ret;
}

static enum MHD_Result
delete_session (struct http *h, struct MHD_Connection *c)
{
  struct session *se;
  enum MHD_Result ret = check_session (h, c, &se);

  if (se == NULL)
    return ret;
  session_end (se);
  session_unref (se);
  return reply_body (c, MHD_HTTP_OK, NULL, NULL, NULL, NULL);
}

/* Checks made on the headers, before any body is read.  */
/* Answers GET /files/{session}/{path} with the artifact's bytes.  The
 * session is held only while the file is opened; the open fd then keeps
 * the file readable even if the session closes during the download.  */
static enum MHD_Result
serve_file (struct http *h, struct MHD_Connection *c, const char *url)
{
  struct sr_sessions *sessions = sr_mcp_server_sessions (h->mcp);
  _cleanup_free_ char *id = NULL, *mime = NULL;
  const char *rest = url + strlen (FILES_PREFIX), *slash = strchr (rest, '/'), *code;
  struct sr_session *se = NULL;
  struct MHD_Response *resp;
  sr_error_t err = NULL;
  uint64_t size = 0;
  unsigned status;
  enum MHD_Result ret;
  int fd;

  if (sessions == NULL)
    return reply_error (c, MHD_HTTP_NOT_FOUND, -32000, "Not Found: sessions are unavailable",
                        NULL, NULL);
  if (slash == NULL || slash == rest || slash[1] == '\0')
    return reply_error (c, MHD_HTTP_NOT_FOUND, -32000,
                        "Not Found: expected " FILES_PREFIX "{session_id}/{path}", NULL, NULL);
  id = sr_xasprintf ("%.*s", (int) (slash - rest), rest);
  if (sr_sessions_acquire (sessions, id, NULL, -1, &se, &err) == 0)
    {
      fd = sr_files_open_artifact (sr_session_fs (se), slash + 1, &size, &err);
      sr_session_release (se);
      if (fd >= 0 && size > h->max_download_size)
        {
          _cleanup_free_ char *msg = sr_xasprintf (
              "file_too_large: %s is %llu bytes, over the download limit of %llu bytes "
              "(max_artifact_size)",
              slash + 1, (unsigned long long) size, (unsigned long long) h->max_download_size);

          close (fd);
          return reply_error (c, MHD_HTTP_CONTENT_TOO_LARGE, -32000, msg, NULL, NULL);
        }
      if (fd >= 0)
        {
          mime = sr_files_mime (fd);
          /* MHD sends from the fd in pieces (sendfile where it can): a
           * large file is streamed, never held in memory.  */
          resp = MHD_create_response_from_fd64 (size, fd);
          if (resp == NULL)
            {
              close (fd);
              return MHD_NO;
            }
          MHD_add_response_header (resp, MHD_HTTP_HEADER_CONTENT_TYPE, mime);
          MHD_add_response_header (resp, "X-Content-Type-Options", "nosniff");
          MHD_add_response_header (resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, "attachment");
          ret = MHD_queue_response (c, MHD_HTTP_OK, resp);
          MHD_destroy_response (resp);
          return ret;
        }
    }
  code = sr_error_code (err);
  if (code && (strcmp (code, "session_not_found") == 0 || strcmp (code, "not_found") == 0))
    status = MHD_HTTP_NOT_FOUND;
  else if (code && strcmp (code, "session_busy") == 0)
    status = MHD_HTTP_CONFLICT;
  else if (code && strcmp (code, "file_too_large") == 0)
    status = MHD_HTTP_CONTENT_TOO_LARGE;
  else if (code && (strcmp (code, "path_outside_sandbox") == 0
                    || strcmp (code, "invalid_path") == 0 || strcmp (code, "not_a_file") == 0))
    status = MHD_HTTP_FORBIDDEN;
  else
    status = MHD_HTTP_INTERNAL_SERVER_ERROR;
  {
    _cleanup_free_ char *msg = sr_xasprintf ("%s: %s", code ? code : "error",
                                             err ? err->msg : "failed");

    sr_error_free (&err);
    return reply_error (c, status, -32000, msg, NULL, NULL);
  }
}

static enum MHD_Result
first_call (struct http *h, struct MHD_Connection *c, const char *url, const char *method,
            bool *done)
{
  const char *host = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
  const char *origin = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN);
  const char *version = MHD_lookup_connection_value (c, MHD_HEADER_KIND, "MCP-Protocol-Version");
  const char *accept = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
  bool stopping, x;

  *done = true;
  pthread_mutex_lock (&h->lock);
  stopping = h->stopping;
  pthread_mutex_unlock (&h->lock);
  if (stopping)
    return reply_error (c, MHD_HTTP_SERVICE_UNAVAILABLE, -32000, "the server is stopping",
                        NULL, NULL);
  /* DNS rebinding: a page of evil.example whose name now resolves to
   * 127.0.0.1 sends Host: evil.example and (on POST) its Origin.  */
  if (h->loopback && host && !host_ok (h, host))
    return reply_error (c, MHD_HTTP_FORBIDDEN, -32000, "Forbidden: invalid Host header", NULL,
                        NULL);
  if (origin && !origin_ok (h, origin))
    return reply_error (c, MHD_HTTP_FORBIDDEN, -32000,
                        "Forbidden: this Origin is not allowed (allowed_origins)", NULL, NULL);
  if (!authorized (h, c))
    return reply_error (c, MHD_HTTP_UNAUTHORIZED, -32000,
                        "Unauthorized: a valid bearer token is required", "WWW-Authenticate",
                        "Bearer realm=\"sandbox-runner\"");
  if (strncmp (url, FILES_PREFIX, strlen (FILES_PREFIX)) == 0)
    {
      if (strcmp (method, "GET") != 0 && strcmp (method, "HEAD") != 0)
        return reply_error (c, MHD_HTTP_METHOD_NOT_ALLOWED, -32000, "Method Not Allowed",
                            "Allow", "GET");
      return serve_file (h, c, url);
    }
  if (strcmp (url, ENDPOINT) != 0)
    return reply_error (c, MHD_HTTP_NOT_FOUND, -32000, "Not Found: the MCP endpoint is " ENDPOINT,
                        NULL, NULL);
  if (strcmp (method, "POST") != 0 && strcmp (method, "GET") != 0
      && strcmp (method, "DELETE") != 0)
    return reply_error (c, MHD_HTTP_METHOD_NOT_ALLOWED, -32000, "Method Not Allowed", "Allow",
                        "GET, POST, DELETE");
  if (version && !protocol_known (version))
    {
      _cleanup_free_ char *msg = sr_xasprintf (
          "Bad Request: unsupported MCP-Protocol-Version %s (supported: %s, ...)", version,
          SR_MCP_PROTOCOL_LATEST);
      return reply_error (c, MHD_HTTP_BAD_REQUEST, -32000, msg, NULL, NULL);
    }
  if (strcmp (method, "GET") == 0 && !accepts (accept, "text/event-stream", &x))
    return reply_error (c, MHD_HTTP_NOT_ACCEPTABLE, -32000,
                        "Not Acceptable: the client must accept text/event-stream", NULL, NULL);
  if (strcmp (method, "POST") == 0)
    {
      const char *type = MHD_lookup_connection_value (c, MHD_HEADER_KIND,
                                                      MHD_HTTP_HEADER_CONTENT_TYPE);
      const char *length = MHD_lookup_connection_value (c, MHD_HEADER_KIND,
                                                        MHD_HTTP_HEADER_CONTENT_LENGTH);
      bool y;

      if (!accepts (accept, "application/json", &x) && !accepts (accept, "text/event-stream", &y))
        return reply_error (c, MHD_HTTP_NOT_ACCEPTABLE, -32000,
                            "Not Acceptable: the client must accept application/json and "
                            "text/event-stream",
                            NULL, NULL);
      if (type == NULL || strncasecmp (type, "application/json", 16) != 0
          || (type[16] != '\0' && type[16] != ';' && type[16] != ' '))
        return reply_error (c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, -32000,
                            "Unsupported Media Type: the body must be application/json", NULL,
                            NULL);
      if (length && strtoull (length, NULL, 10) > h->max_message_size)
        return reply_body (c, MHD_HTTP_CONTENT_TOO_LARGE, "application/json",
                           sr_mcp_oversized_error (h->max_message_size), NULL, NULL);
    }
  *done = false;
  return MHD_YES;
}

static enum MHD_Result
on_request (void *cls, struct MHD_Connection *c, const char *url, const char *method,
            const char *version, const char *upload_data, size_t *upload_data_size,
            void **con_cls)
{
  struct http *h = cls;
  struct request *rq = *con_cls;
  bool done;
  enum MHD_Result ret;

  (void) version;
  if (rq == NULL)
    {
      ret = first_call (h, c, url, method, &done);
      if (done)
        return ret;
      *con_cls = sr_xcalloc (1, sizeof (struct request));
      if (strcmp (method, "POST") == 0)
        return MHD_YES; /* the body comes next */
      rq = *con_cls;
    }
  if (strcmp (method, "POST") == 0)
    {
      if (*upload_data_size)
        {
          size_t n = *upload_data_size;

          *upload_data_size = 0;
          if (rq->too_big || rq->len + n > h->max_message_size)
            {
              rq->too_big = true;
              free (TAKE_PTR (rq->body));
              rq->len = 0;
              return MHD_YES;
            }
          if (rq->len + n + 1 > rq->cap)
            {
              rq->cap = (rq->len + n + 1) * 2;
              if (rq->cap > h->max_message_size + 1)
                rq->cap = h->max_message_size + 1;
              rq->body = sr_xrealloc (rq->body, rq->cap);
            }
          memcpy (rq->body + rq->len, upload_data, n);
          rq->len += n;
          rq->body[rq->len] = '\0';
          return MHD_YES;
        }
      return post_message (h, c, rq);
    }
  if (strcmp (method, "GET") == 0)
    return open_get_stream (h, c, rq);
  return delete_session (h, c);
}

/* A request is over.  One whose client went away before its response is
 * cancelled, as a notifications/cancelled from the client would.  */
static void
on_completed (void *cls, struct MHD_Connection *c, void **con_cls,
              enum MHD_RequestTerminationCode toe)
{
  struct request *rq = *con_cls;
  struct stream *st;

  (void) cls;
  (void) c;
  if (rq == NULL)
    return;
  *con_cls = NULL;
  st = rq->stream;
  if (st)
    {
      struct session *se = st->se;
      bool cut;

      pthread_mutex_lock (&se->lock);
      if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        st->gone = true;
      cut = st->gone && st->id != NULL;
      stream_unlink_locked (st);
      pthread_mutex_unlock (&se->lock);
      /* Idle time counts from the end of the last request, not its
       * start: a run of two hours is no idle session.  */
      pthread_mutex_lock (&se->h->lock);
      se->last_used_ns = sr_now_ns ();
      pthread_mutex_unlock (&se->h->lock);
      if (cut && request_pending (st))
        {
          cJSON *msg = cJSON_CreateObject ();
          cJSON *params;
          char *text;

          cJSON_AddStringToObject (msg, "jsonrpc", "2.0");
          cJSON_AddStringToObject (msg, "method", "notifications/cancelled");
          params = cJSON_AddObjectToObject (msg, "params");
          cJSON_AddItemToObject (params, "requestId", cJSON_Duplicate (st->id, 1));
          cJSON_AddStringToObject (params, "reason", "client disconnected");
          text = cJSON_PrintUnformatted (msg);
          cJSON_Delete (msg);
          if (text == NULL)
            sr_oom ();
          session_handle (se, NULL, text, strlen (text));
          free (text);
        }
      stream_unref (st);
    }
  free (rq->body);
  free (rq);
}

/* --- setup --- */

static int
read_tokens (const char *path, char ***ret, sr_error_t *err)
{
  _cleanup_free_ char *text = NULL;
  char **tokens = NULL, *save = NULL;
  size_t len;

  if (sr_read_file (path, &text, &len, err) < 0)
    return sr_error_wrap (err, "token_file");
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *t = trim (line);

      if (*t && *t != '#')
        sr_strv_push (&tokens, t);
    }
  explicit_bzero (text, len);
  if (tokens == NULL)
    return sr_error_set (err, 0, "token_file %s holds no token (one per line, # comments)",
                         path);
  *ret = tokens;
  return 0;
}

static bool
addr_is_loopback (const struct sockaddr *sa)
{
  if (sa->sa_family == AF_INET)
    return (ntohl (((const struct sockaddr_in *) sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family == AF_INET6)
    {
      const struct in6_addr *a = &((const struct sockaddr_in6 *) sa)->sin6_addr;

      if (IN6_IS_ADDR_LOOPBACK (a))
        return true;
      return IN6_IS_ADDR_V4MAPPED (a) && a->s6_addr[12] == 127;
    }
  return false;
}

/* Resolves "host:port" / "[v6]:port".  */
static int
resolve_listen (const char *where, struct addrinfo **ret, sr_error_t *err)
{
  _cleanup_free_ char *copy = sr_xstrdup (where ? where : "");
  struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                            .ai_flags = AI_NUMERICSERV | AI_PASSIVE };
  char *host = copy, *port, *end;
  unsigned long n;
  int r;

  if (*host == '[')
    {
      end = strchr (++host, ']');
      if (end == NULL || end[1] != ':')
        return sr_error_set (err, 0, "listen address '%s' is not [ADDRESS]:PORT", where);
      *end = '\0';
      port = end + 2;
      hints.ai_family = AF_INET6;
    }
  else
    {
      port = strrchr (host, ':');
      if (port == NULL || port == host || memchr (host, ':', (size_t) (port - host)))
        return sr_error_set (err, 0, "listen address '%s' is not HOST:PORT (or [IPV6]:PORT)",
                             where);
      *port++ = '\0';
    }
  errno = 0;
  n = strtoul (port, &end, 10);
  if (*port == '\0' || *end || errno || n > 65535)
    return sr_error_set (err, 0, "listen address '%s': bad port '%s'", where, port);
  r = getaddrinfo (host, port, &hints, ret);
  if (r != 0)
    return sr_error_set (err, 0, "listen address '%s': %s", where, gai_strerror (r));
  return 0;
}

static int
open_listener (const struct addrinfo *ai, const char *where, sr_error_t *err)
{
  int fd = socket (ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
  int one = 1;

  if (fd < 0)
    return sr_error_set (err, errno, "listen %s: socket", where);
  setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (bind (fd, ai->ai_addr, ai->ai_addrlen) < 0)
    {
      int e = errno;

      close (fd);
      return sr_error_set (err, e, "listen %s: bind", where);
    }
  if (listen (fd, SOMAXCONN) < 0)
    {
      int e = errno;

      close (fd);
      return sr_error_set (err, e, "listen %s", where);
    }
  return fd;
}

int
sr_mcp_http_run (struct sr_mcp_server *s, const struct sr_mcp_http_options *o, int stop_fd,
                 sr_error_t *err)
{
  struct http h = {
    .mcp = s, .max_message_size = o->max_message_size,
    .max_download_size = o->max_download_size ? o->max_download_size
                                              : SR_DEFAULT_MAX_ARTIFACT_SIZE,
    .idle_ns = (o->session_idle_ms ? o->session_idle_ms : HTTP_SESSION_IDLE_DEFAULT_MS) * 1000000,
  };
  struct addrinfo *ai = NULL;
  struct MHD_Daemon *d;
  struct session *all;
  unsigned int flags;
  int fd, r = -1;

  if (resolve_listen (o->listen, &ai, err) < 0)
    return -1;
  h.loopback = addr_is_loopback (ai->ai_addr);
  if (!h.loopback && (o->token_file == NULL || o->token_file[0] == '\0'))
    {
      freeaddrinfo (ai);
      return sr_error_set (err, 0,
                           "listen address %s is not loopback: refusing to serve it without "
                           "bearer tokens; set token_file (--token-file FILE, one token a line)",
                           o->listen);
    }
  if (o->token_file && o->token_file[0] && read_tokens (o->token_file, &h.tokens, err) < 0)
    {
      freeaddrinfo (ai);
      return -1;
    }
  if (o->allowed_origins)
    {
      _cleanup_free_ char *copy = sr_xstrdup (o->allowed_origins);
      char *save = NULL;

      for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
        {
          char *origin = trim (t);
          size_t len = strlen (origin);

          while (len && origin[len - 1] == '/')
            origin[--len] = '\0';
          if (*origin)
            sr_strv_push (&h.origins, origin);
        }
    }
  fd = open_listener (ai, o->listen, err);
  flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL;
  if (ai->ai_family == AF_INET6)
    flags |= MHD_USE_IPv6;
  freeaddrinfo (ai);
  if (fd < 0)
    goto out;
  pthread_mutex_init (&h.lock, NULL);
  {
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    char host[NI_MAXHOST], port[NI_MAXSERV];

    if (getsockname (fd, (struct sockaddr *) &ss, &len) == 0
        && getnameinfo ((struct sockaddr *) &ss, len, host, sizeof host, port, sizeof port,
                        NI_NUMERICHOST | NI_NUMERICSERV)
               == 0)
      {
        _cleanup_free_ char *url = sr_xasprintf (ss.ss_family == AF_INET6 ? "http://[%s]:%s"
                                                                          : "http://%s:%s",
                                                 host, port);

        sr_mcp_server_set_files_url (s, url);
      }
  }

  d = MHD_start_daemon (flags, 0, NULL, NULL, on_request, &h,
                        MHD_OPTION_LISTEN_SOCKET, (MHD_socket) fd,
                        MHD_OPTION_CONNECTION_LIMIT, (unsigned int) MAX_CONNECTIONS,
                        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) IDLE_TIMEOUT_S,
                        MHD_OPTION_NOTIFY_COMPLETED, on_completed, &h,
                        MHD_OPTION_END);
  if (d == NULL)
    {
      close (fd);
      sr_error_set (err, 0, "listen %s: could not start the HTTP server (libmicrohttpd)",
                    o->listen);
      pthread_mutex_destroy (&h.lock);
      goto out;
    }

  for (;;)
    {
      struct pollfd p = { .fd = stop_fd, .events = POLLIN };

      if (poll (&p, 1, -1) < 0 && errno == EINTR)
        continue;
      break;
    }

  /* Stop: no new session, every session ended (its runs cancelled, its
   * streams finished), then the connections.  */
  pthread_mutex_lock (&h.lock);
  h.stopping = true;
  all = TAKE_PTR (h.sessions);
  h.n_sessions = 0;
  for (struct session *se = all; se; se = se->next)
    se->in_table = false;
  pthread_mutex_unlock (&h.lock);
  while (all)
    {
      struct session *se = all;

      all = se->next;
      session_close (se);
      session_unref (se);
    }
  MHD_stop_daemon (d);
  close (fd);
  pthread_mutex_destroy (&h.lock);
  r = 0;
out:
  if (h.tokens)
    for (char **t = h.tokens; *t; t++)
      explicit_bzero (*t, strlen (*t));
  sr_strv_free (h.tokens);
  sr_strv_free (h.origins);
  return r;
}
