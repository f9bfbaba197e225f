/* The HTTP transfers of a pull, with libcurl's easy API.
 *
 * Redirects are followed here rather than by curl, so that the
 * Authorization header, which we build ourselves, only ever goes to the
 * registry's own host.  */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "common/curlbuf.h"
#include "common/util.h"
#include "image/registry-internal.h"
#include "image/store.h"

#define CONNECT_TIMEOUT_S 30L
/* A transfer that moves less than LOW_SPEED_BYTES per second for
 * LOW_SPEED_TIME_S seconds is given up.  */
#define LOW_SPEED_BYTES 1L
#define LOW_SPEED_TIME_S 30L
#define MAX_REDIRECTS 10

static void
xfer_reset (struct xfer *x)
{
  x->status = 0;
  sr_buf_done (&x->www_auth);
  free (x->content_type);
  free (x->docker_digest);
  free (x->content_range);
  x->content_type = x->docker_digest = x->content_range = NULL;
  sr_buf_done (&x->body);
  x->too_big = false;
}

void
sr_registry_xfer_done_ (struct xfer *x)
{
  xfer_reset (x);
  sr_error_free (&x->cb_err);
}

static size_t
on_header (char *data, size_t size, size_t nmemb, void *userdata)
{
  struct xfer *x = userdata;
  size_t len = size * nmemb;
  char *v;

  if (len > 5 && strncmp (data, "HTTP/", 5) == 0)
    {
      const char *sp = memchr (data, ' ', len);

      /* A new response (after a 100 Continue, say) starts afresh.  */
      xfer_reset (x);
      if (sp)
        x->status = strtol (sp + 1, NULL, 10);
      return len;
    }
  if ((v = sr_curl_header_value (data, len, "WWW-Authenticate")))
    {
      if (x->www_auth.len)
        sr_buf_append (&x->www_auth, ", ", 2);
      sr_buf_append (&x->www_auth, v, strlen (v));
      free (v);
    }
  else if (sr_curl_header_take (data, len, "Content-Type", &x->content_type))
    /* Drop parameters such as "; charset=utf-8".  */
    x->content_type[strcspn (x->content_type, "; \t")] = '\0';
  else if (!sr_curl_header_take (data, len, "Docker-Content-Digest", &x->docker_digest))
    sr_curl_header_take (data, len, "Content-Range", &x->content_range);
  return len;
}

static size_t
on_body (char *data, size_t size, size_t nmemb, void *userdata)
{
  struct xfer *x = userdata;
  size_t len = size * nmemb;

  if (x->w && (x->status == 200 || x->status == 206))
    {
      if (!x->started)
        {
          x->started = true;
          if (x->status == 200 && x->offset > 0)
            {
              /* The server ignored the Range: start over.  */
              if (sr_blob_writer_restart (x->w, &x->cb_err) < 0)
                return 0;
              x->offset = 0;
            }
          else if (x->status == 206)
            {
              unsigned long long first;

              if (x->content_range == NULL
                  || sscanf (x->content_range, "bytes %llu-", &first) != 1
                  || first != x->offset)
                {
                  sr_error_set (&x->cb_err, 0,
                                "partial content from byte %s where byte %llu was asked for",
                                x->content_range ? x->content_range : "(no Content-Range)",
                                (unsigned long long) x->offset);
                  return 0;
                }
            }
        }
      if (sr_blob_writer_write (x->w, data, len, &x->cb_err) < 0)
        return 0;
      x->received += len;
      return len;
    }
  if (x->body.len + len > x->max)
    {
      x->too_big = true;
      len = x->max > x->body.len ? x->max - x->body.len : 0;
      sr_buf_append (&x->body, data, len);
      /* An error body is only cut; a document that is too big fails.  */
      return x->w ? size * nmemb : 0;
    }
  sr_buf_append (&x->body, data, len);
  return len;
}

