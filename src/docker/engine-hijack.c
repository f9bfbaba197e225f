/* An exec with its stdin attached, over the connection the daemon
 * hijacks.  */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "common/curlbuf.h"
#include "common/json.h"
#include "common/util.h"
#include "docker/engine-internal.h"

/* An exec with its stdin attached needs both directions of one
 * connection: the daemon answers the start request with 101 and then
 * relays raw bytes each way.  libcurl only connects (CONNECT_ONLY), so
 * unix and tcp endpoints work alike; the request is ours to write.  */
struct hijack
{
  CURL *h;
  curl_socket_t fd;
  char errbuf[CURL_ERROR_SIZE];
};

static void
hijack_done (struct hijack *hj)
{
  if (hj->h)
    curl_easy_cleanup (hj->h);
  hj->h = NULL;
  hj->fd = CURL_SOCKET_BAD;
}

/* Polls fd for events until deadline (sr_now_ns): > 0 when ready.  */
static int
wait_fd (int fd, short events, uint64_t deadline)
{
  for (;;)
    {
      struct pollfd p = { .fd = fd, .events = events };
      uint64_t now = sr_now_ns ();
      int r;

      if (now >= deadline)
        return 0;
      r = poll (&p, 1, (int) ((deadline - now) / 1000000) + 1);
      if (r < 0 && errno == EINTR)
        continue;
      return r;
    }
}

static int
hijack_send (const struct sr_docker *d, struct hijack *hj, const char *p, size_t n,
             uint64_t deadline, sr_error_t *err)
{
  while (n > 0)
    {
      size_t sent = 0;
      CURLcode rc = curl_easy_send (hj->h, p, n, &sent);

      if (rc == CURLE_AGAIN)
        {
          if (wait_fd (hj->fd, POLLOUT, deadline) <= 0)
            return sr_error_set (err, ETIMEDOUT, "the Docker daemon at %s takes no more input",
                                 d->endpoint);
          continue;
        }
      if (rc != CURLE_OK)
        return sr_docker_transport_error_ (d, hj->h, rc, hj->errbuf, 0, err);
      p += sent;
      n -= sent;
    }
  return 0;
}

/* Appends what the connection has to b, waiting until deadline; an end of
 * the connection is an error.  */
static int
hijack_recv_some (const struct sr_docker *d, struct hijack *hj, struct sr_buf *b,
                  uint64_t deadline, const char *what, sr_error_t *err)
{
  for (;;)
    {
      char buf[4096];
      size_t n = 0;
      CURLcode rc = curl_easy_recv (hj->h, buf, sizeof buf, &n);

      if (rc == CURLE_AGAIN)
        {
          if (wait_fd (hj->fd, POLLIN, deadline) <= 0)
            return sr_error_set (err, ETIMEDOUT,
                                 "%s: the Docker daemon at %s did not answer within %u ms", what,
                                 d->endpoint, ATTACH_TIMEOUT_MS);
          continue;
        }
      if (rc != CURLE_OK)
        return sr_docker_transport_error_ (d, hj->h, rc, hj->errbuf, 0, err);
      if (n == 0)
        return sr_error_set (err, ECONNRESET, "%s: the Docker daemon at %s closed the connection",
                             what, d->endpoint);
      sr_buf_append (b, buf, n);
      return 0;
    }
}

/* POSTs body to path on a connection of its own and reads the answer's
 * head.  On 101 (or 200, which older daemons send) the connection is the
 * stream and *early gets what already came of it; any other status is an
 * error with the daemon's message.  */
static int
hijack_start (const struct sr_docker *d, const char *path, const cJSON *body, struct hijack *hj,
              struct sr_buf *early, const char *what, sr_error_t *err)
{
  _cleanup_free_ char *text = cJSON_PrintUnformatted (body), *req = NULL;
  const char *host = d->base_url + strlen ("http://");
  size_t host_len = strcspn (host, "/");
  uint64_t deadline = sr_now_ns () + ATTACH_TIMEOUT_MS * 1000000ull;
  struct sr_buf head = { 0 }, msg = { 0 };
  const char *end;
  CURLcode rc;
  long status = 0;
  int r = -1;

