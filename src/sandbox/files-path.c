/* Paths inside a session's container, reached from the host: where a
 * path resolves, what it may open, and reading a regular file.
 *
 * The container's processes own everything in their tree and may change
 * it at any moment, so no path is ever resolved by the host's lookup: each
 * one goes through openat2 with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
 * against the session's root or data directory, or one component at a
 * time with O_NOFOLLOW below a directory so resolved.  What gets opened is
 * checked on the open fd, never by path.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/files-internal.h"

static const char *
code_of_errno (int e)
{
  switch (e)
    {
    case ENOENT:
    case ENOTDIR:
      return "not_found";
    /* From RESOLVE_*: a magic link on the way, or a ".." that raced a
     * rename; read-only mounts are outside what a session may write.  */
    case ELOOP:
    case EXDEV:
    case EROFS:
      return "path_outside_sandbox";
    case ENOSPC:
    case EDQUOT:
      return "quota_exceeded";
    case EISDIR:
      return "not_a_file";
    case EEXIST:
      return "file_exists";
    case ENAMETOOLONG:
      return "invalid_path";
    case EFBIG:
      return "file_too_large";
    default:
      return "io_error";
    }
}

int
sr_files_fail_errno (sr_error_t *err, int errnum, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  sr_error_setv (err, errnum, fmt, ap);
  va_end (ap);
  return sr_error_recode (err, code_of_errno (errnum));
}

void
sr_files_where_done (struct sr_files_where *w)
{
  free (w->rel);
  free (w->abs);
}

/* Validates path and decides what it is resolved against.  Empty
 * components ("a//b", a trailing '/') are dropped; "." and ".." are
 * refused rather than interpreted, so the path the caller sees in a
 * result is the path that was opened.  */
int
sr_files_parse_path (const char *path, bool artifact, struct sr_files_where *w,
                     sr_error_t *err)
{
  const char *data_rel = SR_DATA_DIR + 1;
  const size_t data_len = sizeof SR_DATA_DIR - 2;
  _cleanup_free_ char *norm = NULL;
  size_t len, n = 0;
  const char *p;

  if (path == NULL || *path == '\0')
    return sr_error_set_code (err, "invalid_path", 0, "the path is empty");
  len = strlen (path);
  if (len >= PATH_MAX)
    return sr_error_set_code (err, "invalid_path", 0, "the path is longer than %d bytes",
                              PATH_MAX - 1);
  norm = sr_xmalloc (len + 1);
  for (p = path; *p;)
    {
      size_t clen;

      while (*p == '/')
        p++;
      clen = strcspn (p, "/");
      if (clen == 0)
        break;
      if ((clen == 1 && p[0] == '.') || (clen == 2 && p[0] == '.' && p[1] == '.'))
        return sr_error_set_code (err, "invalid_path", 0,
                                  "%s: '.' and '..' are not allowed in a path",
                                  path);
      if (clen > NAME_MAX)
        return sr_error_set_code (err, "invalid_path", 0, "%s: a name is longer than %d bytes",
                                  path,
                                  NAME_MAX);
      if (n)
        norm[n++] = '/';
      memcpy (norm + n, p, clen);
      n += clen;
      p += clen;
    }
  norm[n] = '\0';

  w->dirfd = -1;
  if (path[0] != '/')
    {
      w->data = true;
      w->rel = TAKE_PTR (norm);
    }
  else if (strncmp (norm, data_rel, data_len) == 0
           && (norm[data_len] == '\0' || norm[data_len] == '/'))
    {
      w->data = true;
      w->rel = sr_xstrdup (norm + data_len + (norm[data_len] == '/'));
    }
  else if (artifact)
    return sr_error_set_code (err, "path_outside_sandbox", 0,
                              "%s is outside %s: artifacts live in the session's data directory",
                              path, SR_DATA_DIR);
  else
    {
      w->data = false;
      w->rel = TAKE_PTR (norm);
    }
  if (w->data)
    w->abs = *w->rel ? sr_xasprintf ("%s/%s", SR_DATA_DIR, w->rel) : sr_xstrdup (SR_DATA_DIR);
  else
    w->abs = sr_xasprintf ("/%s", w->rel);
  return 0;
}

