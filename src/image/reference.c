/* Image references: parsing [HOST[:PORT]/]REPOSITORY[:TAG][@DIGEST] and
 * naming what a reference pulls.  */
#include <config.h>

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "image/digest.h"
#include "image/reference.h"

#define DOCKER_HUB_HOST "registry-1.docker.io"
#define DEFAULT_TAG "latest"

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
