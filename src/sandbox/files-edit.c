/* The file tools that read or change one file of a session: file_read
 * (numbered lines), file_write and file_patch (a string replaced, or the
 * hunks of a unified diff applied).  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "sandbox/files-internal.h"

struct buf
{
  char *p;
  size_t len, cap;
};

static void
buf_add (struct buf *b, const void *s, size_t n)
{
  if (b->cap - b->len < n + 1)
    {
      while (b->cap - b->len < n + 1)
        b->cap = b->cap ? b->cap * 2 : 4096;
      b->p = sr_xrealloc (b->p, b->cap);
    }
  memcpy (b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void __attribute__ ((format (printf, 2, 3)))
buf_printf (struct buf *b, const char *fmt, ...)
{
  _cleanup_free_ char *s = NULL;
  va_list ap;

  va_start (ap, fmt);
  s = sr_xvasprintf (fmt, ap);
  va_end (ap);
  buf_add (b, s, strlen (s));
}

int
sr_files_read_lines (const struct sr_fsroot *r, const char *path, uint64_t offset,
                     uint64_t limit, uint64_t max_size, char **ret_text,
                     uint64_t *ret_total_lines, sr_error_t *err)
{
  _cleanup_free_ char *data = NULL;
  struct buf out = { 0 };
  struct sr_files_where w = { 0 };
  uint64_t line = 0;
  size_t len;
  int ret;

  if (sr_files_parse_path (path, false, &w, err) < 0)
    return -1;
  ret = r->ops->read (r->ctx, w.abs, sr_files_where_flags (&w), max_size, &data, &len, err);
  sr_files_where_done (&w);
  if (ret < 0)
    return -1;
  if (offset == 0)
    offset = 1;
  buf_add (&out, "", 0);
  for (size_t pos = 0; pos < len;)
    {
      const char *nl = memchr (data + pos, '\n', len - pos);
      size_t end = nl ? (size_t) (nl - data) : len;

      line++;
      if (line >= offset && (limit == 0 || line - offset < limit))
        {
          buf_printf (&out, "%6" PRIu64 "\t", line);
          /* A NUL would end the text early for every caller that takes
           * it as a string: show it as U+FFFD.  */
          for (size_t s = pos; s < end;)
            {
              const char *z = memchr (data + s, '\0', end - s);
              size_t stop = z ? (size_t) (z - data) : end;

              buf_add (&out, data + s, stop - s);
              if (z)
                buf_add (&out, "\xef\xbf\xbd", 3);
              s = stop + (z != NULL);
            }
          buf_add (&out, "\n", 1);
        }
      pos = end + 1;
    }
  *ret_text = out.p;
  if (ret_total_lines)
    *ret_total_lines = line;
  return 0;
}

int
sr_files_write (const struct sr_fsroot *r, const char *path, const char *content, size_t len,
                char **ret_path, sr_error_t *err)
{
  struct sr_files_where w = { 0 };
  int ret;

  if (sr_files_parse_path (path, false, &w, err) < 0)
    return -1;
  ret = r->ops->write (r->ctx, w.abs, sr_files_where_flags (&w), content, len, true, err);
  if (ret == 0 && ret_path)
    *ret_path = TAKE_PTR (w.abs);
  sr_files_where_done (&w);
  return ret;
}

/* String mode: every occurrence of old, not overlapping, left to right.  */
static int
patch_string (const char *data, size_t len, const char *old_s, const char *new_s,
              bool replace_all, const char *abs, struct buf *out, unsigned *ret_n,
              sr_error_t *err)
{
  size_t old_len = strlen (old_s), new_len = strlen (new_s), pos = 0;
  unsigned n = 0;
  const char *hit;

  if (old_len == 0)
    return sr_error_set_code (err, "invalid_patch", 0, "old_string is empty");
  for (const char *p = data; (hit = memmem (p, len - (size_t) (p - data), old_s, old_len));
       p = hit + old_len)
    n++;
  if (n == 0)
    return sr_error_set_code (err, "no_match", 0, "old_string was not found in %s", abs);
  if (n > 1 && !replace_all)
    return sr_error_set_code (err, "ambiguous_match", 0,
                              "old_string occurs %u times in %s: give more context, or ask for "
                              "replace_all",
                              n, abs);
  buf_add (out, "", 0);
  while ((hit = memmem (data + pos, len - pos, old_s, old_len)))
    {
      buf_add (out, data + pos, (size_t) (hit - (data + pos)));
      buf_add (out, new_s, new_len);
      pos = (size_t) (hit - data) + old_len;
    }
  buf_add (out, data + pos, len - pos);
  *ret_n = n;
  return 0;
}

