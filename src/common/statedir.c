#include <config.h>

#include "common/statedir.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"

/* "uid 1001 (sr-evil)", or "uid 1001" when it has no name.  */
static void
describe_owner (uid_t uid, char *buf, size_t len)
{
  struct passwd pw, *found = NULL;
  char names[1024];

  if (getpwuid_r (uid, &pw, names, sizeof names, &found) == 0 && found)
    snprintf (buf, len, "uid %u (%s)", (unsigned) uid, found->pw_name);
  else
    snprintf (buf, len, "uid %u", (unsigned) uid);
}

/* One refusal: what is wrong with path, whose it is, and what to set
 * instead.  */
static int
refuse (sr_error_t *err, const char *path, const char *setting, const struct stat *st,
        const char *problem)
{
  bool runtime = strcmp (setting, "runtime_dir") == 0;
  char owner[300];

  describe_owner (st->st_uid, owner, sizeof owner);
  return sr_error_set_plain (err, NULL, EPERM,
                             "refusing to use %s: %s (owner %s, mode %04o; you are uid %u): "
                             "set %s%s to a place of your own",
                             path, problem, owner, (unsigned) (st->st_mode & 07777),
                             (unsigned) geteuid (), runtime ? "XDG_RUNTIME_DIR or " : "",
                             setting);
}

/* The parent: nobody but us and root may swap what is in it, unless it
 * is sticky (/tmp), where only an entry's owner may.  */
static int
check_parent (int pfd, const char *parent, const char *path, const char *setting,
              sr_error_t *err)
{
  _cleanup_free_ char *problem = NULL;
  struct stat st;

  if (fstat (pfd, &st) < 0)
    return sr_error_set (err, errno, "stat %s", parent);
  if (st.st_uid != geteuid () && st.st_uid != 0)
    problem = sr_xasprintf ("its parent %s is another user's", parent);
  else if ((st.st_mode & 002) && !(st.st_mode & S_ISVTX))
    problem = sr_xasprintf ("its parent %s is writable by everyone", parent);
  return problem ? refuse (err, path, setting, &st, problem) : 0;
}

/* Why openat with O_NOFOLLOW | O_DIRECTORY failed on name.  */
static int
open_failed (int pfd, const char *name, const char *path, const char *setting, int errnum,
             sr_error_t *err)
{
  struct stat st;

  if ((errnum == ELOOP || errnum == ENOTDIR)
      && fstatat (pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
    return refuse (err, path, setting, &st,
                   S_ISLNK (st.st_mode) ? "it is a symbolic link" : "it is not a directory");
  return sr_error_set (err, errnum, "open %s", path);
}

int
sr_statedir_open (const char *path, const char *setting, unsigned flags, sr_error_t *err)
{
  _cleanup_free_ char *copy = NULL, *parent = NULL;
  _cleanup_close_ int pfd = -1, fd = -1;
  const char *name;
  struct stat st;
  char *slash;

  if (path == NULL || path[0] != '/' || path[1] == '\0')
    return sr_error_set_plain (err, NULL, EINVAL, "%s %s: not an absolute path", setting,
                               path ? path : "(unset)");
  copy = sr_xstrdup (path);
  for (size_t len = strlen (copy); len > 1 && copy[len - 1] == '/'; len--)
    copy[len - 1] = '\0';
  slash = strrchr (copy, '/');
  name = slash + 1;
  parent = slash == copy ? sr_xstrdup ("/") : sr_xasprintf ("%.*s", (int) (slash - copy), copy);

  if (!(flags & SR_STATEDIR_NO_CREATE) && sr_mkdir_p (parent, err) < 0)
    return -1;
  pfd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (pfd < 0)
    return sr_error_set (err, errno, "open %s", parent);
  if (check_parent (pfd, parent, path, setting, err) < 0)
    return -1;
  if (!(flags & SR_STATEDIR_NO_CREATE) && mkdirat (pfd, name, 0700) < 0 && errno != EEXIST)
    return sr_error_set (err, errno, "mkdir %s", path);
  fd = openat (pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return open_failed (pfd, name, path, setting, errno, err);
  if (fstat (fd, &st) < 0)
    return sr_error_set (err, errno, "stat %s", path);
  if (st.st_uid != geteuid ())
    return refuse (err, path, setting, &st, "it is another user's");
  if (st.st_mode & 022)
    return refuse (err, path, setting, &st, "it is writable by others");
  if ((flags & SR_STATEDIR_PRIVATE) && (st.st_mode & 044)
      && fchmod (fd, st.st_mode & 07711) < 0)
    return sr_error_set (err, errno, "chmod %s", path);
  return TAKE_FD (fd);
}

char *
sr_statedir_runtime_sub (const char *runtime_dir, const char *name, sr_error_t *err)
{
  _cleanup_free_ char *path = NULL;
  int fd;

  fd = sr_statedir_open (runtime_dir, "runtime_dir", SR_STATEDIR_PRIVATE, err);
  if (fd < 0)
    return NULL;
  close (fd);
  path = sr_xasprintf ("%s/%s", runtime_dir, name);
  fd = sr_statedir_open (path, "runtime_dir", 0, err);
  if (fd < 0)
    return NULL;
  close (fd);
  return TAKE_PTR (path);
}
