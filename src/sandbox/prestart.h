/* Pre-started interpreters: a warm container (sandbox/pool.h) of a
 * language with a warm_start starts its interpreter ahead of the run,
 * as the container's command (sr_container_start_begin): the child of
 * its init, pid 2, as in a cold run, so under the run stage's whole
 * policy (capabilities dropped, no_new_privs, seccomp), with the init
 * passing signals on and ending with its status, and its parent pid 1.
 * The run only hands it the code.
 *
 * The interpreter runs the language's run command (without the request's
 * args) on a bootstrap written as its entry file: it imports the
 * language's preloads, says it is ready, and waits on its stdin, a
 * SOCK_SEQPACKET socket.  The run writes its code over the entry file,
 * then hands over the args and its stdin; the bootstrap runs the code as
 * a cold run would (its argv, __main__, a fresh globals dict, tracebacks
 * naming the entry file, the same exit status).  Once the code and what
 * python does at its exit are done, the bootstrap reports the exit status
 * in a page the run handed over and closes stdout and stderr, so the run
 * is answered without waiting for the interpreter's exit (struct
 * sr_cmd_end, runtime/supervise.h).  Each interpreter serves one run.  */
#ifndef SR_SANDBOX_PRESTART_H
#define SR_SANDBOX_PRESTART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/error.h"

/* How long a bootstrap may take to import its preloads.  */
#define SR_PRESTART_READY_MS 60000

/* The bootstrap to write as l's entry file (allocated, *ret_len bytes);
 * NULL when l has no warm_start.  */
char *sr_prestart_program (const struct sr_language *l, size_t *ret_len);

/* Waits for the bootstrap on sock to be ready (its preloads imported):
 * code prestart_failed when it ended or did not say so in timeout_ms.  */
int sr_prestart_wait_ready (int sock, uint64_t timeout_ms, sr_error_t *err);

/* Whether the bootstrap on sock, once ready, still waits for its run.  */
bool sr_prestart_waiting (int sock);

/* Hands the run over: its args, stdin_fd (-1: /dev/null) and end_fd, the
 * page where the bootstrap reports its end (sr_container_cmd_end_fd).  */
int sr_prestart_hand_over (int sock, char *const *args, size_t n_args, int stdin_fd,
                           int end_fd, sr_error_t *err);

#endif
