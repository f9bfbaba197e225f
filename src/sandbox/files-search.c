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

/* How much of a file decides "binary", how much of a matching line a
 * result keeps, and how many lines go between looks at the cancel fd.  */
#define BINARY_PEEK     8192u
#define MATCH_TEXT_MAX  500u
#define CANCEL_LINES    1024u

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
  const struct sr_search_limits *lim;
  struct sr_search_result res;
  size_t cap;
  bool cancelled;
};

/* The matches of one file's content (data is changed); stops, cancelled,
 * when the cancel fd says so.  */
static void
search_buffer (struct search *s, char *data, size_t len, const char *abs)
{
  uint64_t line = 0;

  if (memchr (data, '\0', len < BINARY_PEEK ? len : BINARY_PEEK))
    return;
  for (size_t pos = 0; pos < len && !s->res.truncated;)
    {
      char *nl = memchr (data + pos, '\n', len - pos);
      size_t end = nl ? (size_t) (nl - data) : len;
      char *text = data + pos;

      if (++line % CANCEL_LINES == 0 && sr_cancel_requested (s->lim->cancel_fd))
        {
          s->cancelled = true;
          break;
        }
      data[end] = '\0';
      if (regexec (&s->re, text, 0, NULL, 0) == 0)
        {
          size_t tlen = end - pos;

          if (s->res.n == s->lim->max_matches)
            {
              s->res.truncated = true;
              break;
            }
          /* Cut at a character boundary, not inside a UTF-8 sequence.  */
          if (tlen > MATCH_TEXT_MAX)
            {
              tlen = MATCH_TEXT_MAX;
              while (tlen > 0 && ((unsigned char) text[tlen] & 0xc0) == 0x80)
                tlen--;
            }
          if (s->res.n == s->cap)
            {
              s->cap = s->cap ? s->cap * 2 : 64;
              s->res.v = sr_xrealloc (s->res.v, s->cap * sizeof *s->res.v);
            }
          s->res.v[s->res.n].path = sr_xstrdup (abs);
          s->res.v[s->res.n].line = line;
          s->res.v[s->res.n].text = sr_xasprintf ("%.*s", (int) tlen, text);
          s->res.n++;
        }
      pos = end + 1;
    }
}

/* A file the walk found that the glob lets through.  */
struct found
{
  char *rel;
  uint64_t size;
  uint64_t dev, ino;
  bool link;          /* another path of a file found before it */
};

struct finding
{
  const char *glob;
  struct found *v;
  size_t n, cap;
  bool truncated;     /* SR_MAX_ARTIFACTS files found */
};

static int
find_one (void *userdata, const struct sr_fs_entry *e)
{
  struct finding *f = userdata;
  const char *base = strrchr (e->rel, '/');

  /* "": the top is the file itself, searched whatever the glob says.  */
  if (*e->rel && f->glob && fnmatch (f->glob, base ? base + 1 : e->rel, 0) != 0)
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
  f->v[f->n++] = (struct found){ .rel = sr_xstrdup (e->rel), .size = e->size, .dev = e->dev,
                                 .ino = e->ino };
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

/* Identity order, then path order (the array is in path order).  */
static int
compare_identity (const void *a, const void *b)
{
  const struct found *p = *(const struct found *const *) a;
  const struct found *q = *(const struct found *const *) b;

  if (p->dev != q->dev)
    return p->dev < q->dev ? -1 : 1;
  if (p->ino != q->ino)
    return p->ino < q->ino ? -1 : 1;
  return p < q ? -1 : p > q;
}

/* Marks link every path of v (in path order) but the first of its file:
 * a file with many hard links is read once.  */
static void
mark_links (struct found *v, size_t n)
{
  _cleanup_free_ struct found **by_id = sr_xmalloc ((n ? n : 1) * sizeof *by_id);

  for (size_t i = 0; i < n; i++)
    by_id[i] = &v[i];
  qsort (by_id, n, sizeof *by_id, compare_identity);
  for (size_t i = 1; i < n; i++)
    by_id[i]->link = by_id[i]->dev == by_id[i - 1]->dev && by_id[i]->ino == by_id[i - 1]->ino;
}

/* Reads and searches each file of f, in path order; files over max_size
 * or unreadable are skipped, not errors.  Stops, truncated, before
 * max_bytes are passed; fails, cancelled, when the cancel fd says so.  */
static int
search_found (const struct sr_fsroot *r, struct search *s, const struct sr_files_where *w,
              const struct finding *f, sr_error_t *err)
{
  const struct sr_search_limits *lim = s->lim;
  const unsigned flags = sr_files_where_flags (w);
  const char *dir = strcmp (w->abs, "/") ? w->abs : "";

  /* search_buffer sets truncated when max_matches are found.  */
  for (size_t i = 0; i < f->n && !s->res.truncated && !s->cancelled; i++)
    {
      _cleanup_free_ char *abs = NULL, *data = NULL;
      uint64_t left = lim->max_bytes - s->res.bytes_read;
      size_t len;

      if (sr_cancel_requested (lim->cancel_fd))
        {
          s->cancelled = true;
          break;
        }
      if (f->v[i].link || f->v[i].size > lim->max_size)
        continue;
      if (f->v[i].size > left)
        {
          s->res.truncated = true;
          break;
        }
      abs = *f->v[i].rel ? sr_xasprintf ("%s/%s", dir, f->v[i].rel) : sr_xstrdup (w->abs);
      /* The file may have grown since the walk: no more than is left.  */
      if (r->ops->read (r->ctx, abs, flags, lim->max_size < left ? lim->max_size : left, &data,
                        &len, NULL) < 0)
        continue;
      s->res.bytes_read += len;
      s->res.files_read++;
      search_buffer (s, data, len, abs);
    }
  if (s->cancelled)
    return sr_error_set_code (err, "cancelled", ECANCELED, "file_search cancelled");
  return 0;
}

/* Walks w, then searches what it found.  */
static int
search_walk (const struct sr_fsroot *r, struct search *s, const struct sr_files_where *w,
             sr_error_t *err)
{
  struct finding f = { .glob = s->glob };
  bool deeper = false;
  int rv = -1;

  if (r->ops->walk (r->ctx, w->abs, sr_files_where_flags (w), SR_MAX_ARTIFACT_DEPTH,
                    s->lim->cancel_fd, find_one, &f, &deeper, err) < 0)
    goto out;
  if (f.n)
    qsort (f.v, f.n, sizeof *f.v, compare_found);
  mark_links (f.v, f.n);
  if (search_found (r, s, w, &f, err) < 0)
    goto out;
  s->res.truncated |= deeper || f.truncated;
  rv = 0;
out:
  for (size_t i = 0; i < f.n; i++)
    free (f.v[i].rel);
  free (f.v);
  return rv;
}

int
sr_files_search (const struct sr_fsroot *r, const char *pattern, const char *glob,
                 const char *dir, const struct sr_search_limits *lim,
                 struct sr_search_result *ret, sr_error_t *err)
{
  struct search s = { .glob = glob && *glob ? glob : NULL, .lim = lim };
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
  *ret = s.res;
  s.res = (struct sr_search_result){ 0 };
  rv = 0;
out:
  sr_files_where_done (&w);
out_re:
  sr_file_matches_free (s.res.v, s.res.n);
  regfree (&s.re);
  return rv;
}