/* The one way a path under rootfd or datafd is opened.  */
int
sr_files_open_in (int dirfd, const char *rel, int flags)
{
  return sr_openat2 (dirfd, rel, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

const char *
sr_files_kind_of (mode_t m)
{
  if (S_ISDIR (m))
    return "a directory";
  if (S_ISFIFO (m))
    return "a FIFO";
  if (S_ISCHR (m) || S_ISBLK (m))
    return "a device";
  if (S_ISSOCK (m))
    return "a socket";
  if (S_ISLNK (m))
    return "a symbolic link";
  return "not a regular file";
}

/* Kernel interfaces are never read or written through a session, even
 * where the container can see them; nor is FUSE, whose server could be
 * the container's and stall the host's reads for as long as it likes.  */
static bool
refused_fs (unsigned long type)
{
  switch (type)
    {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case BPF_FS_MAGIC:
    case FUSE_SUPER_MAGIC:
      return true;
    default:
      return false;
    }
}

/* Checks the file system under fd: never a kernel interface; for a write,
 * a writable tmpfs (the session's own /mnt/data, /tmp, /work, /scratch) and not the
 * image's rootfs.  */
int
sr_files_check_fs (int fd, bool for_write, const char *abs, sr_error_t *err)
{
  struct statfs sf;

  if (fstatfs (fd, &sf) < 0)
    return sr_files_fail_errno (err, errno, "fstatfs %s", abs);
  if (refused_fs ((unsigned long) sf.f_type))
    return sr_error_set_code (err, "path_outside_sandbox", 0,
                              "%s is on procfs, sysfs or another file system that sessions do "
                              "not serve",
                              abs);
  if (for_write && ((unsigned long) sf.f_type != TMPFS_MAGIC || (sf.f_flags & ST_RDONLY)))
    return sr_error_set_code (err, "path_outside_sandbox", 0,
                              "%s is not in a writable area of the session (%s, /tmp, %s, %s)",
                              abs, SR_DATA_DIR, SR_SCRATCH_DIR, SR_CODE_DIR);
  return 0;
}

/* Turns an O_PATH fd into a readable one, only for a regular file: a
 * FIFO, device or socket is never opened for real (it could block, or do
 * something on open).  The reopen through /proc/self/fd reaches the same
 * inode whatever happens to the path meanwhile.  */
int
sr_files_reopen_regular (int pathfd, const char *abs, struct stat *st, sr_error_t *err)
{
  char proc[64];
  int fd;

  if (fstat (pathfd, st) < 0)
    return sr_files_fail_errno (err, errno, "fstat %s", abs);
  if (!S_ISREG (st->st_mode))
    return sr_error_set_code (err, "not_a_file", 0, "%s is %s, not a regular file", abs,
                              sr_files_kind_of (st->st_mode));
  if (sr_files_check_fs (pathfd, false, abs, err) < 0)
    return -1;
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", pathfd);
  fd = open (proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return sr_files_fail_errno (err, errno, "open %s", abs);
  return fd;
}

/* Opens the regular file w names for reading.  */
int
sr_files_open_regular (const struct sr_files_where *w, struct stat *st, sr_error_t *err)
{
  _cleanup_close_ int pathfd = sr_files_open_in (w->dirfd, w->rel, O_PATH);

  if (pathfd < 0)
    {
      if (errno == ELOOP)
        return sr_error_set_code (err, "path_outside_sandbox", errno,
                                  "%s: a symlink on the way leaves the session, loops, or is a "
                                  "magic link",
                                  w->abs);
      return sr_files_fail_errno (err, errno, "open %s", w->abs);
    }
  return sr_files_reopen_regular (pathfd, w->abs, st, err);
}

/* Reads all of fd, at most max bytes (file_too_large past it), into a
 * NUL-terminated buffer.  The size is checked while reading as well: the
 * container may grow the file after fstat.  */
static int
read_all (int fd, uint64_t max, const char *abs, char **ret, size_t *ret_len,
                   sr_error_t *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0, cap = 0;

  for (;;)
    {
      ssize_t n;

      if (cap - len < 4096)
        {
          cap = cap ? cap * 2 : 16384;
          buf = sr_xrealloc (buf, cap + 1);
        }
      n = read (fd, buf + len, cap - len);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return sr_files_fail_errno (err, errno, "read %s", abs);
        }
      if (n == 0)
        break;
      len += (size_t) n;
      if (len > max)
        return sr_error_set_code (err, "file_too_large", 0,
                                  "%s is over the limit of %" PRIu64 " bytes",
                                  abs, max);
    }
  buf[len] = '\0';
  *ret = TAKE_PTR (buf);
  *ret_len = len;
  return 0;
}

int
sr_files_read_sized (int fd, const struct stat *st, uint64_t max, const char *abs, char **ret,
                     size_t *ret_len, sr_error_t *err)
{
  if ((uint64_t) st->st_size > max)
    return sr_error_set_code (err, "file_too_large", 0,
                              "%s is %lld bytes, over the limit of %" PRIu64 " bytes", abs,
                              (long long) st->st_size, max);
  return read_all (fd, max, abs, ret, ret_len, err);
}

int
sr_files_open_and_read (const struct sr_files_where *w, uint64_t max, char **ret, size_t *ret_len,
                        sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  struct stat st;

  fd = sr_files_open_regular (w, &st, err);
  if (fd < 0)
    return -1;
  return sr_files_read_sized (fd, &st, max, w->abs, ret, ret_len, err);
}

unsigned
sr_files_where_flags (const struct sr_files_where *w)
{
  return w->data ? SR_FS_DATA : 0;
}
