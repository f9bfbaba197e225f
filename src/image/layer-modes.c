/* The modes of a rootfs in a shared store (image/layer.h), apart from the
 * extraction so that a binary that opens a store does not link
 * libarchive.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image/layer.h"

unsigned
sr_layer_shared_mode (unsigned perm)
{
  return perm & 07777 & ~(unsigned) (S_IWGRP | S_IWOTH);
}

/* How deep sr_layer_drop_shared_write goes: one fd is open per level.  */
#define SHARED_WRITE_MAX_DEPTH 256

static int
drop_shared_write_in (int dirfd, unsigned depth, sr_error_t *err)
{
  _cleanup_close_ int fd = dup (dirfd);
  DIR *d;
  struct dirent *de;
  int r = 0;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    return sr_error_set (err, errno, "read a directory of the image");
  fd = -1;
  while (r == 0 && (errno = 0, de = readdir (d)) != NULL)
    {
      struct stat sb;
      int child;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (fstatat (dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (!S_ISDIR (sb.st_mode) && !(sb.st_mode & (S_IWGRP | S_IWOTH)))
        continue;
      if (!S_ISDIR (sb.st_mode) && !S_ISREG (sb.st_mode) && !S_ISFIFO (sb.st_mode))
        continue;
      child = openat (dirfd, de->d_name,
                      O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
      if (child < 0)
        continue;
      /* Closed to others before anything under it is looked at.  */
      if (fstat (child, &sb) == 0 && (sb.st_mode & (S_IWGRP | S_IWOTH))
          && fchmod (child, sr_layer_shared_mode (sb.st_mode)) < 0)
        r = sr_error_set (err, errno, "chmod an entry of the image");
      else if (S_ISDIR (sb.st_mode) && depth < SHARED_WRITE_MAX_DEPTH)
        r = drop_shared_write_in (child, depth + 1, err);
      close (child);
    }
  if (r == 0 && errno != 0)
    r = sr_error_set (err, errno, "read a directory of the image");
  closedir (d);
  return r;
}

int
sr_layer_drop_shared_write (int rootfd, sr_error_t *err)
{
  return drop_shared_write_in (rootfd, 0, err);
}
