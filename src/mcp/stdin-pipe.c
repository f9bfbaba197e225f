#include "config.h"

#include "mcp/stdin-pipe.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"

int
sr_stdin_pipe_new (size_t want, int *ret_read, int *ret_write, sr_error_t *err)
{
  _cleanup_close_ int r = -1, w = -1;
  int fds[2];

  if (pipe2 (fds, O_CLOEXEC | O_NONBLOCK) < 0)
    return sr_error_set (err, errno, "make a pipe for the run's stdin");
  w = fds[1];
  /* The run's end blocks, as a program expects of its stdin.  */
  r = fcntl (fds[0], F_DUPFD_CLOEXEC, 3);
  close (fds[0]);
  if (r < 0 || fcntl (r, F_SETFL, 0) < 0)
    return sr_error_set (err, errno, "make a pipe for the run's stdin");
  /* Best effort: past /proc/sys/fs/pipe-max-size the default stays, and
   * an update that does not fit is refused as stdin_full.  */
  if (want > 0 && want < INT32_MAX)
    (void) fcntl (w, F_SETPIPE_SZ, (int) want);
  *ret_read = TAKE_FD (r);
  *ret_write = TAKE_FD (w);
  return 0;
}

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
reads_stdin (int dirfd, const char *pid)
{
  char buf[256];
  long nr;
  unsigned long fd;

  if (read_proc (dirfd, pid, "syscall", buf, sizeof buf)
      && sscanf (buf, "%ld 0x%lx", &nr, &fd) == 2)
    return (nr == SYS_read || nr == SYS_readv) && fd == 0;
  /* No syscall file (a kernel without CONFIG_HAVE_ARCH_TRACEHOOK): where
   * it sleeps says as much, and its fd 0 is the pipe.  */
  return read_proc (dirfd, pid, "wchan", buf, sizeof buf)
         && (strcmp (buf, "pipe_read") == 0 || strcmp (buf, "pipe_wait") == 0
             || strcmp (buf, "pipe_wait_readable") == 0);
}

bool
sr_stdin_pipe_waiting (int fd)
{
  _cleanup_free_ char *want = NULL;
  struct stat st;
  bool waiting = false;
  struct dirent *e;
  int unread = 0;
  DIR *proc;

  if (fd < 0 || fstat (fd, &st) < 0 || ioctl (fd, FIONREAD, &unread) < 0 || unread > 0)
    return false;
  proc = opendir ("/proc");
  if (proc == NULL)
    return false;
  want = sr_xasprintf ("pipe:[%" PRIuMAX "]", (uintmax_t) st.st_ino);
  while (!waiting && (e = readdir (proc)))
    {
      _cleanup_free_ char *link = NULL;
      char target[64];
      ssize_t n;

      if (e->d_name[0] < '1' || e->d_name[0] > '9')
        continue;
      link = sr_xasprintf ("%s/fd/0", e->d_name);
      n = readlinkat (dirfd (proc), link, target, sizeof target - 1);
      if (n < 0)
        continue;
      target[n] = '\0';
      waiting = strcmp (target, want) == 0 && reads_stdin (dirfd (proc), e->d_name);
    }
  closedir (proc);
  return waiting;
}

int
sr_stdin_pipe_write (int fd, const char *data, size_t len, sr_error_t *err)
{
  int size = fcntl (fd, F_GETPIPE_SZ), unread = 0;
  size_t done = 0;
  ssize_t n;

  if (size < 0 || ioctl (fd, FIONREAD, &unread) < 0)
    return sr_error_set (err, errno, "look at the run's stdin");
  if (len > (size_t) size - (size_t) unread)
    return sr_error_set_plain (err, "stdin_full", EAGAIN,
                               "the input (%zu bytes) is more than the program's stdin holds "
                               "now (%d bytes): send it in pieces, one an update",
                               len, size - unread);
  while (done < len)
    {
      n = write (fd, data + done, len - done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EPIPE)
        return sr_error_set_plain (err, "stdin_closed", EPIPE,
                                   "the program has closed its stdin");
      if (n < 0)
        return sr_error_set (err, errno, "write to the run's stdin");
      done += (size_t) n;
    }
  return 0;
}
