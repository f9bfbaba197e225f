/* Where a container's processes are cloned.  A clone copies the address
 * space of the process that makes it, and while the child lives every
 * page either of them writes is copied first: in a threaded server whose
 * threads keep writing, a fault for each such page of each run, and a
 * flush of the other CPUs' TLBs with each.  The spawner is a small
 * process the server forks before its first thread, which only clones:
 * its children copy its few pages and none of the server's.  It clones
 * them with CLONE_PARENT, so they are the server's children all the same
 * (the server waits for them and writes their id maps), and it hands
 * their pidfds back.  An init or joiner dies with its parent thread
 * (PR_SET_PDEATHSIG): the server thread that started the spawner, for one
 * the spawner made; the caller's, for one the caller made itself, as
 * every caller does without a spawner (the CLI, whose runner has no other
 * thread to write, or a server whose spawner is gone).  */
#ifndef SR_SPAWNER_H
#define SR_SPAWNER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

struct sr_child_args;

/* In a server, before any thread, on the thread that lives as long as
 * the server (see above).  Fails only when the spawner cannot be made;
 * the callers then clone for themselves.  */
int sr_spawner_start (sr_error_t *err);

/* Ends the spawner and waits for it (it also ends by itself when the
 * server does).  Accepts none started.  */
void sr_spawner_stop (void);

/* The spawner's pid, 0: none.  */
pid_t sr_spawner_pid (void);

/* Clones a new container's init, in the namespaces of ns_flags
 * (held_ns_fds NULL), or a joiner of a held container, which enters the
 * namespaces of held_ns_fds (enum sr_held_fd, runtime/child.h); the child
 * runs sr_child_main or sr_joiner_main with args.  With cgroup_fd >= 0
 * it starts in that cgroup where the kernel can (CLONE_INTO_CGROUP), and
 * *ret_into_cgroup says whether it did.  Returns 0 with the child's pid
 * and a pidfd of it, or -1.  */
int sr_spawn (const struct sr_child_args *args, uint64_t ns_flags, const int *held_ns_fds,
              int cgroup_fd, pid_t *ret_pid, int *ret_pidfd, bool *ret_into_cgroup,
              sr_error_t *err);

#endif