struct line
{
  const char *p;
  size_t len;       /* without the '\n' */
  char op;          /* in a hunk: ' ', '-' or '+' */
  bool no_eol;      /* in a hunk: followed by "\ No newline at end of file" */
  bool bare;        /* in a hunk: an empty line, not " " */
};

struct hunk
{
  uint64_t old_start;
  struct line *lines;
  size_t n;
};

/* Splits text into lines; *ret_final_nl says whether the last one ended
 * with '\n' (an empty text counts as ending with one).  */
static struct line *
split_lines (const char *text, size_t len, size_t *ret_n, bool *ret_final_nl)
{
  struct line *v = NULL;
  size_t n = 0, cap = 0;

  for (size_t pos = 0; pos < len;)
    {
      const char *nl = memchr (text + pos, '\n', len - pos);
      size_t end = nl ? (size_t) (nl - text) : len;

      if (n == cap)
        {
          cap = cap ? cap * 2 : 256;
          v = sr_xrealloc (v, cap * sizeof *v);
        }
      v[n++] = (struct line){ .p = text + pos, .len = end - pos };
      pos = end + 1;
    }
  *ret_n = n;
  if (ret_final_nl)
    *ret_final_nl = len == 0 || text[len - 1] == '\n';
  return v;
}

static void
hunks_free (struct hunk *h, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (h[i].lines);
  free (h);
}

static bool
parse_hunk_header (const char *p, size_t len, uint64_t *ret_start)
{
  _cleanup_free_ char *s = sr_xasprintf ("%.*s", (int) len, p);
  unsigned long long a, b = 1, c, d = 1;
  int used = 0;

  if (sscanf (s, "@@ -%llu,%llu +%llu,%llu @@%n", &a, &b, &c, &d, &used) == 4 && used)
    goto good;
  used = 0;
  if (sscanf (s, "@@ -%llu +%llu,%llu @@%n", &a, &c, &d, &used) == 3 && used)
    goto good;
  used = 0;
  if (sscanf (s, "@@ -%llu,%llu +%llu @@%n", &a, &b, &c, &used) == 3 && used)
    goto good;
  used = 0;
  if (sscanf (s, "@@ -%llu +%llu @@%n", &a, &c, &used) == 2 && used)
    goto good;
  return false;
good:
  /* With no old lines, the start names the line after which to insert.  */
  *ret_start = b == 0 ? a : (a ? a - 1 : 0);
  return true;
}

static bool
starts_with (const struct line *l, const char *s)
{
  size_t n = strlen (s);

  return l->len >= n && memcmp (l->p, s, n) == 0;
}

/* Parses the hunks of a unified diff.  A hunk's body runs to the next
 * "@@", to a "diff " line or "---"/"+++" file header, or to the end, and
 * its line counts are recounted from the body rather than trusted (as
 * `git apply --recount` does): hand-written and generated diffs often get
 * them wrong while their lines are right.  Bare empty lines count as
 * empty context, except at the end of a hunk.  */
