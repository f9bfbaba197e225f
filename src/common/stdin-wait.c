#include "config.h"

#include "common/stdin-wait.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"

/* The first line of /proc/PID/NAME, read through dirfd (/proc).  */
static bool
read_proc (int dirfd, const char *pid, const char *name, char *buf, size_t size)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/%s", pid, name);
  _cleanup_close_ int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC);
  ssize_t n;

  if (fd < 0 || (n = read (fd, buf, size - 1)) < 0)
    return false;
  buf[n] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  return true;
}

/* Whether process pid (a name in /proc) sleeps reading its fd 0.  */
static bool
reads_stdin (int dirfd, const char *pid, const char *const *wchans)
{
  char buf[256];
  long nr;
  unsigned long fd;

  if (read_proc (dirfd, pid, "syscall", buf, sizeof buf)
      && sscanf (buf, "%ld 0x%lx", &nr, &fd) == 2)
    return (nr == SYS_read || nr == SYS_readv) && fd == 0;
  /* No syscall file (a kernel without CONFIG_HAVE_ARCH_TRACEHOOK): where
   * it sleeps says as much, and its fd 0 is the file.  */
  if (!read_proc (dirfd, pid, "wchan", buf, sizeof buf))
    return false;
  for (const char *const *w = wchans; *w; w++)
    if (strcmp (buf, *w) == 0)
      return true;
  return false;
}

/* Whether process pid is of process group pgrp (/proc/PID/stat: the
 * fifth field, the third after the command's name in parentheses).  */
static bool
of_group (int dirfd, const char *pid, pid_t pgrp)
{
  char buf[512];
  const char *p;
  long group;

  if (!read_proc (dirfd, pid, "stat", buf, sizeof buf) || (p = strrchr (buf, ')')) == NULL)
    return false;
  return sscanf (p + 1, " %*c %*d %ld", &group) == 1 && group == (long) pgrp;
}

bool
sr_stdin_waited (const struct stat *file, pid_t pgrp, const char *const *wchans)
{
  DIR *proc = opendir ("/proc");
  bool waiting = false;
  struct dirent *e;

  if (proc == NULL)
    return false;
  while (!waiting && (e = readdir (proc)))
    {
      _cleanup_free_ char *link = NULL;
      struct stat st;

      if (e->d_name[0] < '1' || e->d_name[0] > '9')
        continue;
      link = sr_xasprintf ("%s/fd/0", e->d_name);
      if (fstatat (dirfd (proc), link, &st, 0) < 0 || st.st_dev != file->st_dev
          || st.st_ino != file->st_ino)
        continue;
      waiting = (pgrp <= 0 || of_group (dirfd (proc), e->d_name, pgrp))
                && reads_stdin (dirfd (proc), e->d_name, wchans);
    }
  closedir (proc);
  return waiting;
}
