#include "config.h"

#include "sandbox/code-dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/statedir.h"
#include "common/util.h"
#include "common/workdir.h"

/* Those of runners that died: a tmpfs one of them mounted is unmounted
 * first (its root is what carries the lock then, see mount_tmpfs), so
 * that sr_workdir_reclaim finds the directory beneath, unlocked.  */
static void
reclaim (const char *base)
{
  DIR *d = opendir (base);
  struct dirent *de;

  if (d == NULL)
    return;
  while ((de = readdir (d)) != NULL)
    {
      _cleanup_close_ int fd = -1;
      struct stat st, parent;

      if (strncmp (de->d_name, "code-", 5) != 0)
        continue;
      fd = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd >= 0 && fstat (fd, &st) == 0 && fstat (dirfd (d), &parent) == 0
          && st.st_dev != parent.st_dev && flock (fd, LOCK_EX | LOCK_NB) == 0)
        {
          _cleanup_free_ char *path = sr_xasprintf ("%s/%s", base, de->d_name);

          (void) umount2 (path, MNT_DETACH | UMOUNT_NOFOLLOW);
        }
    }
  closedir (d);
  sr_workdir_reclaim (base, "code-");
}

/* A tmpfs of its own on the directory dfd (locked), size-capped, nosuid
 * and nodev, so that neither the compile stage's output nor anything it
 * writes lands on a host file system, and a setuid file or a device node
 * made there means nothing.  Made detached and locked before it is
 * attached: a reclaimer that opens the path finds its lock held from the
 * first moment.  Returns the locked fd of its root.  */
