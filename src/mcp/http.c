/* MCP Streamable HTTP on libmicrohttpd, a few threads over epoll for
 * every connection: the server itself.  It listens, routes each request (after the checks of
 * http-check.c) to /mcp (http-endpoint.c) or /files/ (http-files.c),
 * gathers a POST's body, and on stop ends every session.  The objects
 * and their locks are described in http-internal.h.  */
#include "config.h"

#include "mcp/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/json.h"
#include "common/log.h"
#include "common/notify.h"
#include "common/util.h"
#include "mcp/http-deadline.h"
#include "mcp/http-internal.h"

#define ENDPOINT "/mcp"
/* Connections at once: each costs a socket and its buffers, no thread
 * (an open stream waits parked, http-park.h), so idle sockets of
 * unauthenticated clients lock nobody out before they reach this.  */
#define MAX_CONNECTIONS 512u
/* MHD's threads, each with its epoll set: they only move bytes and
 * answer what is answered at once (tools/call runs on the core's
 * workers), so a few serve every connection.  */
#define HTTP_THREADS 4u
/* An MCP session nobody used for this long is forgotten (when the
 * options do not say otherwise): a client that went away without DELETE
 * must not hold its slot and its conn until the server stops.  An hour
 * outlasts any pause of an agent that is still there; it reinitializes
 * on the 404 anyway.  */
#define HTTP_SESSION_IDLE_DEFAULT_MS (60ull * 60 * 1000)

/* --- requests --- */

/* Checks and routes a request before any body is read: *done when it is
 * answered already.  */
static enum MHD_Result
first_call (struct http *h, struct MHD_Connection *c, const char *url, const char *method,
            bool *done)
{
  enum MHD_Result ret;
  bool stopping, files;

  *done = true;
  pthread_mutex_lock (&h->lock);
  stopping = h->stopping;
  pthread_mutex_unlock (&h->lock);
  if (stopping)
    return sr_http_reply_error (c, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                                "the server is stopping", NULL, NULL);
  if (strcmp (url, HTTP_HEALTH) == 0)
    {
      /* For the balancer, which has no token: it tells counts only.  */
      if (!sr_http_caller_ok (h, c, true, &ret))
        return ret;
      if (strcmp (method, "GET") != 0 && strcmp (method, "HEAD") != 0)
        return sr_http_reply_error (c, MHD_HTTP_METHOD_NOT_ALLOWED, -32000,
                                    "Method Not Allowed", "Allow", "GET");
      return sr_http_healthz (h, c);
    }
  files = strncmp (url, HTTP_FILES_PREFIX, strlen (HTTP_FILES_PREFIX)) == 0;
  if (!sr_http_caller_ok (h, c,
                          files && MHD_lookup_connection_value (c, MHD_GET_ARGUMENT_KIND, "sig"),
                          &ret))
    return ret;
  if (files)
    {
      if (strcmp (method, "GET") != 0 && strcmp (method, "HEAD") != 0)
        return sr_http_reply_error (c, MHD_HTTP_METHOD_NOT_ALLOWED, -32000,
                                    "Method Not Allowed", "Allow", "GET");
      return sr_http_serve_file (h, c, url);
    }
  if (h->sse && (strcmp (url, HTTP_SSE_STREAM) == 0 || strcmp (url, HTTP_SSE_MESSAGES) == 0))
    {
      const char *allow = strcmp (url, HTTP_SSE_STREAM) == 0 ? "GET" : "POST";

      if (strcmp (method, allow) != 0)
        return sr_http_reply_error (c, MHD_HTTP_METHOD_NOT_ALLOWED, -32000,
                                    "Method Not Allowed", "Allow", allow);
      *done = false;
      return MHD_YES;
    }
  if (strcmp (url, ENDPOINT) != 0)
    return sr_http_reply_error (c, MHD_HTTP_NOT_FOUND, -32000,
                                "Not Found: the MCP endpoint is " ENDPOINT, NULL, NULL);
  if (strcmp (method, "POST") != 0 && strcmp (method, "GET") != 0
      && strcmp (method, "DELETE") != 0)
    return sr_http_reply_error (c, MHD_HTTP_METHOD_NOT_ALLOWED, -32000, "Method Not Allowed",
                                "Allow", "GET, POST, DELETE");
  if (!sr_http_mcp_headers_ok (h, c, method, &ret))
    return ret;
  *done = false;
  return MHD_YES;
}

