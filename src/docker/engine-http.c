/* One HTTP exchange with the Docker daemon over libcurl.
 *
 * Control requests (create, start, kill, inspect, remove) are short easy
 * transfers, each on a handle of its own, so that an sr_docker can serve
 * several threads.  The streams (engine-stream.c, engine-hijack.c) use the same
 * handles and the same words for a failed transfer.  */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "common/curlbuf.h"
#include "common/json.h"
#include "common/util.h"
#include "docker/engine-internal.h"

#define MAX_RESPONSE (16u << 20)

CURL *
sr_docker_new_handle_ (const struct sr_docker *d, char *errbuf)
{
  CURL *h = curl_easy_init ();

  if (h == NULL)
    sr_oom ();
  errbuf[0] = '\0';
  curl_easy_setopt (h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (h, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
  curl_easy_setopt (h, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt (h, CURLOPT_PROTOCOLS_STR, "http");
#else
  curl_easy_setopt (h, CURLOPT_PROTOCOLS, (long) CURLPROTO_HTTP);
#endif
  if (d->socket_path)
    curl_easy_setopt (h, CURLOPT_UNIX_SOCKET_PATH, d->socket_path);
  return h;
}

static void
curl_cleanupp (CURL **h)
{
  if (*h)
    curl_easy_cleanup (*h);
}

static void
slist_freep (struct curl_slist **l)
{
  curl_slist_free_all (*l);
}

/* Says why a transfer to the daemon failed, in words a person can act on.  */
int
sr_docker_transport_error_ (const struct sr_docker *d, CURL *h, CURLcode rc,
                            const char *errbuf, long timeout_ms, sr_error_t *err)
{
  long os_errno = 0;

  curl_easy_getinfo (h, CURLINFO_OS_ERRNO, &os_errno);
  if (rc == CURLE_OPERATION_TIMEDOUT)
    return sr_error_set (err, ETIMEDOUT, "the Docker daemon at %s did not answer within %ld ms",
                         d->endpoint, timeout_ms);
  if (rc == CURLE_COULDNT_CONNECT && d->socket_path)
    {
      if (os_errno == ENOENT)
        return sr_error_set (err, ENOENT,
                             "the Docker daemon is not running: %s does not exist (start dockerd, "
                             "or point DOCKER_HOST at a running daemon)",
                             d->socket_path);
      if (os_errno == EACCES || os_errno == EPERM)
        return sr_error_set (err, (int) os_errno,
                             "cannot open the Docker socket %s (add the user to the docker "
                             "group, or point DOCKER_HOST at a rootless daemon)",
                             d->socket_path);
      if (os_errno == ECONNREFUSED)
        return sr_error_set (err, ECONNREFUSED,
                             "the Docker daemon is not running: nothing listens on %s (start "
                             "dockerd)",
                             d->socket_path);
    }
  return sr_error_set (err, os_errno ? (int) os_errno : EIO, "the Docker daemon at %s: %s",
                       d->endpoint, errbuf[0] ? errbuf : curl_easy_strerror (rc));
}

struct api_version_header
{
  char *api;
  size_t size;
};

static size_t
on_ping_header (char *ptr, size_t size, size_t n, void *userdata)
{
  struct api_version_header *v = userdata;
  size_t len = size * n;
  static const char name[] = "api-version:";

  if (len > sizeof name - 1 && strncasecmp (ptr, name, sizeof name - 1) == 0)
    {
      const char *p = ptr + sizeof name - 1;
      size_t i = 0;

      while (p < ptr + len && *p == ' ')
        p++;
      while (p < ptr + len && i + 1 < v->size && (isdigit ((unsigned char) *p) || *p == '.'))
        v->api[i++] = *p++;
      v->api[i] = '\0';
    }
  return len;
}

int
sr_docker_ping_ (const struct sr_docker *d, char *api, size_t api_size, sr_error_t *err)
{
  _cleanup_(curl_cleanupp) CURL *h = NULL;
  _cleanup_free_ char *url = NULL;
  char errbuf[CURL_ERROR_SIZE];
  struct api_version_header v = { api, api_size };
  struct sr_buf body = { 0 };
  CURLcode rc;
  long status = 0;
  int r = -1;

  /* The ping is unversioned: it tells which version to speak.  */
  url = sr_xasprintf ("%s/_ping", d->base_url);
  h = sr_docker_new_handle_ (d, errbuf);
  curl_easy_setopt (h, CURLOPT_URL, url);
  curl_easy_setopt (h, CURLOPT_TIMEOUT_MS, (long) SR_DOCKER_PING_TIMEOUT_MS);
  curl_easy_setopt (h, CURLOPT_CONNECTTIMEOUT_MS, (long) SR_DOCKER_PING_TIMEOUT_MS);
  curl_easy_setopt (h, CURLOPT_HEADERFUNCTION, on_ping_header);
  curl_easy_setopt (h, CURLOPT_HEADERDATA, &v);
  body.max = MAX_RESPONSE;
  curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, sr_buf_curl_write);
  curl_easy_setopt (h, CURLOPT_WRITEDATA, &body);
  rc = curl_easy_perform (h);
  if (rc != CURLE_OK)
    {
      sr_docker_transport_error_ (d, h, rc, errbuf, (long) SR_DOCKER_PING_TIMEOUT_MS, err);
      goto out;
    }
  curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200)
    {
      sr_docker_api_error_ (status, &body, EIO, "ping the Docker daemon", err);
      sr_error_wrap (err, "%s", d->endpoint);
      goto out;
    }
  r = 0;
out:
  sr_buf_done (&body);
  return r;
}

/* method PATH (below the versioned base) with body (NULL: none).  Returns
 * the HTTP status, or -1 when the exchange itself failed.  */
long
sr_docker_request_ (const struct sr_docker *d, const char *method, const char *path,
                    const cJSON *body, long timeout_ms, struct sr_buf *resp, sr_error_t *err)
{
  _cleanup_(curl_cleanupp) CURL *h = NULL;
  _cleanup_(slist_freep) struct curl_slist *headers = NULL;
  _cleanup_free_ char *url = sr_xasprintf ("%s%s", d->base_url, path);
  _cleanup_free_ char *text = NULL;
  char errbuf[CURL_ERROR_SIZE];
  CURLcode rc;
  long status = 0;

  h = sr_docker_new_handle_ (d, errbuf);
  curl_easy_setopt (h, CURLOPT_URL, url);
  curl_easy_setopt (h, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt (h, CURLOPT_TIMEOUT_MS, timeout_ms);
  if (resp->max == 0)
    resp->max = MAX_RESPONSE;
  curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, sr_buf_curl_write);
  curl_easy_setopt (h, CURLOPT_WRITEDATA, resp);
  if (body)
    {
      text = cJSON_PrintUnformatted (body);
      if (text == NULL)
        sr_oom ();
      headers = curl_slist_append (headers, "Content-Type: application/json");
      curl_easy_setopt (h, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt (h, CURLOPT_POSTFIELDS, text);
    }
  else if (strcmp (method, "POST") == 0)
    curl_easy_setopt (h, CURLOPT_POSTFIELDS, "");
  rc = curl_easy_perform (h);
  if (rc != CURLE_OK)
    return sr_docker_transport_error_ (d, h, rc, errbuf, timeout_ms, err);
  curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

/* An error the daemon answered with: {"message": "..."}.  */
int
sr_docker_api_error_ (long status, const struct sr_buf *resp, int errnum, const char *what,
                      sr_error_t *err)
{
  _cleanup_json_ cJSON *j = resp->data ? cJSON_Parse (resp->data) : NULL;
  const cJSON *m = cJSON_GetObjectItemCaseSensitive (j, "message");
  _cleanup_free_ char *body = NULL;

  if (cJSON_IsString (m))
    return sr_error_set (err, errnum, "%s: %s", what, m->valuestring);
  body = resp->data ? strndup (resp->data, 200) : NULL;
  for (char *p = body; p && *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  return sr_error_set (err, errnum, "%s: HTTP %ld%s%s", what, status, body ? " " : "",
                       body ? body : "");
}

static int
errno_of_status (long status)
{
  switch (status)
    {
    case 404: return ENOENT;
    case 409: return EBUSY;
    case 400: return EINVAL;
    case 401:
    case 403: return EACCES;
    default: return EIO;
    }
}

int
sr_docker_status_error_ (long status, const struct sr_buf *resp, const char *what,
                         sr_error_t *err)
{
  return sr_docker_api_error_ (status, resp, errno_of_status (status), what, err);
}

/* GET path and parse the answer.  */
int
sr_docker_get_json_ (struct sr_docker *d, const char *path, const char *what, cJSON **ret,
                     sr_error_t *err)
{
  struct sr_buf resp = { 0 };
  long status = sr_docker_request_ (d, "GET", path, NULL, CONTROL_TIMEOUT_MS, &resp, err);

  if (status < 0)
    return -1;
  if (status != 200)
    {
      sr_docker_status_error_ (status, &resp, what, err);
      sr_buf_done (&resp);
      return -1;
    }
  *ret = cJSON_Parse (resp.data ? resp.data : "");
  sr_buf_done (&resp);
  if (*ret == NULL)
    return sr_error_set (err, EPROTO, "%s: the daemon's answer is not JSON", what);
  return 0;
}

int
sr_docker_json_int_ (const cJSON *obj, const char *key, int dflt)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);

  return cJSON_IsNumber (v) ? v->valueint : dflt;
}

bool
sr_docker_json_bool_ (const cJSON *obj, const char *key)
{
  return cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (obj, key));
}

int
sr_docker_running_ (struct sr_docker *d, const char *path, bool in_state, const char *what)
{
  _cleanup_json_ cJSON *info = NULL;

  if (sr_docker_get_json_ (d, path, what, &info, NULL) < 0)
    return -1;
  return sr_docker_json_bool_ (in_state ? cJSON_GetObjectItemCaseSensitive (info, "State") : info,
                               "Running");
}

/* A query value, percent-encoded.  */
char *
sr_docker_escape_ (const char *s)
{
  char *e = curl_escape (s, 0);
  char *r;

  if (e == NULL)
    sr_oom ();
  r = sr_xstrdup (e);
  curl_free (e);
  return r;
}
