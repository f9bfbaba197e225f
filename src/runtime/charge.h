/* Work the runner does for a container, charged to the container.
 *
 * The kernel charges a page to the memory cgroup of the process whose
 * address space allocates it: a file the runner writes into a
 * container's tmpfs (an upload, a file_write, the code of a session's
 * run) would count against the runner, not the container, and one
 * container could take the host's memory through it.  So such work runs
 * in a child of the runner, a copy of it (fork, no exec) moved into the
 * container's cgroups before it starts.  */
#ifndef SR_CHARGE_H
#define SR_CHARGE_H

#include <stdint.h>

#include "common/error.h"
#include "runtime/cgroup.h"

/* What a charged call leaves the container at least, for its own
 * processes.  */
#define SR_CHARGE_SLACK (1ull << 20)

/* The work: 0, or -1 with *err set.  */
typedef int (*sr_charge_fn) (void *arg, sr_error_t *err);

/* Runs fn (arg), which takes about need bytes of memory, in a child moved
 * into cg's cgroups (cg NULL: a child of the runner's own, nothing
 * charged) and returns what fn returned, with its error
 * (message, errnum and code).  Refused with code quota_exceeded, before
 * anything runs, when need would leave the container less than
 * SR_CHARGE_SLACK below its memory limit: going past it would have the
 * OOM killer take the container's processes (on cgroup v2 all of them,
 * memory.oom.group).  A child killed there all the same (the container
 * took the memory meanwhile) fails with code quota_exceeded too.  fn runs
 * on the child's one thread: it must take no lock another thread of the
 * runner may hold (malloc is safe), and what it changes outside the file
 * system is lost with the child.  */
int sr_charge_call (struct sr_cgroup *cg, uint64_t need, sr_charge_fn fn, void *arg,
                    sr_error_t *err);

#endif
