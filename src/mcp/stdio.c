#include "config.h"

#include "mcp/stdio.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "common/json.h"
#include "common/util.h"
#include "mcp/rpc-id.h"

struct stdio_out
{
  int fd;
  pthread_mutex_t lock;
  bool broken;   /* the client went away: drop what is left */
};

/* Called from any thread: one message, one line, never interleaved; in
 * one write with its newline, which the client then reads at once rather
 * than waking again for the newline.  */
static void
send_line (void *transport, const cJSON *related_id, const char *json)
{
  struct stdio_out *out = transport;
  size_t len = strlen (json);
  _cleanup_free_ char *line = sr_xmalloc (len + 1);

  memcpy (line, json, len);
  line[len] = '\n';
  pthread_mutex_lock (&out->lock);
  if (!out->broken && sr_write_all (out->fd, line, len + 1) < 0)
    out->broken = true;
  pthread_mutex_unlock (&out->lock);
}

/* The line over the limit has ended: refused, answering its id when its
 * ends show it.  */
static void
refuse_line (struct stdio_out *out, struct sr_rpc_id_scan *over, size_t max_message_size)
{
  _cleanup_json_ cJSON *id = sr_rpc_id_scan_result (over);
  _cleanup_free_ char *msg = sr_mcp_oversized_error (id, over->total, max_message_size);

  send_line (out, NULL, msg);
}

int
sr_mcp_stdio_run (struct sr_mcp_server *s, int in_fd, int out_fd, int stop_fd,
                  size_t max_message_size, sr_error_t *err)
{
  struct stdio_out out = { .fd = out_fd };
  struct sr_mcp_conn *c;
  _cleanup_free_ char *buf = NULL;
  /* Inside a line past the limit: its ends, kept while the rest goes.  */
  _cleanup_free_ struct sr_rpc_id_scan *over = NULL;
  size_t len = 0, cap = 0;
  int r = 0;

  pthread_mutex_init (&out.lock, NULL);
  c = sr_mcp_conn_new (s, send_line, &out);
  for (;;)
    {
      struct pollfd fds[2] = { { .fd = in_fd, .events = POLLIN }, { .fd = stop_fd, .events = POLLIN } };
      ssize_t n;
      char *nl, *start;

      if (poll (fds, stop_fd >= 0 ? 2 : 1, -1) < 0)
        {
          if (errno == EINTR)
            continue;
          r = sr_error_set (err, errno, "poll");
          break;
        }
      if (stop_fd >= 0 && (fds[1].revents & POLLIN))
        break;
      if (len + 65536 + 1 > cap)
        {
          cap = len + 65536 + 1;
          buf = sr_xrealloc (buf, cap);
        }
      n = read (in_fd, buf + len, cap - len - 1);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n < 0)
        {
          r = sr_error_set (err, errno, "read stdin");
          break;
        }
      if (n == 0)
        break; /* the client closed its end: we are done */
      len += (size_t) n;

      start = buf;
      if (over)
        {
          nl = memchr (buf, '\n', len);
          sr_rpc_id_scan_feed (over, buf, nl ? (size_t) (nl - buf) : len);
          if (nl == NULL)
            {
              len = 0;
              continue;
            }
          refuse_line (&out, over, max_message_size);
          free (TAKE_PTR (over));
          start = nl + 1;
        }
      while ((nl = memchr (start, '\n', len - (size_t) (start - buf))) != NULL)
        {
          size_t line = (size_t) (nl - start);

          if (line && start[line - 1] == '\r')
            line--;
          if (line > 0)
            sr_mcp_conn_handle (c, start, line);
          start = nl + 1;
        }
      len -= (size_t) (start - buf);
      memmove (buf, start, len);
      /* A line past the limit is skipped to its end, then refused.  */
      if (len > max_message_size)
        {
          over = sr_xcalloc (1, sizeof *over);
          sr_rpc_id_scan_feed (over, buf, len);
          len = 0;
        }
    }
  if (r == 0 && over)
    refuse_line (&out, over, max_message_size);
  else if (r == 0 && len)
    sr_mcp_conn_handle (c, buf, len);
  /* End of input is the client's goodbye: what it asked for still runs to
   * its end and is answered, unless the client is gone (its end of
   * stdout closed) or we are told to stop; then closing cancels it.  */
  while (r == 0 && sr_mcp_conn_in_flight (c) > 0)
    {
      struct pollfd fds[2] = { { .fd = out_fd, .events = 0 }, { .fd = stop_fd, .events = POLLIN } };

      if (poll (fds, stop_fd >= 0 ? 2 : 1, 50) < 0 && errno != EINTR)
        break;
      if ((fds[0].revents & (POLLERR | POLLHUP)) || (stop_fd >= 0 && (fds[1].revents & POLLIN)))
        break;
    }
  sr_mcp_conn_close (c);
  pthread_mutex_destroy (&out.lock);
  return r;
}
