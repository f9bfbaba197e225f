/* Registry authentication: the WWW-Authenticate challenge, the Bearer token
 * it asks for or the user's Basic credentials, and the GET of the
 * registry's API that answers a 401 with them.  */
#include <config.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "common/util.h"
#include "image/registry-internal.h"

#define MAX_TOKEN_RESPONSE (1u << 20)

#define NEEDS_CREDENTIALS \
  "the repository does not exist or needs a username and password (--username, --password-stdin)"

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

/* --- tokens and credentials --- */

static char *
registry_origin (const struct pull *p)
{
  _cleanup_free_ char *url = sr_xasprintf ("%s://%s/", p->scheme, p->ref.host);

  return sr_registry_url_origin_ (url);
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
  realm_origin = sr_registry_url_origin_ (c->realm);
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
      b64 = sr_base64_encode (up, strlen (up));
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

  if (sr_registry_http_get_ (p, url, "Accept: application/json", basic, realm_origin, &x,
                             err) < 0)
    goto out;
  if (x.status != 200)
    {
      _cleanup_free_ char *what = sr_xasprintf ("token service %s", c->realm);

      if (x.status == 401 && basic)
        sr_error_set (err, 0, "token service %s refused the credentials of '%s' (401)", c->realm,
                      p->o->username);
      else
        sr_registry_status_error_ (&x, what, err);
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
  sr_registry_xfer_done_ (&x);
  return r;
}

/* Answers a 401 of the registry: returns 0 when a retry may succeed.  */
static int
authenticate (struct pull *p, const struct xfer *x, sr_error_t *err)
{
  struct challenge c = { 0 };
  int r;

  if (x->www_auth.len == 0 || parse_www_authenticate (x->www_auth.data, &c) < 0)
    return sr_registry_status_error_ (x, NULL, err);
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
          b64 = sr_base64_encode (up, strlen (up));
          free (p->auth);
          p->auth = sr_xasprintf ("Authorization: Basic %s", b64);
          p->basic_sent = true;
          r = 0;
        }
    }
  else
    {
      _cleanup_free_ char *text = sr_registry_error_text_ (x);

      r = sr_error_set (err, 0, "%s (%ld); " NEEDS_CREDENTIALS, text, x->status);
    }
  challenge_done (&c);
  return r;
}

/* GET a path of the registry's API, authenticating when it asks.  */
int
sr_registry_get_ (struct pull *p, const char *path, const char *accept, struct xfer *x,
              sr_error_t *err)
{
  _cleanup_free_ char *url = sr_xasprintf ("%s://%s/v2/%s", p->scheme, p->ref.host, path);
  _cleanup_free_ char *origin = registry_origin (p);

  if (origin == NULL)
    return sr_error_set (err, 0, "invalid registry host '%s'", p->ref.host);
  for (int attempt = 0;; attempt++)
    {
      if (sr_registry_http_get_ (p, url, accept, p->auth, origin, x, err) < 0)
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
      _cleanup_free_ char *text = sr_registry_error_text_ (x);

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

