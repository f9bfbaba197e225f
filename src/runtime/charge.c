#include <config.h>

#include "runtime/charge.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"

/* What the child sends back, then len bytes of message.  */
struct reply
{
  int r;
  int errnum;
  const char *code;  /* a static string: the same address in the parent */
  size_t len;
};

static ssize_t
read_full (int fd, void *buf, size_t len)
{
  size_t got = 0;

  while (got < len)
    {
      ssize_t n = read (fd, (char *) buf + got, len - got);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return n < 0 ? -1 : (ssize_t) got;
      got += (size_t) n;
    }
  return (ssize_t) got;
}

/* The child: waits for the go (the runner has moved it into the
 * container's cgroups, or left that to it: self_fds, see
 * sr_cgroup_self_fds), runs fn and sends back how it went.  */
static _Noreturn void
child_main (int go_fd, int reply_fd, const int *self_fds, size_t n_self, sr_charge_fn fn,
            void *arg)
{
  struct reply rep = { 0 };
  sr_error_t e = NULL;
  sigset_t none;
  char go;

  /* The runner's handlers would act for the runner (a SIGTERM from the
   * container's cgroup kill must not stop the server): the defaults.  */
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      signal (sig, SIG_DFL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  prctl (PR_SET_PDEATHSIG, SIGKILL);
  if (read_full (go_fd, &go, 1) != 1)
    _exit (1);
  if (sr_cgroup_join_self (self_fds, n_self) < 0)
    rep.r = sr_error_set (&e, errno, "move the charged child into the container's cgroups");
  else
    rep.r = fn (arg, &e);
  if (rep.r < 0 && e)
    {
      rep.errnum = e->errnum;
      rep.code = e->code;
      rep.len = strlen (e->msg);
    }
  if (sr_write_all (reply_fd, &rep, sizeof rep) < 0
      || (rep.len && sr_write_all (reply_fd, e->msg, rep.len) < 0))
    _exit (1);
  _exit (0);
}

/* The longest message taken back: errors name a path or two.  */
#define MAX_MESSAGE 65536

/* The child's answer (read to its end before the child is waited for, so
 * it never blocks on a full pipe), then how it ended.  */
static int
take_reply (int fd, pid_t pid, sr_error_t *err)
{
  struct reply rep = { 0 };
  _cleanup_free_ char *msg = NULL;
  ssize_t n = read_full (fd, &rep, sizeof rep), m = 0;
  int status = 0;

  if (n == (ssize_t) sizeof rep && rep.r < 0)
    {
      if (rep.len > MAX_MESSAGE)
        rep.len = MAX_MESSAGE;
      msg = sr_xmalloc (rep.len + 1);
      m = read_full (fd, msg, rep.len);
      msg[m < 0 ? 0 : m] = '\0';
    }
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL)
    return sr_error_set_plain (err, "quota_exceeded", ENOMEM,
                               "the write was killed: the session's memory limit is reached");
  if (n != (ssize_t) sizeof rep)
    return sr_error_set_plain (err, NULL, EPROTO,
                               "the charged child ended (status %d) with no answer", status);
  if (rep.r == 0)
    return 0;
  return sr_error_set_plain (err, rep.code, rep.errnum, "%s", msg);
}

int
sr_charge_call (struct sr_cgroup *cg, uint64_t need, sr_charge_fn fn, void *arg,
                sr_error_t *err)
{
  uint64_t room = cg ? sr_cgroup_memory_room (cg) : UINT64_MAX;
  int go[2], reply[2], self_fds[SR_CGROUP_MAX_V1], r;
  size_t n_self = 0;
  pid_t pid;

  if (room != UINT64_MAX && (room < SR_CHARGE_SLACK || need > room - SR_CHARGE_SLACK))
    return sr_error_set_plain (err, "quota_exceeded", ENOMEM,
                               "%" PRIu64 " bytes would take the session past its memory limit "
                               "(%" PRIu64 " bytes left, files in its tmpfs included)",
                               need, room);
  if (pipe2 (go, O_CLOEXEC) < 0)
    return sr_error_set (err, errno, "pipe");
  if (pipe2 (reply, O_CLOEXEC) < 0)
    {
      r = sr_error_set (err, errno, "pipe");
      close (go[0]);
      close (go[1]);
      return r;
    }
  /* On v1 the child moves itself, which spares the runner's move its RCU
   * grace period (runtime/cgroup.h).  */
  if (cg)
    n_self = sr_cgroup_self_fds (cg, self_fds);
  pid = fork ();
  if (pid == 0)
    {
      close (go[1]);
      close (reply[0]);
      child_main (go[0], reply[1], self_fds, n_self, fn, arg);
    }
  close (go[0]);
  close (reply[1]);
  for (size_t i = 0; i < n_self; i++)
    close (self_fds[i]);
  if (pid < 0)
    r = sr_error_set (err, errno, "fork");
  else if (cg && n_self == 0 && sr_cgroup_attach (cg, pid, err) < 0)
    {
      /* It never runs uncharged: it dies waiting for the go.  */
      kill (pid, SIGKILL);
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
      r = -1;
    }
  else if (sr_write_all (go[1], "g", 1) < 0)
    {
      r = sr_error_set (err, errno, "start the charged child");
      kill (pid, SIGKILL);
      while (waitpid (pid, NULL, 0) < 0 && errno == EINTR)
        ;
    }
  else
    {
      close (TAKE_FD (go[1]));
      r = take_reply (reply[0], pid, err);
    }
  if (go[1] >= 0)
    close (go[1]);
  close (reply[0]);
  return r;
}
