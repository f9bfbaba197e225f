/* The container's init: from clone to the command's execve, then pid 1
 * for the command's life (or a session's holding init).  It runs in a
 * copy of the parent's address space made by a raw clone, where another
 * thread of the parent may have held malloc's lock: so it allocates
 * nothing, and every string and plan it needs was prepared by the parent
 * beforehand.  */
#ifndef SR_CHILD_H
#define SR_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "runtime/caps.h"
#include "runtime/cgroup.h"
#include "runtime/mounts.h"

struct sr_seccomp_filter;

#define SR_CHILD_MAX_RLIMITS 10
#define SR_CHILD_MAX_SYSCTLS 12

struct sr_child_rlimit
{
  int resource;
  struct rlimit value;
};

/* A value the init writes to a file of /proc/sys, in its own namespaces.  */
struct sr_child_sysctl
{
  char path[48];
  char value[24];
};

struct sr_child_args
{
  int sync_fd;                  /* the child's end of the sync socket */
  int parent_sync_fd;           /* the parent's end, closed first */
  const struct sr_mount_plan *mounts;
  const char *hostname;
  bool setgroups_allowed;
  const struct sr_caps_plan *caps;
  const struct sr_seccomp_filter *seccomp; /* NULL: none */
  struct sr_child_rlimit rlimits[SR_CHILD_MAX_RLIMITS];
  size_t n_rlimits;
  /* The user namespace's limits, written by the init once it has made
   * every namespace the container is built with.  */
  struct sr_child_sysctl sysctls[SR_CHILD_MAX_SYSCTLS];
  size_t n_sysctls;
  /* The command's umask; (mode_t) -1: the runner's (see open_to_runner
   * in runtime/mounts.h).  */
  mode_t umask;
  /* The tasks files of the container's v1 cgroups, which the init moves
   * itself into first (sr_cgroup_self_fds, runtime/cgroup.h); none: the
   * runner moves it.  */
  int cgroup_fds[SR_CGROUP_MAX_V1];
  size_t n_cgroup_fds;
  /* An fd the init keeps for its life (an id lease, runtime/idmap.h), so
   * what it stands for ends with the container; -1: none.  */
  int keep_fd;
};

/* What a one-shot container's init writes to its status pipe when its
 * command has ended: the command's wait status, and the CPU time of the
 * children it reaped (the command and the orphans before it), which the
 * init's own end would otherwise report.  The runner can answer from it
 * without waiting for that end, in which the kernel tears the container's
 * namespaces down.  */
struct sr_child_end
{
  int status;
  uint64_t cpu_ns;
};

/* Exit status of the init when it fails before exec (the parent normally
 * learns the reason from the ERROR message first).  */
#define SR_CHILD_EXIT_SETUP 125

__attribute__ ((noreturn)) void sr_child_main (const struct sr_child_args *args);

/* What a held container's init hands the runner with its READY: its
 * namespaces, in the order a joiner enters them (the user namespace
 * first, which gives the privileges the others need), then an O_PATH fd
 * of its root.  Then the init closes itself to ptrace and /proc, which
 * would otherwise be the only way in for a rootless runner.  */
enum sr_held_fd
{
  SR_HELD_NS_USER,
  SR_HELD_NS_MNT,
  SR_HELD_NS_PID,
  SR_HELD_NS_NET,
  SR_HELD_NS_IPC,
  SR_HELD_NS_UTS,
  SR_HELD_NS_CGROUP,
  SR_HELD_NS_COUNT,
  SR_HELD_ROOT = SR_HELD_NS_COUNT,
  SR_HELD_FDS,
};

/* A process that enters a held container, through the namespace fds its
 * init handed over (enum sr_held_fd), to run one command there (see
 * sr_container_exec).  */
__attribute__ ((noreturn)) void sr_joiner_main (const struct sr_child_args *args,
                                                const int ns_fds[SR_HELD_NS_COUNT]);

/* The exec spec travels in a memfd as NUL-terminated strings:
 *   argc envc argv[0] ... argv[argc-1] env[0] ... env[envc-1] cwd
 * (counts in decimal, so empty arguments survive).  sr_exec_spec_encode
 * writes it; the child decodes it in place.  */
int sr_exec_spec_encode (int fd, char *const *argv, char *const *env, const char *cwd);

#endif