static int
parse_diff (const char *diff, struct hunk **ret, size_t *ret_n, sr_error_t *err)
{
  _cleanup_free_ struct line *dl = NULL;
  struct hunk *h = NULL, *cur = NULL;
  size_t nd, n = 0;

  dl = split_lines (diff, strlen (diff), &nd, NULL);
  for (size_t i = 0; i < nd; i++)
    {
      const struct line *l = &dl[i];

      if (starts_with (l, "@@ "))
        {
          uint64_t start;

          if (!parse_hunk_header (l->p, l->len, &start))
            {
              hunks_free (h, n);
              return sr_error_set_code (err, "invalid_patch", 0,
                                        "line %zu: a malformed hunk header: %.*s",
                                        i + 1, (int) (l->len > 80 ? 80 : l->len), l->p);
            }
          h = sr_xrealloc (h, (n + 1) * sizeof *h);
          cur = &h[n++];
          *cur = (struct hunk){ .old_start = start };
          continue;
        }
      if (starts_with (l, "diff ")
          || (starts_with (l, "--- ") && i + 1 < nd && starts_with (&dl[i + 1], "+++ ")))
        {
          cur = NULL;
          continue;
        }
      if (cur == NULL)
        continue;   /* headers and text before the first hunk */
      if (l->len == 0 || l->p[0] == ' ' || l->p[0] == '-' || l->p[0] == '+')
        {
          struct line *hl;

          cur->lines = sr_xrealloc (cur->lines, (cur->n + 1) * sizeof *cur->lines);
          hl = &cur->lines[cur->n++];
          *hl = (struct line){ .op = l->len ? l->p[0] : ' ', .p = l->len ? l->p + 1 : l->p,
                               .len = l->len ? l->len - 1 : 0, .bare = l->len == 0 };
        }
      else if (l->p[0] == '\\')
        {
          if (cur->n == 0)
            {
              hunks_free (h, n);
              return sr_error_set_code (err, "invalid_patch", 0,
                                        "line %zu: '\\ No newline at end of file' follows no line",
                                        i + 1);
            }
          cur->lines[cur->n - 1].no_eol = true;
        }
      else
        {
          hunks_free (h, n);
          return sr_error_set_code (err, "invalid_patch", 0,
                                    "line %zu: a hunk line must start with ' ', '-', '+' or '\\': "
                                    "%.*s",
                                    i + 1, (int) (l->len > 80 ? 80 : l->len), l->p);
        }
    }
  for (size_t i = 0; i < n; i++)
    {
      /* Trailing bare empty lines are the diff's own end, not context.  */
      while (h[i].n && h[i].lines[h[i].n - 1].bare)
        h[i].n--;
      if (h[i].n == 0)
        {
          hunks_free (h, n);
          return sr_error_set_code (err, "invalid_patch", 0, "hunk %zu has no lines", i + 1);
        }
    }
  if (n == 0)
    return sr_error_set_code (err, "invalid_patch", 0,
                              "the diff has no hunk (no line starting with @@)");
  *ret = h;
  *ret_n = n;
  return 0;
}

/* Whether the old lines of hunk h (context and '-') are at file line pos.  */
static bool
hunk_matches (const struct hunk *h, const struct line *fl, size_t nfl, size_t pos)
{
  for (size_t i = 0; i < h->n; i++)
    {
      const struct line *hl = &h->lines[i];

      if (hl->op == '+')
        continue;
      if (pos >= nfl || fl[pos].len != hl->len || memcmp (fl[pos].p, hl->p, hl->len) != 0)
        return false;
      pos++;
    }
  return true;
}

/* Applies the hunks in order, each at its line number or the nearest place
 * after the previous hunk where its old lines are, like patch with no
 * fuzz.  */