/* Scheme, host and port of url, for comparing origins.  */
char *
sr_registry_url_origin_ (const char *url)
{
  CURLU *u = curl_url ();
  char *scheme = NULL, *host = NULL, *port = NULL, *r = NULL;

  if (u == NULL)
    sr_oom ();
  if (curl_url_set (u, CURLUPART_URL, url, 0) == CURLUE_OK
      && curl_url_get (u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK
      && curl_url_get (u, CURLUPART_HOST, &host, 0) == CURLUE_OK
      && curl_url_get (u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK)
    {
      for (char *c = host; *c; c++)
        *c = (char) tolower ((unsigned char) *c);
      r = sr_xasprintf ("%s://%s:%s", scheme, host, port);
    }
  curl_free (scheme);
  curl_free (host);
  curl_free (port);
  curl_url_cleanup (u);
  return r;
}

/* The registry's "errors" array says what went wrong better than the status.  */
char *
sr_registry_error_text_ (const struct xfer *x)
{
  cJSON *root, *errors, *e0, *msg, *code;
  char *r = NULL;

  if (x->body.len && (root = cJSON_ParseWithLength (x->body.data, x->body.len)))
    {
      errors = cJSON_GetObjectItemCaseSensitive (root, "errors");
      e0 = cJSON_IsArray (errors) ? cJSON_GetArrayItem (errors, 0) : NULL;
      msg = e0 ? cJSON_GetObjectItemCaseSensitive (e0, "message") : NULL;
      code = e0 ? cJSON_GetObjectItemCaseSensitive (e0, "code") : NULL;
      if (cJSON_IsString (msg) && msg->valuestring[0])
        r = sr_xstrdup (msg->valuestring);
      else if (cJSON_IsString (code) && code->valuestring[0])
        {
          r = sr_xstrdup (code->valuestring);
          for (char *c = r; *c; c++)
            *c = *c == '_' ? ' ' : (char) tolower ((unsigned char) *c);
        }
      cJSON_Delete (root);
    }
  if (r == NULL)
    {
      switch (x->status)
        {
        case 401: r = sr_xstrdup ("authentication required"); break;
        case 403: r = sr_xstrdup ("access denied"); break;
        case 404: r = sr_xstrdup ("not found"); break;
        case 429: r = sr_xstrdup ("too many requests"); break;
        default: r = sr_xasprintf ("HTTP error"); break;
        }
    }
  return r;
}

int
sr_registry_status_error_ (const struct xfer *x, const char *what, sr_error_t *err)
{
  _cleanup_free_ char *text = sr_registry_error_text_ (x);

  if (what)
    return sr_error_set (err, 0, "%s: %s (%ld)", what, text, x->status);
  return sr_error_set (err, 0, "%s (%ld)", text, x->status);
}

/* GET url, following redirects ourselves.  auth (a whole header line) goes
 * only to auth_origin.  */
int
sr_registry_http_get_ (struct pull *p, const char *url, const char *accept, const char *auth,
                       const char *auth_origin, struct xfer *x, sr_error_t *err)
{
  _cleanup_free_ char *cur = sr_xstrdup (url);

  for (int hops = 0;; hops++)
    {
      _cleanup_free_ char *origin = sr_registry_url_origin_ (cur), *range = NULL;
      struct curl_slist *h = NULL;
      char *next = NULL;
      CURLcode rc;

      if (origin == NULL)
        return sr_error_set (err, 0, "invalid URL %s", cur);
      if (accept)
        h = curl_slist_append (h, accept);
      if (auth && auth_origin && strcmp (origin, auth_origin) == 0)
        h = curl_slist_append (h, auth);
      if (x->w && x->offset > 0)
        {
          range = sr_xasprintf ("Range: bytes=%llu-", (unsigned long long) x->offset);
          h = curl_slist_append (h, range);
        }
      xfer_reset (x);
      x->started = false;
      p->errbuf[0] = '\0';
      curl_easy_setopt (p->curl, CURLOPT_URL, cur);
      curl_easy_setopt (p->curl, CURLOPT_HTTPHEADER, h);
      curl_easy_setopt (p->curl, CURLOPT_HEADERDATA, x);
      curl_easy_setopt (p->curl, CURLOPT_WRITEDATA, x);
      rc = curl_easy_perform (p->curl);
      curl_easy_setopt (p->curl, CURLOPT_HTTPHEADER, NULL);
      curl_slist_free_all (h);
      if (rc != CURLE_OK)
        {
          if (x->cb_err)
            {
              sr_error_move (err, &x->cb_err);
              return sr_error_wrap (err, "GET %s", cur);
            }
          if (x->too_big)
            return sr_error_set (err, EFBIG, "GET %s: more than %zu bytes", cur, x->max);
          return sr_error_set (err, 0, "GET %s: %s", cur,
                               p->errbuf[0] ? p->errbuf : curl_easy_strerror (rc));
        }
      if (x->status != 301 && x->status != 302 && x->status != 303 && x->status != 307
          && x->status != 308)
        return 0;
      if (hops >= MAX_REDIRECTS)
        return sr_error_set (err, 0, "GET %s: more than %d redirects", url, MAX_REDIRECTS);
      if (curl_easy_getinfo (p->curl, CURLINFO_REDIRECT_URL, &next) != CURLE_OK || next == NULL)
        return sr_error_set (err, 0, "GET %s: redirect (%ld) without a Location", cur,
                             x->status);
      if (strncmp (cur, "https:", 6) == 0 && strncmp (next, "https:", 6) != 0)
        return sr_error_set (err, 0, "GET %s: refusing the redirect from https to %s", cur, next);
      free (cur);
      cur = sr_xstrdup (next);
    }
}

int
sr_registry_setup_curl_ (struct pull *p, sr_error_t *err)
{
  p->curl = curl_easy_init ();
  if (p->curl == NULL)
    return sr_error_set (err, 0, "cannot initialise libcurl");
  curl_easy_setopt (p->curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (p->curl, CURLOPT_ERRORBUFFER, p->errbuf);
  curl_easy_setopt (p->curl, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
  curl_easy_setopt (p->curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
  curl_easy_setopt (p->curl, CURLOPT_LOW_SPEED_LIMIT, LOW_SPEED_BYTES);
  curl_easy_setopt (p->curl, CURLOPT_LOW_SPEED_TIME, LOW_SPEED_TIME_S);
  curl_easy_setopt (p->curl, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt (p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt (p->curl, CURLOPT_PROTOCOLS, (long) (CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt (p->curl, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt (p->curl, CURLOPT_SSL_VERIFYHOST, 2L);
  if (p->o && p->o->ca_file)
    curl_easy_setopt (p->curl, CURLOPT_CAINFO, p->o->ca_file);
  curl_easy_setopt (p->curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt (p->curl, CURLOPT_WRITEFUNCTION, on_body);
  return 0;
}