  if (text == NULL)
    sr_oom ();
  hj->h = sr_docker_new_handle_ (d, hj->errbuf);
  curl_easy_setopt (hj->h, CURLOPT_URL, d->base_url);
  curl_easy_setopt (hj->h, CURLOPT_CONNECT_ONLY, 1L);
  rc = curl_easy_perform (hj->h);
  if (rc != CURLE_OK)
    return sr_docker_transport_error_ (d, hj->h, rc, hj->errbuf, CONNECT_TIMEOUT_MS, err);
  if (curl_easy_getinfo (hj->h, CURLINFO_ACTIVESOCKET, &hj->fd) != CURLE_OK
      || hj->fd == CURL_SOCKET_BAD)
    return sr_error_set (err, EIO, "%s: no connection to the Docker daemon at %s", what,
                         d->endpoint);
  req = sr_xasprintf ("POST %s%s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: " PACKAGE_NAME
                      "/" PACKAGE_VERSION "\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n%s",
                      host + host_len, path, (int) host_len, host, strlen (text), text);
  if (hijack_send (d, hj, req, strlen (req), deadline, err) < 0)
    goto out;
  while (head.len == 0 || (end = memmem (head.data, head.len, "\r\n\r\n", 4)) == NULL)
    {
      if (head.len > MAX_ERROR_BODY)
        {
          sr_error_set (err, EPROTO, "%s: the Docker daemon's answer has no end of headers", what);
          goto out;
        }
      if (hijack_recv_some (d, hj, &head, deadline, what, err) < 0)
        goto out;
    }
  end += 4;
  if (sscanf (head.data, "HTTP/%*s %ld", &status) != 1)
    {
      sr_error_set (err, EPROTO, "%s: the Docker daemon's answer is not HTTP", what);
      goto out;
    }
  if (status == 101 || status == 200)
    {
      sr_buf_append (early, end, head.len - (size_t) (end - head.data));
      r = 0;
      goto out;
    }
  /* An error: its JSON body, as long as Content-Length says.  */
  {
    _cleanup_free_ char *head_only = strndup (head.data, (size_t) (end - head.data));
    const char *cl = head_only ? strcasestr (head_only, "\r\nContent-Length:") : NULL;
    size_t want = cl ? strtoul (cl + 17, NULL, 10) : 0;

    if (head_only == NULL)
      sr_oom ();
    sr_buf_append (&msg, end, head.len - (size_t) (end - head.data));
    if (want > MAX_ERROR_BODY)
      want = MAX_ERROR_BODY;
    while (msg.len < want && hijack_recv_some (d, hj, &msg, deadline, what, NULL) == 0)
      ;
    sr_docker_status_error_ (status, &msg, what, err);
  }
out:
  sr_buf_done (&head);
  sr_buf_done (&msg);
  return r;
}

static void
deliver_raw (struct stream *s, bool tty, const char *p, size_t n)
{
  if (tty)
    {
      /* A terminal's output is one stream, the command's stdout.  */
      s->type = 1;
      sr_docker_stream_deliver_ (s, p, n);
    }
  else
    sr_docker_on_stream_data_ ((char *) p, 1, n, s);
}

/* The daemon closed the connection while stdin it had not read was still
 * in it: the command ended without reading all of its stdin, and the
 * output it wrote came before the reset.  */
static bool
peer_reset (struct hijack *hj)
{
  long e = 0;

  return curl_easy_getinfo (hj->h, CURLINFO_OS_ERRNO, &e) == CURLE_OK && e == ECONNRESET;
}

/* How often a relay whose stdin the daemon takes no more asks whether
 * the command has ended.  */
#define STDIN_PROBE_MS 100

