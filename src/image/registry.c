/* Pulling from an OCI distribution registry with libcurl's easy API.
 *
 * One CURL handle serves every request of a pull.  Redirects are followed
 * here rather than by curl, so that the Authorization header, which we
 * build ourselves, only ever goes to the registry's own host.  */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "common/curlbuf.h"
#include "common/defaults.h"
#include "common/util.h"
#include "image/digest.h"
#include "image/oci.h"
#include "image/registry.h"
#include "image/store.h"

#define DOCKER_HUB_HOST "registry-1.docker.io"
#define DEFAULT_TAG "latest"

#define CONNECT_TIMEOUT_S 30L
/* A transfer that moves less than LOW_SPEED_BYTES per second for
 * LOW_SPEED_TIME_S seconds is given up.  */
#define LOW_SPEED_BYTES 1L
#define LOW_SPEED_TIME_S 30L
#define MAX_REDIRECTS 10
#define MAX_TOKEN_RESPONSE (1u << 20)
/* Of an error body, only the start is kept.  */
#define MAX_ERROR_BODY (64u << 10)

#define NEEDS_CREDENTIALS \
  "the repository does not exist or needs a username and password (--username, --password-stdin)"

#define MANIFEST_ACCEPT                                                   \
  "Accept: " SR_MT_OCI_INDEX ", " SR_MT_OCI_MANIFEST ", " SR_MT_DOCKER_LIST \
  ", " SR_MT_DOCKER_MANIFEST

/* --- references --- */

static bool
is_hub_host (const char *h)
{
  return strcmp (h, DOCKER_HUB_HOST) == 0 || strcmp (h, "docker.io") == 0
         || strcmp (h, "index.docker.io") == 0;
}

static bool
host_valid (const char *h, size_t len)
{
  if (len == 0)
    return false;
  for (size_t i = 0; i < len; i++)
    if (!isalnum ((unsigned char) h[i]) && !strchr (".-:[]", h[i]))
      return false;
  return true;
}

/* Path components: lowercase alphanumerics, separated by '.', '_', '-'. */
static bool
repository_valid (const char *r)
{
  bool start = true;

  if (*r == '\0' || strlen (r) > 255)
    return false;
  for (const char *c = r; *c; c++)
    {
      bool alnum = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9');

      if (*c == '/')
        {
          if (start)
            return false;
          start = true;
          continue;
        }
      if (!alnum && !strchr ("._-", *c))
        return false;
      if (start && !alnum)
        return false;
      if (!alnum && (c[1] == '\0' || c[1] == '/'))
        return false;
      start = false;
    }
  return !start;
}

static bool
tag_valid (const char *t)
{
  size_t n = strlen (t);

  if (n == 0 || n > 128 || t[0] == '.' || t[0] == '-')
    return false;
  for (size_t i = 0; i < n; i++)
    if (!isalnum ((unsigned char) t[i]) && !strchr ("_.-", t[i]))
      return false;
  return true;
}

void
sr_image_ref_done (struct sr_image_ref *r)
{
  free (r->host);
  free (r->repository);
  free (r->tag);
  free (r->digest);
  memset (r, 0, sizeof *r);
}

