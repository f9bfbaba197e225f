/* Persistent shells inside a session.
 *
 * A shell is one bash (interactive, no rc files, no line editing) running
 * in the session's container for as long as it is wanted, so what a
 * command changes in the shell (cwd, variables, an activated venv) is
 * there for the next.  Its stdin and controlling terminal is a
 * pseudo-terminal whose master the runner holds: write_stdin data reaches
 * the running command as typed input, and a ^C byte (\x03) makes the
 * line discipline interrupt the foreground job, as at a real terminal.
 * stdout and stderr are pipes, merged into one output buffer that keeps
 * its last max_output bytes.
 *
 * A command is written to a file in the container's /tmp and sourced, so
 * any length and any number of lines work; the shell's prompt command
 * then prints a marker with a random nonce and $? on stdout and stderr,
 * which tells the runner the command ended and how.  The command file
 * starts by printing a begin marker on each stream, which tells it the
 * command has begun: a shell_exec without wait returns only then (or
 * after two seconds), so that a ^C that follows interrupts the command.
 * Only the first prompt after the begin marker ends the command, and
 * what a stream carries before it is not its output: a ^C at the prompt
 * makes bash print a newline and a prompt of its own, which may come
 * after the next command was typed.  A ^C returns when the prompt is
 * back, so the next command is not refused as busy.
 *
 * States: init (starting), ready (no command running), waiting (a command
 * runs), terminated (bash exited or was killed).  */
#ifndef SR_SANDBOX_SHELL_H
#define SR_SANDBOX_SHELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/run-result.h"
#include "sandbox/files.h"

struct sr_shell;

enum sr_shell_state
{
  SR_SHELL_INIT,
  SR_SHELL_READY,
  SR_SHELL_WAITING,
  SR_SHELL_TERMINATED,
};
const char *sr_shell_state_name (enum sr_shell_state s);

struct sr_shell_output
{
  char *data;               /* NUL-terminated */
  size_t len;
  bool truncated;           /* older output was dropped */
  enum sr_shell_state state;
  bool finished;            /* the last command ended; exit_code is its $? */
  int exit_code;
  bool timed_out;           /* shell_exec waited its timeout out */
};
void sr_shell_output_done (struct sr_shell_output *o);

/* How a shell runs bash where it lives: one command, as sr_session_exec
 * runs it in a session.  The shell knows its container only through
 * this, so sessions may own shells without the two depending on each
 * other.  */
typedef int (*sr_shell_exec_fn) (void *ctx, const struct sr_exec_spec *spec,
                                 const struct sr_run_options *opts,
                                 struct sr_run_result *res, sr_error_t *err);

/* Starts bash through exec (exec_ctx, which must outlive the shell, is
 * its first argument) and waits until it is ready.  one_stream: the
 * backend gives bash a terminal of its own in the container, which
 * carries stdout and stderr as one stream (see shell_one_stream in
 * sandbox/backend.h); the marker then comes on stdout alone.  */
int sr_shell_start (sr_shell_exec_fn exec, void *exec_ctx, const struct sr_fsroot *fs,
                    const char *id, size_t max_output, bool one_stream,
                    struct sr_shell **ret, sr_error_t *err);

/* Output as a command run with wait prints it (the markers taken out),
 * on the thread of sr_shell_exec: at most its first 64 KiB.  */
typedef void (*sr_shell_live_fn) (const char *buf, size_t len, void *userdata);

/* Runs command.  The output buffer starts empty.  With wait, returns when
 * the command ends or after timeout_ms (then it interrupts the command
 * with ^C and gives it two seconds to end; timed_out is set either way),
 * handing the output to live (NULL: none) as it comes.  Without wait, returns as soon as the command has begun, with what it
 * printed so far; sr_shell_read collects the rest.  A command that a ^C
 * (sr_shell_write) is interrupting gets two seconds to end first.
 * cancel_fd (-1: none) readable ends a wait as the timeout does, and
 * a job that outlives its ^C (one that ignores SIGINT) is then killed
 * where the shell sees its process groups (sr_shell_sees_input).
 * Refuses with code shell_busy while a command runs, shell_terminated
 * once bash is gone.  */
int sr_shell_exec (struct sr_shell *sh, const char *command, bool wait, uint64_t timeout_ms,
                   int cancel_fd, sr_shell_live_fn live, void *live_data,
                   struct sr_shell_output *out, sr_error_t *err);

/* The output since the last exec or read (then emptied), and the state.  */
void sr_shell_read (struct sr_shell *sh, struct sr_shell_output *out);

/* Writes data to the terminal as typed input.  When data holds a ^C
 * (\x03) and a command runs, returns once the shell is back at its
 * prompt, or after two seconds (a command that ignores SIGINT).  The
 * state after it in *ret_state.  */
int sr_shell_write (struct sr_shell *sh, const char *data, size_t len,
                    enum sr_shell_state *ret_state, sr_error_t *err);

/* Types the terminal's end of file (^D) for the running command: a
 * read of it then returns what the line holds, or nothing (the end of
 * its input) on an empty line.  A line left without its newline by the
 * last write is ended first, so that the end of file is seen.  */
int sr_shell_write_eof (struct sr_shell *sh, enum sr_shell_state *ret_state, sr_error_t *err);

/* Whether sr_shell_waits_input can see the command wait: only when the
 * shell's terminal is bash's own, not relayed to one of the container's
 * (one_stream: Docker, an SSH host), whose readers are out of sight.  */
bool sr_shell_sees_input (const struct sr_shell *sh);
/* Whether the running command, once begun, waits for typed input: a
 * process of the terminal's foreground process group (bash itself for a
 * builtin's read) asleep reading its fd 0, which is the terminal, with
 * no complete line left to read.  Seen from /proc (common/stdin-wait.h);
 * always false where sr_shell_sees_input is false.  */
bool sr_shell_waits_input (struct sr_shell *sh);

const char *sr_shell_id (const struct sr_shell *sh);
enum sr_shell_state sr_shell_state (struct sr_shell *sh);

/* Kills bash and what runs in its terminal, waits, frees.  */
void sr_shell_stop (struct sr_shell *sh);
/* sr_shell_stop, then removes the shell's files in /tmp (through its
 * exec): for a place that outlives its shells, an SSH host, where no
 * container's end takes them.  */
void sr_shell_stop_clean (struct sr_shell *sh);

#endif