/* Adds a piece of a POST's body to rq; past max_message_size the body is
 * dropped, only its ends kept in rq->over.  */
static void
append_body (const struct http *h, struct request *rq, const char *data, size_t n)
{
  if (rq->over || rq->len + n > h->max_message_size)
    {
      if (rq->over == NULL)
        {
          rq->over = sr_xcalloc (1, sizeof *rq->over);
          sr_rpc_id_scan_feed (rq->over, rq->body, rq->len);
          free (TAKE_PTR (rq->body));
          rq->len = 0;
        }
      sr_rpc_id_scan_feed (rq->over, data, n);
      return;
    }
  if (rq->len + n + 1 > rq->cap)
    {
      rq->cap = (rq->len + n + 1) * 2;
      if (rq->cap > h->max_message_size + 1)
        rq->cap = h->max_message_size + 1;
      rq->body = sr_xrealloc (rq->body, rq->cap);
    }
  memcpy (rq->body + rq->len, data, n);
  rq->len += n;
  rq->body[rq->len] = '\0';
}

enum MHD_Result
sr_http_reply_oversized (const struct http *h, struct MHD_Connection *c, const struct request *rq)
{
  _cleanup_json_ cJSON *id = sr_rpc_id_scan_result (rq->over);

  return sr_http_reply_body (c, MHD_HTTP_CONTENT_TOO_LARGE, "application/json",
                             sr_mcp_oversized_error (id, rq->over->total, h->max_message_size),
                             NULL, NULL);
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
      sr_http_deadlines_request (c, true);
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
          append_body (h, rq, upload_data, *upload_data_size);
          *upload_data_size = 0;
          /* Past what is worth reading: the connection closes.  */
          return rq->over && rq->over->total > HTTP_MAX_DISCARD ? MHD_NO : MHD_YES;
        }
      if (strcmp (url, HTTP_SSE_MESSAGES) == 0)
        return sr_http_sse_post (h, c, rq);
      return sr_http_post_message (h, c, rq);
    }
  if (strcmp (url, HTTP_SSE_STREAM) == 0)
    return sr_http_sse_open (h, c, rq);
  if (strcmp (method, "GET") == 0)
    return sr_http_open_get_stream (h, c, rq);
  return sr_http_delete_session (h, c);
}

/* A request is over.  */
static void
on_completed (void *cls, struct MHD_Connection *c, void **con_cls,
              enum MHD_RequestTerminationCode toe)
{
  struct request *rq = *con_cls;

  (void) cls;
  sr_http_deadlines_request (c, false);
  if (rq == NULL)
    return;
  *con_cls = NULL;
  if (rq->stream)
    sr_http_request_done (rq->stream, toe != MHD_REQUEST_TERMINATED_COMPLETED_OK);
  free (rq->body);
  free (rq->over);
  free (rq);
}

/* --- setup --- */

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

/* Who may call: a server on an address other than loopback requires
 * bearer tokens; the tokens and the allowed origins into h.  */
static int
set_access (struct http *h, const struct sr_mcp_http_options *o, sr_error_t *err)
{
  if (!h->loopback && (o->token_file == NULL || o->token_file[0] == '\0'))
    return sr_error_set (err, 0,
                         "listen address %s is not loopback: refusing to serve it without "
                         "bearer tokens; set token_file (--token-file FILE, one token a line)",
                         o->listen);
  if (o->token_file && o->token_file[0])
    {
      struct http_tokens *t;

      if (sr_http_tokens_read (o->token_file, &t, err) < 0)
        return -1;
      atomic_store (&h->tokens, t);
      h->authenticated = true;
      h->token_file = o->token_file;
    }
  if (o->allowed_origins)
    h->origins = sr_http_parse_origins (o->allowed_origins);
  return 0;
}

