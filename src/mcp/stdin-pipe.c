#include "config.h"

#include "mcp/stdin-pipe.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/stdin-wait.h"
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

/* Where a reader of an empty pipe sleeps, by kernel version.  */
static const char *const pipe_waits[] = { "pipe_read", "pipe_wait", "pipe_wait_readable", NULL };

bool
sr_stdin_pipe_waiting (int fd)
{
  struct stat st;
  int unread = 0;

  if (fd < 0 || fstat (fd, &st) < 0 || ioctl (fd, FIONREAD, &unread) < 0 || unread > 0)
    return false;
  return sr_stdin_waited (&st, 0, pipe_waits);
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
