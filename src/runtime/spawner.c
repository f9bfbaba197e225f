#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/pack.h"
#include "common/util.h"
#include "runtime/caps.h"
#include "runtime/child.h"
#include "runtime/mounts.h"
#include "runtime/seccomp.h"
#include "runtime/spawner.h"
#include "runtime/sync.h"

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* The largest request: a plan of SR_MOUNT_MAX_BINDS binds with long
 * paths still fits, and a socket's default send buffer takes it.  */
#define REQUEST_MAX (160 * 1024)

enum request_kind
{
  REQUEST_INIT,
  REQUEST_JOINER,
};

/* The spawner's answer: the child's pid (also when the pidfd could not be
 * had, so that the server reaps it), or the clone's errno.  */
struct reply
{
  int64_t pid;
  int32_t errnum;
  int32_t into_cgroup;
};

static struct
{
  pthread_mutex_t lock;  /* one request at a time on fd */
  int fd;                /* the server's end; -1: no spawner */
  pid_t pid;
} spawner = { PTHREAD_MUTEX_INITIALIZER, -1, 0 };

/* The server's name, which the spawner's children take back from it: an
 * init is named as it was before there was a spawner.  */
static char server_comm[16];

/* The clone itself, in whichever process makes it: clone3 with a pidfd,
 * into cgroup_fd where the kernel can; plain clone and pidfd_open where
 * clone3 is filtered (as Docker's seccomp profile does).  In the child it
 * runs the child's main and never returns.  Returns the pid, with
 * *pidfd (-1 when pidfd_open failed, errno set) and *into_cgroup; or -1
 * with errno.  */
static long
clone_child (const struct sr_child_args *args, uint64_t flags, const int *held_ns_fds,
             int cgroup_fd, int *pidfd, bool *into_cgroup)
{
  struct clone_args ca = { 0 };
  long pid;

  *pidfd = -1;
  *into_cgroup = false;
  ca.flags = flags | CLONE_PIDFD;
  ca.pidfd = (uint64_t) (uintptr_t) pidfd;
  /* With CLONE_PARENT the child signals as its parent's other children
   * do, and clone3 takes no exit_signal.  */
  ca.exit_signal = (flags & CLONE_PARENT) ? 0 : SIGCHLD;
  if (cgroup_fd >= 0)
    {
      ca.flags |= CLONE_INTO_CGROUP;
      ca.cgroup = (uint64_t) cgroup_fd;
    }
  pid = syscall (SYS_clone3, &ca, sizeof ca);
  if (pid < 0 && cgroup_fd >= 0 && (errno == EINVAL || errno == E2BIG))
    {
      /* An older kernel without CLONE_INTO_CGROUP: attached after.  */
      ca.flags &= ~CLONE_INTO_CGROUP;
      ca.cgroup = 0;
      pid = syscall (SYS_clone3, &ca, sizeof ca);
    }
  if (pid < 0 && errno == ENOSYS)
    {
      ca.flags &= ~(CLONE_INTO_CGROUP | CLONE_PIDFD);
      pid = syscall (SYS_clone, (unsigned long) (ca.flags | SIGCHLD), NULL, NULL, NULL, 0);
      if (pid > 0)
        *pidfd = (int) syscall (SYS_pidfd_open, (pid_t) pid, 0);
    }
  if (pid == 0)
    {
      if (server_comm[0])
        prctl (PR_SET_NAME, server_comm, 0, 0, 0);
      if (held_ns_fds)
        sr_joiner_main (args, held_ns_fds);
      sr_child_main (args);
    }
  if (pid > 0)
    *into_cgroup = (ca.flags & CLONE_INTO_CGROUP) != 0;
  return pid;
}

/* Spawner side.  */

/* The fds of a request, in the order they travel.  */
struct request_fds
{
  int *fds;
  size_t n;
  size_t next;
};

static int
take_fd (struct request_fds *r)
{
  return r->next < r->n ? r->fds[r->next++] : -1;
}

/* Rebuilds the args the server packed, with the plans they point to, and
 * clones.  Returns the reply: the child's pid, or why there is none.  */
