/* Writes inside a session's container: a file written whole through a
 * temp file renamed into place, its missing parents created, as the
 * owner its files get (sr_fs_native: the user inside).  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/files-internal.h"

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
  const struct sr_fs_native *r;
  bool switched;
  uid_t uid;    /* what to go back to */
  gid_t gid;
};

static void
fsid_enter (const struct sr_fs_native *r, struct fsid *s)
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

/* Creates directory name of mode under parentfd (a tmpfs of the
 * session), as the files' owner (fsid_enter is in effect, or the writer
 * is the user inside).  An existing directory is fine.  */
static int
make_dir (int parentfd, const char *name, mode_t mode, const char *abs, sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  struct stat st;

  if (sr_files_check_fs (parentfd, true, abs, err) < 0)
    return -1;
  if (mkdirat (parentfd, name, mode) < 0)
    {
      if (errno == EEXIST)
        return 0;
      return sr_files_fail_errno (err, errno, "mkdir %s", abs);
    }
  /* The umask may have taken bits away.  O_NOFOLLOW on the one name:
   * what gets chmod'ed is the entry just made (or a directory that
   * replaced it there), never a symlink's target.  Only then: a chmod
   * by a user outside the directory's group would drop the setgid bit it
   * inherited, and with it the runner's group below.  */
  fd = openat (parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    return sr_files_fail_errno (err, errno, "open %s", abs);
  if ((st.st_mode & 0777) != mode && fchmod (fd, mode) < 0)
    return sr_files_fail_errno (err, errno, "chmod %s", abs);
  return 0;
}

/* Opens the directory holding w's last component (*ret_name, pointing
 * into w->rel), creating the missing ones of dir_mode.  Each prefix is
 * resolved again from w->dirfd, so a component the container swaps for a
 * symlink meanwhile still resolves inside the session.  */
int
sr_files_open_parent (const struct sr_files_where *w, mode_t dir_mode, int *ret_fd,
                      const char **ret_name, sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  char *rel = w->rel;
  char *last = strrchr (rel, '/');
  size_t abs_base = strlen (w->abs) - strlen (rel);

  if (*rel == '\0')
    return sr_error_set_code (err, "not_a_file", 0, "%s is a directory", w->abs);
  fd = sr_files_open_in (w->dirfd, "", O_PATH | O_DIRECTORY);
  if (fd < 0)
    return sr_files_fail_errno (err, errno, "open %s", w->data ? SR_DATA_DIR : "/");
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
      next = sr_files_open_in (w->dirfd, rel, O_PATH | O_DIRECTORY);
      if (next < 0 && errno == ENOENT && dir_mode)
        {
          if (make_dir (fd, comp, dir_mode, abs, err) < 0)
            {
              *slash = '/';
              return -1;
            }
          next = sr_files_open_in (w->dirfd, rel, O_PATH | O_DIRECTORY);
        }
      *slash = '/';
      if (next < 0)
        {
          if (errno == ELOOP)
            return sr_error_set_code (err, "path_outside_sandbox", errno,
                                      "%s: a symlink on the way loops or is a magic link", abs);
          return sr_files_fail_errno (err, errno, "open %s", abs);
        }
      close (fd);
      fd = next;
    }
  *ret_name = last ? last + 1 : rel;
  *ret_fd = TAKE_FD (fd);
  return 0;
}

int
sr_files_temp_name (char tmp[static SR_FILES_TMP_LEN])
{
  uint64_t rnd;

  if (getrandom (&rnd, sizeof rnd, 0) != sizeof rnd)
    return -1;
  snprintf (tmp, SR_FILES_TMP_LEN, SR_FILES_TMP_PREFIX "%016" PRIx64, rnd);
  return 0;
}

/* Names the unnamed file fd (O_TMPFILE) tmp in parentfd.  */
static int
name_temp (int fd, int parentfd, const char *tmp)
{
  char proc[64];

  snprintf (proc, sizeof proc, "/proc/self/fd/%d", fd);
  return linkat (AT_FDCWD, proc, parentfd, tmp, AT_SYMLINK_FOLLOW);
}

/* Writes data as name in parentfd: an unnamed file (O_TMPFILE) in the
 * same directory, named only once it is whole and renamed over name, so
 * a reader sees the old or the new content, never a part, and a writer
 * killed midway (by the session's memory limit, sr_container_charged)
 * leaves nothing behind.  A symlink at name is replaced, not followed.
 * A file replaced keeps its mode and owner; a new one belongs to the
 * container's root.  Runs as the container's root (fsid_enter is in
 * effect, fs).  */
static int
write_atomic (struct fsid *fs, int parentfd, const char *name, const char *abs,
              const void *data, size_t len, bool overwrite, const char *tmp, sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  bool named = false;
  mode_t mode = 0644;
  bool keep_owner = false;
  struct stat st;
  int e;

  if (fstatat (parentfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (!S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode))
        return sr_error_set_code (err, "not_a_file", 0, "%s is %s, not a regular file", abs,
                                  sr_files_kind_of (st.st_mode));
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
    return sr_files_fail_errno (err, errno, "stat %s", abs);
  if (sr_files_check_fs (parentfd, true, abs, err) < 0)
    return -1;

  fd = openat (parentfd, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, 0600);
  if (fd < 0)
    return sr_files_fail_errno (err, errno, "create a temp file beside %s", abs);
  if (sr_write_all (fd, data, len) < 0 || name_temp (fd, parentfd, tmp) < 0)
    goto fail;
  named = true;
  /* Named first: a file given away could no longer be linked by the
   * container's root (fs.protected_hardlinks).  */
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
      return sr_files_fail_errno (err, e, "rename into %s", abs);
    }
  return 0;

fail:
  e = errno;
  if (named)
    unlinkat (parentfd, tmp, 0);
  return sr_files_fail_errno (err, e, "write %s", abs);
}

int
sr_files_write_path (const struct sr_fs_native *r, const struct sr_files_where *w,
                     const void *data, size_t len, bool overwrite, const char *tmp,
                     sr_error_t *err)
{
  _cleanup_close_ int parentfd = -1;
  struct fsid fs;
  const char *name;
  int ret;

  fsid_enter (r, &fs);
  /* The user's directories stay open to the runner's group (setgid
   * there), as the commands' own are (umask 002), so that the runner can
   * remove what a killed writer left in them.  */
  ret = sr_files_open_parent (w, r->as_user ? 0775 : 0755, &parentfd, &name, err);
  if (ret == 0)
    ret = write_atomic (&fs, parentfd, name, w->abs, data, len, overwrite, tmp, err);
  fsid_leave (&fs);
  return ret;
}

void
sr_files_drop_temp (const struct sr_fs_native *r, const struct sr_files_where *w,
                    const char *tmp)
{
  _cleanup_close_ int parentfd = -1;
  struct fsid fs;
  const char *name;

  fsid_enter (r, &fs);
  if (sr_files_open_parent (w, 0, &parentfd, &name, NULL) == 0)
    (void) unlinkat (parentfd, tmp, 0);
  fsid_leave (&fs);
}
