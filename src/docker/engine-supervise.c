/* The native supervisor's rules for a command in Docker (its timeout,
 * the cancel fd, the grace after a kill) and the run result they make.  */
#include <config.h>

#include <signal.h>
#include <string.h>

#include "common/util.h"
#include "docker/engine-internal.h"

/* After a kill, how long the stream may take to end before we stop
 * reading it.  */
#define KILL_GRACE_MS 5000u

void
sr_docker_supervise_start_ (struct supervise *sv, const struct sr_run_options *opts)
{
  sv->deadline = opts->timeout_ms ? sv->t0 + opts->timeout_ms * 1000000ull : 0;
}

void
sr_docker_supervise_kill_ (struct supervise *sv)
{
  sv->killed = true;
  sv->kill (sv->kill_ctx);
  sv->give_up = sr_now_ns () + KILL_GRACE_MS * 1000000ull;
}

/* The rules of the native supervisor, one step of them: kills the command
 * at its deadline, and returns false once it was killed KILL_GRACE_MS ago
 * and its output has still not ended (something outside the command holds
 * it open; what we have is what there is).  Else *wait_ms gets how long
 * the caller may wait for its next event.  */
bool
sr_docker_supervise_tick_ (struct supervise *sv, int *wait_ms)
{
  uint64_t now = sr_now_ns (), until;

  if (!sv->killed && sv->deadline && now >= sv->deadline)
    {
      sv->timed_out = true;
      sr_docker_supervise_kill_ (sv);
      now = sr_now_ns ();
    }
  if (sv->killed && now >= sv->give_up)
    return false;
  until = sv->killed ? sv->give_up : sv->deadline;
  *wait_ms = 1000;
  if (until && until > now && (until - now) / 1000000 < 1000)
    *wait_ms = (int) ((until - now) / 1000000) + 1;
  return true;
}

/* Reads the stream to its end, enforcing the timeout and the cancel fd.  */
int
sr_docker_supervise_stream_ (const struct sr_docker *d, struct xfer *x,
                             const struct sr_run_options *opts, struct supervise *sv,
                             sr_error_t *err)
{
  int wait_ms;

  sr_docker_supervise_start_ (sv, opts);
  while (!sr_docker_xfer_step_ (x))
    {
      if (!sr_docker_supervise_tick_ (sv, &wait_ms))
        return 0;
      if (sr_docker_xfer_wait_ (x, sv->killed ? -1 : opts->cancel_fd, wait_ms))
        {
          sv->cancelled = true;
          sr_docker_supervise_kill_ (sv);
        }
    }
  if (x->result != CURLE_OK && !sv->killed)
    return sr_docker_transport_error_ (d, x->h, x->result, x->errbuf, 0, err);
  return 0;
}

void
sr_docker_result_init_ (const struct sr_docker *d, struct sr_run_result *r, struct limits l)
{
  memset (r, 0, sizeof *r);
  r->memory_limit = l.memory;
  r->limits.memory = l.memory ? d->limit_mechanism : SR_LIMIT_NONE;
  r->limits.cpu = l.nano_cpus ? d->limit_mechanism : SR_LIMIT_NONE;
  r->limits.pids = l.pids ? d->limit_mechanism : SR_LIMIT_NONE;
}

/* The daemon reports a command killed by signal N as exit code 128+N (as a
 * shell does); native reports the signal.  An exit(130) looks the same:
 * Docker does not tell them apart.  */
void
sr_docker_set_exit_ (struct sr_run_result *r, int code)
{
  if (code > 128 && code <= 128 + SIGRTMAX)
    {
      r->signal = code - 128;
      r->exit_code = 0;
    }
  else
    r->exit_code = code;
}

void
sr_docker_set_status_ (struct sr_run_result *r, const struct supervise *sv, bool oom)
{
  if (sv->timed_out)
    r->status = SR_RUN_TIMEOUT;
  else if (sv->cancelled)
    r->status = SR_RUN_CANCELLED;
  else if (oom)
    r->status = SR_RUN_OOM;
  else if (r->signal == 0 && r->exit_code == 0)
    r->status = SR_RUN_SUCCESS;
  else
    r->status = SR_RUN_ERROR;
}
