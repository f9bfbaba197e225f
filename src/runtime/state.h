/* What runs where, on disk: one small file per live container in the
 * runner's state directory (the runtime_dir setting, e.g.
 * /run/sandbox-runner/containers), so `sandbox-runner ps` and `kill` can
 * see containers of other runner processes, and a runner that starts after
 * one died can reclaim what it left behind.
 *
 * Processes are named by pid and start time together, so a recycled pid is
 * never mistaken for a container's init.  */
#ifndef SR_STATE_H
#define SR_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "runtime/cgroup.h"

struct sr_state
{
  char *name;              /* "sr-<runner pid>-<n>" */
  char *kind;              /* "run" or "session" */
  char *label;             /* what it runs, for people (may be empty) */
  pid_t runner_pid;
  uint64_t runner_start;   /* /proc/PID/stat starttime */
  pid_t init_pid;
  uint64_t init_start;
  int64_t created;         /* seconds since the epoch */
  uint64_t memory;
  double cpus;
  uint32_t pids;
  struct sr_limit_report limits;
  char *cgroup_name;
  /* The full path of each of its cgroups (NULL-terminated, may be NULL),
   * so a reclaim that runs in other cgroups still finds them.  */
  char **cgroup_dirs;
};

void sr_state_done (struct sr_state *s);

/* True when the process named by pid and start time still lives.  */
bool sr_state_process_alive (pid_t pid, uint64_t start);

/* True while the entry's container runs: its runner and its init both
 * live.  A runner killed with SIGKILL takes its container with it, but
 * the init may take a moment to die: it is not running any more.  */
bool sr_state_running (const struct sr_state *s);

int sr_state_write (const char *dir, const struct sr_state *s, sr_error_t *err);
int sr_state_remove (const char *dir, const char *name);

/* Reads every entry of dir (missing dir: none).  */
int sr_state_list (const char *dir, struct sr_state **ret, size_t *ret_n, sr_error_t *err);
void sr_state_list_free (struct sr_state *list, size_t n);

/* Kills the init of entry `name` (the whole container dies with it).  */
int sr_state_kill (const char *dir, const char *name, sr_error_t *err);

/* For every entry whose runner is dead: kills its init if it still lives,
 * removes its cgroups and then its file.  An entry stays while any of its
 * cgroups cannot be removed, for a later reclaim to try again (err gets
 * the first such failure).  Returns the number reclaimed.  */
int sr_state_reclaim (const char *dir, sr_error_t *err);

#endif
