/* Files inside a session's container, reached from the host: artifacts
 * (upload, list, read, download, MIME) and the file tools (read lines,
 * write, patch, search).
 *
 * The container's processes own everything in their tree and may change
 * it at any moment, so no path is ever resolved by the host's lookup: each
 * one goes through openat2 with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS
 * against the session's root or data directory, or one component at a
 * time with O_NOFOLLOW below a directory so resolved.  What gets opened is
 * checked on the open fd, never by path.  */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <dlfcn.h>
#include <magic.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/files.h"

/* How much of a file libmagic sees, and how much of it decides "binary"
 * for file_search.  */
#define MIME_PEEK       (64u * 1024u)
#define BINARY_PEEK     8192u
#define MATCH_TEXT_MAX  500u
/* Temp files of an atomic write start with this; listings skip them.  */
#define TMP_PREFIX      ".sr-tmp-"

/* --- errors --- */

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

/* An error from errno, with the code that errno means here.  */
static int __attribute__ ((format (printf, 3, 4)))
fail_errno (sr_error_t *err, int errnum, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  sr_error_setv (err, errnum, fmt, ap);
  va_end (ap);
  return sr_error_recode (err, code_of_errno (errnum));
}

/* --- paths --- */

/* A path inside the container, split into the directory fd it is
 * resolved against and the rest.  */
struct where
{
  int dirfd;    /* r->rootfd or r->datafd; not owned */
  bool data;    /* dirfd is the data directory */
  char *rel;    /* normalised, relative to dirfd; "" for dirfd itself */
  char *abs;    /* absolute inside the container, for messages and results */
};

static void
where_done (struct where *w)
{
  free (w->rel);
  free (w->abs);
}

/* Validates path and decides what it is resolved against.  Empty
 * components ("a//b", a trailing '/') are dropped; "." and ".." are
 * refused rather than interpreted, so the path the caller sees in a
 * result is the path that was opened.  */
static int
parse_path (const struct sr_fsroot *r, const char *path, bool artifact, struct where *w,
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

  if (path[0] != '/')
    {
      w->dirfd = r->datafd;
      w->data = true;
      w->rel = TAKE_PTR (norm);
    }
  else if (strncmp (norm, data_rel, data_len) == 0
           && (norm[data_len] == '\0' || norm[data_len] == '/'))
    {
      w->dirfd = r->datafd;
      w->data = true;
      w->rel = sr_xstrdup (norm + data_len + (norm[data_len] == '/'));
    }
  else if (artifact)
    return sr_error_set_code (err, "path_outside_sandbox", 0,
                              "%s is outside %s: artifacts live in the session's data directory",
                              path, SR_DATA_DIR);
  else
    {
      w->dirfd = r->rootfd;
      w->data = false;
      w->rel = TAKE_PTR (norm);
    }
  if (w->data)
    w->abs = *w->rel ? sr_xasprintf ("%s/%s", SR_DATA_DIR, w->rel) : sr_xstrdup (SR_DATA_DIR);
  else
    w->abs = sr_xasprintf ("/%s", w->rel);
  return 0;
}

/* The one way a path under rootfd or datafd is opened.  EAGAIN is the
 * kernel noticing a rename racing a ".." walk; trying again is safe.  */
static int
open_in (int dirfd, const char *rel, int flags)
{
  struct open_how how = {
    .flags = (uint64_t) (flags | O_CLOEXEC),
    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
  };

  for (int i = 0; i < 64; i++)
    {
      int fd = (int) syscall (SYS_openat2, dirfd, *rel ? rel : ".", &how, sizeof how);

      if (fd >= 0 || errno != EAGAIN)
        return fd;
    }
  return -1;
}