/* What a relay asks the daemon about its command: path (inspect of the
 * container, or of the exec) says Running, in State when in_state.  */
struct relay_probe
{
  const char *path;
  bool in_state;
};

/* A daemon that cannot be asked has not said the command ended.  */
static bool
command_ended (struct sr_docker *d, const struct relay_probe *probe)
{
  return sr_docker_running_ (d, probe->path, probe->in_state, "inspect the command") == 0;
}

/* The rest of the relay's stdin, not taken by the daemon yet.  */
struct pending_in
{
  char buf[4096];
  size_t off, len;
  /* When to ask whether the command has ended (sr_now_ns), the daemon
   * having taken none of it since; 0: it takes it.  */
  uint64_t next_probe;
};

/* No more input: a pipe's end reaches the command as EOF; a terminal
 * (EIO once its master is gone) has no end.  */
static void
end_stdin (struct hijack *hj, bool tty, bool *in_open)
{
  *in_open = false;
  if (!tty)
    (void) shutdown (hj->fd, SHUT_WR);
}

/* Sends what the daemon takes of in now; past STDIN_PROBE_MS of it
 * taking nothing, asks probe every STDIN_PROBE_MS whether the command
 * has ended, and if so ends stdin, the rest dropped.  */
static void
send_stdin (struct sr_docker *d, struct hijack *hj, bool tty, const struct relay_probe *probe,
            struct pending_in *in, bool *in_open)
{
  uint64_t now = sr_now_ns ();
  size_t sent = 0;
  CURLcode rc = curl_easy_send (hj->h, in->buf + in->off, in->len - in->off, &sent);

  if (rc == CURLE_OK)
    {
      in->off += sent;
      in->next_probe = 0;
    }
  else if (rc != CURLE_AGAIN)
    end_stdin (hj, tty, in_open);
  else if (in->next_probe == 0)
    in->next_probe = now + STDIN_PROBE_MS * 1000000ull;
  else if (now >= in->next_probe)
    {
      if (command_ended (d, probe))
        end_stdin (hj, tty, in_open);
      in->next_probe = sr_now_ns () + STDIN_PROBE_MS * 1000000ull;
    }
}

/* Relays until the command's output ends: what already came (early) and
 * then the rest of its output to s, opts->stdin_fd to its stdin on hj.
 * The timeout and the cancel fd are enforced as
 * sr_docker_supervise_stream_ does.  Stdin never blocks the relay: a
 * command that ended without reading all of it leaves the daemon taking
 * no more, and the attach ending only once our side of stdin ends, so
 * stdin the daemon holds back is dropped once probe says the command
 * has ended.  */
static int
relay (struct sr_docker *d, struct hijack *hj, const struct sr_buf *early,
       const struct sr_run_options *opts, bool tty, const struct relay_probe *probe,
       struct stream *s, struct supervise *sv, sr_error_t *err)
{
  struct pending_in in = { 0 };
  bool in_open = true;

  sr_docker_supervise_start_ (sv, opts);
  s->status = 101;
  s->headers_done = true;
  if (early->len)
    deliver_raw (s, tty, early->data, early->len);

