/* One disposable container, in two steps as OCI runtimes do:
 *
 *   sr_container_create  builds everything (cgroup, namespaces, id maps,
 *                        mounts, pivot_root, lo, hostname); the container's
 *                        init then waits on the sync socket.
 *   sr_container_start   hands it the command, environment and stdio; the
 *                        init starts the command as its child (pid 2),
 *                        which applies the process policy (caps,
 *                        no_new_privs, seccomp) and execs, and the init
 *                        reports how it ended; supervises it to the end.
 *
 * A container runs exactly one command and is never reused.
 * sr_container_destroy kills whatever is left and removes every trace
 * (cgroups, fds); it is safe on every path, created or not.  */
#ifndef SR_CONTAINER_H
#define SR_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "common/run-result.h"
#include "runtime/cgroup.h"
#include "runtime/charge.h"
#include "runtime/idmap.h"
#include "runtime/mounts.h"
#include "runtime/supervise.h"
#include "runtime/sync.h"

struct sr_seccomp_filter;

/* The limits of a container's own user namespace (/proc/sys/user/max_*),
 * written once it has made the namespaces it is built with.  The kernel
 * counts them per user in that namespace and again in each one above it,
 * where they are charged to the namespace's owner: these bound the
 * container's share of its owner's host limits.  All 0: the kernel's
 * (no limit of its own).  */
struct sr_userns_limits
{
  uint32_t inotify_instances;  /* 0: the kernel's */
  uint32_t inotify_watches;
  uint32_t fanotify_groups;
  uint32_t fanotify_marks;
  bool no_new_namespaces;      /* each kind: none beyond the container's own */
};

struct sr_container_config
{
  struct sr_fs_config fs;
  const char *hostname;                    /* NULL: SR_DEFAULT_HOSTNAME */
  struct sr_cgroup_limits limits;          /* all 0: no limits */
  bool strict_limits;                      /* a limit nothing can enforce is an error */
  const struct sr_seccomp_filter *seccomp; /* NULL: unconfined */
  uint64_t keep_caps;                      /* capability keep-list mask */
  uint64_t max_file_size;                  /* RLIMIT_FSIZE, 0: unlimited */
  uint32_t max_open_files;                 /* RLIMIT_NOFILE, 0: inherit */
  uint32_t max_cpu_seconds;                /* RLIMIT_CPU per process, 0: unlimited */
  uint32_t max_pending_signals;            /* RLIMIT_SIGPENDING, 0: inherit */
  uint64_t max_msgqueue_bytes;             /* RLIMIT_MSGQUEUE, 0: inherit */
  struct sr_userns_limits userns;
  const struct sr_idmap *idmap;            /* its ids (a lease's); NULL: this runner's plan */
  /* The ids its commands run as inside, owners of its writable
   * directories (fs.owner_*); 0, 0: root.  A map of one id (rootless
   * without a subordinate range) has only root: its commands then run as
   * root (doctor says so).  */
  uid_t uid;
  gid_t gid;
  const char *state_dir;                   /* where ps and kill find it; NULL: nowhere */
  const char *label;                       /* what it runs, for ps */
};

struct sr_container;

int sr_container_create (const struct sr_container_config *cfg, struct sr_container **ret,
                         sr_error_t *err);

/* The pid of the container's init on the host, for ps and kill.  */
pid_t sr_container_pid (const struct sr_container *c);

/* An O_PATH fd of a held container's root directory (the container's
 * own; -1 before sr_container_hold).  The container owns it: dup it to
 * keep it past sr_container_destroy.  Its init is closed to
 * /proc/PID/root, as to ptrace.  */
int sr_container_root_fd (const struct sr_container *c);

/* Runs the command to its end.  Returns 0 when the command ran (whatever
 * its status), -1 when the container failed before or at exec: the error
 * names the step ("pivot_root: Invalid argument").  *result is filled in
 * both cases as far as it got.  */
int sr_container_start (struct sr_container *c, const struct sr_exec_spec *spec,
                        const struct sr_run_options *opts, struct sr_run_result *result,
                        sr_error_t *err);

