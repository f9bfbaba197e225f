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

/* --- the tolerant match of old_string --- */

/* The start and length of what a line says, its leading blanks and a
 * trailing CR left out: what a tolerant match compares.  */
static void
line_key (const struct line *l, size_t *ret_start, size_t *ret_len)
{
  size_t s = 0, e = l->len;

  while (s < e && (l->p[s] == ' ' || l->p[s] == '\t'))
    s++;
  if (e > s && l->p[e - 1] == '\r')
    e--;
  *ret_start = s;
  *ret_len = e - s;
}

static bool
lines_match (const struct line *a, const struct line *b)
{
  size_t as, al, bs, bl;

  line_key (a, &as, &al);
  line_key (b, &bs, &bl);
  return al == bl && memcmp (a->p + as, b->p + bs, al) == 0;
}

/* Whether the n bytes at a are all c.  */
static bool
all_of (const char *a, size_t n, char c)
{
  for (size_t i = 0; i < n; i++)
    if (a[i] != c)
      return false;
  return true;
}

/* One line of new_string as the file would have it, its CR dropped (the
 * caller adds the file's line ending).  Its indentation is taken
 * relative to old_string's first line and given relative to the matched
 * line: a line that starts with old_indent gets file_indent instead; one
 * indented less, with the same blank character on both sides, is
 * dedented as much from file_indent; any other gets file_indent.  */
static void
add_reindented (struct buf *out, const struct line *nl, const char *old_indent,
                size_t old_indent_len, const char *file_indent, size_t file_indent_len)
{
  size_t len = nl->len, ws = 0, less;

  if (len && nl->p[len - 1] == '\r')
    len--;
  if (len == 0)
    return;
  while (ws < len && (nl->p[ws] == ' ' || nl->p[ws] == '\t'))
    ws++;
  if (ws >= old_indent_len && memcmp (nl->p, old_indent, old_indent_len) == 0)
    {
      buf_add (out, file_indent, file_indent_len);
      buf_add (out, nl->p + old_indent_len, len - old_indent_len);
      return;
    }
  less = old_indent_len - ws;
  if (memcmp (nl->p, old_indent, ws) == 0 && less <= file_indent_len && old_indent_len
      && all_of (old_indent, old_indent_len, old_indent[0])
      && all_of (file_indent, file_indent_len, old_indent[0]))
    buf_add (out, file_indent, file_indent_len - less);
  else
    buf_add (out, file_indent, file_indent_len);
  buf_add (out, nl->p + ws, len - ws);
}

/* old_s was not in the file as given: looks for its lines, each compared
 * without its leading blanks and CR, and replaces the one place they are
 * (none: no_match; more than one: ambiguous_match, whatever replace_all
 * says, as a guess that could be wrong is not made several times).  A
 * BOM stays first; the new lines get the line ending of the first
 * matched line.  */
static int
patch_fuzzy (const char *data, size_t len, const char *old_s, const char *new_s,
             const char *abs, struct buf *out, sr_error_t *err)
{
  static const char bom[] = "\xef\xbb\xbf";
  size_t skip = len >= 3 && memcmp (data, bom, 3) == 0 ? 3 : 0;
  _cleanup_free_ struct line *fl = NULL, *ol = NULL, *nl = NULL;
  size_t nfl, nol, nnl, pos = 0, fi, fks, oks, dummy, term = 0;
  unsigned found = 0;
  bool final_nl;
  const char *eol;

  fl = split_lines (data + skip, len - skip, &nfl, &final_nl);
  ol = split_lines (old_s, strlen (old_s), &nol, NULL);
  for (size_t i = 0; nol && i + nol <= nfl; i++)
    {
      size_t j = 0;

      while (j < nol && lines_match (&fl[i + j], &ol[j]))
        j++;
      if (j == nol && found++ == 0)
        pos = i;
    }
  if (found == 0)
    return sr_error_set_code (err, "no_match", 0,
                              "old_string was not found in %s, neither as given nor ignoring "
                              "indentation and line endings",
                              abs);
  if (found > 1)
    return sr_error_set_code (err, "ambiguous_match", 0,
                              "old_string is not in %s as given, and ignoring indentation and "
                              "line endings it matches %u places: give more context",
                              abs, found);

  line_key (&fl[pos], &fks, &dummy);
  line_key (&ol[0], &oks, &dummy);
  eol = fl[pos].len && fl[pos].p[fl[pos].len - 1] == '\r' ? "\r\n" : "\n";
  nl = split_lines (new_s, strlen (new_s), &nnl, NULL);
  buf_add (out, data, skip);
  for (fi = 0; fi < pos; fi++)
    {
      buf_add (out, fl[fi].p, fl[fi].len);
      buf_add (out, "\n", term = 1);
    }
  for (size_t k = 0; k < nnl; k++)
    {
      add_reindented (out, &nl[k], ol[0].p, oks, fl[pos].p, fks);
      buf_add (out, eol, term = strlen (eol));
    }
  for (fi = pos + nol; fi < nfl; fi++)
    {
      buf_add (out, fl[fi].p, fl[fi].len);
      buf_add (out, "\n", term = 1);
    }
  /* The file's last line had no line ending: neither has the result.  */
  if (!final_nl)
    {
      out->len -= term;
      out->p[out->len] = '\0';
    }
  return 0;
}

/* Reads the file itself (SR_FS_NOFOLLOW: the result replaces this
 * directory entry, and replacing a link with its patched target's content
 * would be a surprise), patches it, checks its syntax when asked and
 * writes it back atomically.  */
int
sr_files_patch (const struct sr_fsroot *r, const char *path, struct sr_patch *p,
                sr_error_t *err)
{
  _cleanup_free_ char *data = NULL, *out_p = NULL;
  struct sr_files_where w = { 0 };
  struct buf out = { 0 };
  size_t len;
  unsigned n = 0;
  int ret = -1;

  p->replacements = 0;
  p->fuzzy = false;
  if (p->diff == NULL && (p->old_string == NULL || p->new_string == NULL))
    return sr_error_set_code (err, "invalid_patch", 0,
                              "give old_string and new_string, or a diff");
  if (sr_files_parse_path (path, false, &w, err) < 0)
    return -1;
  if (r->ops->read (r->ctx, w.abs, sr_files_where_flags (&w) | SR_FS_NOFOLLOW, p->max_size,
                    &data, &len, err)
      < 0)
    goto out;
  if (p->diff)
    ret = patch_diff (data, len, p->diff, w.abs, &out, &n, err);
  else if (*p->old_string == '\0' || memmem (data, len, p->old_string, strlen (p->old_string)))
    ret = patch_string (data, len, p->old_string, p->new_string, p->replace_all, w.abs, &out,
                        &n, err);
  else if ((ret = patch_fuzzy (data, len, p->old_string, p->new_string, w.abs, &out, err)) == 0)
    {
      n = 1;
      p->fuzzy = true;
    }
  out_p = out.p;
  if (ret == 0 && p->lint)
    ret = sr_files_lint (r, w.abs, out.p ? out.p : "", out.len, err);
  if (ret == 0)
    ret = r->ops->write (r->ctx, w.abs, sr_files_where_flags (&w), out.p ? out.p : "", out.len,
                         true, err);
  if (ret == 0)
    p->replacements = n;
out:
  sr_files_where_done (&w);
  return ret;
}
