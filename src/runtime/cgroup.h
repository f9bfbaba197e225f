/* Resource limits of one container through cgroups.
 *
 * v2 first: a child cgroup below the runner's own cgroup (under systemd's
 * Delegate=yes that is a delegated subtree), with memory.max,
 * memory.swap.max=0, cpu.max and pids.max; the container is cloned straight
 * into it (CLONE_INTO_CGROUP) where the kernel allows.  v1 where the
 * controllers live on v1 hierarchies: one child per controller, below the
 * runner's own cgroup in that hierarchy.  A limit no cgroup can enforce is
 * reported as such, so the caller can fall back to rlimits or refuse.
 *
 * Nothing is ever created outside the runner's own cgroup.  */
#ifndef SR_CGROUP_H
#define SR_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "common/run-result.h"

struct sr_cgroup_limits
{
  uint64_t memory;   /* bytes, 0: unlimited */
  double cpus;       /* CPUs (0.5 = half a CPU), 0: unlimited */
  uint32_t pids;     /* 0: unlimited */
};

struct sr_cgroup;

/* Creates the container's cgroup(s), named after `name` (unique per
 * container, e.g. "sr-<pid>-<n>"), and writes the limits.  When no cgroup
 * is usable at all, returns 0 with *ret NULL and the report all NONE; a
 * controller that is missing leaves its entry NONE.  Errors only for real
 * failures (a write that should have worked).  */
int sr_cgroup_create (const struct sr_cgroup_limits *limits, const char *name,
                      struct sr_cgroup **ret, struct sr_limit_report *report, sr_error_t *err);

/* A directory fd of the v2 cgroup for clone3's CLONE_INTO_CGROUP, or -1
 * when the container must be attached after clone (v1, or an old kernel).  */
int sr_cgroup_clone_fd (const struct sr_cgroup *cg);

/* Moves pid into every cgroup of the container (no-op for a pid that was
 * cloned into the v2 cgroup).  */
int sr_cgroup_attach (struct sr_cgroup *cg, pid_t pid, sr_error_t *err);

/* The most cgroups a container has on v1 hierarchies (one per
 * controller).  */
#define SR_CGROUP_MAX_V1 3

/* On cgroup v1 the kernel makes a process moved by another (pid written
 * to cgroup.procs) wait for an RCU grace period, some 10 ms, under its
 * global threadgroup lock; a thread that moves itself alone (0 written to
 * tasks) takes no such lock.  So a container whose cgroups are all v1 has
 * its init move itself: fds gets the tasks file of each of cg's cgroups
 * (write-only, close-on-exec), for the init to hand sr_cgroup_join_self
 * before it starts a thread or a process; the caller closes them.
 * Returns how many; 0 where cg has a v2 cgroup or a tasks file will not
 * open (a delegation that gave out cgroup.procs only): the runner
 * attaches with sr_cgroup_attach, or clones into the v2 cgroup.  */
size_t sr_cgroup_self_fds (const struct sr_cgroup *cg, int fds[SR_CGROUP_MAX_V1]);

/* In the (single-threaded) process to move: writes 0 to each fd of
 * sr_cgroup_self_fds.  Only write(2): safe in a raw clone of a threaded
 * runner.  -1 with errno when one fails.  */
int sr_cgroup_join_self (const int *fds, size_t n);

/* Kills every process in the container's cgroup(s): cgroup.kill where the
 * kernel has it, else SIGKILL to each pid in cgroup.procs until empty.  */
int sr_cgroup_kill (struct sr_cgroup *cg, sr_error_t *err);

/* A cgroup of one command of a held container (a session's exec), below
 * the container's, so that the whole tree the command starts, setsid'd
 * and double-forked processes too, can be killed without touching the
 * container's other commands.  Limits stay the container's.  */
struct sr_cgroup_exec;

/* Makes an exec cgroup below cg and moves pid into it (its children
 * follow); *ret NULL when cg has no hierarchy for it.  */
int sr_cgroup_exec_new (struct sr_cgroup *cg, pid_t pid, struct sr_cgroup_exec **ret,
                        sr_error_t *err);
/* Kills every process in it, as sr_cgroup_kill.  */
int sr_cgroup_exec_kill (struct sr_cgroup_exec *x, sr_error_t *err);
/* Kills what is left, removes the cgroup and frees x (accepts NULL).  One
 * that will not go is removed with the container's (sr_cgroup_destroy,
 * sr_cgroup_reclaim).  */
void sr_cgroup_exec_done (struct sr_cgroup_exec *x);

/* How many processes of this container the kernel's OOM killer has killed
 * so far (the counter only grows; a held container compares it with its
 * value when a command started).  */
uint64_t sr_cgroup_oom_kills (const struct sr_cgroup *cg);

/* Peak memory use in bytes (memory.peak / max_usage_in_bytes), 0 if unknown.  */
uint64_t sr_cgroup_memory_peak (const struct sr_cgroup *cg);

/* The bytes the container may still take before its memory limit:
 * limit less usage, the page cache of files (which the kernel reclaims)
 * not counted as used; 0 past it; UINT64_MAX with no limit or none known.  */
uint64_t sr_cgroup_memory_room (const struct sr_cgroup *cg);

/* The full path of each cgroup sr_cgroup_create may make for `name`
 * (NULL-terminated, the caller frees it): for the state entry written
 * before the cgroups exist.  NULL when name is invalid or no hierarchy is
 * ours.  */
char **sr_cgroup_planned_dirs (const char *name);

/* The full path of each of cg's cgroups (NULL-terminated, the caller
 * frees it): for the state entry, so a reclaim finds them from whatever
 * cgroup it runs in.  */
char **sr_cgroup_dirs (const struct sr_cgroup *cg);

/* Removes the cgroups `dirs` (full paths, as a runner which died recorded
 * them) of the container `name`, killing anything still in them.  A path
 * that is not a cgroup directory named `name` is refused.  Fails when any
 * of them is still there afterwards (it did not empty within a short
 * time), so the caller keeps its record for a later try.  */
int sr_cgroup_reclaim (const char *name, char *const *dirs, sr_error_t *err);

/* Kills what is left, removes the cgroup(s) and frees cg.  Accepts NULL.  */
int sr_cgroup_destroy (struct sr_cgroup *cg, sr_error_t *err);

#endif