static const char *
kind_of (mode_t m)
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
 * a writable tmpfs (the session's own /mnt/data, /tmp, /work) and not the
 * image's rootfs.  */
static int
check_fs (int fd, bool for_write, const char *abs, sr_error_t *err)
{
  struct statfs sf;

  if (fstatfs (fd, &sf) < 0)
    return fail_errno (err, errno, "fstatfs %s", abs);
  if (refused_fs ((unsigned long) sf.f_type))
    return sr_error_set_code (err, "path_outside_sandbox", 0,
                              "%s is on procfs, sysfs or another file system that sessions do "
                              "not serve",
                              abs);
  if (for_write && ((unsigned long) sf.f_type != TMPFS_MAGIC || (sf.f_flags & ST_RDONLY)))
    return sr_error_set_code (err, "path_outside_sandbox", 0,
                              "%s is not in a writable area of the session (%s, /tmp, %s)", abs,
                              SR_DATA_DIR, SR_SCRATCH_DIR);
  return 0;
}

/* Turns an O_PATH fd into a readable one, only for a regular file: a
 * FIFO, device or socket is never opened for real (it could block, or do
 * something on open).  The reopen through /proc/self/fd reaches the same
 * inode whatever happens to the path meanwhile.  */
static int
reopen_regular (int pathfd, const char *abs, struct stat *st, sr_error_t *err)
{
  char proc[64];
  int fd;

  if (fstat (pathfd, st) < 0)
    return fail_errno (err, errno, "fstat %s", abs);
  if (!S_ISREG (st->st_mode))
    return sr_error_set_code (err, "not_a_file", 0, "%s is %s, not a regular file", abs,
                              kind_of (st->st_mode));
  if (check_fs (pathfd, false, abs, err) < 0)
    return -1;
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", pathfd);
  fd = open (proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return fail_errno (err, errno, "open %s", abs);
  return fd;
}

/* Opens the regular file w names for reading.  */
static int
open_regular (const struct where *w, struct stat *st, sr_error_t *err)
{
  _cleanup_close_ int pathfd = open_in (w->dirfd, w->rel, O_PATH);

  if (pathfd < 0)
    {
      if (errno == ELOOP)
        return sr_error_set_code (err, "path_outside_sandbox", errno,
                                  "%s: a symlink on the way leaves the session, loops, or is a "
                                  "magic link",
                                  w->abs);
      return fail_errno (err, errno, "open %s", w->abs);
    }
  return reopen_regular (pathfd, w->abs, st, err);
}

/* Reads all of fd, at most max bytes (file_too_large past it), into a
 * NUL-terminated buffer.  The size is checked while reading as well: the
 * container may grow the file after fstat.  */
static int
read_all (int fd, uint64_t max, const char *abs, char **ret, size_t *ret_len, sr_error_t *err)
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
          return fail_errno (err, errno, "read %s", abs);
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

static int
open_and_read (const struct where *w, uint64_t max, char **ret, size_t *ret_len,
               sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  struct stat st;

  fd = open_regular (w, &st, err);
  if (fd < 0)
    return -1;
  if ((uint64_t) st.st_size > max)
    return sr_error_set_code (err, "file_too_large", 0,
                              "%s is %lld bytes, over the limit of %" PRIu64 " bytes", w->abs,
                              (long long) st.st_size, max);
  return read_all (fd, max, w->abs, ret, ret_len, err);
}

/* --- writing --- */

/* A tmpfs the container mounted belongs to its user namespace, and the
 * kernel creates an inode there only for a caller whose fsuid and fsgid
 * are mapped in it (EOVERFLOW otherwise): host root is not.  So the steps
 * that create (mkdir, the temp file, the rename onto a new name) run with
 * this thread's fsuid and fsgid set to the container's root.  That makes
 * it the owner of what is created, and drops the capabilities file access
 * would use, so the kernel checks permissions as for the container's root.
 * Per thread: the server's other threads are not affected.  Not needed
 * when the runner is not root: its own uid is the container's root.  */
struct fsid
{
  const struct sr_fsroot *r;
  bool switched;
  uid_t uid;    /* what to go back to */
  gid_t gid;
};

static void
fsid_enter (const struct sr_fsroot *r, struct fsid *s)
{
  s->r = r;
  s->switched = geteuid () == 0 && (r->uid != 0 || r->gid != 0);
  if (!s->switched)
    return;
  s->gid = (gid_t) setfsgid (r->gid);
  s->uid = (uid_t) setfsuid (r->uid);
}

static void
fsid_leave (struct fsid *s)
{
  if (!s->switched)
    return;
  setfsuid (s->uid);
  setfsgid (s->gid);
  s->switched = false;
}

/* Creates directory name under parentfd (a tmpfs of the session), as the
 * container's root (fsid_enter is in effect).  An existing directory is
 * fine.  */
static int
make_dir (int parentfd, const char *name, const char *abs, sr_error_t *err)
{
  _cleanup_close_ int fd = -1;

  if (check_fs (parentfd, true, abs, err) < 0)
    return -1;
  if (mkdirat (parentfd, name, 0755) < 0)
    {
      if (errno == EEXIST)
        return 0;
      return fail_errno (err, errno, "mkdir %s", abs);
    }
  /* The umask may have taken bits away.  O_NOFOLLOW on the one name:
   * what gets chmod'ed is the entry just made (or a directory that
   * replaced it there), never a symlink's target.  */
  fd = openat (parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return fail_errno (err, errno, "open %s", abs);
  if (fchmod (fd, 0755) < 0)
    return fail_errno (err, errno, "chmod %s", abs);
  return 0;
}

/* Opens the directory holding w's last component (*ret_name, pointing
 * into w->rel), creating the missing ones when create.  Each prefix is
 * resolved again from w->dirfd, so a component the container swaps for a
 * symlink meanwhile still resolves inside the session.  */
static int
open_parent (const struct where *w, bool create, int *ret_fd, const char **ret_name,
             sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  char *rel = w->rel;
  char *last = strrchr (rel, '/');
  size_t abs_base = strlen (w->abs) - strlen (rel);

  if (*rel == '\0')
    return sr_error_set_code (err, "not_a_file", 0, "%s is a directory", w->abs);
  fd = open_in (w->dirfd, "", O_PATH | O_DIRECTORY);
  if (fd < 0)
    return fail_errno (err, errno, "open %s", w->data ? SR_DATA_DIR : "/");
  for (char *slash = strchr (rel, '/'); last && slash && slash <= last;
       slash = strchr (slash + 1, '/'))
    {
      _cleanup_free_ char *abs = NULL;
      char *comp = slash;
      int next;

      while (comp > rel && comp[-1] != '/')
        comp--;
      *slash = '\0';
      abs = sr_xasprintf ("%.*s%s", (int) abs_base, w->abs, rel);
      next = open_in (w->dirfd, rel, O_PATH | O_DIRECTORY);
      if (next < 0 && errno == ENOENT && create)
        {
          if (make_dir (fd, comp, abs, err) < 0)
            {
              *slash = '/';
              return -1;
            }
          next = open_in (w->dirfd, rel, O_PATH | O_DIRECTORY);
        }
      *slash = '/';
      if (next < 0)
        {
          if (errno == ELOOP)
            return sr_error_set_code (err, "path_outside_sandbox", errno,
                                      "%s: a symlink on the way loops or is a magic link", abs);
          return fail_errno (err, errno, "open %s", abs);
        }
      close (fd);
      fd = next;
    }
  *ret_name = last ? last + 1 : rel;
  *ret_fd = TAKE_FD (fd);
  return 0;
}

/* Writes data as name in parentfd: a temp file in the same directory,
 * renamed over name, so a reader sees the old or the new content, never
 * a part.  A symlink at name is replaced, not followed.  A file replaced
 * keeps its mode and owner; a new one belongs to the container's root.
 * Runs as the container's root (fsid_enter is in effect, fs).  */
static int
write_atomic (struct fsid *fs, int parentfd, const char *name, const char *abs,
              const void *data, size_t len, bool overwrite, sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  char tmp[sizeof TMP_PREFIX + 16];
  mode_t mode = 0644;
  bool keep_owner = false;
  struct stat st;
  int e;

  if (fstatat (parentfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (!S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode))
        return sr_error_set_code (err, "not_a_file", 0, "%s is %s, not a regular file", abs,
                                  kind_of (st.st_mode));
      if (!overwrite)
        return sr_error_set_code (err, "file_exists", 0,
                                  "%s exists (ask for overwrite to replace it)",
                                  abs);
      if (S_ISREG (st.st_mode))
        {
          mode = st.st_mode & 0777;
          keep_owner = true;
        }
    }
  else if (errno != ENOENT)
    return fail_errno (err, errno, "stat %s", abs);
  if (check_fs (parentfd, true, abs, err) < 0)
    return -1;

  for (int i = 0; fd < 0; i++)
    {
      uint64_t rnd;

      if (getrandom (&rnd, sizeof rnd, 0) != sizeof rnd)
        return fail_errno (err, errno, "getrandom");
      snprintf (tmp, sizeof tmp, TMP_PREFIX "%016" PRIx64, rnd);
      fd = openat (parentfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0 && (errno != EEXIST || i > 8))
        return fail_errno (err, errno, "create a temp file beside %s", abs);
    }
  if (fchmod (fd, mode) < 0)
    goto fail;
  if (keep_owner && geteuid () == 0)
    {
      struct stat tst;

      /* Giving the file away takes CAP_CHOWN, which the switched fsuid
       * does not carry: host root's, for this one call.  */
      if (fstat (fd, &tst) < 0)
        goto fail;
      if (tst.st_uid != st.st_uid || tst.st_gid != st.st_gid)
        {
          bool switched = fs->switched;
          int r;

          fsid_leave (fs);
          r = fchown (fd, st.st_uid, st.st_gid);
          e = errno;
          if (switched)
            fsid_enter (fs->r, fs);
          errno = e;
          if (r < 0)
            goto fail;
        }
    }
  if (sr_write_all (fd, data, len) < 0)
    goto fail;
  if (close (TAKE_FD (fd)) < 0 && errno != EINTR)
    goto fail;
  /* RENAME_NOREPLACE: a file the container creates at name after the
   * check above is not clobbered either.  */
  if (renameat2 (parentfd, tmp, parentfd, name, overwrite ? 0 : RENAME_NOREPLACE) < 0)
    {
      e = errno;
      unlinkat (parentfd, tmp, 0);
      if (e == EEXIST)
        return sr_error_set_code (err, "file_exists", 0,
                                  "%s exists (ask for overwrite to replace it)",
                                  abs);
      if (e == EISDIR || e == ENOTEMPTY)
        return sr_error_set_code (err, "not_a_file", 0, "%s is a directory", abs);
      return fail_errno (err, e, "rename into %s", abs);
    }
  return 0;

fail:
  e = errno;
  unlinkat (parentfd, tmp, 0);
  return fail_errno (err, e, "write %s", abs);
}

static int
write_path (const struct sr_fsroot *r, const struct where *w, const void *data, size_t len,
            bool overwrite, sr_error_t *err)
{
  _cleanup_close_ int parentfd = -1;
  struct fsid fs;
  const char *name;
  int ret;

  fsid_enter (r, &fs);
  ret = open_parent (w, true, &parentfd, &name, err);
  if (ret == 0)
    ret = write_atomic (&fs, parentfd, name, w->abs, data, len, overwrite, err);
  fsid_leave (&fs);
  return ret;
}

/* --- MIME --- */

/* libmagic is opened on the first MIME type asked for, not linked: the
 * light binary, which runs every one-shot container, would otherwise load
 * it and its three compression libraries at each start.  One cookie for
 * the process: loading the database is costly and a cookie is not
 * thread-safe, hence the lock.  */
static pthread_mutex_t magic_lock = PTHREAD_MUTEX_INITIALIZER;
static struct
{
  magic_t (*open) (int flags);
  int (*load) (magic_t cookie, const char *path);
  const char *(*buffer) (magic_t cookie, const void *buf, size_t len);
  void (*close) (magic_t cookie);
} magic_api;
static magic_t magic_cookie;
static bool magic_unavailable;

static bool
magic_api_load (void)
{
  void *lib = dlopen ("libmagic.so.1", RTLD_NOW | RTLD_LOCAL);

  if (lib == NULL)
    return false;
  magic_api.open = (magic_t (*) (int)) dlsym (lib, "magic_open");
  magic_api.load = (int (*) (magic_t, const char *)) dlsym (lib, "magic_load");
  magic_api.buffer = (const char *(*) (magic_t, const void *, size_t)) dlsym (lib, "magic_buffer");
  magic_api.close = (void (*) (magic_t)) dlsym (lib, "magic_close");
  if (magic_api.open && magic_api.load && magic_api.buffer && magic_api.close)
    return true;
  dlclose (lib);
  return false;
}

static char *
mime_of_buffer (const void *buf, size_t len)
{
  const char *m = NULL;
  char *ret;

  pthread_mutex_lock (&magic_lock);
  if (magic_cookie == NULL && !magic_unavailable)
    {
      if (magic_api_load ())
        {
          magic_cookie = magic_api.open (MAGIC_MIME_TYPE);
          if (magic_cookie && magic_api.load (magic_cookie, NULL) < 0)
            {
              magic_api.close (magic_cookie);
              magic_cookie = NULL;
            }
        }
      magic_unavailable = magic_cookie == NULL;
    }
  if (magic_cookie)
    m = magic_api.buffer (magic_cookie, buf, len);
  ret = sr_xstrdup (m && *m ? m : "application/octet-stream");
  pthread_mutex_unlock (&magic_lock);
  return ret;
}

/* From the start of the file with pread: the fd's offset stays where the
 * caller left it (an HTTP download reads the same fd).  */
char *
sr_files_mime (int fd)
{
  _cleanup_free_ char *buf = NULL;
  struct stat st;
  size_t len = 0;

  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return sr_xstrdup ("application/octet-stream");
  buf = sr_xmalloc (MIME_PEEK);
  while (len < MIME_PEEK)
    {
      ssize_t n = pread (fd, buf + len, MIME_PEEK - len, (off_t) len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  return mime_of_buffer (buf, len);
}

/* --- artifacts --- */

void
sr_artifacts_free (struct sr_artifact *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (v[i].path);
      free (v[i].mime_type);
    }
  free (v);
}

struct listing
{
  struct sr_artifact *v;
  size_t n, cap;
  bool truncated;
  bool with_mime;
};

static int
compare_artifacts (const void *a, const void *b)
{
  return strcmp (((const struct sr_artifact *) a)->path, ((const struct sr_artifact *) b)->path);
}

static char *
mime_at (int dfd, const char *name)
{
  _cleanup_close_ int pathfd = openat (dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  _cleanup_close_ int fd = -1;
  struct stat st;

  if (pathfd < 0)
    return sr_xstrdup ("application/octet-stream");
  fd = reopen_regular (pathfd, name, &st, NULL);
  if (fd < 0)
    return sr_xstrdup ("application/octet-stream");
  return sr_files_mime (fd);
}

/* Lists dfd (taken over) as prefix, depth levels below SR_DATA_DIR.
 * Subdirectories are opened one name at a time with O_NOFOLLOW: symlinks
 * are never followed, so the walk stays in the data directory.  Entries
 * that vanish or cannot be opened meanwhile are left out.  */
static int
list_dir (struct listing *l, int dfd, const char *prefix, unsigned depth, sr_error_t *err)
{
  DIR *d = fdopendir (dfd);
  struct dirent *de;
  int r = 0;

  if (d == NULL)
    {
      int e = errno;

      close (dfd);
      return fail_errno (err, e, "read the directory %s/%s", SR_DATA_DIR, prefix);
    }
  for (errno = 0; (de = readdir (d)) != NULL && !l->truncated; errno = 0)
    {
      _cleanup_free_ char *path = NULL;
      struct stat st;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0
          || strncmp (de->d_name, TMP_PREFIX, sizeof TMP_PREFIX - 1) == 0)
        continue;
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      path = *prefix ? sr_xasprintf ("%s/%s", prefix, de->d_name) : sr_xstrdup (de->d_name);
      if (S_ISREG (st.st_mode))
        {
          struct sr_artifact *a;

          if (l->n >= SR_MAX_ARTIFACTS)
            {
              l->truncated = true;
              break;
            }
          if (l->n == l->cap)
            {
              l->cap = l->cap ? l->cap * 2 : 64;
              l->v = sr_xrealloc (l->v, l->cap * sizeof *l->v);
            }
          a = &l->v[l->n++];
          a->path = TAKE_PTR (path);
          a->size = (uint64_t) st.st_size;
          a->mtime_ns = (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
          a->mime_type = l->with_mime ? mime_at (dirfd (d), de->d_name) : NULL;
        }
      else if (S_ISDIR (st.st_mode))
        {
          int sub;

          if (depth >= SR_MAX_ARTIFACT_DEPTH)
            {
              l->truncated = true;
              continue;
            }
          sub = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub < 0)
            continue;
          if (check_fs (sub, false, path, NULL) < 0)
            {
              close (sub);
              continue;
            }
          r = list_dir (l, sub, path, depth + 1, err);
          if (r < 0)
            break;
        }
    }
  if (r == 0 && de == NULL && errno != 0)
    r = fail_errno (err, errno, "read the directory %s/%s", SR_DATA_DIR, prefix);
  closedir (d);
  return r;
}

/* --- remote filesystems (sr_fs_remote) --- */

static unsigned
remote_flags (const struct where *w)
{
  return w->data ? SR_FS_DATA : 0;
}

/* The MIME type of a remote file, from its first MIME_PEEK bytes.  */
static char *
remote_mime (const struct sr_fs_remote *rm, const char *abs)
{
  _cleanup_free_ char *data = NULL;
  size_t len;

  if (rm->read (rm->ctx, abs, SR_FS_DATA | SR_FS_HEAD, MIME_PEEK, &data, &len, NULL) < 0)
    return sr_xstrdup ("application/octet-stream");
  return mime_of_buffer (data, len);
}

static int
remote_list (const struct sr_fs_remote *rm, bool with_mime, struct sr_artifact **ret,
             size_t *ret_n, bool *ret_truncated, sr_error_t *err)
{
  struct sr_artifact *v = NULL;
  size_t n = 0;
  bool truncated = false;

  if (rm->walk (rm->ctx, SR_DATA_DIR, SR_FS_DATA, SR_MAX_ARTIFACT_DEPTH, &v, &n, &truncated,
                err) < 0)
    return -1;
  if (n)
    qsort (v, n, sizeof *v, compare_artifacts);
  for (size_t i = 0; with_mime && i < n; i++)
    {
      _cleanup_free_ char *abs = sr_xasprintf ("%s/%s", SR_DATA_DIR, v[i].path);

      v[i].mime_type = remote_mime (rm, abs);
    }
  *ret = v;
  *ret_n = n;
  *ret_truncated = truncated;
  return 0;
}

int
sr_files_list (const struct sr_fsroot *r, bool with_mime, struct sr_artifact **ret,
               size_t *ret_n, bool *ret_truncated, sr_error_t *err)
{
  struct listing l = { .with_mime = with_mime };
  int dfd;

  if (r->remote)
    return remote_list (r->remote, with_mime, ret, ret_n, ret_truncated, err);
  dfd = openat (r->datafd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return fail_errno (err, errno, "open %s", SR_DATA_DIR);
  if (list_dir (&l, dfd, "", 1, err) < 0)
    {
      sr_artifacts_free (l.v, l.n);
      return -1;
    }
  if (l.n)
    qsort (l.v, l.n, sizeof *l.v, compare_artifacts);
  *ret = l.v;
  *ret_n = l.n;
  *ret_truncated = l.truncated;
  return 0;
}

static void
copy_artifact (struct sr_artifact *to, const struct sr_artifact *from)
{
  to->path = sr_xstrdup (from->path);
  to->size = from->size;
  to->mtime_ns = from->mtime_ns;
  to->mime_type = from->mime_type ? sr_xstrdup (from->mime_type) : NULL;
}

void
sr_artifacts_changed (const struct sr_artifact *before, size_t n_before,
                      const struct sr_artifact *after, size_t n_after, struct sr_artifact **ret,
                      size_t *ret_n)
{
  struct sr_artifact *v = NULL;
  size_t n = 0, i = 0;

  for (size_t j = 0; j < n_after; j++)
    {
      int c = 1;

      while (i < n_before && (c = strcmp (before[i].path, after[j].path)) < 0)
        i++;
      if (i < n_before && c == 0 && before[i].size == after[j].size
          && before[i].mtime_ns == after[j].mtime_ns)
        continue;
      if (v == NULL)
        v = sr_xcalloc (n_after, sizeof *v);
      copy_artifact (&v[n++], &after[j]);
    }
  *ret = v;
  *ret_n = n;
}

int
sr_files_upload (const struct sr_fsroot *r, const char *path, const void *data, size_t len,
                 bool overwrite, char **ret_path, sr_error_t *err)
{
  struct where w = { 0 };
  int ret;

  if (parse_path (r, path, true, &w, err) < 0)
    return -1;
  if (r->remote)
    ret = r->remote->write (r->remote->ctx, w.abs, SR_FS_DATA, data, len, overwrite, err);
  else
    ret = write_path (r, &w, data, len, overwrite, err);
  if (ret == 0 && ret_path)
    *ret_path = TAKE_PTR (w.abs);
  where_done (&w);
  return ret;
}

int
sr_files_read_artifact (const struct sr_fsroot *r, const char *path, uint64_t max_size,
                        char **ret_data, size_t *ret_len, char **ret_mime, sr_error_t *err)
{
  struct where w = { 0 };
  char *data;
  size_t len;
  int ret;

  if (parse_path (r, path, true, &w, err) < 0)
    return -1;
  if (r->remote)
    ret = r->remote->read (r->remote->ctx, w.abs, SR_FS_DATA, max_size, &data, &len, err);
  else
    ret = open_and_read (&w, max_size, &data, &len, err);
  where_done (&w);
  if (ret < 0)
    return -1;
  if (ret_mime)
    *ret_mime = mime_of_buffer (data, len < MIME_PEEK ? len : MIME_PEEK);
  *ret_data = data;
  *ret_len = len;
  return 0;
}

/* A memfd with a copy of the remote file: what a caller of
 * sr_files_open_artifact reads and fstats like the file itself.  */
static int
remote_open (const struct sr_fs_remote *rm, const char *abs, struct stat *st, sr_error_t *err)
{
  _cleanup_free_ char *data = NULL;
  _cleanup_close_ int fd = -1;
  size_t len;

  if (rm->read (rm->ctx, abs, SR_FS_DATA, SR_FS_REMOTE_MAX_OPEN, &data, &len, err) < 0)
    return -1;
  fd = memfd_create ("sr-artifact", MFD_CLOEXEC);
  if (fd < 0 || sr_write_all (fd, data, len) < 0 || fstat (fd, st) < 0)
    return fail_errno (err, errno, "copy %s", abs);
  if (lseek (fd, 0, SEEK_SET) < 0)
    return fail_errno (err, errno, "copy %s", abs);
  return TAKE_FD (fd);
}

int
sr_files_open_artifact (const struct sr_fsroot *r, const char *path, uint64_t *ret_size,
                        sr_error_t *err)
{
  struct where w = { 0 };
  struct stat st;
  int fd;

  if (parse_path (r, path, true, &w, err) < 0)
    return -1;
  if (r->remote)
    fd = remote_open (r->remote, w.abs, &st, err);
  else
    fd = open_regular (&w, &st, err);
  where_done (&w);
  if (fd >= 0 && ret_size)
    *ret_size = (uint64_t) st.st_size;
  return fd;
}

/* --- file tools --- */

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
  struct where w = { 0 };
  uint64_t line = 0;
  size_t len;
  int ret;

  if (parse_path (r, path, false, &w, err) < 0)
    return -1;
  if (r->remote)
    ret = r->remote->read (r->remote->ctx, w.abs, remote_flags (&w), max_size, &data, &len,
                           err);
  else
    ret = open_and_read (&w, max_size, &data, &len, err);
  where_done (&w);
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
  struct where w = { 0 };
  int ret;

  if (parse_path (r, path, false, &w, err) < 0)
    return -1;
  if (r->remote)
    ret = r->remote->write (r->remote->ctx, w.abs, remote_flags (&w), content, len, true, err);
  else
    ret = write_path (r, &w, content, len, true, err);
  if (ret == 0 && ret_path)
    *ret_path = TAKE_PTR (w.abs);
  where_done (&w);
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

static int
remote_patch (const struct sr_fs_remote *rm, const struct where *w, const char *old_string,
              const char *new_string, bool replace_all, const char *diff, uint64_t max_size,
              unsigned *ret_replacements, sr_error_t *err)
{
  _cleanup_free_ char *data = NULL, *out_p = NULL;
  struct buf out = { 0 };
  size_t len;
  unsigned n = 0;
  int ret;

  if (rm->read (rm->ctx, w->abs, remote_flags (w) | SR_FS_NOFOLLOW, max_size, &data, &len, err) < 0)
    return -1;
  if (diff)
    ret = patch_diff (data, len, diff, w->abs, &out, &n, err);
  else
    ret = patch_string (data, len, old_string, new_string, replace_all, w->abs, &out, &n, err);
  out_p = out.p;
  if (ret == 0)
    ret = rm->write (rm->ctx, w->abs, remote_flags (w), out.p ? out.p : "", out.len, true, err);
  if (ret == 0 && ret_replacements)
    *ret_replacements = n;
  return ret;
}

int
sr_files_patch (const struct sr_fsroot *r, const char *path, const char *old_string,
                const char *new_string, bool replace_all, const char *diff, uint64_t max_size,
                unsigned *ret_replacements, sr_error_t *err)
{
  _cleanup_close_ int parentfd = -1, pathfd = -1, fd = -1;
  _cleanup_free_ char *data = NULL, *out_p = NULL;
  struct buf out = { 0 };
  struct where w = { 0 };
  const char *name;
  struct stat st;
  size_t len;
  unsigned n = 0;
  int ret = -1;

  if (diff == NULL && (old_string == NULL || new_string == NULL))
    return sr_error_set_code (err, "invalid_patch", 0,
                              "give old_string and new_string, or a diff");
  if (parse_path (r, path, false, &w, err) < 0)
    return -1;
  if (r->remote)
    {
      ret = remote_patch (r->remote, &w, old_string, new_string, replace_all, diff, max_size,
                          ret_replacements, err);
      where_done (&w);
      return ret;
    }
  if (open_parent (&w, false, &parentfd, &name, err) < 0
      || check_fs (parentfd, true, w.abs, err) < 0)
    goto out;
  /* The file itself, not a symlink's target: the result replaces this
   * directory entry, and replacing a link with its patched target's
   * content would be a surprise.  */
  pathfd = openat (parentfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (pathfd < 0)
    {
      fail_errno (err, errno, "open %s", w.abs);
      goto out;
    }
  fd = reopen_regular (pathfd, w.abs, &st, err);
  if (fd < 0)
    goto out;
  if ((uint64_t) st.st_size > max_size)
    {
      sr_error_set_code (err, "file_too_large", 0,
                         "%s is %lld bytes, over the limit of %" PRIu64 " bytes",
                         w.abs, (long long) st.st_size, max_size);
      goto out;
    }
  if (read_all (fd, max_size, w.abs, &data, &len, err) < 0)
    goto out;
  if (diff)
    ret = patch_diff (data, len, diff, w.abs, &out, &n, err);
  else
    ret = patch_string (data, len, old_string, new_string, replace_all, w.abs, &out, &n, err);
  out_p = out.p;
  if (ret == 0)
    {
      struct fsid fs;

      fsid_enter (r, &fs);
      ret = write_atomic (&fs, parentfd, name, w.abs, out.p, out.len, true, err);
      fsid_leave (&fs);
    }
  if (ret == 0 && ret_replacements)
    *ret_replacements = n;
out:
  where_done (&w);
  return ret;
}

/* --- search --- */

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
  fd = reopen_regular (pathfd, abs, &st, NULL);
  if (fd < 0 || (uint64_t) st.st_size > s->max_size
      || read_all (fd, s->max_size, abs, &data, &len, NULL) < 0)
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
          if (check_fs (sub, false, child, NULL) < 0)
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
remote_search (const struct sr_fs_remote *rm, struct search *s, const struct where *w,
               sr_error_t *err)
{
  struct sr_artifact *v = NULL;
  size_t n = 0;
  bool truncated = false;

  if (rm->walk (rm->ctx, w->abs, remote_flags (w), SR_MAX_ARTIFACT_DEPTH, &v, &n, &truncated,
                err) < 0)
    return -1;
  s->truncated = truncated;
  if (n)
    qsort (v, n, sizeof *v, compare_artifacts);
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
          || rm->read (rm->ctx, abs, remote_flags (w), s->max_size, &data, &len, NULL) < 0)
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
  struct where w = { 0 };
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
  if (parse_path (r, dir && *dir ? dir : SR_DATA_DIR, false, &w, err) < 0)
    goto out_re;
  if (r->remote)
    {
      if (remote_search (r->remote, &s, &w, err) < 0)
        goto out;
      goto done;
    }
  pathfd = open_in (w.dirfd, w.rel, O_PATH);
  if (pathfd < 0)
    {
      if (errno == ELOOP)
        sr_error_set_code (err, "path_outside_sandbox", errno,
                           "%s: a symlink on the way loops or is a magic link", w.abs);
      else
        fail_errno (err, errno, "open %s", w.abs);
      goto out;
    }
  if (fstat (pathfd, &st) < 0)
    {
      fail_errno (err, errno, "fstat %s", w.abs);
      goto out;
    }
  if (S_ISREG (st.st_mode))
    {
      /* One file named: searched whatever the glob says.  */
      if (check_fs (pathfd, false, w.abs, err) < 0)
        goto out;
      search_file (&s, pathfd, w.abs);
    }
  else if (S_ISDIR (st.st_mode))
    {
      char proc[64];
      int dfd;

      if (check_fs (pathfd, false, w.abs, err) < 0)
        goto out;
      snprintf (proc, sizeof proc, "/proc/self/fd/%d", pathfd);
      dfd = open (proc, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dfd < 0)
        {
          fail_errno (err, errno, "open %s", w.abs);
          goto out;
        }
      search_dir (&s, dfd, w.abs, 1);
    }
  else
    {
      sr_error_set_code (err, "not_a_file", 0, "%s is %s", w.abs, kind_of (st.st_mode));
      goto out;
    }
done:
  *ret = TAKE_PTR (s.v);
  *ret_n = s.n;
  if (ret_truncated)
    *ret_truncated = s.truncated;
  rv = 0;
out:
  where_done (&w);
out_re:
  sr_file_matches_free (s.v, rv == 0 ? 0 : s.n);
  regfree (&s.re);
  return rv;
}
