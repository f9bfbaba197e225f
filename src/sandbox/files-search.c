/* file_search: the lines of a session's text files that match a regular
 * expression, walking a directory without following symlinks or entering
 * kernel file systems.  */
#include <config.h>

#include <dirent.h>
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
  unsigned files;
  bool truncated;
};

/* Searches the regular file pathfd is an O_PATH fd of; files that are
 * not readable text within the limit are skipped, not errors.  */
static void search_buffer (struct search *s, char *data, size_t len, const char *abs);

static void
search_file (struct search *s, int pathfd, const char *abs)
{
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *data = NULL;
  struct stat st;
  size_t len;

  if (s->files >= SR_MAX_ARTIFACTS)
    {
      s->truncated = true;
      return;
    }
  s->files++;
  fd = sr_files_reopen_regular (pathfd, abs, &st, NULL);
  if (fd < 0 || (uint64_t) st.st_size > s->max_size
      || sr_files_read_all (fd, s->max_size, abs, &data, &len, NULL) < 0)
    return;
  search_buffer (s, data, len, abs);
}

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

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* Walks dfd (taken over), named abs, in name order; symlinks are not
 * followed and kernel file systems (a /proc under a searched /) are not
 * entered.  */
static void
search_dir (struct search *s, int dfd, const char *abs, unsigned depth)
{
  DIR *d = fdopendir (dfd);
  _cleanup_strv_ char **names = NULL;
  struct dirent *de;

  if (d == NULL)
    {
      close (dfd);
      return;
    }
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      sr_strv_push (&names, de->d_name);
  if (names)
    qsort (names, sr_strv_length (names), sizeof *names, compare_names);
  for (size_t i = 0; names && names[i] && !s->truncated; i++)
    {
      _cleanup_free_ char *child = sr_xasprintf ("%s/%s", strcmp (abs, "/") ? abs : "", names[i]);
      struct stat st;

      if (fstatat (dirfd (d), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISREG (st.st_mode))
        {
          _cleanup_close_ int pathfd = -1;

          if (s->glob && fnmatch (s->glob, names[i], 0) != 0)
            continue;
          pathfd = openat (dirfd (d), names[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
          if (pathfd >= 0)
            search_file (s, pathfd, child);
        }
      else if (S_ISDIR (st.st_mode))
        {
          int sub;

          if (depth >= SR_MAX_ARTIFACT_DEPTH)
            {
              s->truncated = true;
              continue;
            }
          sub = openat (dirfd (d), names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub < 0)
            continue;
          if (sr_files_check_fs (sub, false, child, NULL) < 0)
            {
              close (sub);
              continue;
            }
          search_dir (s, sub, child, depth + 1);
        }
    }
  closedir (d);
}

/* The walk of a remote filesystem, in path order (as search_dir walks in
 * name order), each file read on its own.  */
static int
remote_search (const struct sr_fs_remote *rm, struct search *s, const struct sr_files_where *w,
               sr_error_t *err)
{
  struct sr_artifact *v = NULL;
  size_t n = 0;
  bool truncated = false;

  if (rm->walk (rm->ctx, w->abs, sr_files_remote_flags (w), SR_MAX_ARTIFACT_DEPTH, &v, &n,
                &truncated, err)
      < 0)
    return -1;
  s->truncated = truncated;
  if (n)
    qsort (v, n, sizeof *v, sr_files_compare_artifacts);
  for (size_t i = 0; i < n && !s->truncated; i++)
    {
      /* "": w->abs is the file itself, searched whatever the glob says.  */
      const char *dir = strcmp (w->abs, "/") ? w->abs : "";
      _cleanup_free_ char *abs = *v[i].path ? sr_xasprintf ("%s/%s", dir, v[i].path)
                                            : sr_xstrdup (w->abs);
      const char *base = strrchr (abs, '/') + 1;
      _cleanup_free_ char *data = NULL;
      size_t len;

      if (*v[i].path && s->glob && fnmatch (s->glob, base, 0) != 0)
        continue;
      if (s->files >= SR_MAX_ARTIFACTS)
        {
          s->truncated = true;
          break;
        }
      s->files++;
      if (v[i].size > s->max_size
          || rm->read (rm->ctx, abs, sr_files_remote_flags (w), s->max_size, &data, &len, NULL)
                 < 0)
        continue;
      search_buffer (s, data, len, abs);
    }
  sr_artifacts_free (v, n);
  return 0;
}

int
sr_files_search (const struct sr_fsroot *r, const char *pattern, const char *glob,
                 const char *dir, uint64_t max_size, size_t max_matches,
                 struct sr_file_match **ret, size_t *ret_n, bool *ret_truncated,
                 sr_error_t *err)
{
  struct search s = { .glob = glob && *glob ? glob : NULL, .max_size = max_size,
                      .max_matches = max_matches };
  _cleanup_close_ int pathfd = -1;
  struct sr_files_where w = { 0 };
  struct stat st;
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
  if (sr_files_parse_path (r, dir && *dir ? dir : SR_DATA_DIR, false, &w, err) < 0)
    goto out_re;
  if (r->remote)
    {
      if (remote_search (r->remote, &s, &w, err) < 0)
        goto out;
      goto done;
    }
  pathfd = sr_files_open_in (w.dirfd, w.rel, O_PATH);
  if (pathfd < 0)
    {
      if (errno == ELOOP)
        sr_error_set_code (err, "path_outside_sandbox", errno,
                           "%s: a symlink on the way loops or is a magic link", w.abs);
      else
        sr_files_fail_errno (err, errno, "open %s", w.abs);
      goto out;
    }
  if (fstat (pathfd, &st) < 0)
    {
      sr_files_fail_errno (err, errno, "fstat %s", w.abs);
      goto out;
    }
  if (S_ISREG (st.st_mode))
    {
      /* One file named: searched whatever the glob says.  */
      if (sr_files_check_fs (pathfd, false, w.abs, err) < 0)
        goto out;
      search_file (&s, pathfd, w.abs);
    }
  else if (S_ISDIR (st.st_mode))
    {
      char proc[64];
      int dfd;

      if (sr_files_check_fs (pathfd, false, w.abs, err) < 0)
        goto out;
      snprintf (proc, sizeof proc, "/proc/self/fd/%d", pathfd);
      dfd = open (proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0)
        {
          sr_files_fail_errno (err, errno, "open %s", w.abs);
          goto out;
        }
      search_dir (&s, dfd, w.abs, 1);
    }
  else
    {
      sr_error_set_code (err, "not_a_file", 0, "%s is %s", w.abs, sr_files_kind_of (st.st_mode));
      goto out;
    }
done:
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
