/* sandbox-runner session download: a session's file, which does not go
 * through MCP but through GET /files/{session}/{path}, streamed to the
 * file, so that its size is not bounded by the size of one JSON-RPC
 * message.  */
#include "config.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/session_client.h"
#include "common/curlbuf.h"
#include "common/utf8.h"
#include "common/util.h"

/* The body of an HTTP error kept for its message.  */
#define MAX_ERROR_BODY (64u << 10)

/* GET /files/... streams into the file; a refusal's body is kept for
 * its message instead.  */
struct download
{
  CURL *curl;
  int fd;
  bool checked, ok;
  uint64_t written;
  int write_errno;
  struct reply err;
};

static size_t
on_download (char *data, size_t size, size_t n, void *cls)
{
  struct download *d = cls;
  size_t len = size * n;

  if (!d->checked)
    {
      long status = 0;

      curl_easy_getinfo (d->curl, CURLINFO_RESPONSE_CODE, &status);
      d->ok = status == 200;
      d->checked = true;
    }
  if (!d->ok)
    {
      if (d->err.body.len + len > MAX_ERROR_BODY)
        return len;
      return sr_buf_curl_write (data, size, n, &d->err.body);
    }
  if (sr_write_all (d->fd, data, len) < 0)
    {
      d->write_errno = errno;
      return 0;  /* stops the transfer */
    }
  d->written += len;
  return len;
}

/* Percent-encodes a path for the URL, keeping its slashes unless it is
 * one segment (the session id).  */
static char *
url_path (const char *p, bool segment)
{
  static const char hex[] = "0123456789ABCDEF";
  char *out = sr_xmalloc (3 * strlen (p) + 1), *o = out;

  for (; *p; p++)
    {
      unsigned char ch = (unsigned char) *p;

      if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
          || strchr (segment ? "-._~" : "-._~/", ch))
        *o++ = (char) ch;
      else
        {
          *o++ = '%';
          *o++ = hex[ch >> 4];
          *o++ = hex[ch & 15];
        }
    }
  *o = '\0';
  return out;
}

/* The download URL of a session's file: the server's origin (from
 * --server, which is how we reach it, whatever address it listens on)
 * and /files/{session}/{path}.  */
static char *
files_url (const struct client *c, const char *session, const char *path)
{
  _cleanup_free_ char *esid = url_path (session, true), *epath = NULL, *rel = NULL;
  CURLU *u = curl_url ();
  char *out = NULL;

  while (*path == '/')
    path++;
  epath = url_path (path, false);
  rel = sr_xasprintf ("/files/%s/%s", esid, epath);
  if (u == NULL)
    sr_oom ();
  if (curl_url_set (u, CURLUPART_URL, c->url, 0) != CURLUE_OK
      || curl_url_set (u, CURLUPART_PATH, rel, 0) != CURLUE_OK
      || curl_url_set (u, CURLUPART_QUERY, NULL, 0) != CURLUE_OK
      || curl_url_get (u, CURLUPART_URL, &out, 0) != CURLUE_OK)
    out = NULL;
  curl_url_cleanup (u);
  if (out == NULL)
    return NULL;
  {
    char *copy = sr_xstrdup (out);

    curl_free (out);
    return copy;
  }
}

/* GETs url into d->fd.  Returns 0 when the server sent the whole file
 * (200), else -1 with what went wrong printed; dest names d->fd in it.  */
static int
fetch (struct client *c, const char *url, struct download *d, const char *dest)
{
  char errbuf[CURL_ERROR_SIZE] = "";
  struct curl_slist *h = sr_client_start (c, url, errbuf, on_download, d);
  CURLcode rc;
  long status = 0;
  int ret = -1;

  curl_easy_setopt (c->curl, CURLOPT_HTTPHEADER, h);
  rc = curl_easy_perform (c->curl);
  curl_slist_free_all (h);
  curl_easy_getinfo (c->curl, CURLINFO_RESPONSE_CODE, &status);
  if (d->write_errno)
    sr_client_fail ("download: write %s: %s", dest, strerror (d->write_errno));
  else if (rc != CURLE_OK)
    sr_client_transport_failed (c, rc, errbuf);
  else if (status != 200)
    {
      _cleanup_free_ char *msg = NULL;

      /* The route's messages read "<code>: <message>" already.  */
      d->err.status = status;
      msg = sr_client_http_error_message (&d->err);
      if (status == 401)
        sr_client_fail ("download: %s " SR_CLIENT_TOKEN_HINT, msg);
      else
        sr_client_fail ("%s", msg);
    }
  else
    ret = 0;
  sr_client_reply_done (&d->err);
  return ret;
}

/* Puts the complete file tmp (open on fd) under its name dest.  */
static int
keep_file (int fd, const char *tmp, const char *dest)
{
  if (fsync (fd) < 0)
    {
      sr_client_fail ("download: fsync %s: %s", tmp, strerror (errno));
      return -1;
    }
  if (rename (tmp, dest) < 0)
    {
      sr_client_fail ("download: rename %s to %s: %s", tmp, dest, strerror (errno));
      return -1;
    }
  return 0;
}

int
sr_client_cmd_download (struct client *c, struct args *a)
{
  const char *path = a->argv[0];
  const char *dest = a->output ? a->output : sr_client_base_name (path);
  bool to_stdout = strcmp (dest, "-") == 0;
  _cleanup_free_ char *url = NULL, *tmp = NULL;
  struct download d = { .curl = c->curl, .fd = -1 };
  int ret = SR_EXIT_RUNNER;

  if (*dest == '\0')
    {
      sr_client_fail ("download: '%s' names no file; give --output FILE", path);
      return SR_EXIT_RUNNER;
    }
  url = files_url (c, a->session, path);
  if (url == NULL)
    {
      sr_client_fail ("download: --server %s is not a URL", c->url);
      return SR_EXIT_RUNNER;
    }
  if (to_stdout)
    d.fd = STDOUT_FILENO;
  else
    {
      /* Beside the destination, renamed over it once complete: an
       * interrupted download leaves no half file under its name.  */
      tmp = sr_xasprintf ("%s.XXXXXX", dest);
      d.fd = mkostemp (tmp, O_CLOEXEC);
      if (d.fd < 0)
        {
          sr_client_fail ("download: %s: %s", tmp, strerror (errno));
          return SR_EXIT_RUNNER;
        }
    }
  if (fetch (c, url, &d, to_stdout ? "stdout" : dest) == 0
      && (to_stdout || keep_file (d.fd, tmp, dest) == 0))
    {
      ret = 0;
      if (a->json)
        {
          cJSON *o = cJSON_CreateObject ();

          cJSON_AddStringToObject (o, "session_id", a->session);
          sr_utf8_add_name (o, "path", path);
          cJSON_AddStringToObject (o, "file", dest);
          cJSON_AddNumberToObject (o, "size", (double) d.written);
          sr_client_print_json (o);
          cJSON_Delete (o);
        }
    }
  if (!to_stdout)
    {
      close (d.fd);
      if (ret != 0)
        unlink (tmp);
    }
  return ret;
}
