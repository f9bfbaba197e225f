/* file_search: the lines of a session's text files that match a regular
 * expression, over the walk and read primitives of its backend (which do
 * not follow symlinks nor enter kernel file systems).  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/files-internal.h"

/* How much of a file decides "binary", and how much of a matching line
 * a result keeps.  */
#define BINARY_PEEK     8192u
#define MATCH_TEXT_MAX  500u

void
sr_file_matches_free (struct sr_file_match *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (v[i].path);
      free (v[i].text);
    }
  free (v);
}

struct search
{
  regex_t re;
  const char *glob;
  uint64_t max_size;
  size_t max_matches;
  struct sr_file_match *v;
  size_t n, cap;
  bool truncated;
};

/* The matches of one file's content (data is changed).  */
static void
search_buffer (struct search *s, char *data, size_t len, const char *abs)
{
  uint64_t line = 0;

  if (memchr (data, '\0', len < BINARY_PEEK ? len : BINARY_PEEK))
    return;
  for (size_t pos = 0; pos < len && !s->truncated;)
    {
      char *nl = memchr (data + pos, '\n', len - pos);
      size_t end = nl ? (size_t) (nl - data) : len;
      char *text = data + pos;

      line++;
      data[end] = '\0';
      if (regexec (&s->re, text, 0, NULL, 0) == 0)
        {
          size_t tlen = end - pos;

          if (s->n == s->max_matches)
            {
              s->truncated = true;
              break;
            }
          /* Cut at a character boundary, not inside a UTF-8 sequence.  */
          if (tlen > MATCH_TEXT_MAX)
            {
              tlen = MATCH_TEXT_MAX;
              while (tlen > 0 && ((unsigned char) text[tlen] & 0xc0) == 0x80)
                tlen--;
            }
          if (s->n == s->cap)
            {
              s->cap = s->cap ? s->cap * 2 : 64;
              s->v = sr_xrealloc (s->v, s->cap * sizeof *s->v);
            }
          s->v[s->n].path = sr_xstrdup (abs);
          s->v[s->n].line = line;
          s->v[s->n].text = sr_xasprintf ("%.*s", (int) tlen, text);
          s->n++;
        }
      pos = end + 1;
    }
}

/* A file the walk found that the glob lets through.  */
struct found
{
  char *rel;
  uint64_t size;
};

struct finding
{
  const char *glob;
  struct found *v;
  size_t n, cap;
  bool truncated;     /* SR_MAX_ARTIFACTS files found */
};

static int
find_one (void *userdata, const char *rel, uint64_t size, int64_t mtime_ns)
{
  struct finding *f = userdata;
  const char *base = strrchr (rel, '/');

  (void) mtime_ns;
  /* "": the top is the file itself, searched whatever the glob says.  */
  if (*rel && f->glob && fnmatch (f->glob, base ? base + 1 : rel, 0) != 0)
    return 0;
  if (f->n >= SR_MAX_ARTIFACTS)
    {
      f->truncated = true;
      return 1;
    }
  if (f->n == f->cap)
    {
      f->cap = f->cap ? f->cap * 2 : 64;
      f->v = sr_xrealloc (f->v, f->cap * sizeof *f->v);
    }
  f->v[f->n++] = (struct found){ .rel = sr_xstrdup (rel), .size = size };
  return 0;
}

/* Path order, a directory's entries before its next sibling's ("a/x"
 * before "a-b"): what a walk in name order gives.  */
static int
compare_found (const void *a, const void *b)
{
  const unsigned char *p = (const unsigned char *) ((const struct found *) a)->rel;
  const unsigned char *q = (const unsigned char *) ((const struct found *) b)->rel;

  while (*p && *p == *q)
    p++, q++;
  return (*p == '/' ? 1 : *p ? *p + 1 : 0) - (*q == '/' ? 1 : *q ? *q + 1 : 0);
}

/* Walks w, then reads and searches each file found, in path order; files
 * over max_size or unreadable are skipped, not errors.  */
static int
search_walk (const struct sr_fsroot *r, struct search *s, const struct sr_files_where *w,
             sr_error_t *err)
{
  struct finding f = { .glob = s->glob };
  const unsigned flags = sr_files_where_flags (w);
  const char *dir = strcmp (w->abs, "/") ? w->abs : "";
  bool deeper = false;
  int rv = -1;

  if (r->ops->walk (r->ctx, w->abs, flags, SR_MAX_ARTIFACT_DEPTH, find_one, &f, &deeper, err)
      < 0)
    goto out;
  if (f.n)
    qsort (f.v, f.n, sizeof *f.v, compare_found);
  /* search_buffer sets truncated when max_matches are found.  */
  for (size_t i = 0; i < f.n && !s->truncated; i++)
    {
      _cleanup_free_ char *abs = *f.v[i].rel ? sr_xasprintf ("%s/%s", dir, f.v[i].rel)
                                             : sr_xstrdup (w->abs);
      _cleanup_free_ char *data = NULL;
      size_t len;

      if (f.v[i].size > s->max_size
          || r->ops->read (r->ctx, abs, flags, s->max_size, &data, &len, NULL) < 0)
        continue;
      search_buffer (s, data, len, abs);
    }
  s->truncated |= deeper || f.truncated;
  rv = 0;
out:
  for (size_t i = 0; i < f.n; i++)
    free (f.v[i].rel);
  free (f.v);
  return rv;
}

int
sr_files_search (const struct sr_fsroot *r, const char *pattern, const char *glob,
                 const char *dir, uint64_t max_size, size_t max_matches,
                 struct sr_file_match **ret, size_t *ret_n, bool *ret_truncated,
                 sr_error_t *err)
{
  struct search s = { .glob = glob && *glob ? glob : NULL, .max_size = max_size,
                      .max_matches = max_matches };
  struct sr_files_where w = { 0 };
  int rc, rv = -1;

  if (pattern == NULL)
    return sr_error_set_code (err, "invalid_pattern", 0, "no pattern");
  rc = regcomp (&s.re, pattern, REG_EXTENDED | REG_NOSUB);
  if (rc != 0)
    {
      char msg[256];

      regerror (rc, &s.re, msg, sizeof msg);
      return sr_error_set_code (err, "invalid_pattern", 0, "invalid regular expression '%s': %s",
                                pattern, msg);
    }
  if (sr_files_parse_path (dir && *dir ? dir : SR_DATA_DIR, false, &w, err) < 0)
    goto out_re;
  if (search_walk (r, &s, &w, err) < 0)
    goto out;
  *ret = TAKE_PTR (s.v);
  *ret_n = s.n;
  if (ret_truncated)
    *ret_truncated = s.truncated;
  rv = 0;
out:
  sr_files_where_done (&w);
out_re:
  sr_file_matches_free (s.v, rv == 0 ? 0 : s.n);
  regfree (&s.re);
  return rv;
}
