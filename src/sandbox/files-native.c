/* The native backend's file primitives (struct sr_fs_ops): a container's
 * files reached from the host through its root and data directory fds,
 * every path resolved with openat2 below one of them (files-path.c) and
 * every write made as the container's root (files-write.c).  */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "runtime/container.h"
#include "sandbox/files-internal.h"

/* abs (validated and absolute) as what it is resolved against: the data
 * directory for a path given inside it (SR_FS_DATA), else the root.  */
static void
where_of (const struct sr_fs_native *n, const char *abs, unsigned flags,
          struct sr_files_where *w)
{
  const size_t data_len = sizeof SR_DATA_DIR - 1;

  w->data = (flags & SR_FS_DATA) != 0;
  w->dirfd = w->data ? n->datafd : n->rootfd;
  if (w->data)
    w->rel = sr_xstrdup (abs + data_len + (abs[data_len] == '/'));
  else
    w->rel = sr_xstrdup (abs + 1);
  w->abs = sr_xstrdup (abs);
}

/* The file itself, to be replaced: its parent must be a writable area, and
 * a symlink at its name is not followed.  */
static int
read_itself (const struct sr_files_where *w, uint64_t max, char **ret, size_t *ret_len,
             sr_error_t *err)
{
  _cleanup_close_ int parentfd = -1, pathfd = -1, fd = -1;
  const char *name;
  struct stat st;

  if (sr_files_open_parent (w, 0, &parentfd, &name, err) < 0
      || sr_files_check_fs (parentfd, true, w->abs, err) < 0)
    return -1;
  pathfd = openat (parentfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (pathfd < 0)
    return sr_files_fail_errno (err, errno, "open %s", w->abs);
  fd = sr_files_reopen_regular (pathfd, w->abs, &st, err);
  if (fd < 0)
    return -1;
  return sr_files_read_sized (fd, &st, max, w->abs, ret, ret_len, err);
}

/* The first max bytes of the file.  */
static int
read_head (const struct sr_files_where *w, uint64_t max, char **ret, size_t *ret_len,
           sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *buf = sr_xmalloc (max + 1);
  struct stat st;
  size_t len = 0;

  fd = sr_files_open_regular (w, &st, err);
  if (fd < 0)
    return -1;
  while (len < max)
    {
      ssize_t r = read (fd, buf + len, max - len);

      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return sr_files_fail_errno (err, errno, "read %s", w->abs);
      if (r == 0)
        break;
      len += (size_t) r;
    }
  buf[len] = '\0';
  *ret = TAKE_PTR (buf);
  *ret_len = len;
  return 0;
}

static int
native_read (void *ctx, const char *abs, unsigned flags, uint64_t max, char **ret,
             size_t *ret_len, sr_error_t *err)
{
  struct sr_files_where w = { 0 };
  int r;

  where_of (ctx, abs, flags, &w);
  if (flags & SR_FS_NOFOLLOW)
    r = read_itself (&w, max, ret, ret_len, err);
  else if (flags & SR_FS_HEAD)
    r = read_head (&w, max, ret, ret_len, err);
  else
    r = sr_files_open_and_read (&w, max, ret, ret_len, err);
  sr_files_where_done (&w);
  return r;
}

struct write_call
{
  const struct sr_fs_native *n;
  const struct sr_files_where *w;
  const void *buf;
  size_t len;
  bool overwrite;
  char tmp[SR_FILES_TMP_LEN];
};

static int
write_call (void *arg, sr_error_t *err)
{
  const struct write_call *c = arg;

  return sr_files_write_path (c->n, c->w, c->buf, c->len, c->overwrite, c->tmp, err);
}

static int
native_write (void *ctx, const char *abs, unsigned flags, const void *buf, size_t len,
              bool overwrite, sr_error_t *err)
{
  const struct sr_fs_native *n = ctx;
  struct sr_files_where w = { 0 };
  struct write_call c = { .n = n, .w = &w, .buf = buf, .len = len, .overwrite = overwrite };
  int r;

  where_of (ctx, abs, flags, &w);
  if (sr_files_temp_name (c.tmp) < 0)
    r = sr_error_set (err, errno, "getrandom");
  else if (n->charge_to)
    {
      /* The temp name is ours, not the writer's: when the memory limit
       * kills the writer after it named the file, it is removed here.  */
      r = n->as_user ? sr_container_charged_as (n->charge_to, n->user_uid, n->user_gid, len,
                                                write_call, &c, err)
                     : sr_container_charged (n->charge_to, len, write_call, &c, err);
      if (r < 0)
        sr_files_drop_temp (n, &w, c.tmp);
    }
  else
    r = write_call (&c, err);
  sr_files_where_done (&w);
  return r;
}

static int
native_open (void *ctx, const char *abs, unsigned flags, uint64_t *ret_size, sr_error_t *err)
{
  struct sr_files_where w = { 0 };
  struct stat st;
  int fd;

  where_of (ctx, abs, flags, &w);
  fd = sr_files_open_regular (&w, &st, err);
  sr_files_where_done (&w);
  if (fd >= 0)
    *ret_size = (uint64_t) st.st_size;
  return fd;
}

/* --- walking --- */

struct walk
{
  sr_fs_visit_fn visit;
  void *userdata;
  unsigned max_depth;
  int cancel_fd;
  bool stopped;       /* visit asked to stop, or cancel_fd did */
  bool cancelled;
  bool truncated;     /* deeper directories were left out */
};

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* What visit gets of a regular file.  */
static struct sr_fs_entry
entry_of (const char *rel, const struct stat *st)
{
  return (struct sr_fs_entry){
    .rel = rel, .size = (uint64_t) st->st_size,
    .mtime_ns = (int64_t) st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
    .dev = (uint64_t) st->st_dev, .ino = (uint64_t) st->st_ino,
  };
}

/* Walks dfd (taken over), prefix below the top, in name order.
 * Subdirectories are opened one name at a time with O_NOFOLLOW: symlinks
 * are never followed, so the walk stays below its top; kernel file
 * systems (a /proc under a walked /) are not entered.  Entries that vanish
 * or cannot be opened meanwhile are left out.  */
static void
walk_dir (struct walk *wk, int dfd, const char *prefix, unsigned depth)
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
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0
        && strncmp (de->d_name, SR_FILES_TMP_PREFIX, sizeof SR_FILES_TMP_PREFIX - 1) != 0)
      sr_strv_push (&names, de->d_name);
  if (names)
    qsort (names, sr_strv_length (names), sizeof *names, compare_names);
  for (size_t i = 0; names && names[i] && !wk->stopped; i++)
    {
      _cleanup_free_ char *rel = *prefix ? sr_xasprintf ("%s/%s", prefix, names[i])
                                         : sr_xstrdup (names[i]);
      struct stat st;
      int sub;

      if (sr_cancel_requested (wk->cancel_fd))
        {
          wk->stopped = wk->cancelled = true;
          break;
        }
      if (fstatat (dirfd (d), names[i], &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (S_ISREG (st.st_mode))
        {
          struct sr_fs_entry e = entry_of (rel, &st);

          wk->stopped = wk->visit (wk->userdata, &e) != 0;
          continue;
        }
      if (!S_ISDIR (st.st_mode))
        continue;
      if (depth >= wk->max_depth)
        {
          wk->truncated = true;
          continue;
        }
      sub = openat (dirfd (d), names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0)
        continue;
      if (sr_files_check_fs (sub, false, rel, NULL) < 0)
        {
          close (sub);
          continue;
        }
      walk_dir (wk, sub, rel, depth + 1);
    }
  closedir (d);
}

static int
native_walk (void *ctx, const char *abs, unsigned flags, unsigned max_depth, int cancel_fd,
             sr_fs_visit_fn visit, void *userdata, bool *ret_truncated, sr_error_t *err)
{
  struct walk wk = { .visit = visit, .userdata = userdata, .max_depth = max_depth,
                     .cancel_fd = cancel_fd };
  struct sr_files_where w = { 0 };
  _cleanup_close_ int pathfd = -1;
  struct stat st;
  int r = -1;

  where_of (ctx, abs, flags, &w);
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
  if (!S_ISREG (st.st_mode) && !S_ISDIR (st.st_mode))
    {
      sr_error_set_code (err, "not_a_file", 0, "%s is %s", w.abs, sr_files_kind_of (st.st_mode));
      goto out;
    }
  if (sr_files_check_fs (pathfd, false, w.abs, err) < 0)
    goto out;
  if (S_ISREG (st.st_mode))
    {
      struct sr_fs_entry e = entry_of ("", &st);

      (void) visit (userdata, &e);
    }
  else
    {
      char proc[64];
      int dfd;

      snprintf (proc, sizeof proc, "/proc/self/fd/%d", pathfd);
      dfd = open (proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0)
        {
          sr_files_fail_errno (err, errno, "open %s", w.abs);
          goto out;
        }
      walk_dir (&wk, dfd, "", 1);
    }
  if (wk.cancelled)
    {
      sr_error_set_code (err, "cancelled", ECANCELED, "walking %s: cancelled", w.abs);
      goto out;
    }
  *ret_truncated = wk.truncated;
  r = 0;
out:
  sr_files_where_done (&w);
  return r;
}

const struct sr_fs_ops sr_fs_native_ops = {
  .read = native_read,
  .write = native_write,
  .walk = native_walk,
  .open = native_open,
};
