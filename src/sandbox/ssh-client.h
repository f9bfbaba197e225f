/* The local OpenSSH client, for the SSH backend (ssh.c): one run of ssh,
 * supervised as a container's command is, and the quoting of a remote
 * command line.  */
#ifndef SR_SANDBOX_SSH_CLIENT_H
#define SR_SANDBOX_SSH_CLIENT_H

#include <stdbool.h>

#include "common/error.h"
#include "common/run-result.h"

/* A remote command line of words: each single-quoted for a POSIX shell
 * (' as '\''), so the remote login shell reads every word back as it was,
 * whatever it holds; joined by blanks.  Allocated.  */
char *sr_ssh_quote_words (char *const *words);

/* What a timeout or cancel does on the remote side: called with all
 * false first (ask it to end), then, if the client has not ended a
 * moment later, with all true (kill).  */
typedef void (*sr_ssh_kill_fn) (void *ctx, bool all);

/* Runs argv (ssh and its arguments, found in PATH) on this host: stdin
 * from opts->stdin_fd (-1: /dev/null), a session of its own (it never
 * reads our terminal), signals default and unblocked.  Its output is
 * captured, on_output called, timeout and cancel enforced: kill_remote
 * (NULL: none) and then the client is killed.  Fills res (its status,
 * exit code or signal, output); fails (code ssh_missing) when ssh cannot
 * run.  */
int sr_ssh_run (char *const *argv, const struct sr_run_options *opts, sr_ssh_kill_fn kill_remote,
                void *kill_ctx, struct sr_run_result *res, sr_error_t *err);

#endif