/* Tells the service manager state (a unit of Type=notify); a socket
 * that does not take it is logged, never fatal.  */
static void
notify (const char *state)
{
  if (sr_notify (state) < 0)
    sr_log (SR_LOG_WARNING, "notify_failed", "state", state, "error", strerror (errno), NULL);
}

/* Waits up to timeout_ms (-1: for ever) for a signal on the signalfd fd
 * (SIGINT, SIGTERM, SIGHUP, SIGUSR2) and returns it; -1 when the time is
 * up, 0 when the fd fails.  */
static int
wait_signal (int fd, int timeout_ms)
{
  struct signalfd_siginfo si;

  for (;;)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      int r = poll (&p, 1, timeout_ms);

      if (r < 0 && errno == EINTR)
        continue;
      if (r == 0)
        return -1;
      if (read (fd, &si, sizeof si) == sizeof si)
        return (int) si.ssi_signo;
      if (errno != EAGAIN && errno != EINTR)
        return 0;
    }
}

/* SIGHUP: the token file read again, for a token added or revoked
 * without a restart; sessions and connections stay.  A file that cannot
 * be read leaves the tokens as they were.  */
static void
reload (struct http *h)
{
  struct http_tokens *t;
  sr_error_t err = NULL;

  notify ("RELOADING=1");
  if (!h->authenticated)
    sr_log (SR_LOG_INFO, "reload", "tokens", "none configured", NULL);
  else if (sr_http_tokens_read (h->token_file, &t, &err) < 0)
    {
      sr_log (SR_LOG_ERROR, "reload_failed", "error", err->msg, NULL);
      sr_error_free (&err);
    }
  else
    {
      char n[24];

      /* The set it replaces stays until the end: a request may be
       * holding one of its owner ids.  */
      t->older = atomic_load (&h->tokens);
      atomic_store (&h->tokens, t);
      snprintf (n, sizeof n, "%zu", sr_strv_length (t->tokens));
      sr_log (SR_LOG_INFO, "reload", "tokens", n, NULL);
    }
  notify ("READY=1");
}

/* How often a draining server looks whether its sessions are done.  */
#define DRAIN_POLL_MS 200

/* Waits for the signal that stops the server, reloading on SIGHUP.
 * SIGTERM or SIGUSR2 drains first: no new session, and the server stops
 * once its sessions are done or drain_grace_ms is up.  SIGINT, or a
 * second SIGTERM, stops it at once, as does any of them with a grace of
 * 0.  */
static void
wait_stop (struct http *h, int stop_fd, uint64_t drain_grace_ms)
{
  uint64_t deadline = 0;
  bool draining = false;

  for (;;)
    {
      int sig = wait_signal (stop_fd, draining ? DRAIN_POLL_MS : -1);

      if (sig == SIGHUP)
        reload (h);
      else if (sig == -1)
        {
          if (sr_http_drained (h) || sr_now_ns () >= deadline)
            return;
        }
      else if ((sig == SIGTERM || sig == SIGUSR2) && !draining && drain_grace_ms)
        {
          char grace[24];

          draining = true;
          deadline = sr_now_ns () + drain_grace_ms * 1000000;
          sr_http_drain_start (h);
          sr_mcp_server_drain (h->mcp);
          snprintf (grace, sizeof grace, "%llu", (unsigned long long) (drain_grace_ms / 1000));
          sr_log (SR_LOG_INFO, "drain", "server_id", sr_http_server_id (), "grace_s", grace,
                  NULL);
          notify ("STATUS=draining");
        }
      else if (!(sig == SIGUSR2 && draining))
        return;
    }
}