int
sr_image_ref_parse (const char *s, struct sr_image_ref *ret, sr_error_t *err)
{
  _cleanup_free_ char *name = NULL;
  struct sr_image_ref r = { 0 };
  const char *at, *slash, *rest, *colon;

  if (s == NULL || *s == '\0')
    return sr_error_set (err, 0, "empty image reference");
  at = strchr (s, '@');
  name = at ? strndup (s, (size_t) (at - s)) : strdup (s);
  if (name == NULL)
    sr_oom ();
  if (at)
    {
      if (!sr_digest_valid (at + 1))
        return sr_error_set (err, 0, "image reference '%s': '%s' is not a sha256 digest", s,
                             at + 1);
      r.digest = sr_xstrdup (at + 1);
    }

  /* The first component names a registry only when it looks like a host;
   * "user/repo" is a repository on Docker Hub.  */
  slash = strchr (name, '/');
  if (slash && (memchr (name, '.', (size_t) (slash - name))
                || memchr (name, ':', (size_t) (slash - name))
                || (slash - name == 9 && strncmp (name, "localhost", 9) == 0)))
    {
      if (!host_valid (name, (size_t) (slash - name)))
        {
          sr_error_set (err, 0, "image reference '%s': invalid registry host", s);
          goto fail;
        }
      r.host = strndup (name, (size_t) (slash - name));
      if (r.host == NULL)
        sr_oom ();
      rest = slash + 1;
    }
  else
    {
      r.host = sr_xstrdup (DOCKER_HUB_HOST);
      rest = name;
    }
  if (is_hub_host (r.host))
    {
      free (r.host);
      r.host = sr_xstrdup (DOCKER_HUB_HOST);
    }

  colon = strrchr (rest, ':');
  if (colon && strchr (colon, '/') == NULL)
    {
      r.tag = sr_xstrdup (colon + 1);
      r.repository = strndup (rest, (size_t) (colon - rest));
      if (r.repository == NULL)
        sr_oom ();
      if (!tag_valid (r.tag))
        {
          sr_error_set (err, 0, "image reference '%s': invalid tag '%s'", s, r.tag);
          goto fail;
        }
    }
  else
    r.repository = sr_xstrdup (rest);
  if (!repository_valid (r.repository))
    {
      sr_error_set (err, 0,
                    "image reference '%s': invalid repository '%s' (lowercase letters, digits "
                    "and . _ - between them, / between components)",
                    s, r.repository);
      goto fail;
    }
  if (strcmp (r.host, DOCKER_HUB_HOST) == 0 && strchr (r.repository, '/') == NULL)
    {
      char *full = sr_xasprintf ("library/%s", r.repository);

      free (r.repository);
      r.repository = full;
    }
  if (r.tag == NULL && r.digest == NULL)
    r.tag = sr_xstrdup (DEFAULT_TAG);
  *ret = r;
  return 0;

fail:
  sr_image_ref_done (&r);
  return -1;
}

char *
sr_image_ref_name (const struct sr_image_ref *r)
{
  const char *repo = r->repository;
  bool hub = strcmp (r->host, DOCKER_HUB_HOST) == 0;

  if (hub && strncmp (repo, "library/", 8) == 0 && strchr (repo + 8, '/') == NULL)
    repo += 8;
  if (r->tag)
    return hub ? sr_xasprintf ("%s:%s", repo, r->tag)
               : sr_xasprintf ("%s/%s:%s", r->host, repo, r->tag);
  return hub ? sr_xasprintf ("%s@%s", repo, r->digest)
             : sr_xasprintf ("%s/%s@%s", r->host, repo, r->digest);
}

/* --- WWW-Authenticate --- */

struct challenge
{
  char *scheme; /* "bearer" or "basic", lowercased */
  char *realm, *service, *scope;
};

static void
challenge_done (struct challenge *c)
{
  free (c->scheme);
  free (c->realm);
  free (c->service);
  free (c->scope);
  memset (c, 0, sizeof *c);
}

static bool
is_tchar (char c)
{
  return isalnum ((unsigned char) c) || (c && strchr ("!#$%&'*+-.^_`|~/:", c));
}

static const char *
skip_ws (const char *p)
{
  while (*p == ' ' || *p == '\t')
    p++;
  return p;
}

/* Reads a token or a quoted-string (RFC 9110) at *pp into a new string.  */
static char *
read_value (const char **pp)
{
  const char *p = *pp;
  char *out, *o;

  if (*p != '"')
    {
      const char *start = p;

      while (is_tchar (*p) || *p == '=')
        p++;
      *pp = p;
      out = strndup (start, (size_t) (p - start));
      if (out == NULL)
        sr_oom ();
      return out;
    }
  p++;
  o = out = sr_xmalloc (strlen (p) + 1);
  while (*p && *p != '"')
    {
      if (*p == '\\' && p[1])
        p++;
      *o++ = *p++;
    }
  *o = '\0';
  if (*p == '"')
    p++;
  *pp = p;
  return out;
}

static int
scheme_rank (const char *scheme)
{
  if (scheme == NULL)
    return -1;
  if (strcmp (scheme, "bearer") == 0)
    return 2;
  return strcmp (scheme, "basic") == 0 ? 1 : 0;
}

