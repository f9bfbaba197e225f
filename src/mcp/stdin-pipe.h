/* The stdin of a task's run (mcp/tasks.h): a pipe whose read end the
 * program reads as its fd 0 and whose write end the task holds, so that
 * tasks/update can feed it while the program runs; and whether the
 * program waits on it, which is what makes the task input_required.
 *
 * The program's wait is seen from /proc: a process whose fd 0 is the
 * pipe, blocked in read(2) or readv(2) of fd 0 (/proc/PID/syscall) or
 * asleep in the kernel's pipe_read (/proc/PID/wchan), while the pipe is
 * empty.  Only a process this one may inspect is seen (a descendant, in
 * a user namespace it owns): a run of the native backend, not one in a
 * Docker container, whose stdin is a pipe of dockerd's.  */
#ifndef SR_MCP_STDIN_PIPE_H
#define SR_MCP_STDIN_PIPE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

/* A new pipe: *ret_read for the run (above fd 2, so never taken for a
 * standard stream), *ret_write for the task (non-blocking), both
 * close-on-exec; its capacity raised towards want bytes as far as the
 * system lets an unprivileged process.  */
int sr_stdin_pipe_new (size_t want, int *ret_read, int *ret_write, sr_error_t *err);

/* Whether a process waits reading the pipe whose write end is fd, as
 * its stdin, with nothing left in the pipe to read.  */
bool sr_stdin_pipe_waiting (int fd);

/* Puts data (len bytes) in the pipe at once, or nothing: code
 * stdin_full (EAGAIN) when it holds less room than that, stdin_closed
 * (EPIPE) when the program closed its end.  */
int sr_stdin_pipe_write (int fd, const char *data, size_t len, sr_error_t *err);

#endif
