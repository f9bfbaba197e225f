#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "runtime/caps.h"
#include "runtime/cgroup.h"
#include "runtime/child.h"
#include "runtime/container.h"
#include "runtime/idmap.h"
#include "runtime/mounts.h"
#include "runtime/spawner.h"
#include "runtime/state.h"
#include "runtime/supervise.h"
#include "runtime/sync.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define NAMESPACE_FLAGS \
  (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)

/* A process the runner talks to and supervises: the container's init, or
 * a joiner that runs one command inside a held container.  */
struct proc
{
  pid_t pid;
  int pidfd;
  int sync_fd;
  bool reaped;
  pid_t command_pid;     /* joiner's command, for its process group */
  int command_pidfd;     /* an init's command (pid 2), once it exec'd; or -1 */
  struct sr_cgroup_exec *exec_cgroup;  /* a joiner's, with its command's whole tree */
  struct sr_container *container;
  uint64_t marks[SR_MARK_MAX];
};

struct sr_container
{
  struct proc init;
  bool started;
  bool held;
  struct sr_mount_plan *mounts;
  struct sr_caps_plan caps;
  struct sr_idmap idmap;
  struct sr_cgroup *cgroup;
  struct sr_limit_report limits;
  uint64_t memory_limit;
  struct sr_child_args child;
  char name[64];
  struct sr_state state;
  char *state_dir;        /* set once the state entry is written */
  int held_fds[SR_HELD_FDS];  /* a held init's namespaces and root, or -1 */
};

pid_t
sr_container_pid (const struct sr_container *c)
{
  return c->init.pid;
}

int
sr_container_root_fd (const struct sr_container *c)
{
  return c->held_fds[SR_HELD_ROOT];
}