/* Moves *cur into *best when it ranks higher, else drops it.  */
static void
keep_better (struct challenge *best, struct challenge *cur)
{
  if (scheme_rank (cur->scheme) > scheme_rank (best->scheme))
    {
      challenge_done (best);
      *best = *cur;
      memset (cur, 0, sizeof *cur);
    }
  else
    challenge_done (cur);
}

/* Picks a challenge out of a WWW-Authenticate value (several headers are
 * joined with ", "): Bearer when offered, else Basic.  Returns 0, or -1
 * when neither is there.  */
static int
parse_www_authenticate (const char *h, struct challenge *ret)
{
  struct challenge best = { 0 }, cur = { 0 };
  const char *p = h;

  while (*p)
    {
      const char *start;
      size_t n;

      p = skip_ws (p);
      if (*p == ',')
        {
          p++;
          continue;
        }
      if (*p == '\0')
        break;
      start = p;
      while (is_tchar (*p))
        p++;
      n = (size_t) (p - start);
      if (n == 0)
        {
          p++; /* junk: step over it */
          continue;
        }
      p = skip_ws (p);
      if (*p == '=' && cur.scheme)
        {
          /* auth-param of the current challenge.  */
          _cleanup_free_ char *key = strndup (start, n);
          char *value, **slot = NULL;

          if (key == NULL)
            sr_oom ();
          p = skip_ws (p + 1);
          value = read_value (&p);
          if (strcasecmp (key, "realm") == 0)
            slot = &cur.realm;
          else if (strcasecmp (key, "service") == 0)
            slot = &cur.service;
          else if (strcasecmp (key, "scope") == 0)
            slot = &cur.scope;
          if (slot && *slot == NULL)
            *slot = value;
          else
            free (value);
          continue;
        }
      /* A new challenge: keep the one before when it is the better.  */
      keep_better (&best, &cur);
      cur.scheme = strndup (start, n);
      if (cur.scheme == NULL)
        sr_oom ();
      for (char *c = cur.scheme; *c; c++)
        *c = (char) tolower ((unsigned char) *c);
      if (strcmp (cur.scheme, "bearer") != 0 && strcmp (cur.scheme, "basic") != 0)
        {
          /* A scheme we do not speak; its params are read and dropped.  */
          free (cur.scheme);
          cur.scheme = sr_xstrdup ("other");
        }
    }
  keep_better (&best, &cur);
  if (best.scheme == NULL || strcmp (best.scheme, "other") == 0)
    {
      challenge_done (&best);
      return -1;
    }
  *ret = best;
  return 0;
}

/* --- HTTP --- */

static const char base64_chars[]
  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *
base64 (const char *s)
{
  size_t n = strlen (s);
  char *out = sr_xmalloc ((n + 2) / 3 * 4 + 1), *o = out;

  for (size_t i = 0; i < n; i += 3)
    {
      unsigned v = (unsigned char) s[i] << 16;

      if (i + 1 < n)
        v |= (unsigned char) s[i + 1] << 8;
      if (i + 2 < n)
        v |= (unsigned char) s[i + 2];
      *o++ = base64_chars[(v >> 18) & 63];
      *o++ = base64_chars[(v >> 12) & 63];
      *o++ = i + 1 < n ? base64_chars[(v >> 6) & 63] : '=';
      *o++ = i + 2 < n ? base64_chars[v & 63] : '=';
    }
  *o = '\0';
  return out;
}

struct pull
{
  struct sr_store *s;
  const struct sr_registry_options *o;
  struct sr_image_ref ref;
  CURL *curl;
  const char *scheme;     /* of the registry: "https" or "http" */
  char *auth;             /* "Authorization: ..." for the registry host, or NULL */
  bool basic_sent;        /* auth holds the user's Basic credentials */
  char errbuf[CURL_ERROR_SIZE];
};

/* One response.  The body goes to w when the status is 200 or 206 and w
 * is set, else into body (at most max bytes).  */
