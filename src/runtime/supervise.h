/* The parent's side of a running container: drains stdout and stderr
 * (capping what it keeps), enforces the timeout, notices a cancel request
 * and waits for the container's init, all in one poll loop.  */
#ifndef SR_SUPERVISE_H
#define SR_SUPERVISE_H

#include <signal.h>
#include <sys/resource.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/run-result.h"

/* A command's own report of its end, before its exit, in a page shared
 * with the runner: it writes its exit status, then SR_CMD_END_MAGIC in
 * magic, then closes its stdout and stderr.  With that in and both at
 * EOF the run is over, without waiting for the command's exit (its
 * address space torn down) nor for the init's report of it: a
 * pre-started interpreter's run pays for neither.  The command's CPU time
 * is then its own so far, its reaped children's not counted.  All a
 * command can do with the page is end its own run early, with an exit
 * status of its choice, as it can anyway.  */
struct sr_cmd_end
{
  uint32_t magic;
  int32_t status;
};
#define SR_CMD_END_MAGIC 0x31455253u
#define SR_CMD_END_SIZE 4096

struct sr_supervise_io
{
  int out_fd, err_fd;       /* read ends, owned by the caller; -1 if closed */
  int pidfd;                /* the container's init */
  /* Readable once the init has reported its command's end (the status
   * pipe of runtime/child.h), -1: none.  With the report in and both
   * pipes at EOF the run is over: the init's own end, in which the kernel
   * tears the namespaces down, is not waited for.  */
  int status_fd;
  /* The command's own report of its end, taken once both pipes are at
   * EOF; NULL: none.  */
  const struct sr_cmd_end *cmd_end;
  int cancel_fd;            /* -1: none */
  uint64_t timeout_ms;      /* 0: none */
  size_t max_output;
  sr_output_cb on_output;
  void *userdata;
  /* With all false, ends the command alone, so that the init can reap
   * it (its CPU time counts) and end by itself; with all true, kills every
   * process of the container (its init, its cgroup).  The timeout and a
   * cancel ask for the first, and for the second if the init is not gone
   * a short while later.  */
  void (*kill) (void *ctx, bool all);
  void *kill_ctx;
};

struct sr_supervise_outcome
{
  bool timed_out, cancelled;
  /* The init was waited for: exit and rusage are from its waitid.  False
   * when the run ended on status_fd's report first; the init is still
   * ending then, and its caller must reap it.  */
  bool init_reaped;
  /* The run ended on cmd_end: cmd_status is the command's exit status,
   * exit and rusage say nothing, and the init may not have reported.  */
  bool cmd_reported;
  int cmd_status;
  siginfo_t exit;
  struct rusage rusage;
  struct sr_captured out, err;
};

/* Runs until both pipes are at EOF and the init has exited or reported
 * its command's end, or the command has (cmd_end); or, once the init is
 * gone, a short grace period has passed.  The captured text of a
 * stream past its cap ends with the truncation marker.  */
int sr_supervise (const struct sr_supervise_io *io, struct sr_supervise_outcome *ret,
                  sr_error_t *err);

#endif