static struct reply
serve_request (int sock, const char *buf, size_t len, int *fds, size_t n_fds, int *pidfd)
{
  struct reply rep = { .errnum = EBADMSG };
  struct request_fds rf = { fds, n_fds, 0 };
  struct sr_child_args a = { .sync_fd = -1, .keep_fd = -1 };
  struct sr_caps_plan caps = { 0 };
  struct sr_seccomp_filter *seccomp = NULL;
  struct sr_mount_plan *mounts = NULL;
  struct sr_unpack u;
  uint64_t kind, flags, has_cgroup_fd, n;
  int held_ns_fds[SR_HELD_NS_COUNT], cgroup_fd = -1;
  bool into_cgroup;
  long pid;

  sr_unpack_init (&u, buf, len);
  kind = sr_unpack_u64 (&u);
  flags = sr_unpack_u64 (&u);
  has_cgroup_fd = sr_unpack_u64 (&u);
  /* The child's first act is to close the parent's end of its sync
   * socket: here, the spawner's socket, which is nothing of the child's.  */
  a.parent_sync_fd = sock;
  a.hostname = sr_unpack_str (&u);
  a.setgroups_allowed = sr_unpack_u64 (&u) != 0;
  a.umask = (mode_t) sr_unpack_u64 (&u);
  a.n_rlimits = sr_unpack_u64 (&u);
  a.n_sysctls = sr_unpack_u64 (&u);
  a.n_cgroup_fds = sr_unpack_u64 (&u);
  if (u.bad || kind > REQUEST_JOINER || a.n_rlimits > SR_CHILD_MAX_RLIMITS
      || a.n_sysctls > SR_CHILD_MAX_SYSCTLS || a.n_cgroup_fds > SR_CGROUP_MAX_V1)
    goto out;
  sr_unpack_bytes (&u, a.rlimits, a.n_rlimits * sizeof *a.rlimits);
  sr_unpack_bytes (&u, a.sysctls, a.n_sysctls * sizeof *a.sysctls);
  for (size_t i = 0; i < a.n_sysctls; i++)
    {
      a.sysctls[i].path[sizeof a.sysctls[i].path - 1] = '\0';
      a.sysctls[i].value[sizeof a.sysctls[i].value - 1] = '\0';
    }
  if (sr_unpack_u64 (&u) && !u.bad)
    {
      if (sr_caps_plan_init (&caps, sr_unpack_u64 (&u), NULL) < 0)
        goto out;
      caps.uid = (uid_t) sr_unpack_u64 (&u);
      caps.gid = (gid_t) sr_unpack_u64 (&u);
      a.caps = &caps;
    }
  if (sr_unpack_u64 (&u) && !u.bad)
    {
      if (sr_seccomp_filter_unpack (&u, &seccomp) < 0)
        goto out;
      a.seccomp = seccomp;
    }
  if (sr_unpack_u64 (&u) && !u.bad)
    {
      if (sr_mount_plan_unpack (&u, &mounts) < 0)
        goto out;
      a.mounts = mounts;
    }
  n = sr_unpack_u64 (&u);
  if (u.bad || u.left != 0
      || n_fds != 1 + a.n_cgroup_fds + (n != 0) + (has_cgroup_fd != 0)
                      + (kind == REQUEST_JOINER ? SR_HELD_NS_COUNT : 0))
    goto out;
  a.sync_fd = take_fd (&rf);
  for (size_t i = 0; i < a.n_cgroup_fds; i++)
    a.cgroup_fds[i] = take_fd (&rf);
  if (n)
    a.keep_fd = take_fd (&rf);
  if (has_cgroup_fd)
    cgroup_fd = take_fd (&rf);
  for (size_t i = 0; kind == REQUEST_JOINER && i < SR_HELD_NS_COUNT; i++)
    held_ns_fds[i] = take_fd (&rf);

  pid = clone_child (&a, flags | CLONE_PARENT, kind == REQUEST_JOINER ? held_ns_fds : NULL,
                     cgroup_fd, pidfd, &into_cgroup);
  rep.pid = pid > 0 ? pid : 0;
  rep.errnum = pid < 0 || *pidfd < 0 ? errno : 0;
  rep.into_cgroup = into_cgroup;
out:
  sr_mount_plan_free (mounts);
  sr_seccomp_filter_free (seccomp);
  sr_caps_plan_done (&caps);
  return rep;
}

