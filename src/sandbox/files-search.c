/* file_search: the lines of a session's text files that match a regular
 * expression, over the walk and read primitives of its backend (which do
 * not follow symlinks nor enter kernel file systems).  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/files-internal.h"

/* How much of a file decides "binary", how much of a matching line a
 * result keeps, and how many lines go between looks at the cancel fd.  */
#define BINARY_PEEK     8192u
#define MATCH_TEXT_MAX  500u
#define CANCEL_LINES    1024u
/* How much backtracking one line may cost the matcher (PCRE2's match
 * limit counts its internal calls): enough for any pattern a person
 * writes, and about 0.1 s of CPU for one that backtracks without end,
 * such as (x+)+y, which would otherwise hold a server thread for as long
 * as it likes.  */
#define MATCH_LIMIT     1000000u
/* How many matcher steps go between looks at the cancel fd and the
 * clock: a few milliseconds' worth.  */
#define BUDGET_STEPS    16384u

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
  pcre2_code *re;
  pcre2_match_data *md;
  pcre2_match_context *mc;
  const char *glob;
  const struct sr_search_limits *lim;
  struct sr_search_result res;
  size_t cap;
  bool cancelled;
  bool timed_out;
  struct timespec deadline;   /* of the search, when lim->max_ms */
  unsigned long steps;
  char *failed;       /* where the matcher gave up: "PATH:LINE" */
};

/* Called by the matcher at every step of a match (PCRE2_AUTO_CALLOUT):
 * a match is then as interruptible as the loop over lines.  */
static int
check_budget (pcre2_callout_block *block, void *userdata)
{
  struct search *s = userdata;
  struct timespec now;

  (void) block;
  if (++s->steps % BUDGET_STEPS != 0)
    return 0;
  if (sr_cancel_requested (s->lim->cancel_fd))
    s->cancelled = true;
  else if (s->lim->max_ms && clock_gettime (CLOCK_MONOTONIC, &now) == 0
           && (now.tv_sec > s->deadline.tv_sec
               || (now.tv_sec == s->deadline.tv_sec && now.tv_nsec >= s->deadline.tv_nsec)))
    s->timed_out = true;
  else
    return 0;
  return PCRE2_ERROR_CALLOUT;
}

/* The matches of one file's content; stops, cancelled,
 * when the cancel fd says so, failed when the matcher gives up.  */
static void
search_buffer (struct search *s, const char *data, size_t len, const char *abs,
               int64_t mtime_ns)
{
  uint64_t line = 0;
  int rc;

  if (memchr (data, '\0', len < BINARY_PEEK ? len : BINARY_PEEK))
    return;
  for (size_t pos = 0; pos < len && !s->res.truncated;)
    {
      const char *nl = memchr (data + pos, '\n', len - pos);
      size_t end = nl ? (size_t) (nl - data) : len;
      const char *text = data + pos;

      if (++line % CANCEL_LINES == 0 && sr_cancel_requested (s->lim->cancel_fd))
        {
          s->cancelled = true;
          break;
        }
      rc = pcre2_match (s->re, (PCRE2_SPTR) text, end - pos, 0, 0, s->md, s->mc);
      if (rc < 0 && rc != PCRE2_ERROR_NOMATCH)
        {
          if (!s->cancelled)
            s->failed = sr_xasprintf ("%s:%" PRIu64, abs, line);
          break;
        }
      if (rc >= 0)
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
          s->res.v[s->res.n].mtime_ns = mtime_ns;
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
  int64_t mtime_ns;
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
  f->v[f->n++] = (struct found){ .rel = sr_xstrdup (e->rel), .size = e->size,
                                 .mtime_ns = e->mtime_ns, .dev = e->dev,
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

/* Newest first, then path order.  */
static int
compare_mtime (const void *a, const void *b)
{
  const struct found *p = a, *q = b;

  if (p->mtime_ns != q->mtime_ns)
    return p->mtime_ns > q->mtime_ns ? -1 : 1;
  return compare_found (a, b);
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

/* Reads and searches each file of f, newest first; files over max_size
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
  for (size_t i = 0; i < f->n && !s->res.truncated && !s->cancelled && !s->failed; i++)
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
      search_buffer (s, data, len, abs, f->v[i].mtime_ns);
    }
  if (s->cancelled)
    return sr_error_set_code (err, "cancelled", ECANCELED, "file_search cancelled");
  if (s->failed && s->timed_out)
    return sr_error_set_code (err, "search_timeout", 0,
                              "file_search gave up after %llu ms, matching %s; narrow it "
                              "with path or glob, or simplify the pattern",
                              (unsigned long long) lim->max_ms, s->failed);
  if (s->failed)
    return sr_error_set_code (err, "pattern_too_complex", 0,
                              "the pattern backtracks too much to match %s; "
                              "write it without nested repetition such as (a+)+",
                              s->failed);
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
  /* Links are marked in path order (the first path of a file is the one
   * searched), then the newest files go first.  */
  mark_links (f.v, f.n);
  if (f.n)
    qsort (f.v, f.n, sizeof *f.v, compare_mtime);
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

/* Compiles pattern as a Perl-compatible regular expression over UTF-8
 * text that may hold invalid sequences (a file is what it is), with the
 * match limit that bounds one line's backtracking and the callout that
 * bounds the whole search's time.  */
static int
compile_pattern (struct search *s, const char *pattern, sr_error_t *err)
{
  PCRE2_SIZE offset;
  int rc;

  s->re = pcre2_compile ((PCRE2_SPTR) pattern, PCRE2_ZERO_TERMINATED,
                         PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_AUTO_CALLOUT, &rc,
                         &offset, NULL);
  if (s->re == NULL)
    {
      PCRE2_UCHAR msg[256];

      pcre2_get_error_message (rc, msg, sizeof msg);
      return sr_error_set_code (err, "invalid_pattern", 0,
                                "invalid regular expression '%s' at offset %zu: %s", pattern,
                                (size_t) offset, (const char *) msg);
    }
  s->md = pcre2_match_data_create (1, NULL);
  s->mc = pcre2_match_context_create (NULL);
  if (s->md == NULL || s->mc == NULL)
    sr_oom ();
  pcre2_set_match_limit (s->mc, MATCH_LIMIT);
  pcre2_set_callout (s->mc, check_budget, s);
  if (s->lim->max_ms)
    sr_deadline_after (CLOCK_MONOTONIC, s->lim->max_ms, &s->deadline);
  return 0;
}

int
sr_files_search (const struct sr_fsroot *r, const char *pattern, const char *glob,
                 const char *dir, const struct sr_search_limits *lim,
                 struct sr_search_result *ret, sr_error_t *err)
{
  struct search s = { .glob = glob && *glob ? glob : NULL, .lim = lim };
  struct sr_files_where w = { 0 };
  int rv = -1;

  if (pattern == NULL)
    return sr_error_set_code (err, "invalid_pattern", 0, "no pattern");
  if (compile_pattern (&s, pattern, err) < 0)
    goto out_re;
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
  free (s.failed);
  pcre2_match_context_free (s.mc);
  pcre2_match_data_free (s.md);
  pcre2_code_free (s.re);
  return rv;
}