static int
pidfd_signal (int pidfd, int sig)
{
  return (int) syscall (SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Kills what the supervised process stands for: a whole container when it
 * is the init; when it is a joiner, its command's cgroup (the whole tree
 * it started), or its process group where there is no cgroup.  Short of
 * all, an init's command alone, which the init then reaps and reports.  */
static void
kill_proc (void *ctx, bool all)
{
  struct proc *p = ctx;

  if (!all && p->command_pidfd >= 0)
    {
      pidfd_signal (p->command_pidfd, SIGKILL);
      return;
    }
  if (p->pidfd >= 0 && !p->reaped)
    pidfd_signal (p->pidfd, SIGKILL);
  if (p->exec_cgroup)
    sr_cgroup_exec_kill (p->exec_cgroup, NULL);
  if (p->command_pid > 0)
    kill (-p->command_pid, SIGKILL);
  else if (p->container->cgroup)
    sr_cgroup_kill (p->container->cgroup, NULL);
}

static void
proc_reap (struct proc *p)
{
  siginfo_t si;

  if (p->pidfd >= 0)
    {
      if (!p->reaped)
        {
          pidfd_signal (p->pidfd, SIGKILL);
          waitid (P_PIDFD, (id_t) p->pidfd, &si, WEXITED);
        }
      close (p->pidfd);
    }
  else if (p->pid > 0 && !p->reaped)
    {
      kill (p->pid, SIGKILL);
      waitpid (p->pid, NULL, 0);
    }
  if (p->sync_fd >= 0)
    close (p->sync_fd);
  if (p->command_pidfd >= 0)
    close (p->command_pidfd);
  sr_cgroup_exec_done (p->exec_cgroup);
  p->exec_cgroup = NULL;
  p->pidfd = p->sync_fd = p->command_pidfd = -1;
  p->reaped = true;
}

static bool
proc_alive (struct proc *p)
{
  siginfo_t si = { 0 };

  if (p->reaped || p->pidfd < 0)
    return false;
  if (waitid (P_PIDFD, (id_t) p->pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
    return false;
  return si.si_pid == 0;
}

/* Describes how the process ended, for a failure before it said why.  */
static int
proc_died (struct proc *p, const char *when, sr_error_t *err)
{
  siginfo_t si = { 0 };

  if (waitid (P_PIDFD, (id_t) p->pidfd, &si, WEXITED) == 0)
    {
      p->reaped = true;
      if (si.si_code == CLD_EXITED)
        return sr_error_set (err, 0, "container init exited with status %d %s", si.si_status,
                             when);
      return sr_error_set (err, 0, "container init killed by signal %d (%s) %s", si.si_status,
                           strsignal (si.si_status), when);
    }
  return sr_error_set (err, 0, "container init vanished %s", when);
}

static void
merge_marks (struct proc *p, const struct sr_sync_msg *msg)
{
  for (int i = 0; i < SR_MARK_MAX; i++)
    if (msg->marks[i])
      p->marks[i] = msg->marks[i];
}

/* Receives the next message and turns an ERROR or EOF into an error.  */
/* Receives the message of type from p, with up to max_fds fds (the
 * number in *n_fds; NULL when none may come).  */
static int
expect_fds (struct proc *p, enum sr_sync_type type, const char *when, int *fds, size_t max_fds,
            size_t *n_fds, sr_error_t *err)
{
  struct sr_sync_msg msg;
  int r;

  r = sr_sync_recv (p->sync_fd, &msg, fds, max_fds, n_fds);
  if (r == 1)
    return proc_died (p, when, err);
  if (r < 0)
    return sr_error_set (err, errno, "read from the container's sync socket");
  merge_marks (p, &msg);
  if (msg.type == SR_SYNC_ERROR)
    return sr_error_set (err, msg.errnum, "%s", msg.text);
  if (msg.type != type)
    return sr_error_set (err, EPROTO, "unexpected message %u from the container", msg.type);
  return 0;
}

static int
expect (struct proc *p, enum sr_sync_type type, const char *when, sr_error_t *err)
{
  return expect_fds (p, type, when, NULL, 0, NULL, err);
}

/* After START: EXEC once the policy is in place, then EOF when execve
 * succeeded (the socket is close-on-exec) or ERROR when it did not.  A
 * joiner also reports its command's pid, in any order with the rest; an
 * init's command sends a pidfd of itself with EXEC.  */
static int
expect_exec (struct proc *p, int *ret_exit_code, sr_error_t *err)
{
  bool exec_seen = false;

  for (;;)
    {
      struct sr_sync_msg msg;
      int fd = -1;
      size_t n_fds = 0;
      int r = sr_sync_recv (p->sync_fd, &msg, &fd, 1, &n_fds);

      if (r < 0)
        return sr_error_set (err, errno, "read from the container's sync socket");
      if (r == 1)
        return exec_seen ? 0 : proc_died (p, "before exec", err);
      if (n_fds == 1 && msg.type == SR_SYNC_EXEC && p->command_pidfd < 0)
        p->command_pidfd = fd;
      else if (n_fds == 1)
        close (fd);
      merge_marks (p, &msg);
      switch (msg.type)
        {
        case SR_SYNC_PID:
          p->command_pid = msg.pid;
          break;
        case SR_SYNC_EXEC:
          exec_seen = true;
          break;
        case SR_SYNC_ERROR:
          if (exec_seen)
            *ret_exit_code = msg.errnum == ENOENT ? 127 : 126;
          return sr_error_set (err, msg.errnum, "%s", msg.text);
        default:
          return sr_error_set (err, EPROTO, "unexpected message %u from the container", msg.type);
        }
    }
}

static int
send_msg (struct proc *p, enum sr_sync_type type, const int *fds, size_t n_fds, sr_error_t *err)
{
  struct sr_sync_msg msg = { .type = type };

  if (sr_sync_send (p->sync_fd, &msg, fds, n_fds) < 0)
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

static void
add_sysctl (struct sr_child_args *a, const char *name, uint64_t value)
{
  struct sr_child_sysctl *s = &a->sysctls[a->n_sysctls++];

  snprintf (s->path, sizeof s->path, "/proc/sys/user/%s", name);
  snprintf (s->value, sizeof s->value, "%" PRIu64, value);
}

/* What the init writes into its user namespace's /proc/sys/user.  */
static void
plan_userns_limits (struct sr_child_args *a, const struct sr_userns_limits *l)
{
  static const char *const namespaces[] = {
    "max_cgroup_namespaces", "max_ipc_namespaces", "max_mnt_namespaces",
    "max_net_namespaces", "max_pid_namespaces", "max_time_namespaces",
    "max_user_namespaces", "max_uts_namespaces",
  };

  if (l->inotify_instances)
    add_sysctl (a, "max_inotify_instances", l->inotify_instances);
  if (l->inotify_watches)
    add_sysctl (a, "max_inotify_watches", l->inotify_watches);
  if (l->fanotify_groups)
    add_sysctl (a, "max_fanotify_groups", l->fanotify_groups);
  if (l->fanotify_marks)
    add_sysctl (a, "max_fanotify_marks", l->fanotify_marks);
  if (l->no_new_namespaces)
    for (size_t i = 0; i < SR_ARRAY_SIZE (namespaces); i++)
      add_sysctl (a, namespaces[i], 0);
}

/* Whether any limit asks for a cgroup.  */
static bool
wants_cgroup (const struct sr_cgroup_limits *l)
{
  return l->memory || l->cpus > 0 || l->pids;
}

/* What a cgroup could not take, rlimits take where they mean the same:
 * the data segment for memory, processes for pids.  A CPU share has no
 * rlimit equivalent and stays unenforced (and reported so).  RLIMIT_DATA
 * (Linux 4.7 on) counts the writable private memory a process maps, not
 * the address space it only reserves: V8, the JVM and Go reserve
 * gigabytes inaccessible at start, which RLIMIT_AS refused.  */
static int
plan_limits (struct sr_container *c, const struct sr_container_config *cfg, const char *name,
             sr_error_t *err)
{
  const struct sr_cgroup_limits *l = &cfg->limits;
  struct sr_limit_report *rep = &c->limits;

  memset (rep, 0, sizeof *rep);
  c->memory_limit = l->memory;
  if (wants_cgroup (l))
    {
      if (sr_cgroup_create (l, name, &c->cgroup, rep, err) < 0)
        return -1;
    }
  add_rlimit (&c->child, RLIMIT_CORE, 0);
  if (l->memory && rep->memory == SR_LIMIT_NONE)
    {
      add_rlimit (&c->child, RLIMIT_DATA, l->memory);
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
  if (cfg->max_cpu_seconds)
    add_rlimit (&c->child, RLIMIT_CPU, cfg->max_cpu_seconds);
  if (cfg->max_pending_signals)
    add_rlimit (&c->child, RLIMIT_SIGPENDING, cfg->max_pending_signals);
  if (cfg->max_msgqueue_bytes)
    add_rlimit (&c->child, RLIMIT_MSGQUEUE, cfg->max_msgqueue_bytes);
  plan_userns_limits (&c->child, &cfg->userns);
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

/* Clones p's process: a new container's init (namespaces) or a joiner
 * (no new namespaces; it enters the held container's).  */
static int
spawn (struct sr_container *c, struct proc *p, const struct sr_child_args *args, bool joiner,
       sr_error_t *err)
{
  int cgroup_fd = c->cgroup ? sr_cgroup_clone_fd (c->cgroup) : -1;
  bool into_cgroup = false;

  p->marks[SR_MARK_CLONE] = sr_now_ns ();
  if (sr_spawn (args, joiner ? 0 : NAMESPACE_FLAGS, joiner ? c->held_fds : NULL, cgroup_fd,
                &p->pid, &p->pidfd, &into_cgroup, err)
      < 0)
    return -1;
  /* Before GO: the child roots its cgroup namespace where it is then.
   * An init with the fds of its cgroups moves itself.  */
  if (c->cgroup && !into_cgroup && (joiner || args->n_cgroup_fds == 0)
      && sr_cgroup_attach (c->cgroup, p->pid, err) < 0)
    return -1;
  p->marks[SR_MARK_ATTACHED] = sr_now_ns ();
  return 0;
}

/* The state entry, first written before anything of the container
 * exists (begin_state), so that a runner killed at any point after leaves
 * an entry naming its cgroup for the next start to reclaim; then again
 * with the container's init (write_state).  */
static int
begin_state (struct sr_container *c, const struct sr_container_config *cfg, sr_error_t *err)
{
  static uint64_t runner_start;
  struct sr_state *st = &c->state;
  const struct sr_cgroup_limits *l = &cfg->limits;

  if (runner_start == 0)
    runner_start = sr_process_start_time (getpid ());
  st->name = sr_xstrdup (c->name);
  st->kind = sr_xstrdup ("run");
  st->label = sr_xstrdup (cfg->label ? cfg->label : "");
  st->runner_pid = getpid ();
  st->runner_start = runner_start;
  st->created = (int64_t) time (NULL);
  st->memory = l->memory;
  st->cpus = l->cpus;
  st->pids = l->pids;
  /* The cgroup it may make (reclaiming one that was never made is a
   * no-op).  */
  st->cgroup_name = sr_xstrdup (wants_cgroup (l) ? c->name : "");
  st->cgroup_dirs = wants_cgroup (l) ? sr_cgroup_planned_dirs (c->name) : NULL;
  if (sr_state_write (cfg->state_dir, st, err) < 0)
    return -1;
  c->state_dir = sr_xstrdup (cfg->state_dir);
  return 0;
}

static int
write_state (struct sr_container *c, sr_error_t *err)
{
  struct sr_state *st = &c->state;

  st->init_pid = c->init.pid;
  st->init_start = sr_process_start_time (c->init.pid);
  st->limits = c->limits;
  free (st->cgroup_name);
  st->cgroup_name = sr_xstrdup (c->cgroup ? c->name : "");
  sr_strv_free (st->cgroup_dirs);
  st->cgroup_dirs = c->cgroup ? sr_cgroup_dirs (c->cgroup) : NULL;
  return sr_state_write (c->state_dir, st, err);
}

/* A socket pair for p; the child's end goes into args.  */
static int
proc_socket (struct proc *p, struct sr_child_args *args, sr_error_t *err)
{
  int sv[2];

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return sr_error_set (err, errno, "socketpair");
  p->sync_fd = sv[0];
  args->sync_fd = sv[1];
  args->parent_sync_fd = sv[0];
  return 0;
}

/* The mounts and the process policy, for the user the commands run as.  */
static int
plan_user (struct sr_container *c, const struct sr_container_config *cfg, sr_error_t *err)
{
  struct sr_fs_config fs = cfg->fs;
  uid_t uid = cfg->uid;
  gid_t gid = cfg->gid;

  if (!sr_idmap_maps (&c->idmap, uid, gid))
    {
      if (c->idmap.mode != SR_IDMAP_SINGLE)
        return sr_error_set_plain (err, "invalid_config", EINVAL,
                                   "user %u:%u does not exist in the container: its ids map "
                                   "only 0 to %u (the %s range)",
                                   (unsigned) uid, (unsigned) gid,
                                   (unsigned) (c->idmap.mode == SR_IDMAP_ROOT
                                                   ? c->idmap.uid_count - 1
                                                   : c->idmap.uid_count),
                                   sr_idmap_mode_name (c->idmap.mode));
      uid = 0;
      gid = 0;
    }
  fs.owner_uid = uid;
  fs.owner_gid = gid;
  /* Only a root runner writes what it puts in the container as the
   * user (files-write.c's fsuid, code-dir.c's chown).  */
  fs.open_to_runner = geteuid () != 0 && uid != 0;
  if (sr_mount_plan_new (&fs, &c->mounts, err) < 0)
    return -1;
  if (c->idmap.mode != SR_IDMAP_ROOT && sr_mount_plan_wants_idmap (c->mounts))
    return sr_error_set_plain (err, "invalid_config", EINVAL,
                               "a bind with idmap needs a root runner: a rootless runner's "
                               "own files are already root's inside, and it may not idmap "
                               "a mount; bind it without idmap");
  if (sr_caps_plan_init (&c->caps, cfg->keep_caps, err) < 0)
    return -1;
  c->caps.uid = uid;
  c->caps.gid = gid;
  c->child.umask = fs.open_to_runner ? 002 : (mode_t) -1;
  return 0;
}

_Static_assert (SR_MOUNT_MAX_DETACHED <= SR_SYNC_MAX_FDS,
                "GO carries the rootfs, where it goes, and every bind");

/* sync 1: GO, with a root runner's detached mounts of the rootfs and the
 * binds (sr_mount_plan_detached), idmapped through the init's user
 * namespace now that its maps are written.  Only host root may idmap a mount of a host file
 * system; a rootless runner's files are its containers' root's already
 * (it extracted the layers itself), so it sends none.  */
static int
send_go (struct sr_container *c, sr_error_t *err)
{
  int fds[SR_SYNC_MAX_FDS];
  _cleanup_close_ int userns_fd = -1;
  char path[64];
  int n, r;

  if (c->idmap.mode != SR_IDMAP_ROOT)
    return send_msg (&c->init, SR_SYNC_GO, NULL, 0, err);
  snprintf (path, sizeof path, "/proc/%d/ns/user", (int) c->init.pid);
  userns_fd = open (path, O_RDONLY | O_CLOEXEC);
  if (userns_fd < 0)
    return sr_error_set (err, errno, "open %s", path);
  n = sr_mount_plan_detached (c->mounts, c->init.pid, userns_fd, fds, err);
  if (n < 0)
    return -1;
  r = send_msg (&c->init, SR_SYNC_GO, fds, (size_t) n, err);
  for (int i = 0; i < n; i++)
    close (fds[i]);
  return r;
}

/* The parent's copies, once the init has its own.  */
static void
close_cgroup_fds (struct sr_child_args *a)
{
  for (size_t i = 0; i < a->n_cgroup_fds; i++)
    close (a->cgroup_fds[i]);
  a->n_cgroup_fds = 0;
}

int
sr_container_create (const struct sr_container_config *cfg, struct sr_container **ret,
                     sr_error_t *err)
{
  static unsigned serial;
  struct sr_container *c;
  int r;

  c = sr_xcalloc (1, sizeof *c);
  c->init.pidfd = -1;
  c->init.command_pidfd = -1;
  for (int i = 0; i < SR_HELD_FDS; i++)
    c->held_fds[i] = -1;
  c->init.sync_fd = -1;
  c->init.container = c;
  c->child.sync_fd = -1;
  c->child.keep_fd = -1;
  snprintf (c->name, sizeof c->name, "sr-%ld-%u", (long) getpid (),
            __atomic_fetch_add (&serial, 1, __ATOMIC_RELAXED));

  if (!sr_is_dir (cfg->fs.rootfs))
    {
      sr_error_set (err, errno, "rootfs %s", cfg->fs.rootfs);
      goto fail;
    }
  if (cfg->idmap)
    c->idmap = *cfg->idmap;
  else if (sr_idmap_plan (&c->idmap, "/etc/subuid", "/etc/subgid", err) < 0)
    goto fail;
  if (plan_user (c, cfg, err) < 0)
    goto fail;
  if (cfg->state_dir && begin_state (c, cfg, err) < 0)
    goto fail;
  c->init.marks[SR_MARK_LIMITS] = sr_now_ns ();
  if (plan_limits (c, cfg, c->name, err) < 0)
    goto fail;

  c->child.mounts = c->mounts;
  c->child.hostname = cfg->hostname ? cfg->hostname : SR_DEFAULT_HOSTNAME;
  c->child.setgroups_allowed = sr_idmap_setgroups_allowed (&c->idmap);
  c->child.keep_fd = c->idmap.lease_fd;
  c->child.caps = &c->caps;
  c->child.seccomp = cfg->seccomp;
  if (proc_socket (&c->init, &c->child, err) < 0)
    goto fail;

  if (c->cgroup)
    c->child.n_cgroup_fds = sr_cgroup_self_fds (c->cgroup, c->child.cgroup_fds);

  r = spawn (c, &c->init, &c->child, false, err);
  close (c->child.sync_fd);
  c->child.sync_fd = -1;
  close_cgroup_fds (&c->child);
  if (r < 0)
    goto fail;

  if (sr_idmap_apply (&c->idmap, c->init.pid, err) < 0)
    goto fail;
  c->init.marks[SR_MARK_IDMAP] = sr_now_ns ();
  if (send_go (c, err) < 0)
    goto fail;
  /* While the child mounts, not after READY: the entry's write and rename
   * (0.1-0.2 ms where /run is on disk) then cost no wall time.  */
  if (c->state_dir && write_state (c, err) < 0)
    goto fail;
  if (expect (&c->init, SR_SYNC_READY, "while building the container", err) < 0)
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

/* cpu_ns: the init's report of it (UINT64_MAX: none, the outcome's
 * rusage stands).  */
static void
fill_status (struct sr_container *c, const struct sr_supervise_outcome *o, uint64_t cpu_ns,
             uint64_t oom_kills_before, struct sr_run_result *res)
{
  if (cpu_ns != UINT64_MAX)
    res->cpu_ns = cpu_ns;
  else
    res->cpu_ns
      = (uint64_t) (o->rusage.ru_utime.tv_sec + o->rusage.ru_stime.tv_sec) * 1000000000ull
        + (uint64_t) (o->rusage.ru_utime.tv_usec + o->rusage.ru_stime.tv_usec) * 1000ull;
  if (o->exit.si_code == CLD_EXITED)
    res->exit_code = o->exit.si_status;
  else
    res->signal = o->exit.si_status;

  if (o->timed_out)
    res->status = SR_RUN_TIMEOUT;
  else if (o->cancelled)
    res->status = SR_RUN_CANCELLED;
  else if (c->cgroup && sr_cgroup_oom_kills (c->cgroup) > oom_kills_before)
    res->status = SR_RUN_OOM;
  else if (res->signal == 0 && res->exit_code == 0)
    res->status = SR_RUN_SUCCESS;
  else
    res->status = SR_RUN_ERROR;
  if (c->cgroup)
    res->memory_peak = sr_cgroup_memory_peak (c->cgroup);
}

/* How the command ended, from the init's status pipe (see run_init in
 * child.c): the init's own end cannot tell a death by signal.  Returns the
 * CPU time reported; without a report (the runner killed the init:
 * timeout, cancel, or the OOM killer did) the init's own end stands, and
 * UINT64_MAX.  */
static uint64_t
take_command_status (int fd, siginfo_t *exit)
{
  struct sr_child_end end;

  if (fd < 0 || read (fd, &end, sizeof end) != sizeof end)
    return UINT64_MAX;
  if (WIFEXITED (end.status))
    {
      exit->si_code = CLD_EXITED;
      exit->si_status = WEXITSTATUS (end.status);
    }
  else if (WIFSIGNALED (end.status))
    {
      exit->si_code = WCOREDUMP (end.status) ? CLD_DUMPED : CLD_KILLED;
      exit->si_status = WTERMSIG (end.status);
    }
  return end.cpu_ns;
}

/* A command past its execve, not yet supervised: the read ends of its
 * stdout and stderr, and of the status pipe of an init's command.  */
struct launch
{
  int out_fd, err_fd, status_fd;
};

static void
launch_done (struct launch *l)
{
  if (l->out_fd >= 0)
    close (l->out_fd);
  if (l->err_fd >= 0)
    close (l->err_fd);
  if (l->status_fd >= 0)
    close (l->status_fd);
  l->out_fd = l->err_fd = l->status_fd = -1;
}

/* START for p (an init waiting after READY, or a joiner) with stdin_fd
 * (-1: /dev/null), up to the command's execve.  */
static int
launch (struct sr_container *c, struct proc *p, const struct sr_exec_spec *spec, int stdin_fd,
        struct launch *l, int *ret_exit_code, sr_error_t *err)
{
  _cleanup_close_ int spec_fd = -1, null_fd = -1;
  int out[2] = { -1, -1 }, errp[2] = { -1, -1 }, status[2] = { -1, -1 };
  int r = -1;

  *l = (struct launch){ .out_fd = -1, .err_fd = -1, .status_fd = -1 };
  if (spec->argv == NULL || spec->argv[0] == NULL)
    return sr_error_set (err, EINVAL, "no command given");
  spec_fd = make_spec_fd (spec, err);
  if (spec_fd < 0)
    goto out;
  if (stdin_fd < 0)
    {
      null_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null_fd < 0)
        {
          sr_error_set (err, errno, "open /dev/null");
          goto out;
        }
    }
  if (pipe2 (out, O_CLOEXEC) < 0 || pipe2 (errp, O_CLOEXEC) < 0
      || (p == &c->init && pipe2 (status, O_CLOEXEC | O_NONBLOCK) < 0))
    {
      sr_error_set (err, errno, "pipe");
      goto out;
    }
  {
    int fds[5] = { spec_fd, stdin_fd >= 0 ? stdin_fd : null_fd, out[1], errp[1], status[1] };

    p->marks[SR_MARK_START] = sr_now_ns ();
    if (send_msg (p, SR_SYNC_START, fds, status[1] >= 0 ? 5 : 4, err) < 0)
      goto out;
  }
  close (out[1]);
  close (errp[1]);
  if (status[1] >= 0)
    close (status[1]);
  out[1] = errp[1] = status[1] = -1;

  if (expect_exec (p, ret_exit_code, err) < 0)
    goto out;
  p->marks[SR_MARK_EXEC] = sr_now_ns ();
  fcntl (out[0], F_SETFL, O_NONBLOCK);
  fcntl (errp[0], F_SETFL, O_NONBLOCK);
  *l = (struct launch){ .out_fd = out[0], .err_fd = errp[0], .status_fd = status[0] };
  out[0] = errp[0] = status[0] = -1;
  r = 0;

out:
  for (int i = 0; i < 2; i++)
    {
      if (out[i] >= 0)
        close (out[i]);
      if (errp[i] >= 0)
        close (errp[i]);
      if (status[i] >= 0)
        close (status[i]);
    }
  return r;
}

/* The CPU time the process of pidfd has used so far, all its threads
 * (its clock, read through its pid); 0 when it cannot be read.  */
static uint64_t
process_cpu_ns (int pidfd)
{
  char path[64], *line = NULL;
  size_t cap = 0;
  pid_t pid = 0;
  clockid_t clock;
  struct timespec ts;
  FILE *f;

  snprintf (path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
  f = fopen (path, "re");
  if (f == NULL)
    return 0;
  while (pid == 0 && getline (&line, &cap, f) > 0)
    if (strncmp (line, "Pid:", 4) == 0)
      pid = (pid_t) atoi (line + 4);
  free (line);
  fclose (f);
  if (pid <= 0 || clock_getcpuclockid (pid, &clock) != 0 || clock_gettime (clock, &ts) < 0)
    return 0;
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Supervises a launched command to its end; its duration, and its
 * timeout, count from t0.  cmd_end: the command's own report of its end
 * (NULL: none).  */
static int
supervise_command (struct sr_container *c, struct proc *p, struct launch *l,
                   const struct sr_run_options *opts, uint64_t t0,
                   const struct sr_cmd_end *cmd_end, struct sr_run_result *result,
                   sr_error_t *err)
{
  struct sr_supervise_outcome outcome = { 0 };
  struct sr_supervise_io io = { 0 };
  /* A held container's OOM kills of earlier commands are not this one's.  */
  uint64_t oom_kills_before = c->held && c->cgroup ? sr_cgroup_oom_kills (c->cgroup) : 0;
  uint64_t cpu_ns;
  int r = -1;

  io.out_fd = l->out_fd;
  io.err_fd = l->err_fd;
  io.pidfd = p->pidfd;
  io.status_fd = l->status_fd;
  io.cmd_end = cmd_end;
  io.cancel_fd = opts->cancel_fd;
  io.timeout_ms = opts->timeout_ms;
  io.max_output = opts->max_output ? opts->max_output : SR_DEFAULT_MAX_OUTPUT;
  io.on_output = opts->on_output;
  io.userdata = opts->userdata;
  io.kill = kill_proc;
  io.kill_ctx = p;
  if (sr_supervise (&io, &outcome, err) < 0)
    goto out;
  /* Answered on the init's report, the init is still ending: the
   * container's destroy reaps it, off this path.  The command is reaped
   * already, its OOM kill and memory peak counted.  On the command's own
   * report it may still be ending too, and the init may not have
   * reported yet: the report stands then.  */
  p->reaped = outcome.init_reaped;
  cpu_ns = take_command_status (l->status_fd, &outcome.exit);
  if (outcome.cmd_reported && cpu_ns == UINT64_MAX)
    {
      outcome.exit.si_code = CLD_EXITED;
      outcome.exit.si_status = outcome.cmd_status & 0xff;
      cpu_ns = process_cpu_ns (p->command_pidfd);
    }
  result->duration_ns = sr_now_ns () - t0;
  fill_status (c, &outcome, cpu_ns, oom_kills_before, result);
  result->out = outcome.out;
  result->err = outcome.err;
  memset (&outcome, 0, sizeof outcome);
  r = 0;

out:
  sr_captured_done (&outcome.out);
  sr_captured_done (&outcome.err);
  return r;
}

/* START for p, then supervision to the end.  */
static int
run_command (struct sr_container *c, struct proc *p, const struct sr_exec_spec *spec,
             const struct sr_run_options *opts, struct sr_run_result *result, sr_error_t *err)
{
  struct launch l;
  uint64_t t0 = sr_now_ns ();
  int r = launch (c, p, spec, opts->stdin_fd, &l, &result->exit_code, err);

  if (r == 0)
    r = supervise_command (c, p, &l, opts, t0, NULL, result, err);
  memcpy (result->marks, p->marks, sizeof p->marks);
  launch_done (&l);
  return r;
}

static void
result_init (const struct sr_container *c, struct sr_run_result *result)
{
  memset (result, 0, sizeof *result);
  result->limits = c->limits;
  result->memory_limit = c->memory_limit;
}

int
sr_container_start (struct sr_container *c, const struct sr_exec_spec *spec,
                    const struct sr_run_options *opts, struct sr_run_result *result,
                    sr_error_t *err)
{
  result_init (c, result);
  if (c->started || c->held)
    return sr_error_set (err, EBUSY, "a container runs one command only");
  c->started = true;
  return run_command (c, &c->init, spec, opts, result, err);
}

int
sr_container_hold (struct sr_container *c, sr_error_t *err)
{
  if (c->started || c->held)
    return sr_error_set (err, EBUSY, "the container already runs a command");
  size_t n_fds = 0;

  if (send_msg (&c->init, SR_SYNC_HOLD, NULL, 0, err) < 0)
    return -1;
  if (expect_fds (&c->init, SR_SYNC_READY, "while becoming a holding init", c->held_fds,
                  SR_HELD_FDS, &n_fds, err) < 0)
    return -1;
  if (n_fds != SR_HELD_FDS)
    {
      for (size_t i = 0; i < n_fds; i++)
        close (c->held_fds[i]);
      for (int i = 0; i < SR_HELD_FDS; i++)
        c->held_fds[i] = -1;
      return sr_error_set (err, EPROTO, "the holding init sent %zu fds, expected %d", n_fds,
                           SR_HELD_FDS);
    }
  c->held = true;
  if (c->state_dir)
    {
      free (c->state.kind);
      c->state.kind = sr_xstrdup ("session");
      if (sr_state_write (c->state_dir, &c->state, err) < 0)
        return -1;
    }
  return 0;
}

/* A joiner for one command of held container c, entered and waiting for
 * START.  */
static int
join (struct sr_container *c, struct proc *joiner, sr_error_t *err)
{
  struct sr_child_args args = c->child;
  int r;

  *joiner = (struct proc){ .pidfd = -1, .sync_fd = -1, .command_pidfd = -1, .container = c };
  if (!c->held)
    return sr_error_set (err, EINVAL, "the container is not held");
  if (c->init.reaped || pidfd_signal (c->init.pidfd, 0) < 0)
    return sr_error_set (err, ESRCH, "the container's init is gone");
  if (proc_socket (joiner, &args, err) < 0)
    return -1;
  r = spawn (c, joiner, &args, true, err);
  close (args.sync_fd);
  if (r < 0)
    return -1;
  if (c->cgroup && sr_cgroup_exec_new (c->cgroup, joiner->pid, &joiner->exec_cgroup, err) < 0)
    return -1;
  if (send_msg (joiner, SR_SYNC_GO, NULL, 0, err) < 0)
    return -1;
  return expect (joiner, SR_SYNC_READY, "while entering the container", err);
}

int
sr_container_exec (struct sr_container *c, const struct sr_exec_spec *spec,
                   const struct sr_run_options *opts, struct sr_run_result *result,
                   sr_error_t *err)
{
  struct proc joiner;
  int r;

  result_init (c, result);
  r = join (c, &joiner, err);
  if (r == 0)
    r = run_command (c, &joiner, spec, opts, result, err);
  proc_reap (&joiner);
  return r;
}

struct sr_container_cmd
{
  struct sr_container *c;
  struct launch launch;
  int exit_code;          /* what a failed exec would have set */
  bool supervised;
  int end_fd;             /* the memfd of end, for the command */
  struct sr_cmd_end *end; /* the command's report of its end, mapped */
};

/* The page of cmd's own report of its end (runtime/supervise.h).  */
static int
cmd_end_map (struct sr_container_cmd *cmd, sr_error_t *err)
{
  void *page;

  cmd->end_fd = memfd_create ("sandbox-runner-end", MFD_CLOEXEC);
  if (cmd->end_fd < 0 || ftruncate (cmd->end_fd, SR_CMD_END_SIZE) < 0)
    return sr_error_set (err, errno, "make the page of the command's end");
  page = mmap (NULL, SR_CMD_END_SIZE, PROT_READ, MAP_SHARED, cmd->end_fd, 0);
  if (page == MAP_FAILED)
    return sr_error_set (err, errno, "map the page of the command's end");
  cmd->end = page;
  return 0;
}

int
sr_container_cmd_end_fd (const struct sr_container_cmd *cmd)
{
  return cmd->end_fd;
}

int
sr_container_start_begin (struct sr_container *c, const struct sr_exec_spec *spec, int stdin_fd,
                          struct sr_container_cmd **ret, sr_error_t *err)
{
  struct sr_container_cmd *cmd;

  if (c->started || c->held)
    return sr_error_set (err, EBUSY, "a container runs one command only");
  c->started = true;
  cmd = sr_xcalloc (1, sizeof *cmd);
  cmd->c = c;
  cmd->end_fd = -1;
  cmd->launch = (struct launch){ .out_fd = -1, .err_fd = -1, .status_fd = -1 };
  if (cmd_end_map (cmd, err) < 0
      || launch (c, &c->init, spec, stdin_fd, &cmd->launch, &cmd->exit_code, err) < 0)
    {
      sr_container_cmd_free (cmd);
      return -1;
    }
  *ret = cmd;
  return 0;
}

bool
sr_container_cmd_alive (struct sr_container_cmd *cmd)
{
  return proc_alive (&cmd->c->init);
}

int
sr_container_start_finish (struct sr_container_cmd *cmd, const struct sr_run_options *opts,
                           struct sr_run_result *result, sr_error_t *err)
{
  struct proc *init = &cmd->c->init;
  uint64_t t0 = sr_now_ns ();
  int r;

  result_init (cmd->c, result);
  if (cmd->supervised || init->reaped)
    return sr_error_set (err, EINVAL, "the command was supervised already");
  cmd->supervised = true;
  r = supervise_command (cmd->c, init, &cmd->launch, opts, t0, cmd->end, result, err);
  memcpy (result->marks, init->marks, sizeof init->marks);
  return r;
}

void
sr_container_cmd_free (struct sr_container_cmd *cmd)
{
  if (cmd == NULL)
    return;
  /* The command alone: the init reaps it and ends, as at a timeout; the
   * container's destroy does the rest.  */
  if (!cmd->supervised && !cmd->c->init.reaped)
    kill_proc (&cmd->c->init, false);
  launch_done (&cmd->launch);
  if (cmd->end)
    munmap (cmd->end, SR_CMD_END_SIZE);
  if (cmd->end_fd >= 0)
    close (cmd->end_fd);
  free (cmd);
}

int
sr_container_charged (struct sr_container *c, uint64_t need, sr_charge_fn fn, void *arg,
                      sr_error_t *err)
{
  if (c->cgroup == NULL)
    return fn (arg, err);
  return sr_charge_call (c->cgroup, need, fn, arg, err);
}

/* What the child of sr_container_charged_as does before fn.  */
struct charged_as
{
  int userns;
  uid_t uid;
  gid_t gid;
  mode_t umask;  /* the commands' own, or -1 */
  sr_charge_fn fn;
  void *arg;
};

static int
charged_as_call (void *arg, sr_error_t *err)
{
  const struct charged_as *a = arg;

  if (setns (a->userns, CLONE_NEWUSER) < 0)
    return sr_error_set (err, errno, "join the container's user namespace");
  if (syscall (SYS_setresgid, a->gid, a->gid, a->gid) < 0)
    return sr_error_set (err, errno, "setresgid %u", (unsigned) a->gid);
  /* The runner's own groups mean nothing inside; a namespace that denies
   * setgroups (one id mapped by the runner itself) keeps them, unmapped,
   * which grants nothing there either.  */
  if (syscall (SYS_setgroups, 0, NULL) < 0 && errno != EPERM)
    return sr_error_set (err, errno, "setgroups");
  if (syscall (SYS_setresuid, a->uid, a->uid, a->uid) < 0)
    return sr_error_set (err, errno, "setresuid %u", (unsigned) a->uid);
  /* Changing ids made the child undumpable, and fn names its O_TMPFILE
   * files through /proc/self/fd.  */
  (void) prctl (PR_SET_DUMPABLE, 1);
  /* What it creates is as the commands' would be: in a directory open
   * to the runner (setgid), open to its group too.  */
  if (a->umask != (mode_t) -1)
    umask (a->umask);
  return a->fn (a->arg, err);
}

int
sr_container_charged_as (struct sr_container *c, uid_t uid, gid_t gid, uint64_t need,
                         sr_charge_fn fn, void *arg, sr_error_t *err)
{
  struct charged_as a = { .userns = c->held_fds[SR_HELD_NS_USER], .uid = uid, .gid = gid,
                          .umask = c->child.umask, .fn = fn, .arg = arg };

  if (a.userns < 0)
    return sr_error_set (err, EINVAL, "the container is not held: no user namespace to join");
  return sr_charge_call (c->cgroup, need, charged_as_call, &a, err);
}

bool
sr_container_alive (struct sr_container *c)
{
  return proc_alive (&c->init);
}

void
sr_container_destroy (struct sr_container *c)
{
  if (c == NULL)
    return;
  proc_reap (&c->init);
  for (int i = 0; i < SR_HELD_FDS; i++)
    if (c->held_fds[i] >= 0)
      close (c->held_fds[i]);
  /* A cgroup that would not go keeps the entry, for a reclaim after this
   * runner to remove.  */
  if (sr_cgroup_destroy (c->cgroup, NULL) == 0 && c->state_dir)
    sr_state_remove (c->state_dir, c->name);
  free (c->state_dir);
  sr_state_done (&c->state);
  sr_mount_plan_free (c->mounts);
  sr_caps_plan_done (&c->caps);
  free (c);
}

int
sr_container_run_leaving (const struct sr_container_config *cfg,
                          const struct sr_exec_spec *spec, const struct sr_run_options *opts,
                          struct sr_run_result *result, struct sr_container **ret,
                          sr_error_t *err)
{
  memset (result, 0, sizeof *result);
  *ret = NULL;
  if (sr_container_create (cfg, ret, err) < 0)
    return -1;
  return sr_container_start (*ret, spec, opts, result, err);
}

int
sr_container_run (const struct sr_container_config *cfg, const struct sr_exec_spec *spec,
                  const struct sr_run_options *opts, struct sr_run_result *result,
                  sr_error_t *err)
{
  struct sr_container *c = NULL;
  int r = sr_container_run_leaving (cfg, spec, opts, result, &c, err);

  sr_container_destroy (c);
  return r;
}
