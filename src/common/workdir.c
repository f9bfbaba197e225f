#include <config.h>

#include "common/workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

/* How often a writer tries again when a reclaimer removed each directory
 * it made before it could lock it: more than once in a row means the
 * reclaimer is not what removes them.  */
#define WORKDIR_ATTEMPTS 8

/* True when fd, which holds the lock, is still the directory at path: a
 * reclaimer that took the lock first removed the directory before it let
 * the lock go, so its link count is 0 or its name is gone (or names a new
 * one).  */
static bool
workdir_still_there (int fd, const char *path)
{
  struct stat held, named;

  if (fstat (fd, &held) < 0 || held.st_nlink == 0)
    return false;
  if (lstat (path, &named) < 0)
    return false;
  return held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

int
sr_workdir_make (char *tmpl, int *ret_fd, sr_error_t *err)
{
  _cleanup_free_ char *pattern = sr_xstrdup (tmpl);

  for (int attempt = 0; attempt < WORKDIR_ATTEMPTS; attempt++)
    {
      int fd;

      strcpy (tmpl, pattern);
      if (mkdtemp (tmpl) == NULL)
        return sr_error_set (err, errno, "mkdtemp %s", tmpl);
      fd = open (tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        {
          if (errno == ENOENT)
            continue; /* removed already */
          sr_error_set (err, errno, "open %s", tmpl);
          (void) rmdir (tmpl);
          return -1;
        }
      while (flock (fd, LOCK_EX) < 0)
        if (errno != EINTR)
          {
            sr_error_set (err, errno, "lock %s", tmpl);
            close (fd);
            (void) rmdir (tmpl);
            return -1;
          }
      if (workdir_still_there (fd, tmpl))
        {
          *ret_fd = fd;
          return 0;
        }
      close (fd);
    }
  return sr_error_set (err, EAGAIN, "%s: each directory made was removed before it was locked",
                       pattern);
}

int
sr_workdir_reclaim (const char *dir, const char *prefix)
{
  size_t prefix_len = strlen (prefix);
  struct dirent *de;
  int removed = 0;
  DIR *d;

  d = opendir (dir);
  if (d == NULL)
    return 0;
  while ((de = readdir (d)) != NULL)
    {
      _cleanup_close_ int fd = -1;
      struct stat held, named;

      if (strncmp (de->d_name, prefix, prefix_len) != 0)
        continue;
      fd = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 || flock (fd, LOCK_EX | LOCK_NB) < 0)
        continue;
      /* Locked by us now, and still under this name (a writer that
       * finished may have renamed it into place before it let go): it is
       * removed before the lock goes, so that a writer that waits for
       * the lock finds it gone.  */
      if (fstat (fd, &held) < 0
          || fstatat (dirfd (d), de->d_name, &named, AT_SYMLINK_NOFOLLOW) < 0
          || held.st_dev != named.st_dev || held.st_ino != named.st_ino)
        continue;
      if (sr_rm_rf_at (dirfd (d), de->d_name, NULL) == 0)
        removed++;
    }
  closedir (d);
  return removed;
}
