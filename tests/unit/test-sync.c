#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/sync.h"
#include "tap.h"

int
main (void)
{
  struct sr_sync_msg out = { .type = SR_SYNC_ERROR, .errnum = EINVAL }, in;
  int sv[2], fds[SR_SYNC_MAX_FDS], pipefd[2];
  size_t n = 99;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0 || pipe (pipefd) < 0)
    return 1;
  strcpy (out.text, "pivot_root");
  out.marks[SR_MARK_PIVOT] = 42;
  ok (sr_sync_send (sv[0], &out, pipefd, 2) == 0, "a message with two fds is sent");
  ok (sr_sync_recv (sv[1], &in, fds, SR_SYNC_MAX_FDS, &n) == 0, "and received");
  is_int (in.type, SR_SYNC_ERROR, "type survives");
  is_int (in.errnum, EINVAL, "errno survives");
  is_str (in.text, "pivot_root", "text survives");
  is_int (in.marks[SR_MARK_PIVOT], 42, "marks survive");
  is_int (n, 2, "both fds arrive");
  ok (fcntl (fds[0], F_GETFD) & FD_CLOEXEC, "received fds are close-on-exec");
  ok (write (fds[1], "x", 1) == 1 && read (pipefd[0], &in.text, 1) == 1,
      "a received fd refers to the same pipe");
  ok (sr_sync_send (sv[0], &out, pipefd, SR_SYNC_MAX_FDS + 1) < 0 && errno == EINVAL,
      "too many fds are refused");
  {
    char big[64] = "a message longer than the buffer it is read into", small[8];
    int lowest = dup (0), probe;

    close (lowest);
    ok (sr_msg_send (sv[0], big, sizeof big, pipefd, 1) == 0, "a message of 64 bytes and an fd");
    errno = 0;
    ok (sr_msg_recv (sv[1], small, sizeof small, fds, SR_SYNC_MAX_FDS, &n) < 0 && errno == EBADMSG,
        "read into 8 bytes: EBADMSG");
    is_int (n, 0, "with no fd received");
    probe = dup (0);
    ok (probe == lowest, "and the one that came closed (the lowest free fd is %d, was %d)", probe,
        lowest);
    close (probe);
    ok (sr_msg_send (sv[0], big, 8, NULL, 0) == 0
          && sr_sync_recv (sv[1], &in, fds, SR_SYNC_MAX_FDS, &n) < 0 && errno == EBADMSG,
        "a sync message of the wrong size is EBADMSG");
  }
  close (sv[0]);
  is_int (sr_sync_recv (sv[1], &in, NULL, 0, NULL), 1, "EOF is reported as 1");
  return done_testing ();
}
