#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <grp.h>
#include <linux/close_range.h>

#include "common/defaults.h"
#include "common/util.h"
#include "runtime/child.h"
#include "runtime/netlink.h"
#include "runtime/seccomp.h"
#include "runtime/sync.h"

/* Most arguments a command may have; the exec spec memfd is capped at the
 * kernel's own ARG_MAX-like bound by the parent.  */
#define MAX_SPEC_STRINGS 65536

struct child_state
{
  const struct sr_child_args *args;
  struct sr_sync_msg msg; /* marks accumulate here across READY and EXEC */
  bool send_pidfd;        /* EXEC carries a pidfd of the command (under an init) */
  bool policy_inherited;  /* the init applied caps, no_new_privs and seccomp */
};

/* Reports a failed step to the parent and exits.  Uses only a stack buffer
 * and snprintf (async-signal-safe enough for a child that holds no locks of
 * its own).  */
static __attribute__ ((noreturn, format (printf, 3, 4))) void
die (struct child_state *st, int errnum, const char *fmt, ...)
{
  va_list ap;

  st->msg.type = SR_SYNC_ERROR;
  st->msg.errnum = errnum;
  va_start (ap, fmt);
  vsnprintf (st->msg.text, sizeof st->msg.text, fmt, ap);
  va_end (ap);
  sr_sync_send (st->args->sync_fd, &st->msg, NULL, 0);
  _exit (SR_CHILD_EXIT_SETUP);
}

static void
wait_for (struct child_state *st, enum sr_sync_type type, int *fds, size_t max_fds,
          size_t *ret_n)
{
  struct sr_sync_msg in;
  int r;

  r = sr_sync_recv (st->args->sync_fd, &in, fds, max_fds, ret_n);
  /* EOF: the parent gave up on us; leave without a word.  */
  if (r == 1)
    _exit (SR_CHILD_EXIT_SETUP);
  if (r < 0)
    die (st, errno, "wait for the runner");
  if (in.type != type)
    die (st, EPROTO, "unexpected message %u from the runner", in.type);
}

static void
become_root (struct child_state *st)
{
  /* Raw syscalls: glibc's wrappers would signal every thread the parent
   * had, which this child (a raw clone) does not have, and wait forever.  */
  if (syscall (SYS_setresgid, 0, 0, 0) < 0)
    die (st, errno, "setresgid 0");
  if (st->args->setgroups_allowed && syscall (SYS_setgroups, 0, NULL) < 0)
    die (st, errno, "setgroups");
  if (syscall (SYS_setresuid, 0, 0, 0) < 0)
    die (st, errno, "setresuid 0");
  /* A change of credentials clears the parent death signal; a parent that
   * died meanwhile shows as EOF on the sync socket at the next step.  */
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    die (st, errno, "set the parent death signal");
}

/* The user namespace's own limits: the kernel lets root of a namespace
 * (CAP_SYS_RESOURCE there) write those of /proc/sys/user, whatever the
 * proc mount, so the init does it, as root or rootless alike.  Opened
 * while the host's /proc is ours (the container's /proc/sys is
 * read-only), written once the mounts are made: fsmount and open_tree
 * make namespaces of their own, which max_mnt_namespaces counts.  A
 * kernel without one of them has no such count to bound (fd -1).  */
static void
open_userns_limits (struct child_state *st, int *fds)
{
  for (size_t i = 0; i < st->args->n_sysctls; i++)
    {
      fds[i] = open (st->args->sysctls[i].path, O_WRONLY | O_CLOEXEC);
      if (fds[i] < 0 && errno != ENOENT)
        die (st, errno, "open %s", st->args->sysctls[i].path);
    }
}

static void
lower_userns_limits (struct child_state *st, const int *fds)
{
  for (size_t i = 0; i < st->args->n_sysctls; i++)
    {
      const struct sr_child_sysctl *s = &st->args->sysctls[i];
      size_t len = strlen (s->value);
      ssize_t n;

      if (fds[i] < 0)
        continue;
      n = write (fds[i], s->value, len);
      if (n != (ssize_t) len)
        die (st, n < 0 ? errno : EIO, "write %s", s->path);
      close (fds[i]);
    }
}