__attribute__ ((noreturn)) static void
spawner_main (int sock)
{
  static char buf[REQUEST_MAX];

  for (;;)
    {
      int fds[SR_SYNC_MAX_FDS], pidfd = -1;
      size_t n_fds = 0;
      ssize_t len = sr_msg_recv (sock, buf, sizeof buf, fds, SR_SYNC_MAX_FDS, &n_fds);
      struct reply rep = { .errnum = EBADMSG };

      if (len == 0)
        _exit (0);
      if (len > 0)
        rep = serve_request (sock, buf, (size_t) len, fds, n_fds, &pidfd);
      else if (errno != EBADMSG)
        _exit (1);
      for (size_t i = 0; i < n_fds; i++)
        close (fds[i]);
      if (sr_msg_send (sock, &rep, sizeof rep, &pidfd, pidfd >= 0) < 0)
        _exit (1);
      if (pidfd >= 0)
        close (pidfd);
    }
}

int
sr_spawner_start (sr_error_t *err)
{
  pid_t parent = getpid (), pid;
  int sv[2], null_fd;

  if (spawner.fd >= 0)
    return 0;
  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return sr_error_set (err, errno, "socketpair for the spawner");
  pid = fork ();
  if (pid < 0)
    {
      int saved = errno;

      close (sv[0]);
      close (sv[1]);
      return sr_error_set (err, saved, "fork the spawner");
    }
  if (pid == 0)
    {
      /* Nothing of the server's stays open here, or in the children,
       * which start with the spawner's fds: its client's pipes would not
       * see EOF while the spawner lived.  */
      if (prctl (PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid () != parent)
        _exit (0);
      prctl (PR_GET_NAME, server_comm, 0, 0, 0);
      prctl (PR_SET_NAME, "sr-spawner", 0, 0, 0);
      null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd < 0 || dup2 (null_fd, STDIN_FILENO) < 0 || dup2 (null_fd, STDOUT_FILENO) < 0)
        _exit (1);
      if (dup2 (sv[1], 3) < 0)
        _exit (1);
      syscall (SYS_close_range, 4, ~0U, 0);
      spawner_main (3);
    }
  close (sv[1]);
  spawner.fd = sv[0];
  spawner.pid = pid;
  return 0;
}

void
sr_spawner_stop (void)
{
  pthread_mutex_lock (&spawner.lock);
  if (spawner.fd >= 0)
    {
      close (spawner.fd);
      __atomic_store_n (&spawner.fd, -1, __ATOMIC_RELAXED);
      waitpid (spawner.pid, NULL, 0);
      spawner.pid = 0;
    }
  pthread_mutex_unlock (&spawner.lock);
}

pid_t
sr_spawner_pid (void)
{
  return spawner.pid;
}

/* Server side.  */

static void
pack_args (const struct sr_child_args *a, uint64_t ns_flags, bool joiner, int cgroup_fd,
           struct sr_pack *p)
{
  sr_pack_u64 (p, joiner ? REQUEST_JOINER : REQUEST_INIT);
  sr_pack_u64 (p, ns_flags);
  sr_pack_u64 (p, cgroup_fd >= 0);
  sr_pack_str (p, a->hostname);
  sr_pack_u64 (p, a->setgroups_allowed);
  sr_pack_u64 (p, a->umask);
  sr_pack_u64 (p, a->n_rlimits);
  sr_pack_u64 (p, a->n_sysctls);
  sr_pack_u64 (p, a->n_cgroup_fds);
  sr_pack_bytes (p, a->rlimits, a->n_rlimits * sizeof *a->rlimits);
  sr_pack_bytes (p, a->sysctls, a->n_sysctls * sizeof *a->sysctls);
  sr_pack_u64 (p, a->caps != NULL);
  if (a->caps)
    {
      sr_pack_u64 (p, a->caps->keep);
      sr_pack_u64 (p, a->caps->uid);
      sr_pack_u64 (p, a->caps->gid);
    }
  sr_pack_u64 (p, a->seccomp != NULL);
  if (a->seccomp)
    sr_seccomp_filter_pack (a->seccomp, p);
  sr_pack_u64 (p, a->mounts != NULL);
  if (a->mounts)
    sr_mount_plan_pack (a->mounts, p);
  sr_pack_u64 (p, a->keep_fd >= 0);
}

/* What became of a request to the spawner.  */
enum asked
{
  ASKED_ANSWERED,   /* the reply is in */
  ASKED_NOT_TAKEN,  /* no spawner (any more): nothing was cloned */
  ASKED_LOST,       /* it went away with the request: a child may exist */
};

/* Asks the spawner.  When it cannot answer (errno says why), it is gone
 * for every later call too.  */
