/* The output of attach (for a run) and of exec start (for a session
 * command): the daemon hijacks that connection and sends the multiplexed
 * stream format, frames of an 8-byte header (stream type, three zero
 * bytes, big-endian length) and the payload.  That transfer runs in a
 * multi handle, so one poll loop also sees the timeout and the cancel fd,
 * as the native supervisor does.  */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "common/curlbuf.h"
#include "common/util.h"
#include "docker/engine-internal.h"

void
sr_docker_stream_deliver_ (struct stream *s, const char *p, size_t n)
{
  struct sr_capture *cap;
  enum sr_stream which;

  /* Type 0 is stdin, which we never attach; a type we do not know is
   * read and dropped rather than misfiled.  */
  if (s->type == 1)
    cap = &s->out, which = SR_STREAM_STDOUT;
  else if (s->type == 2)
    cap = &s->err, which = SR_STREAM_STDERR;
  else
    return;
  if (s->opts->on_output)
    s->opts->on_output (which, p, n, s->opts->userdata);
  sr_capture_add (cap, p, n);
}

size_t
sr_docker_on_stream_data_ (char *ptr, size_t size, size_t nmemb, void *userdata)
{
  struct stream *s = userdata;
  size_t n = size * nmemb, i = 0;

  if (s->status != 200 && s->status != 101)
    {
      if (s->body.len < MAX_ERROR_BODY)
        sr_buf_append (&s->body, ptr, n);
      return n;
    }
  while (i < n)
    {
      if (s->left == 0)
        {
          size_t want = STREAM_HEADER_LEN - s->head_len, take = n - i < want ? n - i : want;

          memcpy (s->head + s->head_len, ptr + i, take);
          s->head_len += take;
          i += take;
          if (s->head_len < STREAM_HEADER_LEN)
            break;
          s->head_len = 0;
          s->type = s->head[0];
          s->left = (uint32_t) s->head[4] << 24 | (uint32_t) s->head[5] << 16
                    | (uint32_t) s->head[6] << 8 | (uint32_t) s->head[7];
          continue;
        }
      {
        size_t take = n - i < s->left ? n - i : s->left;

        sr_docker_stream_deliver_ (s, ptr + i, take);
        s->left -= (uint32_t) take;
        i += take;
      }
    }
  return n;
}

static size_t
on_stream_header (char *ptr, size_t size, size_t nmemb, void *userdata)
{
  struct stream *s = userdata;
  size_t n = size * nmemb;
  int code;

  if (n >= 12 && strncmp (ptr, "HTTP/", 5) == 0 && sscanf (ptr, "HTTP/%*s %d", &code) == 1)
    s->status = code;
  else if ((n == 2 && ptr[0] == '\r' && ptr[1] == '\n') || (n == 1 && ptr[0] == '\n'))
    s->headers_done = true;
  return n;
}

static void
xfer_done (struct xfer *x)
{
  if (x->added)
    curl_multi_remove_handle (x->multi, x->h);
  if (x->h)
    curl_easy_cleanup (x->h);
  if (x->multi)
    curl_multi_cleanup (x->multi);
  curl_slist_free_all (x->headers);
  free (x->body_text);
  memset (x, 0, sizeof *x);
}

void
sr_docker_xfer_start_ (const struct sr_docker *d, struct xfer *x, const char *path,
                       const cJSON *body, struct stream *s)
{
  _cleanup_free_ char *url = sr_xasprintf ("%s%s", d->base_url, path);

  x->multi = curl_multi_init ();
  if (x->multi == NULL)
    sr_oom ();
  x->h = sr_docker_new_handle_ (d, x->errbuf);
  curl_easy_setopt (x->h, CURLOPT_URL, url);
  curl_easy_setopt (x->h, CURLOPT_POST, 1L);
  x->body_text = body ? cJSON_PrintUnformatted (body) : sr_xstrdup ("");
  if (x->body_text == NULL)
    sr_oom ();
  curl_easy_setopt (x->h, CURLOPT_POSTFIELDS, x->body_text);
  x->headers = curl_slist_append (NULL, "Content-Type: application/json");
  curl_easy_setopt (x->h, CURLOPT_HTTPHEADER, x->headers);
  curl_easy_setopt (x->h, CURLOPT_HEADERFUNCTION, on_stream_header);
  curl_easy_setopt (x->h, CURLOPT_HEADERDATA, s);
  curl_easy_setopt (x->h, CURLOPT_WRITEFUNCTION, sr_docker_on_stream_data_);
  curl_easy_setopt (x->h, CURLOPT_WRITEDATA, s);
  curl_multi_add_handle (x->multi, x->h);
  x->added = true;
}

void
sr_docker_stream_finish_ (struct xfer *x, struct stream *s, struct sr_run_result *result)
{
  xfer_done (x);
  result->out = sr_capture_finish (&s->out);
  result->err = sr_capture_finish (&s->err);
  sr_buf_done (&s->body);
}

/* Moves the transfer on; true once it has ended.  */
bool
sr_docker_xfer_step_ (struct xfer *x)
{
  CURLMsg *m;
  int running, left;

  curl_multi_perform (x->multi, &running);
  while ((m = curl_multi_info_read (x->multi, &left)))
    if (m->msg == CURLMSG_DONE && m->easy_handle == x->h)
      {
        x->done = true;
        x->result = m->data.result;
      }
  return x->done;
}

/* Waits for the transfer, cancel_fd (when >= 0) or at most wait_ms.
 * Returns true when cancel_fd is readable.  */
bool
sr_docker_xfer_wait_ (struct xfer *x, int cancel_fd, int wait_ms)
{
  struct curl_waitfd extra = { .fd = cancel_fd, .events = CURL_WAIT_POLLIN };
  int numfds;

  curl_multi_poll (x->multi, cancel_fd >= 0 ? &extra : NULL, cancel_fd >= 0 ? 1 : 0, wait_ms,
                   &numfds);
  return cancel_fd >= 0 && (extra.revents & CURL_WAIT_POLLIN);
}

/* Drives the transfer until the daemon has sent the response headers, so
 * that it is attached before anything starts.  */
int
sr_docker_xfer_until_headers_ (const struct sr_docker *d, struct xfer *x, struct stream *s,
                               const char *what, sr_error_t *err)
{
  uint64_t deadline = sr_now_ns () + ATTACH_TIMEOUT_MS * 1000000ull;

  while (!sr_docker_xfer_step_ (x) && !s->headers_done)
    {
      if (sr_now_ns () >= deadline)
        return sr_error_set (err, ETIMEDOUT, "%s: the Docker daemon at %s did not answer within %u ms",
                             what, d->endpoint, ATTACH_TIMEOUT_MS);
      sr_docker_xfer_wait_ (x, -1, 100);
    }
  if (x->done && x->result != CURLE_OK)
    return sr_docker_transport_error_ (d, x->h, x->result, x->errbuf, ATTACH_TIMEOUT_MS, err);
  if (s->status != 200 && s->status != 101)
    {
      /* The error body may still be on its way.  */
      while (!sr_docker_xfer_step_ (x) && sr_now_ns () < deadline)
        sr_docker_xfer_wait_ (x, -1, 100);
      return sr_docker_status_error_ (s->status, &s->body, what, err);
    }
  return 0;
}