/* Splits the spec in place; argv and env point into the mapping.  */
struct exec_spec_view
{
  char **argv;
  char **env;
  const char *cwd;
};

static size_t
parse_count (struct child_state *st, const char *s)
{
  size_t n = 0;

  if (*s == '\0')
    die (st, EINVAL, "malformed exec spec");
  for (; *s; s++)
    {
      if (*s < '0' || *s > '9' || n > MAX_SPEC_STRINGS)
        die (st, EINVAL, "malformed exec spec");
      n = n * 10 + (size_t) (*s - '0');
    }
  return n;
}

static void
map_spec (struct child_state *st, int fd, struct exec_spec_view *v)
{
  struct stat sb;
  char *data, *p, *end;
  char **ptrs;
  size_t argc, envc;

  if (fstat (fd, &sb) < 0)
    die (st, errno, "stat the exec spec");
  if (sb.st_size <= 0)
    die (st, EINVAL, "empty exec spec");
  data = mmap (NULL, sb.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (data == MAP_FAILED)
    die (st, errno, "map the exec spec");
  end = data + sb.st_size;
  if (end[-1] != '\0')
    die (st, EINVAL, "exec spec is not terminated");
  p = data;
  argc = parse_count (st, p);
  p += strlen (p) + 1;
  if (p >= end)
    die (st, EINVAL, "malformed exec spec");
  envc = parse_count (st, p);
  p += strlen (p) + 1;
  if (argc == 0 || argc + envc > MAX_SPEC_STRINGS)
    die (st, E2BIG, "exec spec has too many strings");
  ptrs = mmap (NULL, (argc + envc + 2) * sizeof *ptrs, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ptrs == MAP_FAILED)
    die (st, errno, "map the exec spec pointers");
  v->argv = ptrs;
  v->env = ptrs + argc + 1;
  for (size_t i = 0; i < argc + envc; i++)
    {
      if (p >= end)
        die (st, EINVAL, "malformed exec spec");
      ptrs[i < argc ? i : i + 1] = p;
      p += strlen (p) + 1;
    }
  ptrs[argc] = NULL;
  ptrs[argc + envc + 1] = NULL;
  if (p >= end)
    die (st, EINVAL, "malformed exec spec");
  v->cwd = p;
}

static const char *
env_lookup (char *const *env, const char *name)
{
  size_t len = strlen (name);

  for (; *env; env++)
    if (strncmp (*env, name, len) == 0 && (*env)[len] == '=')
      return *env + len + 1;
  return NULL;
}

/* execvpe without its allocation: tries each PATH entry in turn and keeps
 * the most telling errno (EACCES over ENOENT, as the shell does).  */
static int
exec_in_path (char *const *argv, char *const *env)
{
  const char *path, *p;
  char buf[PATH_MAX];
  int saved = ENOENT;

  if (strchr (argv[0], '/'))
    {
      execve (argv[0], argv, env);
      return -1;
    }
  path = env_lookup (env, "PATH");
  if (path == NULL)
    path = SR_DEFAULT_PATH;
  for (p = path;; p++)
    {
      const char *colon = strchrnul (p, ':');
      size_t dlen = colon - p;
      int n;

      n = snprintf (buf, sizeof buf, "%.*s%s%s", (int) dlen, p, dlen ? "/" : "", argv[0]);
      if (n > 0 && (size_t) n < sizeof buf)
        {
          execve (buf, argv, env);
          if (errno == EACCES || errno == ENOEXEC || errno == ETXTBSY)
            saved = errno;
          else if (errno != ENOENT && errno != ENOTDIR && saved == ENOENT)
            saved = errno;
        }
      if (*colon == '\0')
        break;
      p = colon;
    }
  errno = saved;
  return -1;
}

/* The runner may block or ignore signals (the CLI blocks SIGINT to read it
 * from a signalfd); the command starts with none blocked or ignored.  */
static void
reset_signals (void)
{
  struct sigaction sa = { .sa_handler = SIG_DFL };
  sigset_t none;

  for (int sig = 1; sig < _NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction (sig, &sa, NULL);
  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
}

static void
install_stdio (struct child_state *st, const int *fds)
{
  for (int i = 0; i < 3; i++)
    if (dup3 (fds[i], i, 0) < 0)
      die (st, errno, "set up fd %d", i);
}

/* Becoming the user cleared the parent death signal, as any change of
 * credentials does: set again, then a parent that died meanwhile shows
 * as the runner's end of the sync socket gone.  */
static void
rearm_death_signal (struct child_state *st)
{
  struct pollfd pfd = { .fd = st->args->sync_fd };

  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    die (st, errno, "set the parent death signal");
  if (poll (&pfd, 1, 0) == 1 && pfd.revents & (POLLHUP | POLLERR))
    _exit (SR_CHILD_EXIT_SETUP);
}

/* The capability sets and no_new_privs of the process policy, shared by
 * the command and a container's init.  */
static void
drop_privileges (struct child_state *st)
{
  const char *step = NULL;

  if (sr_caps_apply (st->args->caps, &step) < 0)
    die (st, errno, "%s", step);
  if (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    die (st, errno, "set no_new_privs");
  if (st->args->caps->uid != 0 || st->args->caps->gid != 0)
    rearm_death_signal (st);
}

/* The whole process policy of an init: it keeps no more than its command.  */
static void
apply_init_policy (struct child_state *st)
{
  drop_privileges (st);
  if (st->args->seccomp && sr_seccomp_filter_install (st->args->seccomp) < 0)
    die (st, errno, "load the seccomp filter");
}

/* From START to execve: the process policy, then the command.  Shared by a
 * container's own init and by a command joining a held container.  */
static __attribute__ ((noreturn)) void
exec_command (struct child_state *st, const int *fds)
{
  const struct sr_child_args *args = st->args;
  struct exec_spec_view spec;

  map_spec (st, fds[0], &spec);
  install_stdio (st, fds + 1);

  if (setsid () < 0)
    die (st, errno, "setsid");
  /* A terminal on stdin (a session's shell) becomes the controlling
   * terminal, so job control works and ^C interrupts the foreground job.  */
  if (isatty (0) && ioctl (0, TIOCSCTTY, 0) < 0)
    die (st, errno, "make stdin the controlling terminal");
  if (chdir (spec.cwd) < 0)
    die (st, errno, "chdir %s", spec.cwd);
  if (args->umask != (mode_t) -1)
    umask (args->umask);
  for (size_t i = 0; i < args->n_rlimits; i++)
    if (setrlimit (args->rlimits[i].resource, &args->rlimits[i].value) < 0)
      die (st, errno, "setrlimit %d", args->rlimits[i].resource);
  if (!st->policy_inherited)
    drop_privileges (st);
  /* Every inherited fd but 0-2 and the sync socket (already close-on-exec)
   * is gone at execve.  */
  if (syscall (SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
    die (st, errno, "close inherited fds");
  st->msg.marks[SR_MARK_CAPS] = sr_now_ns ();

  /* sync 4: the policy is in place.  seccomp goes last, so nothing before
   * it needs a syscall the profile denies; only execve (and, on failure,
   * the error report) follow it.  Under an init it is already in place.  */
  st->msg.marks[SR_MARK_SECCOMP] = sr_now_ns ();
  st->msg.type = SR_SYNC_EXEC;
  {
    /* For the runner to end the command alone at the timeout (see
     * sr_supervise_io.kill).  */
    int self = st->send_pidfd ? (int) syscall (SYS_pidfd_open, getpid (), 0) : -1;

    if (sr_sync_send (args->sync_fd, &st->msg, &self, self >= 0 ? 1 : 0) < 0)
      _exit (SR_CHILD_EXIT_SETUP);
    if (self >= 0)
      close (self);
  }
  if (!st->policy_inherited && args->seccomp && sr_seccomp_filter_install (args->seccomp) < 0)
    die (st, errno, "load the seccomp filter");

  exec_in_path (spec.argv, spec.env);
  die (st, errno, "exec %s", spec.argv[0]);
}

/* Closes every fd from 3 up but the n of keep (at most SR_SYNC_MAX_FDS + 1).  */
static void
close_all_except (const int *keep, size_t n)
{
  int sorted[SR_SYNC_MAX_FDS + 1];
  unsigned next = 3;

  /* Insertion sort: a handful of fds, and no allocation in the child.  */
  for (size_t i = 0; i < n; i++)
    {
      size_t j = i;

      for (; j > 0 && sorted[j - 1] > keep[i]; j--)
        sorted[j] = sorted[j - 1];
      sorted[j] = keep[i];
    }
  for (size_t i = 0; i < n; i++)
    {
      if (sorted[i] < (int) next)
        continue;
      if ((unsigned) sorted[i] > next)
        syscall (SYS_close_range, next, (unsigned) sorted[i] - 1, 0);
      next = (unsigned) sorted[i] + 1;
    }
  syscall (SYS_close_range, next, ~0U, 0);
}

/* The runner's command line and environment, which the init's memory
 * still holds: /proc/1/environ is closed to the command (the init is not
 * dumpable), but /proc/1/cmdline is open to every process.  Blanked in
 * place, in the init's own copy of those pages, at the addresses of fields
 * 48 to 51 of /proc/self/stat; best effort.  */
static void
blank_runner_args (void)
{
  char buf[1024], *p;
  unsigned long long v[4];
  ssize_t n;
  int fd;

  fd = open ("/proc/self/stat", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return;
  buf[n] = '\0';
  /* The name (field 2) ends at the last ')'; p goes to the space before
   * field 48.  */
  p = strrchr (buf, ')');
  for (int field = 2; field < 48 && p; field++)
    p = strchr (p + 1, ' ');
  for (int i = 0; i < 4; i++)
    {
      if (p == NULL || *p != ' ')
        return;
      v[i] = strtoull (p + 1, &p, 10);
    }
  if (v[0] < v[1])
    memset ((void *) (uintptr_t) v[0], 0, v[1] - v[0]);
  if (v[2] < v[3])
    memset ((void *) (uintptr_t) v[2], 0, v[3] - v[2]);
}

/* The fds of enum sr_held_fd, opened by the init in its own namespaces.  */
static void
open_held_fds (struct child_state *st, int fds[SR_HELD_FDS])
{
  static const char *const ns[SR_HELD_NS_COUNT] = {
    [SR_HELD_NS_USER] = "user", [SR_HELD_NS_MNT] = "mnt",  [SR_HELD_NS_PID] = "pid",
    [SR_HELD_NS_NET] = "net",   [SR_HELD_NS_IPC] = "ipc",  [SR_HELD_NS_UTS] = "uts",
    [SR_HELD_NS_CGROUP] = "cgroup",
  };
  char path[32];

  for (int i = 0; i < SR_HELD_NS_COUNT; i++)
    {
      snprintf (path, sizeof path, "/proc/self/ns/%s", ns[i]);
      fds[i] = open (path, O_RDONLY | O_CLOEXEC);
      if (fds[i] < 0)
        die (st, errno, "open %s", path);
    }
  fds[SR_HELD_ROOT] = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fds[SR_HELD_ROOT] < 0)
    die (st, errno, "open the root");
}

/* A held container's init: pid 1 of its namespace, reaping whatever the
 * commands that join it leave behind, until the runner closes the sync
 * socket or kills it.  Once the runner has its namespaces and root, it
 * keeps no more privilege than a command: not dumpable (it is a copy of
 * the runner's memory, a server's tokens with it), the command's
 * capabilities, no_new_privs and seccomp.  */
static __attribute__ ((noreturn)) void
hold (struct child_state *st)
{
  struct pollfd pfd = { .fd = st->args->sync_fd, .events = POLLIN };
  int held[SR_HELD_FDS];
  sigset_t chld;
  int sfd;

  sigemptyset (&chld);
  sigaddset (&chld, SIGCHLD);
  if (sigprocmask (SIG_BLOCK, &chld, NULL) < 0)
    die (st, errno, "block SIGCHLD");
  sfd = signalfd (-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
  if (sfd < 0)
    die (st, errno, "signalfd");
  /* Nothing of the runner stays open in the init but the sync socket.  */
  close_all_except ((int[]){ st->args->sync_fd, sfd, st->args->keep_fd },
                    st->args->keep_fd >= 0 ? 3 : 2);
  open_held_fds (st, held);
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    die (st, errno, "clear the dumpable flag");
  blank_runner_args ();
  apply_init_policy (st);
  st->msg.type = SR_SYNC_READY;
  if (sr_sync_send (st->args->sync_fd, &st->msg, held, SR_HELD_FDS) < 0)
    _exit (SR_CHILD_EXIT_SETUP);
  for (int i = 0; i < SR_HELD_FDS; i++)
    close (held[i]);
  for (;;)
    {
      struct pollfd fds[2] = { pfd, { .fd = sfd, .events = POLLIN } };
      struct signalfd_siginfo si;

      if (poll (fds, 2, -1) < 0 && errno != EINTR)
        _exit (SR_CHILD_EXIT_SETUP);
      if (fds[0].revents)
        _exit (0);
      while (read (sfd, &si, sizeof si) == sizeof si)
        ;
      while (waitpid (-1, NULL, WNOHANG) > 0)
        ;
    }
}

/* Ends the init the way the command ended, as far as an exit status can
 * say it: the runner reads the real wait status from the status pipe, and
 * this is only what it falls back on.  */
static __attribute__ ((noreturn)) void
exit_like (int status)
{
  _exit (WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
}

static uint64_t
timeval_ns (const struct timeval *tv)
{
  return (uint64_t) tv->tv_sec * 1000000000ull + (uint64_t) tv->tv_usec * 1000ull;
}

#define COMMAND_STACK_SIZE (256 * 1024)

struct command_start
{
  struct child_state *st;
  const int *fds;
};

static int
command_main (void *arg)
{
  struct command_start *cs = arg;
  sigset_t none;

  sigemptyset (&none);
  sigprocmask (SIG_SETMASK, &none, NULL);
  cs->st->send_pidfd = true;
  exec_command (cs->st, cs->fds);
}

/* Starts the command as the init's child, in the init's memory until its
 * execve, as posix_spawn does: no page table to copy, no copy-on-write
 * fault, and the init sleeps until the command has exec'd or failed.  No
 * atfork handler runs and no lock is taken (see sr_joiner_main).  */
static pid_t
spawn_command (struct child_state *st, const int *fds)
{
  struct command_start cs = { .st = st, .fds = fds };
  pid_t pid;

#ifdef __SANITIZE_ADDRESS__
  /* AddressSanitizer cannot follow a switch to a stack of our own: each
   * noreturn call on it warns on stderr, which is the command's.  A
   * sanitized build copies the init instead (the raw syscall, as in
   * sr_joiner_main); the other suites test the shared-memory start.  */
  pid = (pid_t) syscall (SYS_clone, (unsigned long) SIGCHLD, NULL, NULL, NULL, 0);
  if (pid == 0)
    command_main (&cs);
  if (pid < 0)
    die (st, errno, "start the command");
#else
  char *stack = mmap (NULL, COMMAND_STACK_SIZE, PROT_READ | PROT_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (stack == MAP_FAILED)
    die (st, errno, "map the command's stack");
  pid = clone (command_main, stack + COMMAND_STACK_SIZE, CLONE_VM | CLONE_VFORK | SIGCHLD, &cs);
  if (pid < 0)
    die (st, errno, "start the command");
  munmap (stack, COMMAND_STACK_SIZE);
#endif
  return pid;
}

/* A one-shot container's init.  The command is its child, pid 2, so the
 * signals the command sends itself (raise, abort, kill $$) reach it as on
 * a host, which they do not reach a pid 1 without a handler.  The init
 * passes on every signal sent to it, reaps orphans, and when the command
 * ends writes its wait status and CPU time to the status pipe (struct
 * sr_child_end) and exits, which kills whatever else is left in the pid
 * namespace.  The pipe is the runner's
 * only record of a death by signal (pid 1 cannot die of one it sends
 * itself), and nothing but the init holds it: the command's copy is
 * close-on-exec, and the init is not dumpable and keeps no capability the
 * command lacks, so neither ptrace nor /proc/1/fd reaches it.  */
static __attribute__ ((noreturn)) void
run_init (struct child_state *st, const int *fds)
{
  int status_fd = fds[4];
  struct sr_child_end end = { 0 };
  sigset_t all;
  pid_t command;
  int sfd;

  /* Out of the runner's session, so a terminal's ^C goes to the runner
   * (which cancels) and not also to the command through us.  */
  if (setsid () < 0)
    die (st, errno, "setsid");
  /* Blocked before the clone, so no SIGCHLD is lost; pid 1 gets the
   * signals it blocks (only unhandled ones are dropped).  */
  sigfillset (&all);
  if (sigprocmask (SIG_BLOCK, &all, NULL) < 0)
    die (st, errno, "block signals");
  sfd = signalfd (-1, &all, SFD_CLOEXEC);
  if (sfd < 0)
    die (st, errno, "signalfd");

  /* Before the command runs, which could read them otherwise.  The init
   * is a copy of the runner's memory that never execs (its environment, a
   * server's token): not dumpable, ptrace and /proc/1/mem need
   * CAP_SYS_PTRACE in the runner's user namespace; the command's execve
   * makes it dumpable again.  (A held container's init does the same in
   * hold, once it has handed over its namespaces.)  */
  if (prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    die (st, errno, "clear the dumpable flag");
  blank_runner_args ();
  /* Before the command exists, so the init never runs beside it with more
   * than it has.  The command inherits this policy, filter included, and
   * does its set-up under it: only unprivileged steps are left (setsid,
   * the controlling terminal, chdir, lowering rlimits), and the profile
   * allows those as it allows execve.  */
  apply_init_policy (st);
  st->policy_inherited = true;
  command = spawn_command (st, fds);

  /* The command's stdio and exec spec, and the runner's stdio, are not
   * ours to hold.  */
  for (int i = 0; i < 4; i++)
    close (fds[i]);
  syscall (SYS_close_range, 0, 2, 0);
  /* Last: the runner takes EOF on the sync socket for the command's
   * execve, so our copy must be gone by then.  */
  close (st->args->sync_fd);

  for (;;)
    {
      struct signalfd_siginfo si;
      ssize_t n = read (sfd, &si, sizeof si);
      struct rusage ru;
      int status;
      pid_t pid;

      if (n < 0 && errno != EINTR)
        _exit (SR_CHILD_EXIT_SETUP);
      if (n == sizeof si && si.ssi_signo != SIGCHLD)
        kill (command, (int) si.ssi_signo);
      while ((pid = wait4 (-1, &status, WNOHANG, &ru)) > 0)
        {
          end.cpu_ns += timeval_ns (&ru.ru_utime) + timeval_ns (&ru.ru_stime);
          if (pid == command)
            {
              end.status = status;
              if (write (status_fd, &end, sizeof end) != sizeof end)
                _exit (SR_CHILD_EXIT_SETUP);
              exit_like (status);
            }
        }
    }
}

void
sr_child_main (const struct sr_child_args *args)
{
  struct child_state st = { .args = args };
  int fds[SR_SYNC_MAX_FDS], sysctl_fds[SR_CHILD_MAX_SYSCTLS];
  size_t n_fds = 0;
  char errbuf[SR_SYNC_TEXT_MAX];
  struct sr_sync_msg in;

  st.msg.marks[SR_MARK_CHILD_START] = sr_now_ns ();
  close (args->parent_sync_fd);
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    die (&st, errno, "set the parent death signal");
  /* A parent that died before prctl is noticed as EOF on the sync socket
   * (getppid is no help: it reads 0 in a new pid namespace).  */
  reset_signals ();
  /* Before GO, while the parent writes our id maps.  */
  if (sr_cgroup_join_self (args->cgroup_fds, args->n_cgroup_fds) < 0)
    die (&st, errno, "move into the container's cgroups");
  for (size_t i = 0; i < args->n_cgroup_fds; i++)
    close (args->cgroup_fds[i]);

  /* sync 1: the parent has written our uid and gid maps, and sends the
   * detached (idmapped) mounts of the rootfs and binds, if any.  */
  wait_for (&st, SR_SYNC_GO, fds, SR_SYNC_MAX_FDS, &n_fds);
  become_root (&st);

  /* After GO: we are in our cgroups (moved by the parent, or by
   * ourselves above), so the new cgroup namespace is rooted at them.  */
  if (unshare (CLONE_NEWCGROUP) < 0)
    die (&st, errno, "unshare the cgroup namespace");
  open_userns_limits (&st, sysctl_fds);
  if (sr_mount_plan_apply (args->mounts, fds, n_fds, errbuf, sizeof errbuf,
                           &st.msg.marks[SR_MARK_MOUNTS]) < 0)
    die (&st, errno, "%s", errbuf);
  /* The container has all its namespaces: from here it makes none.  */
  lower_userns_limits (&st, sysctl_fds);
  st.msg.marks[SR_MARK_PIVOT] = sr_now_ns ();

  if (sr_netlink_loopback_up () < 0)
    die (&st, errno, "bring up lo");
  if (sethostname (args->hostname, strlen (args->hostname)) < 0)
    die (&st, errno, "sethostname %s", args->hostname);
  st.msg.marks[SR_MARK_NET] = sr_now_ns ();

  /* The runner's other fds, copied at clone, go before waiting: an init
   * may wait long (a warm container), and one holding another container's
   * sync socket or output pipe would keep that container's runner from
   * ever seeing its EOF.  START brings the fds the command needs.  */
  close_all_except ((int[]){ args->sync_fd, args->keep_fd }, args->keep_fd >= 0 ? 2 : 1);

  /* sync 2: built; wait for the command, or to be held.  */
  st.msg.marks[SR_MARK_READY] = sr_now_ns ();
  st.msg.type = SR_SYNC_READY;
  if (sr_sync_send (args->sync_fd, &st.msg, NULL, 0) < 0)
    _exit (SR_CHILD_EXIT_SETUP);

  /* sync 3: the exec spec and stdin, stdout, stderr; or HOLD.  */
  switch (sr_sync_recv (args->sync_fd, &in, fds, SR_SYNC_MAX_FDS, &n_fds))
    {
    case 0:
      break;
    case 1:
      _exit (SR_CHILD_EXIT_SETUP);
    default:
      die (&st, errno, "wait for the runner");
    }
  if (in.type == SR_SYNC_HOLD)
    hold (&st);
  if (in.type != SR_SYNC_START || n_fds != 5)
    die (&st, EPROTO, "expected START with 5 fds, got message %u with %zu", in.type, n_fds);
  run_init (&st, fds);
}

/* A command entering a held container: join all of its namespaces through
 * the init's pidfd, then fork, since only children enter a pid namespace.
 * This process waits for the command and ends the same way it did, so the
 * runner supervises it like an init.  */
void
sr_joiner_main (const struct sr_child_args *args, const int ns_fds[SR_HELD_NS_COUNT])
{
  struct child_state st = { .args = args };
  int fds[SR_SYNC_MAX_FDS], status;
  size_t n_fds = 0;
  pid_t pid;

  st.msg.marks[SR_MARK_CHILD_START] = sr_now_ns ();
  /* This process may outlive its clone by hours (a shell): the fds the
   * runner had open then, another container's sync socket or output pipe
   * among them, must not stay open with it.  */
  {
    int keep[SR_HELD_NS_COUNT + 1];

    memcpy (keep, ns_fds, SR_HELD_NS_COUNT * sizeof *keep);
    keep[SR_HELD_NS_COUNT] = args->sync_fd;
    close_all_except (keep, SR_HELD_NS_COUNT + 1);
  }
  if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
    die (&st, errno, "set the parent death signal");
  reset_signals ();

  /* GO: the parent has put us in the container's cgroups.  */
  wait_for (&st, SR_SYNC_GO, NULL, 0, NULL);
  for (int i = 0; i < SR_HELD_NS_COUNT; i++)
    {
      if (setns (ns_fds[i], 0) < 0)
        die (&st, errno, "join the container's namespaces");
      close (ns_fds[i]);
    }
  become_root (&st);
  st.msg.marks[SR_MARK_PIVOT] = st.msg.marks[SR_MARK_NET] = sr_now_ns ();
  st.msg.marks[SR_MARK_READY] = sr_now_ns ();
  st.msg.type = SR_SYNC_READY;
  if (sr_sync_send (args->sync_fd, &st.msg, NULL, 0) < 0)
    _exit (SR_CHILD_EXIT_SETUP);
  wait_for (&st, SR_SYNC_START, fds, SR_SYNC_MAX_FDS, &n_fds);
  if (n_fds != 4)
    die (&st, EPROTO, "START carried %zu fds, expected 4", n_fds);

  /* Not fork(3): this process is a raw clone of a threaded runner, and
   * glibc's fork takes the malloc arena locks, which another thread of
   * the runner may have held at the moment of our clone and which stay
   * locked here forever.  The raw syscall runs no atfork handler.  */
  pid = (pid_t) syscall (SYS_clone, (unsigned long) SIGCHLD, NULL, NULL, NULL, 0);
  if (pid < 0)
    die (&st, errno, "fork into the container");
  if (pid == 0)
    {
      if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        die (&st, errno, "set the parent death signal");
      exec_command (&st, fds);
    }
  /* The runner kills the command's process group by this pid.  Then our
   * copy of the socket goes: it must not hold it open, or the runner would
   * never see the EOF of the command's successful execve.  */
  st.msg.type = SR_SYNC_PID;
  st.msg.pid = pid;
  sr_sync_send (args->sync_fd, &st.msg, NULL, 0);
  close (args->sync_fd);
  for (size_t i = 0; i < n_fds; i++)
    close (fds[i]);
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      _exit (SR_CHILD_EXIT_SETUP);
  if (WIFSIGNALED (status))
    {
      signal (WTERMSIG (status), SIG_DFL);
      kill (getpid (), WTERMSIG (status));
    }
  exit_like (status);
}

int
sr_exec_spec_encode (int fd, char *const *argv, char *const *env, const char *cwd)
{
  char counts[64];
  int n;

  n = snprintf (counts, sizeof counts, "%zu%c%zu", sr_strv_length (argv), '\0',
                sr_strv_length (env));
  if (sr_write_all (fd, counts, (size_t) n + 1) < 0)
    return -1;
  for (char *const *a = argv; *a; a++)
    if (sr_write_all (fd, *a, strlen (*a) + 1) < 0)
      return -1;
  for (char *const *e = env; *e; e++)
    if (sr_write_all (fd, *e, strlen (*e) + 1) < 0)
      return -1;
  return sr_write_all (fd, cwd, strlen (cwd) + 1);
}