static int
mount_tmpfs (const struct sr_config *cfg, const struct sr_policy_ids *ids, int dfd,
             sr_error_t *err)
{
  _cleanup_close_ int fs = -1, mnt = -1, root = -1;
  char size[32], inodes[32], uid[16], gid[16];

  snprintf (size, sizeof size, "%llu", (unsigned long long) cfg->code_dir_size);
  snprintf (inodes, sizeof inodes, "%u", SR_CODE_DIR_INODES);
  snprintf (uid, sizeof uid, "%u", (unsigned) ids->uid);
  snprintf (gid, sizeof gid, "%u", (unsigned) ids->gid);
  fs = fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0 || fsconfig (fs, FSCONFIG_SET_STRING, "size", size, 0) < 0
      || fsconfig (fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0
      || fsconfig (fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0
      || fsconfig (fs, FSCONFIG_SET_STRING, "uid", uid, 0) < 0
      || fsconfig (fs, FSCONFIG_SET_STRING, "gid", gid, 0) < 0
      || fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return sr_error_set (err, errno, "make the code directory's tmpfs");
  mnt = fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (mnt < 0)
    return sr_error_set (err, errno, "mount the code directory's tmpfs");
  root = openat (mnt, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0 || flock (root, LOCK_EX | LOCK_NB) < 0)
    return sr_error_set (err, errno, "lock the code directory's tmpfs");
  if (move_mount (mnt, "", dfd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    return sr_error_set (err, errno, "attach the code directory's tmpfs");
  return TAKE_FD (root);
}

int
sr_code_make_dir (const struct sr_config *cfg, const struct sr_policy_ids *ids, bool own_mount,
                  char **ret_dir, int *ret_fd, int *ret_hold_fd, sr_error_t *err)
{
  _cleanup_free_ char *base = NULL, *dir = NULL;
  _cleanup_close_ int dfd = -1, hold = -1;

  base = sr_statedir_runtime_sub (cfg->runtime_dir, "scratch", err);
  if (base == NULL)
    return -1;
  /* The container's root, an unprivileged host uid, must reach its own
   * directory through these two, and see nothing else in them.  */
  (void) chmod (cfg->runtime_dir, 0711);
  (void) chmod (base, 0711);
  reclaim (base);

  dir = sr_xasprintf ("%s/code-XXXXXX", base);
  if (sr_workdir_make (dir, &dfd, err) < 0)
    return -1;
  /* 0700: the code and what the container writes there are no other
   * local user's to read, nor a setuid file it makes theirs to run.  A
   * backend whose commands run as another uid hands it over (code_dir).
   * Root gives it a tmpfs; an ordinary user cannot mount on the host,
   * and what its containers write stays behind the user's own 0700
   * directory, on its runtime_dir's file system.  */
  if (own_mount && geteuid () == 0)
    {
      int root = mount_tmpfs (cfg, ids, dfd, err);

      if (root < 0)
        goto fail;
      /* The directory beneath stays locked too: a runner in another
       * mount namespace (a service's, under ProtectSystem=) does not see
       * the tmpfs, and would reclaim the directory it covers.  */
      hold = TAKE_FD (dfd);
      dfd = root;
    }
  else if (fchmod (dfd, 0700) < 0)
    {
      sr_error_set (err, errno, "chmod %s", dir);
      goto fail;
    }
  *ret_dir = TAKE_PTR (dir);
  *ret_fd = TAKE_FD (dfd);
  *ret_hold_fd = TAKE_FD (hold);
  return 0;

fail:
  (void) sr_rm_rf_at (AT_FDCWD, dir, NULL);
  return -1;
}

void
sr_code_detach_dir (const char *dir)
{
  (void) umount2 (dir, MNT_DETACH | UMOUNT_NOFOLLOW);
}

void
sr_code_remove_dir (const char *dir, int hold_fd)
{
  sr_code_detach_dir (dir);
  (void) sr_rm_rf_at (AT_FDCWD, dir, NULL);
  if (hold_fd >= 0)
    close (hold_fd);
}

void
sr_code_reclaim_dirs (const struct sr_config *cfg)
{
  _cleanup_free_ char *base = sr_statedir_runtime_sub (cfg->runtime_dir, "scratch", NULL);

  if (base)
    reclaim (base);
}

/* The source could not be written into dirfd: with ENOSPC or EDQUOT that
 * is the host file system of the scratch dirs that is full, not the code
 * that is too big, and the operator needs to know which one.  */
static int
write_source_failed (int dirfd, const char *name, sr_error_t *err)
{
  int e = errno;
  char link[64], dir[4096];
  ssize_t n;

  snprintf (link, sizeof link, "/proc/self/fd/%d", dirfd);
  n = readlink (link, dir, sizeof dir - 1);
  if (n < 0)
    strcpy (dir, ".");
  else
    dir[n] = '\0';
  if (e == ENOSPC || e == EDQUOT)
    return sr_error_set (err, e, "write %s/%s: the file system of %s is full", dir, name, dir);
  return sr_error_set (err, e, "write %s/%s", dir, name);
}

int
sr_code_write_source (int dirfd, const char *name, const char *code, size_t len, uid_t uid,
                      gid_t gid, sr_error_t *err)
{
  _cleanup_close_ int fd = -1;

  if (unlinkat (dirfd, name, 0) < 0 && errno != ENOENT)
    {
      if (errno != EISDIR && errno != EPERM)
        return sr_error_set (err, errno, "remove the old %s", name);
      if (sr_rm_rf_at (dirfd, name, err) < 0)
        return -1;
    }
  fd = openat (dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 || sr_write_all (fd, code, len) < 0)
    return write_source_failed (dirfd, name, err);
  if (geteuid () == 0 && fchown (fd, uid, gid) < 0)
    return sr_error_set (err, errno, "chown %s", name);
  return 0;
}

int
sr_code_open_parent (int dirfd, const char *name, uid_t uid, gid_t gid, const char **ret_base,
                     sr_error_t *err)
{
  _cleanup_close_ int fd = fcntl (dirfd, F_DUPFD_CLOEXEC, 3);
  const char *p = name;

  if (fd < 0)
    return sr_error_set (err, errno, "dup");
  for (size_t n; p[n = strcspn (p, "/")] == '/'; p += n + 1)
    {
      _cleanup_free_ char *comp = sr_xasprintf ("%.*s", (int) n, p);
      int next;

      if (mkdirat (fd, comp, 0755) == 0)
        {
          if (geteuid () == 0 && fchownat (fd, comp, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
            return sr_error_set (err, errno, "chown the directory of %s", name);
        }
      else if (errno != EEXIST)
        return write_source_failed (fd, comp, err);
      next = openat (fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0)
        return sr_error_set (err, errno, "open the directory of %s", name);
      close (fd);
      fd = next;
    }
  *ret_base = p;
  return TAKE_FD (fd);
}

int
sr_code_write_inputs (int dirfd, const struct sr_language *l, const struct sr_code_request *req,
                      uid_t uid, gid_t gid, sr_error_t *err)
{
  if (sr_code_write_source (dirfd, l->source, req->code, req->code_len, uid, gid, err) < 0)
    return -1;
  for (size_t i = 0; i < req->n_files; i++)
    {
      const struct sr_code_file *f = &req->files[i];
      const char *base = f->name;
      _cleanup_close_ int fd = sr_code_open_parent (dirfd, f->name, uid, gid, &base, err);

      if (fd < 0 || sr_code_write_source (fd, base, f->content, f->len, uid, gid, err) < 0)
        return sr_error_wrap (err, "file %s", f->name);
    }
  return 0;
}