/* Sessions: instead of starting a command, the init of a created
 * container becomes a holding init (pid 1, reaping) that keeps the
 * namespaces, mounts and cgroup alive; each sr_container_exec then runs one
 * command inside it, under the same policy, joining its namespaces through
 * the init's pidfd.  When the command ends, what is left of its process
 * group is killed; the container lives on until destroyed.  */
int sr_container_hold (struct sr_container *c, sr_error_t *err);
int sr_container_exec (struct sr_container *c, const struct sr_exec_spec *spec,
                       const struct sr_run_options *opts, struct sr_run_result *result,
                       sr_error_t *err);

/* sr_container_start in two halves, for a command started ahead of its
 * run (a pre-started interpreter, sandbox/prestart.h): begin starts the
 * command as sr_container_start does (the init's child, pid 2, under the
 * same policy, the init passing signals on and ending as it ends), with
 * stdin_fd as its stdin (-1: /dev/null) and its stdout and stderr on pipes
 * that nothing reads yet; finish supervises it to its end, its duration
 * and timeout counted from the call.  Free kills the command if it still
 * runs (accepts NULL); the container is still the caller's to destroy.  */
struct sr_container_cmd;
int sr_container_start_begin (struct sr_container *c, const struct sr_exec_spec *spec,
                              int stdin_fd, struct sr_container_cmd **ret, sr_error_t *err);
/* Whether the command, not yet supervised, still runs.  */
bool sr_container_cmd_alive (struct sr_container_cmd *cmd);

/* The page where the command may report its own end (struct sr_cmd_end,
 * runtime/supervise.h): a memfd of SR_CMD_END_SIZE bytes for the caller
 * to hand the command, which maps it.  finish takes the report; the fd
 * stays the cmd's.  */
int sr_container_cmd_end_fd (const struct sr_container_cmd *cmd);
int sr_container_start_finish (struct sr_container_cmd *cmd, const struct sr_run_options *opts,
                               struct sr_run_result *result, sr_error_t *err);
void sr_container_cmd_free (struct sr_container_cmd *cmd);

/* Runs fn (arg), which takes about need bytes, for the container,
 * charged to it: in a child of the runner moved into its cgroups
 * (runtime/charge.h, which refuses what would not fit), so a file fn
 * writes into its tmpfs counts against its memory limit, not the
 * runner's.
 * Without a cgroup (rootless with no delegated hierarchy) fn runs in the
 * caller, bounded by the tmpfs sizes alone.  */
int sr_container_charged (struct sr_container *c, uint64_t need, sr_charge_fn fn, void *arg,
                          sr_error_t *err);

/* sr_container_charged for a held container, with fn run as uid:gid
 * inside: always in a child, which joins the container's user namespace
 * (the runner made it, so it may) and takes those ids, so that what fn
 * creates in the container's tmpfs is theirs inside and they may change
 * it in place.  For a rootless runner, whose own uid is the container's
 * root: a root runner sets its fsuid to the host ids instead.  Paths are
 * resolved from fds fn had before: the child keeps the runner's mount
 * namespace.  */
int sr_container_charged_as (struct sr_container *c, uid_t uid, gid_t gid, uint64_t need,
                             sr_charge_fn fn, void *arg, sr_error_t *err);

/* Whether the container's init still runs (a held container can be killed
 * from outside, by `sandbox-runner kill` or the OOM killer).  */
bool sr_container_alive (struct sr_container *c);

/* Kills what is left, waits for it, removes the cgroups.  Accepts NULL.  */
void sr_container_destroy (struct sr_container *c);

/* create + start, the ended container left in *ret (NULL when it could
 * not be made) for the caller to destroy when it can wait for its
 * teardown.  */
int sr_container_run_leaving (const struct sr_container_config *cfg,
                              const struct sr_exec_spec *spec, const struct sr_run_options *opts,
                              struct sr_run_result *result, struct sr_container **ret,
                              sr_error_t *err);

/* create + start + destroy.  */
int sr_container_run (const struct sr_container_config *cfg, const struct sr_exec_spec *spec,
                      const struct sr_run_options *opts, struct sr_run_result *result,
                      sr_error_t *err);

#endif