static int
patch_diff (const char *data, size_t len, const char *diff, const char *abs, struct buf *out,
            unsigned *ret_n, sr_error_t *err)
{
  _cleanup_free_ struct line *fl = NULL;
  struct hunk *h = NULL;
  size_t nfl, nh = 0, cursor = 0;
  bool final_nl;

  if (parse_diff (diff, &h, &nh, err) < 0)
    return -1;
  fl = split_lines (data, len, &nfl, &final_nl);
  buf_add (out, "", 0);
  for (size_t k = 0; k < nh; k++)
    {
      size_t n_old = 0, want, pos = SIZE_MAX;
      bool old_no_eol = false, new_no_eol = false;

      for (size_t i = 0; i < h[k].n; i++)
        if (h[k].lines[i].op != '+')
          {
            n_old++;
            old_no_eol |= h[k].lines[i].no_eol;
          }
        else
          new_no_eol |= h[k].lines[i].no_eol;
      for (size_t i = 0; i < h[k].n; i++)
        if (h[k].lines[i].op == ' ' && h[k].lines[i].no_eol)
          new_no_eol = true;
      want = h[k].old_start > nfl ? nfl : (size_t) h[k].old_start;
      if (n_old <= nfl)
        for (size_t d = 0; pos == SIZE_MAX; d++)
          {
            bool any = false;

            if (want + d >= cursor && want + d + n_old <= nfl)
              {
                any = true;
                if (hunk_matches (&h[k], fl, nfl, want + d))
                  pos = want + d;
              }
            if (pos == SIZE_MAX && d && want >= d && want - d >= cursor)
              {
                any = true;
                if (want - d + n_old <= nfl && hunk_matches (&h[k], fl, nfl, want - d))
                  pos = want - d;
              }
            if (!any && want + d >= nfl)
              break;
          }
      if (pos == SIZE_MAX)
        {
          unsigned long long line = (unsigned long long) h[k].old_start + (n_old ? 1 : 0);

          hunks_free (h, nh);
          return sr_error_set_code (err, "no_match", 0,
                                    "hunk %zu (at line %llu) does not match %s: its context and "
                                    "removed lines are not there",
                                    k + 1, line, abs);
        }
      for (size_t i = cursor; i < pos; i++)
        {
          buf_add (out, fl[i].p, fl[i].len);
          buf_add (out, "\n", 1);
        }
      for (size_t i = 0; i < h[k].n; i++)
        if (h[k].lines[i].op != '-')
          {
            buf_add (out, h[k].lines[i].p, h[k].lines[i].len);
            buf_add (out, "\n", 1);
          }
      cursor = pos + n_old;
      if (cursor == nfl && (new_no_eol || old_no_eol))
        final_nl = !new_no_eol;
    }
  for (size_t i = cursor; i < nfl; i++)
    {
      buf_add (out, fl[i].p, fl[i].len);
      buf_add (out, "\n", 1);
    }
  if (!final_nl && out->len && out->p[out->len - 1] == '\n')
    out->p[--out->len] = '\0';
  *ret_n = (unsigned) nh;
  hunks_free (h, nh);
  return 0;
}

/* Reads the file itself (SR_FS_NOFOLLOW: the result replaces this
 * directory entry, and replacing a link with its patched target's content
 * would be a surprise), patches it and writes it back atomically.  */
int
sr_files_patch (const struct sr_fsroot *r, const char *path, const char *old_string,
                const char *new_string, bool replace_all, const char *diff, uint64_t max_size,
                unsigned *ret_replacements, sr_error_t *err)
{
  _cleanup_free_ char *data = NULL, *out_p = NULL;
  struct sr_files_where w = { 0 };
  struct buf out = { 0 };
  size_t len;
  unsigned n = 0;
  int ret = -1;

  if (diff == NULL && (old_string == NULL || new_string == NULL))
    return sr_error_set_code (err, "invalid_patch", 0,
                              "give old_string and new_string, or a diff");
  if (sr_files_parse_path (path, false, &w, err) < 0)
    return -1;
  if (r->ops->read (r->ctx, w.abs, sr_files_where_flags (&w) | SR_FS_NOFOLLOW, max_size, &data,
                    &len, err)
      < 0)
    goto out;
  if (diff)
    ret = patch_diff (data, len, diff, w.abs, &out, &n, err);
  else
    ret = patch_string (data, len, old_string, new_string, replace_all, w.abs, &out, &n, err);
  out_p = out.p;
  if (ret == 0)
    ret = r->ops->write (r->ctx, w.abs, sr_files_where_flags (&w), out.p ? out.p : "", out.len,
                         true, err);
  if (ret == 0 && ret_replacements)
    *ret_replacements = n;
out:
  sr_files_where_done (&w);
  return ret;
}