static enum asked
ask_spawner (const struct sr_pack *req, const int *fds, size_t n_fds, struct reply *rep,
             int *pidfd)
{
  enum asked r = ASKED_NOT_TAKEN;
  size_t n_got = 0;
  ssize_t len;

  pthread_mutex_lock (&spawner.lock);
  if (spawner.fd < 0)
    {
      errno = ESRCH;
      goto out;
    }
  if (sr_msg_send (spawner.fd, req->buf, req->len, fds, n_fds) < 0)
    goto gone;
  r = ASKED_LOST;
  len = sr_msg_recv (spawner.fd, rep, sizeof *rep, pidfd, 1, &n_got);
  if (len == (ssize_t) sizeof *rep)
    {
      if (n_got == 0)
        *pidfd = -1;
      r = ASKED_ANSWERED;
      goto out;
    }
  if (n_got)
    close (*pidfd);
  if (len >= 0)
    errno = len == 0 ? ECONNRESET : EBADMSG;
gone:
  {
    int saved = errno;

    sr_log (SR_LOG_WARNING, "spawner_gone", "error", strerror (saved), NULL);
    close (spawner.fd);
    __atomic_store_n (&spawner.fd, -1, __ATOMIC_RELAXED);
    kill (spawner.pid, SIGKILL);
    waitpid (spawner.pid, NULL, 0);
    spawner.pid = 0;
    errno = saved;
  }
out:
  pthread_mutex_unlock (&spawner.lock);
  return r;
}

int
sr_spawn (const struct sr_child_args *args, uint64_t ns_flags, const int *held_ns_fds,
          int cgroup_fd, pid_t *ret_pid, int *ret_pidfd, bool *ret_into_cgroup, sr_error_t *err)
{
  bool joiner = held_ns_fds != NULL, local = true;
  int pidfd = -1;
  long pid = -1;

  if (__atomic_load_n (&spawner.fd, __ATOMIC_RELAXED) >= 0)
    {
      struct sr_pack req = { 0 };
      int fds[SR_SYNC_MAX_FDS];
      size_t n = 0;
      struct reply rep;

      pack_args (args, ns_flags, joiner, cgroup_fd, &req);
      fds[n++] = args->sync_fd;
      for (size_t i = 0; i < args->n_cgroup_fds; i++)
        fds[n++] = args->cgroup_fds[i];
      if (args->keep_fd >= 0)
        fds[n++] = args->keep_fd;
      if (cgroup_fd >= 0)
        fds[n++] = cgroup_fd;
      for (size_t i = 0; joiner && i < SR_HELD_NS_COUNT; i++)
        fds[n++] = held_ns_fds[i];
      /* A request too large for the spawner is cloned here.  */
      switch (req.len <= REQUEST_MAX ? ask_spawner (&req, fds, n, &rep, &pidfd) : ASKED_NOT_TAKEN)
        {
        case ASKED_ANSWERED:
          local = false;
          pid = rep.pid > 0 ? rep.pid : -1;
          errno = rep.errnum;
          *ret_into_cgroup = rep.into_cgroup != 0;
          break;
        case ASKED_LOST:
          /* Not cloned again on the same sync socket: a child the spawner
           * made before it went sees that socket close with this call's
           * failure, and ends.  */
          free (req.buf);
          return sr_error_set (err, errno, "clone: the spawner went away");
        case ASKED_NOT_TAKEN:
          break;
        }
      free (req.buf);
    }
  if (local)
    pid = clone_child (args, ns_flags, held_ns_fds, cgroup_fd, &pidfd, ret_into_cgroup);
  if (pid > 0 && pidfd < 0)
    {
      int saved = errno;

      kill ((pid_t) pid, SIGKILL);
      waitpid ((pid_t) pid, NULL, 0);
      return sr_error_set (err, saved, "pidfd_open");
    }
  if (pid < 0)
    {
      if (!joiner && (errno == EPERM || errno == ENOSPC || errno == EUSERS))
        return sr_error_set (err, errno, "clone: cannot create the namespaces (are unprivileged "
                             "user namespaces disabled? see kernel.unprivileged_userns_clone and "
                             "user.max_user_namespaces)");
      return sr_error_set (err, errno, "clone");
    }
  *ret_pid = (pid_t) pid;
  *ret_pidfd = pidfd;
  return 0;
}
