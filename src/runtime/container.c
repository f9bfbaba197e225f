#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "runtime/caps.h"
#include "runtime/cgroup.h"
#include "runtime/child.h"
#include "runtime/container.h"
#include "runtime/idmap.h"
#include "runtime/mounts.h"
#include "runtime/supervise.h"
#include "runtime/sync.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

#define NAMESPACE_FLAGS \
  (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

struct sr_container
{
  pid_t pid;
  int pidfd;
  int sync_fd;
  bool reaped;
  bool started;
  struct sr_mount_plan *mounts;
  struct sr_caps_plan caps;
  struct sr_idmap idmap;
  struct sr_cgroup *cgroup;
  struct sr_limit_report limits;
  uint64_t memory_limit;
  uint64_t marks[SR_MARK_MAX];
  struct sr_child_args child;
};

const char *
sr_run_status_name (enum sr_run_status s)
{
  switch (s)
    {
    case SR_RUN_SUCCESS: return "success";
    case SR_RUN_ERROR: return "error";
    case SR_RUN_TIMEOUT: return "timeout";
    case SR_RUN_OOM: return "oom";
    case SR_RUN_CANCELLED: return "cancelled";
    }
  return "unknown";
}

void
sr_run_result_done (struct sr_run_result *r)
{
  sr_captured_done (&r->out);
  sr_captured_done (&r->err);
}

pid_t
sr_container_pid (const struct sr_container *c)
{
  return c->pid;
}

static int
pidfd_signal (int pidfd, int sig)
{
  return (int) syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static void
kill_container (void *ctx)
{
  struct sr_container *c = ctx;

  if (c->pidfd >= 0 && !c->reaped)
    pidfd_signal (c->pidfd, SIGKILL);
  if (c->cgroup)
    sr_cgroup_kill (c->cgroup, NULL);
}

/* Describes how the init ended, for a failure before it reported why.  */
static int
init_died (struct sr_container *c, const char *when, sr_error_t *err)
{
  siginfo_t si = { 0 };

  if (waitid (P_PIDFD, (id_t) c->pidfd, &si, WEXITED) == 0)
    {
      c->reaped = true;
      if (si.si_code == CLD_EXITED)
        return sr_error_set (err, 0, "container init exited with status %d %s", si.si_status,
                             when);
      return sr_error_set (err, 0, "container init killed by signal %d (%s) %s", si.si_status,
                           strsignal (si.si_status), when);
    }
  return sr_error_set (err, 0, "container init vanished %s", when);
}

/* Receives the next message and turns an ERROR or EOF into an error.  */
static int
expect (struct sr_container *c, enum sr_sync_type type, const char *when, sr_error_t *err)
{
  struct sr_sync_msg msg;
  int r;

  r = sr_sync_recv (c->sync_fd, &msg, NULL, 0, NULL);
  if (r == 1)
    return init_died (c, when, err);
  if (r < 0)
    return sr_error_set (err, errno, "read from the container's sync socket");
  for (int i = 0; i < SR_MARK_MAX; i++)
    if (msg.marks[i])
      c->marks[i] = msg.marks[i];
  if (msg.type == SR_SYNC_ERROR)
    return sr_error_set (err, msg.errnum, "%s", msg.text);
  if (msg.type != type)
    return sr_error_set (err, EPROTO, "unexpected message %u from the container", msg.type);
  return 0;
}

static int
send_msg (struct sr_container *c, enum sr_sync_type type, const int *fds, size_t n_fds,
          sr_error_t *err)
{
  struct sr_sync_msg msg = { .type = type };

  if (sr_sync_send (c->sync_fd, &msg, fds, n_fds) < 0)
    return sr_error_set (err, errno, "write to the container's sync socket");
  return 0;
}

static void
add_rlimit (struct sr_child_args *a, int resource, rlim_t value)
{
  a->rlimits[a->n_rlimits].resource = resource;
  a->rlimits[a->n_rlimits].value.rlim_cur = value;
  a->rlimits[a->n_rlimits].value.rlim_max = value;
  a->n_rlimits++;
}

/* What a cgroup could not take, rlimits take where they mean the same:
 * address space for memory, processes for pids.  A CPU share has no rlimit
 * equivalent and stays unenforced (and reported so).  */
static int
plan_limits (struct sr_container *c, const struct sr_container_config *cfg, const char *name,
             sr_error_t *err)
{
  const struct sr_cgroup_limits *l = &cfg->limits;
  struct sr_limit_report *rep = &c->limits;

  memset (rep, 0, sizeof *rep);
  c->memory_limit = l->memory;
  if (l->memory || l->cpus > 0 || l->pids)
    {
      if (sr_cgroup_create (l, name, &c->cgroup, rep, err) < 0)
        return -1;
    }
  add_rlimit (&c->child, RLIMIT_CORE, 0);
  if (l->memory && rep->memory == SR_LIMIT_NONE)
    {
      add_rlimit (&c->child, RLIMIT_AS, l->memory);
      rep->memory = SR_LIMIT_RLIMIT;
    }
  if (l->pids && rep->pids == SR_LIMIT_NONE)
    {
      add_rlimit (&c->child, RLIMIT_NPROC, l->pids);
      rep->pids = SR_LIMIT_RLIMIT;
    }
  if (cfg->max_file_size)
    add_rlimit (&c->child, RLIMIT_FSIZE, cfg->max_file_size);
  if (cfg->max_open_files)
    add_rlimit (&c->child, RLIMIT_NOFILE, cfg->max_open_files);
  if (cfg->strict_limits)
    {
      if (l->memory && rep->memory == SR_LIMIT_NONE)
        return sr_error_set (err, 0, "strict limits: the memory limit cannot be enforced here");
      if (l->cpus > 0 && rep->cpu == SR_LIMIT_NONE)
        return sr_error_set (err, 0, "strict limits: the CPU limit cannot be enforced here "
                             "(no writable cpu cgroup)");
      if (l->pids && rep->pids == SR_LIMIT_NONE)
        return sr_error_set (err, 0, "strict limits: the pids limit cannot be enforced here");
    }
  return 0;
}

static int
spawn (struct sr_container *c, sr_error_t *err)
{
  int cgroup_fd = c->cgroup ? sr_cgroup_clone_fd (c->cgroup) : -1;
  struct clone_args ca = { 0 };
  int pidfd = -1;
  long pid;

  ca.flags = NAMESPACE_FLAGS | CLONE_PIDFD;
  ca.pidfd = (uint64_t) (uintptr_t) &pidfd;
  ca.exit_signal = SIGCHLD;
  if (cgroup_fd >= 0)
    {
      ca.flags |= CLONE_INTO_CGROUP;
      ca.cgroup = (uint64_t) cgroup_fd;
    }
  c->marks[SR_MARK_CLONE] = sr_now_ns ();
  pid = syscall (SYS_clone3, &ca, sizeof ca);
  if (pid < 0 && cgroup_fd >= 0 && (errno == EINVAL || errno == E2BIG))
    {
      /* An older kernel without CLONE_INTO_CGROUP: attach after clone.  */
      ca.flags &= ~CLONE_INTO_CGROUP;
      ca.cgroup = 0;
      cgroup_fd = -1;
      pid = syscall (SYS_clone3, &ca, sizeof ca);
    }
  if (pid < 0 && errno == ENOSYS)
    {
      /* clone3 filtered (as Docker's seccomp profile does): plain clone,
       * then a pidfd for the child.  */
      cgroup_fd = -1;
      pid = syscall (SYS_clone, (unsigned long) (NAMESPACE_FLAGS | SIGCHLD), NULL, NULL, NULL, 0);
      if (pid > 0)
        {
          pidfd = (int) syscall (SYS_pidfd_open, (pid_t) pid, 0);
          if (pidfd < 0)
            {
              int saved = errno;

              kill ((pid_t) pid, SIGKILL);
              waitpid ((pid_t) pid, NULL, 0);
              return sr_error_set (err, saved, "pidfd_open");
            }
        }
    }
  if (pid < 0)
    {
      if (errno == EPERM || errno == ENOSPC || errno == EUSERS)
        return sr_error_set (err, errno, "clone: cannot create the namespaces (are unprivileged "
                             "user namespaces disabled? see kernel.unprivileged_userns_clone and "
                             "user.max_user_namespaces)");
      return sr_error_set (err, errno, "clone");
    }
  if (pid == 0)
    sr_child_main (&c->child);

  c->pid = (pid_t) pid;
  c->pidfd = pidfd;
  if (c->cgroup && cgroup_fd < 0 && sr_cgroup_attach (c->cgroup, c->pid, err) < 0)
    return -1;
  return 0;
}

int
sr_container_create (const struct sr_container_config *cfg, struct sr_container **ret,
                     sr_error_t *err)
{
  static unsigned serial;
  struct sr_container *c;
  int sv[2];
  char name[64];

  c = sr_xcalloc (1, sizeof *c);
  c->pidfd = -1;
  c->sync_fd = -1;
  c->caps.final = NULL;
  snprintf (name, sizeof name, "sr-%ld-%u", (long) getpid (),
            __atomic_fetch_add (&serial, 1, __ATOMIC_RELAXED));

  if (!sr_is_dir (cfg->fs.rootfs))
    {
      sr_error_set (err, errno, "rootfs %s", cfg->fs.rootfs);
      goto fail;
    }
  if (sr_mount_plan_new (&cfg->fs, &c->mounts, err) < 0)
    goto fail;
  if (sr_caps_plan_init (&c->caps, cfg->keep_caps, err) < 0)
    goto fail;
  if (sr_idmap_plan (&c->idmap, "/etc/subuid", "/etc/subgid", err) < 0)
    goto fail;
  if (plan_limits (c, cfg, name, err) < 0)
    goto fail;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    {
      sr_error_set (err, errno, "socketpair");
      goto fail;
    }
  c->sync_fd = sv[0];
  c->child.sync_fd = sv[1];
  c->child.parent_sync_fd = sv[0];
  c->child.mounts = c->mounts;
  c->child.hostname = cfg->hostname ? cfg->hostname : SR_DEFAULT_HOSTNAME;
  c->child.setgroups_allowed = sr_idmap_setgroups_allowed (&c->idmap);
  c->child.caps = &c->caps;
  c->child.seccomp = cfg->seccomp;

  if (spawn (c, err) < 0)
    {
      close (sv[1]);
      goto fail;
    }
  close (sv[1]);
  c->child.sync_fd = -1;

  if (sr_idmap_apply (&c->idmap, c->pid, err) < 0)
    goto fail;
  c->marks[SR_MARK_IDMAP] = sr_now_ns ();
  if (send_msg (c, SR_SYNC_GO, NULL, 0, err) < 0)
    goto fail;
  if (expect (c, SR_SYNC_READY, "while building the container", err) < 0)
    goto fail;
  *ret = c;
  return 0;

fail:
  sr_container_destroy (c);
  return -1;
}

static char **
default_env (void)
{
  char **env = NULL;

  sr_strv_push (&env, "PATH=" SR_DEFAULT_PATH);
  sr_strv_push (&env, "HOME=" SR_DEFAULT_HOME);
  sr_strv_push (&env, "LANG=" SR_DEFAULT_LANG);
  return env;
}

static int
make_spec_fd (const struct sr_exec_spec *spec, sr_error_t *err)
{
  _cleanup_strv_ char **env = NULL;
  _cleanup_close_ int fd = -1;

  fd = memfd_create ("sr-exec-spec", MFD_CLOEXEC);
  if (fd < 0)
    return sr_error_set (err, errno, "memfd_create");
  if (spec->env == NULL)
    env = default_env ();
  if (sr_exec_spec_encode (fd, spec->argv, spec->env ? spec->env : env,
                           spec->cwd ? spec->cwd : SR_DEFAULT_WORKDIR) < 0)
    return sr_error_set (err, errno, "write the exec spec");
  return TAKE_FD (fd);
}

static void
fill_status (struct sr_container *c, const struct sr_supervise_outcome *o,
             struct sr_run_result *res)
{
  if (o->exit.si_code == CLD_EXITED)
    res->exit_code = o->exit.si_status;
  else
    res->signal = o->exit.si_status;

  if (o->timed_out)
    res->status = SR_RUN_TIMEOUT;
  else if (o->cancelled)
    res->status = SR_RUN_CANCELLED;
  else if (c->cgroup && sr_cgroup_oom_killed (c->cgroup))
    res->status = SR_RUN_OOM;
  else if (res->signal == 0 && res->exit_code == 0)
    res->status = SR_RUN_SUCCESS;
  else
    res->status = SR_RUN_ERROR;
  if (c->cgroup)
    res->memory_peak = sr_cgroup_memory_peak (c->cgroup);
}

int
sr_container_start (struct sr_container *c, const struct sr_exec_spec *spec,
                    const struct sr_run_options *opts, struct sr_run_result *result,
                    sr_error_t *err)
{
  _cleanup_close_ int spec_fd = -1, null_fd = -1;
  int out[2] = { -1, -1 }, errp[2] = { -1, -1 };
  struct sr_supervise_outcome outcome = { 0 };
  struct sr_supervise_io io = { 0 };
  uint64_t t0;
  int r = -1;

  memset (result, 0, sizeof *result);
  result->limits = c->limits;
  result->memory_limit = c->memory_limit;
  if (c->started)
    return sr_error_set (err, EBUSY, "a container runs one command only");
  c->started = true;
  if (spec->argv == NULL || spec->argv[0] == NULL)
    return sr_error_set (err, EINVAL, "no command given");

  spec_fd = make_spec_fd (spec, err);
  if (spec_fd < 0)
    goto out;
  if (opts->stdin_fd < 0)
    {
      null_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null_fd < 0)
        {
          sr_error_set (err, errno, "open /dev/null");
          goto out;
        }
    }
  if (pipe2 (out, O_CLOEXEC) < 0 || pipe2 (errp, O_CLOEXEC) < 0)
    {
      sr_error_set (err, errno, "pipe");
      goto out;
    }

  {
    int fds[4] = { spec_fd, opts->stdin_fd >= 0 ? opts->stdin_fd : null_fd, out[1], errp[1] };

    t0 = sr_now_ns ();
    c->marks[SR_MARK_START] = t0;
    if (send_msg (c, SR_SYNC_START, fds, 4, err) < 0)
      goto out;
  }
  close (out[1]);
  close (errp[1]);
  out[1] = errp[1] = -1;

  if (expect (c, SR_SYNC_EXEC, "before exec", err) < 0)
    goto out;
  /* The socket closes at a successful execve; a message means it failed.  */
  {
    struct sr_sync_msg msg;
    int rr = sr_sync_recv (c->sync_fd, &msg, NULL, 0, NULL);

    if (rr == 0 && msg.type == SR_SYNC_ERROR)
      {
        result->exit_code = msg.errnum == ENOENT ? 127 : 126;
        sr_error_set (err, msg.errnum, "%s", msg.text);
        goto out;
      }
    if (rr < 0)
      {
        sr_error_set (err, errno, "read from the container's sync socket");
        goto out;
      }
  }
  c->marks[SR_MARK_EXEC] = sr_now_ns ();

  fcntl (out[0], F_SETFL, O_NONBLOCK);
  fcntl (errp[0], F_SETFL, O_NONBLOCK);
  io.out_fd = out[0];
  io.err_fd = errp[0];
  io.pidfd = c->pidfd;
  io.cancel_fd = opts->cancel_fd;
  io.timeout_ms = opts->timeout_ms;
  io.max_output = opts->max_output ? opts->max_output : SR_DEFAULT_MAX_OUTPUT;
  io.on_output = opts->on_output;
  io.userdata = opts->userdata;
  io.kill = kill_container;
  io.kill_ctx = c;
  if (sr_supervise (&io, &outcome, err) < 0)
    goto out;
  c->reaped = true;
  result->duration_ns = sr_now_ns () - t0;
  fill_status (c, &outcome, result);
  result->out = outcome.out;
  result->err = outcome.err;
  memset (&outcome, 0, sizeof outcome);
  r = 0;

out:
  memcpy (result->marks, c->marks, sizeof c->marks);
  sr_captured_done (&outcome.out);
  sr_captured_done (&outcome.err);
  for (int i = 0; i < 2; i++)
    {
      if (out[i] >= 0)
        close (out[i]);
      if (errp[i] >= 0)
        close (errp[i]);
    }
  return r;
}

void
sr_container_destroy (struct sr_container *c)
{
  if (c == NULL)
    return;
  if (c->pidfd >= 0)
    {
      if (!c->reaped)
        {
          siginfo_t si;

          pidfd_signal (c->pidfd, SIGKILL);
          waitid (P_PIDFD, (id_t) c->pidfd, &si, WEXITED);
        }
      close (c->pidfd);
    }
  else if (c->pid > 0)
    {
      kill (c->pid, SIGKILL);
      waitpid (c->pid, NULL, 0);
    }
  if (c->sync_fd >= 0)
    close (c->sync_fd);
  sr_cgroup_destroy (c->cgroup, NULL);
  sr_mount_plan_free (c->mounts);
  sr_caps_plan_done (&c->caps);
  free (c);
}

int
sr_container_run (const struct sr_container_config *cfg, const struct sr_exec_spec *spec,
                  const struct sr_run_options *opts, struct sr_run_result *result,
                  sr_error_t *err)
{
  struct sr_container *c = NULL;
  int r;

  memset (result, 0, sizeof *result);
  if (sr_container_create (cfg, &c, err) < 0)
    return -1;
  r = sr_container_start (c, spec, opts, result, err);
  sr_container_destroy (c);
  return r;
}