struct xfer
{
  long status;
  struct sr_buf www_auth;
  char *content_type, *docker_digest, *content_range;
  struct sr_buf body;
  size_t max;
  bool too_big;
  struct sr_blob_writer *w;
  uint64_t offset;          /* bytes asked to be skipped with Range */
  uint64_t received;
  bool started;
  sr_error_t cb_err;
};

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

static void
xfer_done (struct xfer *x)
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
static char *
url_origin (const char *url)
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
static char *
error_text (const struct xfer *x)
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

static int
status_error (const struct xfer *x, const char *what, sr_error_t *err)
{
  _cleanup_free_ char *text = error_text (x);

  if (what)
    return sr_error_set (err, 0, "%s: %s (%ld)", what, text, x->status);
  return sr_error_set (err, 0, "%s (%ld)", text, x->status);
}

/* GET url, following redirects ourselves.  auth (a whole header line) goes
 * only to auth_origin.  */
static int
http_get (struct pull *p, const char *url, const char *accept, const char *auth,
          const char *auth_origin, struct xfer *x, sr_error_t *err)
{
  _cleanup_free_ char *cur = sr_xstrdup (url);

  for (int hops = 0;; hops++)
    {
      _cleanup_free_ char *origin = url_origin (cur), *range = NULL;
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

static char *
registry_origin (const struct pull *p)
{
  _cleanup_free_ char *url = sr_xasprintf ("%s://%s/", p->scheme, p->ref.host);

  return url_origin (url);
}

/* Asks the token service of a Bearer challenge for a token.  */
static int
fetch_token (struct pull *p, const struct challenge *c, sr_error_t *err)
{
  _cleanup_free_ char *url = NULL, *scope_default = NULL, *basic = NULL, *realm_origin = NULL;
  struct xfer x = { .max = MAX_TOKEN_RESPONSE };
  const char *scope = c->scope;
  const char *tok = NULL;
  cJSON *root = NULL, *t;
  char *service = NULL, *scope_esc = NULL;
  int r = -1;

  if (c->realm == NULL || (strncmp (c->realm, "https://", 8) != 0
                           && strncmp (c->realm, "http://", 7) != 0))
    return sr_error_set (err, 0, "the registry asks for a token from an invalid realm '%s'",
                         c->realm ? c->realm : "");
  if (scope == NULL)
    scope = scope_default = sr_xasprintf ("repository:%s:pull", p->ref.repository);
  realm_origin = url_origin (c->realm);
  if (realm_origin == NULL)
    return sr_error_set (err, 0, "invalid token realm '%s'", c->realm);
  if (p->o && p->o->username)
    {
      _cleanup_free_ char *up = NULL, *b64 = NULL;

      /* Credentials travel in the clear only to a loopback token service
       * or when plain HTTP was asked for.  */
      if (strncmp (c->realm, "http://", 7) == 0 && !p->o->plain_http
          && strcmp (p->scheme, "http") != 0)
        return sr_error_set (err, 0,
                             "the token service %s is plain HTTP; refusing to send credentials "
                             "(--plain-http allows it)",
                             c->realm);
      up = sr_xasprintf ("%s:%s", p->o->username, p->o->password ? p->o->password : "");
      b64 = base64 (up);
      basic = sr_xasprintf ("Authorization: Basic %s", b64);
    }
  scope_esc = curl_easy_escape (p->curl, scope, 0);
  if (c->service)
    service = curl_easy_escape (p->curl, c->service, 0);
  if (scope_esc == NULL || (c->service && service == NULL))
    sr_oom ();
  url = sr_xasprintf ("%s%s%s%s%sscope=%s", c->realm, strchr (c->realm, '?') ? "&" : "?",
                      service ? "service=" : "", service ? service : "", service ? "&" : "",
                      scope_esc);
  curl_free (scope_esc);
  curl_free (service);

  if (http_get (p, url, "Accept: application/json", basic, realm_origin, &x, err) < 0)
    goto out;
  if (x.status != 200)
    {
      _cleanup_free_ char *what = sr_xasprintf ("token service %s", c->realm);

      if (x.status == 401 && basic)
        sr_error_set (err, 0, "token service %s refused the credentials of '%s' (401)", c->realm,
                      p->o->username);
      else
        status_error (&x, what, err);
      goto out;
    }
  root = cJSON_ParseWithLength (x.body.data ? x.body.data : "", x.body.len);
  t = root ? cJSON_GetObjectItemCaseSensitive (root, "token") : NULL;
  if (!cJSON_IsString (t) || t->valuestring[0] == '\0')
    t = root ? cJSON_GetObjectItemCaseSensitive (root, "access_token") : NULL;
  if (cJSON_IsString (t) && t->valuestring[0])
    tok = t->valuestring;
  if (tok == NULL || strpbrk (tok, "\r\n"))
    {
      sr_error_set (err, 0, "token service %s: no token in its answer", c->realm);
      goto out;
    }
  free (p->auth);
  p->auth = sr_xasprintf ("Authorization: Bearer %s", tok);
  p->basic_sent = false;
  r = 0;

out:
  cJSON_Delete (root);
  xfer_done (&x);
  return r;
}

/* Answers a 401 of the registry: returns 0 when a retry may succeed.  */
static int
authenticate (struct pull *p, const struct xfer *x, sr_error_t *err)
{
  struct challenge c = { 0 };
  int r;

  if (x->www_auth.len == 0 || parse_www_authenticate (x->www_auth.data, &c) < 0)
    return status_error (x, NULL, err);
  if (strcmp (c.scheme, "bearer") == 0)
    r = fetch_token (p, &c, err);
  else if (p->o && p->o->username)
    {
      _cleanup_free_ char *up = NULL, *b64 = NULL;

      if (p->basic_sent)
        r = sr_error_set (err, 0, "the registry refused the credentials of '%s' (401)",
                          p->o->username);
      else
        {
          up = sr_xasprintf ("%s:%s", p->o->username, p->o->password ? p->o->password : "");
          b64 = base64 (up);
          free (p->auth);
          p->auth = sr_xasprintf ("Authorization: Basic %s", b64);
          p->basic_sent = true;
          r = 0;
        }
    }
  else
    {
      _cleanup_free_ char *text = error_text (x);

      r = sr_error_set (err, 0, "%s (%ld); " NEEDS_CREDENTIALS, text, x->status);
    }
  challenge_done (&c);
  return r;
}

/* GET a path of the registry's API, authenticating when it asks.  */
static int
registry_get (struct pull *p, const char *path, const char *accept, struct xfer *x,
              sr_error_t *err)
{
  _cleanup_free_ char *url = sr_xasprintf ("%s://%s/v2/%s", p->scheme, p->ref.host, path);
  _cleanup_free_ char *origin = registry_origin (p);

  if (origin == NULL)
    return sr_error_set (err, 0, "invalid registry host '%s'", p->ref.host);
  for (int attempt = 0;; attempt++)
    {
      if (http_get (p, url, accept, p->auth, origin, x, err) < 0)
        return -1;
      if (x->status != 401 || attempt == 2)
        break;
      /* A first 401 fetches a token (or sends Basic credentials); a
       * second one may mean the token expired, but no more than that.  */
      if (attempt == 1 && p->basic_sent)
        break;
      if (authenticate (p, x, err) < 0)
        return -1;
    }
  if (x->status == 401)
    {
      _cleanup_free_ char *text = error_text (x);

      if (p->basic_sent)
        return sr_error_set (err, 0, "the registry refused the credentials of '%s' (401)",
                             p->o->username);
      if (p->o && p->o->username)
        return sr_error_set (err, 0, "%s (401): '%s' may not pull %s", text, p->o->username,
                             p->ref.repository);
      return sr_error_set (err, 0, "%s (401); " NEEDS_CREDENTIALS, text);
    }
  return 0;
}

/* --- the pull --- */

static int
fetch_manifest (struct pull *p, const char *reference, const char *want_digest,
                struct sr_buf *ret_body, char **ret_type, char ret_digest[SR_DIGEST_LEN + 1],
                sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/manifests/%s", p->ref.repository, reference);
  struct xfer x = { .max = SR_MAX_IMAGE_DOCUMENT };
  char got[SR_DIGEST_LEN + 1];
  int r = -1;

  if (registry_get (p, path, MANIFEST_ACCEPT, &x, err) < 0)
    goto out;
  if (x.status != 200)
    {
      status_error (&x, want_digest ? want_digest : NULL, err);
      goto out;
    }
  if (x.body.len == 0)
    {
      sr_error_set (err, 0, "manifest %s: empty answer", reference);
      goto out;
    }
  sr_sha256_buf (x.body.data, x.body.len, got);
  if (want_digest && strcmp (got, want_digest) != 0)
    {
      sr_error_set (err, 0, "manifest %s: digest mismatch: the content hashes to %s",
                    want_digest, got);
      goto out;
    }
  if (x.docker_digest && strncmp (x.docker_digest, "sha256:", 7) == 0
      && strcmp (x.docker_digest, got) != 0)
    {
      sr_error_set (err, 0,
                    "manifest %s: digest mismatch: the registry says %s, the content hashes "
                    "to %s",
                    reference, x.docker_digest, got);
      goto out;
    }
  memcpy (ret_digest, got, sizeof got);
  *ret_type = TAKE_PTR (x.content_type);
  *ret_body = x.body;
  memset (&x.body, 0, sizeof x.body);
  r = 0;

out:
  xfer_done (&x);
  return r;
}

static int
fetch_blob_once (struct pull *p, const struct sr_descriptor *d, const char *path,
                 uint64_t *ret_offset, sr_error_t *err)
{
  struct xfer x = { .max = MAX_ERROR_BODY };
  uint64_t offset = 0;
  int r = -1;

  if (sr_blob_writer_begin (p->s, d->digest, d->size, &x.w, &offset, err) < 0)
    return sr_error_wrap (err, "blob %s", d->digest);
  sr_blob_writer_set_progress (x.w, 0, 0);
  *ret_offset = x.offset = offset;
  if (d->size == 0 || offset < d->size)
    {
      if (registry_get (p, path, NULL, &x, err) < 0)
        goto out;
      if (x.status == 416 && offset > 0)
        {
          /* What we hold does not fit what the server has.  */
          if (sr_blob_writer_restart (x.w, err) < 0)
            goto out;
          x.offset = 0;
          if (registry_get (p, path, NULL, &x, err) < 0)
            goto out;
        }
      if (x.status != 200 && x.status != 206)
        {
          _cleanup_free_ char *what = sr_xasprintf ("blob %s", d->digest);

          status_error (&x, what, err);
          goto out;
        }
    }
  r = sr_blob_writer_commit (x.w, err);

out:
  sr_blob_writer_free (x.w);
  x.w = NULL;
  xfer_done (&x);
  return r;
}

static int
fetch_blob (struct pull *p, const struct sr_descriptor *d, sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/blobs/%s", p->ref.repository, d->digest);
  sr_error_t e = NULL;
  uint64_t offset = 0;

  if (sr_store_has_blob (p->s, d->digest))
    return 0;
  if (fetch_blob_once (p, d, path, &offset, &e) == 0)
    return 0;
  /* A resumed blob that does not verify may have been spoilt by what was
   * kept of it: commit discarded that, so try once from the start.  */
  if (offset > 0 && !sr_store_has_blob (p->s, d->digest)
      && e->errnum == EBADMSG)
    {
      sr_error_free (&e);
      if (fetch_blob_once (p, d, path, &offset, &e) == 0)
        return 0;
    }
  sr_error_move (err, &e);
  return -1;
}

static int
setup_curl (struct pull *p, sr_error_t *err)
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

/* localhost, 127.0.0.0/8 (as a dotted address, not a name starting
 * "127.") or [::1], with or without a port.  */
static bool
loopback_host (const char *host)
{
  size_t n = strcspn (host, ":");

  if (strncmp (host, "[::1]", 5) == 0)
    return host[5] == '\0' || host[5] == ':';
  if (n == 9 && strncmp (host, "localhost", 9) == 0)
    return true;
  if (strncmp (host, "127.", 4) != 0)
    return false;
  for (size_t i = 4; i < n; i++)
    if (!isdigit ((unsigned char) host[i]) && host[i] != '.')
      return false;
  return true;
}

static int
pull (struct pull *p, const char *ref, char **ret_id, sr_error_t *err)
{
  _cleanup_free_ char *type = NULL, *name = NULL;
  struct sr_buf body = { 0 };
  struct sr_oci_manifest m = { 0 };
  char digest[SR_DIGEST_LEN + 1];
  enum sr_oci_kind kind;
  int r = -1;

  if (sr_image_ref_parse (ref, &p->ref, err) < 0)
    return -1;
  p->scheme = (p->o && p->o->plain_http) || loopback_host (p->ref.host) ? "http" : "https";
  if (setup_curl (p, err) < 0)
    return -1;

  if (fetch_manifest (p, p->ref.digest ? p->ref.digest : p->ref.tag, p->ref.digest, &body,
                      &type, digest, err) < 0)
    goto out;
  kind = sr_oci_kind_of (type);
  if (kind == SR_OCI_UNKNOWN)
    kind = sr_oci_sniff (body.data, body.len);
  if (kind == SR_OCI_INDEX)
    {
      struct sr_oci_index idx = { 0 };
      const struct sr_descriptor *d;
      char want[SR_DIGEST_LEN + 1];
      uint64_t want_size;

      if (sr_oci_parse_index (body.data, body.len, &idx, err) < 0)
        {
          sr_error_wrap (err, "index %s", digest);
          goto out;
        }
      d = sr_oci_index_select (&idx, err);
      if (d == NULL)
        {
          sr_oci_index_done (&idx);
          goto out;
        }
      memcpy (want, d->digest, sizeof want);
      want_size = d->size;
      sr_oci_index_done (&idx);
      sr_buf_done (&body);
      free (type);
      type = NULL;
      if (fetch_manifest (p, want, want, &body, &type, digest, err) < 0)
        goto out;
      if (want_size && body.len != want_size)
        {
          sr_error_set (err, 0, "manifest %s: %zu bytes where the index says %llu", want,
                        body.len, (unsigned long long) want_size);
          goto out;
        }
      kind = sr_oci_kind_of (type);
      if (kind == SR_OCI_UNKNOWN)
        kind = sr_oci_sniff (body.data, body.len);
    }
  if (kind != SR_OCI_MANIFEST)
    {
      if (type && strstr (type, "manifest.v1"))
        sr_error_set (err, 0, "manifest %s is Docker schema 1, which is not supported", digest);
      else
        sr_error_set (err, 0, "manifest %s: not an image manifest (%s)", digest,
                      type ? type : "no media type");
      goto out;
    }
  if (sr_oci_parse_manifest (body.data, body.len, &m, err) < 0)
    {
      sr_error_wrap (err, "manifest %s", digest);
      goto out;
    }
  for (size_t i = 0; i < m.n_layers; i++)
    if (!sr_oci_layer_type_ok (m.layers[i].media_type))
      {
        sr_error_set (err, 0, "layer %s: unsupported media type %s", m.layers[i].digest,
                      m.layers[i].media_type ? m.layers[i].media_type : "(none)");
        goto out;
      }

  if (fetch_blob (p, &m.config, err) < 0)
    goto out;
  for (size_t i = 0; i < m.n_layers; i++)
    if (fetch_blob (p, &m.layers[i], err) < 0)
      goto out;
  /* The manifest goes in last: a store holding it holds all it names.  */
  if (sr_store_put_blob_buf (p->s, body.data, body.len, digest, err) < 0)
    goto out;
  name = sr_image_ref_name (&p->ref);
  r = sr_store_install (p->s, digest, name, ref, ret_id, err);

out:
  sr_oci_manifest_done (&m);
  sr_buf_done (&body);
  return r;
}

int
sr_registry_pull (struct sr_store *s, const char *ref, const struct sr_registry_options *o,
                  char **ret_id, sr_error_t *err)
{
  struct pull p = { .s = s, .o = o };
  int r;

  if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return sr_error_set (err, 0, "pull %s: cannot initialise libcurl", ref);
  r = pull (&p, ref, ret_id, err);
  if (r < 0)
    sr_error_wrap (err, "pull %s", ref);
  if (p.curl)
    curl_easy_cleanup (p.curl);
  free (p.auth);
  sr_image_ref_done (&p.ref);
  curl_global_cleanup ();
  return r;
}