  for (;;)
    {
      bool pending = in_open && in.off < in.len;
      struct pollfd p[3] = {
        { .fd = hj->fd, .events = POLLIN | (pending ? POLLOUT : 0) },
        { .fd = in_open && !pending && !sv->killed ? opts->stdin_fd : -1, .events = POLLIN },
        { .fd = sv->killed ? -1 : opts->cancel_fd, .events = POLLIN },
      };
      int wait_ms;

      if (!sr_docker_supervise_tick_ (sv, &wait_ms))
        break;
      if (pending && (wait_ms < 0 || wait_ms > STDIN_PROBE_MS))
        wait_ms = STDIN_PROBE_MS;
      if (poll (p, 3, wait_ms) < 0)
        {
          if (errno == EINTR)
            continue;
          return sr_error_set (err, errno, "poll");
        }
      if (p[2].revents & POLLIN)
        {
          sv->cancelled = true;
          sr_docker_supervise_kill_ (sv);
        }
      if (p[1].revents)
        {
          ssize_t n = read (opts->stdin_fd, in.buf, sizeof in.buf);

          if (n > 0)
            {
              in.off = 0;
              in.len = (size_t) n;
              in.next_probe = 0;
            }
          else if (n == 0 || (errno != EINTR && errno != EAGAIN))
            end_stdin (hj, tty, &in_open);
        }
      if (in_open && in.off < in.len)
        send_stdin (d, hj, tty, probe, &in, &in_open);
      if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
        {
          char buf[16384];
          size_t n = 0;
          CURLcode rc = curl_easy_recv (hj->h, buf, sizeof buf, &n);

          if (rc == CURLE_AGAIN)
            continue;
          if (rc != CURLE_OK)
            {
              if (sv->killed || peer_reset (hj))
                break;
              return sr_docker_transport_error_ (d, hj->h, rc, hj->errbuf, 0, err);
            }
          if (n == 0)
            break;
          deliver_raw (s, tty, buf, n);
        }
    }
  return 0;
}

/* Starts exec_id (start_path, start) on a hijacked connection and relays
 * until its output ends.  A terminal stdin is put in raw mode, so that
 * what is typed, ^C too, reaches the command's terminal in the container
 * untouched and is interpreted there.  */
int
sr_docker_relay_exec_ (struct sr_docker_container *c, const char *exec_id,
                       const char *start_path, const cJSON *start,
                       const struct sr_run_options *opts, bool tty, struct stream *s,
                       struct supervise *sv, sr_error_t *err)
{
  _cleanup_free_ char *inspect = sr_xasprintf ("/exec/%s/json", exec_id);
  const struct relay_probe probe = { .path = inspect, .in_state = false };
  struct hijack hj = { .fd = CURL_SOCKET_BAD };
  struct sr_buf early = { 0 };
  int r = -1;

  if (tty)
    {
      struct termios t;

      if (tcgetattr (opts->stdin_fd, &t) == 0)
        {
          cfmakeraw (&t);
          (void) tcsetattr (opts->stdin_fd, TCSANOW, &t);
        }
    }
  if (hijack_start (c->d, start_path, start, &hj, &early, "start the exec", err) < 0)
    goto out;
  if (tty)
    {
      /* The size a shell's programs format their output for.  */
      _cleanup_free_ char *resize = sr_xasprintf ("/exec/%s/resize?h=50&w=200", exec_id);
      struct sr_buf resp = { 0 };

      (void) sr_docker_request_ (c->d, "POST", resize, NULL, CONTROL_TIMEOUT_MS, &resp, NULL);
      sr_buf_done (&resp);
    }
  r = relay (c->d, &hj, &early, opts, tty, &probe, s, sv, err);
out:
  hijack_done (&hj);
  sr_buf_done (&early);
  return r;
}

int
sr_docker_relay_attach_ (struct sr_docker *d, const char *id,
                         int (*start) (void *ctx, sr_error_t *err), void *start_ctx,
                         const struct sr_run_options *opts, struct stream *s,
                         struct supervise *sv, sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/attach?stream=1&stdin=1&stdout=1"
                                            "&stderr=1", id);
  _cleanup_free_ char *inspect = sr_xasprintf ("/containers/%s/json", id);
  const struct relay_probe probe = { .path = inspect, .in_state = true };
  _cleanup_json_ cJSON *none = cJSON_CreateObject ();
  struct hijack hj = { .fd = CURL_SOCKET_BAD };
  struct sr_buf early = { 0 };
  int r = -1;

  if (hijack_start (d, path, none, &hj, &early, "attach to the container", err) < 0
      || start (start_ctx, err) < 0)
    goto out;
  r = relay (d, &hj, &early, opts, false, &probe, s, sv, err);
out:
  hijack_done (&hj);
  sr_buf_done (&early);
  return r;
}