/* Serves h on the listening socket fd until wait_stop returns.  */
static int
serve (struct http *h, int fd, unsigned int flags, const char *listen, int stop_fd,
       uint64_t drain_grace_ms, sr_error_t *err)
{
  struct http_deadlines *deadlines = NULL;
  struct MHD_Daemon *d;

  if (sr_http_parked_start (&h->parked, err) < 0)
    return -1;
  if (sr_http_deadlines_start (h->header_timeout_ms, &deadlines, err) < 0)
    {
      sr_http_parked_release (h->parked);
      sr_http_parked_free (h->parked);
      return -1;
    }
  d = MHD_start_daemon (flags, 0, NULL, NULL, on_request, h,
                        MHD_OPTION_LISTEN_SOCKET, (MHD_socket) fd,
                        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int) HTTP_THREADS,
                        MHD_OPTION_CONNECTION_LIMIT, (unsigned int) MAX_CONNECTIONS,
                        /* One address cannot hold every slot (idle sockets
                         * locked authorized clients out).  */
                        MHD_OPTION_PER_IP_CONNECTION_LIMIT, h->max_connections_per_ip,
                        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int) HTTP_IDLE_TIMEOUT_S,
                        MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                        /* Slow headers do not hold a thread forever.  */
                        MHD_OPTION_NOTIFY_CONNECTION, sr_http_deadlines_notify, deadlines,
                        MHD_OPTION_END);
  if (d == NULL)
    {
      sr_http_deadlines_stop (deadlines);
      sr_http_parked_release (h->parked);
      sr_http_parked_free (h->parked);
      return sr_error_set (err, 0, "listen %s: could not start the HTTP server (libmicrohttpd)",
                           listen);
    }
  sr_log (SR_LOG_INFO, "listen", "address", listen, "transport", h->sse ? "sse" : "http",
          "server_id", sr_http_server_id (), NULL);
  notify ("READY=1");
  wait_stop (h, stop_fd, drain_grace_ms);
  notify ("STOPPING=1");
  sr_log (SR_LOG_INFO, "shutdown", "address", listen, NULL);
  /* Stop: no new session, every session ended (its runs cancelled, its
   * streams finished), no stream parked (MHD stops with no connection
   * suspended), then the connections.  */
  sr_http_sessions_stop (h);
  sr_http_parked_release (h->parked);
  MHD_stop_daemon (d);
  sr_http_deadlines_stop (deadlines);
  sr_http_parked_free (h->parked);
  return 0;
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
    .sse = o->sse, .max_connections_per_ip = o->max_connections_per_ip,
    .header_timeout_ms = o->header_timeout_ms,
  };
  struct addrinfo *ai = NULL;
  unsigned int flags;
  int fd, r = -1;

  if (sr_http_server_id_set (o->server_id, err) < 0 || resolve_listen (o->listen, &ai, err) < 0)
    return -1;
  sr_http_keep_alive_set (o->header_timeout_ms);
  h.loopback = addr_is_loopback (ai->ai_addr);
  if (set_access (&h, o, err) < 0)
    {
      freeaddrinfo (ai);
      return -1;
    }
  fd = open_listener (ai, o->listen, err);
  flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
  if (ai->ai_family == AF_INET6)
    flags |= MHD_USE_IPv6;
  freeaddrinfo (ai);
  if (fd >= 0)
    {
      pthread_mutex_init (&h.lock, NULL);
      pthread_cond_init (&h.resumed, NULL);
      r = serve (&h, fd, flags, o->listen, stop_fd, o->drain_grace_ms, err);
      close (fd);
      pthread_cond_destroy (&h.resumed);
      pthread_mutex_destroy (&h.lock);
    }
  sr_http_tokens_free (atomic_load (&h.tokens));
  sr_strv_free (h.origins);
  return r;
}
