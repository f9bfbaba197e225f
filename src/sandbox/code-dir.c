#include "config.h"

#include "sandbox/code-dir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/statedir.h"
#include "common/util.h"
#include "common/workdir.h"

int
sr_code_make_dir (const struct sr_config *cfg, const struct sr_policy_ids *ids, char **ret_dir,
                  int *ret_fd, sr_error_t *err)
{
  _cleanup_free_ char *base = NULL, *dir = NULL;
  _cleanup_close_ int dfd = -1;

  base = sr_statedir_runtime_sub (cfg->runtime_dir, "scratch", err);
  if (base == NULL)
    return -1;
  /* The container's root, an unprivileged host uid, must reach its own
   * directory through these two, and see nothing else in them.  */
  (void) chmod (cfg->runtime_dir, 0711);
  (void) chmod (base, 0711);
  /* Those of runners that died.  */
  sr_workdir_reclaim (base, "code-");

  dir = sr_xasprintf ("%s/code-XXXXXX", base);
  if (sr_workdir_make (dir, &dfd, err) < 0)
    return -1;
  /* 0700: the code and what the container writes there are no other
   * local user's to read, nor a setuid file it makes theirs to run.  A
   * backend whose commands run as another uid hands it over (code_dir).  */
  if ((geteuid () == 0 && fchown (dfd, ids->uid, ids->gid) < 0) || fchmod (dfd, 0700) < 0)
    {
      sr_error_set (err, errno, "chown %s", dir);
      goto fail;
    }
  *ret_dir = TAKE_PTR (dir);
  *ret_fd = TAKE_FD (dfd);
  return 0;

fail:
  (void) sr_rm_rf_at (AT_FDCWD, dir, NULL);
  return -1;
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
