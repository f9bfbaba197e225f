/* The tasks of the Tasks extension (io.modelcontextprotocol/tasks,
 * SEP-2663), for clients of 2026-07-28 that declare it: a tools/call of a
 * run that has not ended within task_after is answered with a task
 * handle (resultType "task"), and the run goes on without the request.
 * tasks/get gives its status, a status message (the stage, the bytes of
 * output so far) and at the end the CallToolResult a direct call would
 * have given; tasks/cancel kills the run.
 *
 * A task may hold its program's stdin (mcp/stdin-pipe.h): while the
 * program waits reading it, the task is input_required, and its
 * inputRequests ask for input with an elicitation/create (a form of
 * text, base64 and eof) under a key "stdin-N" new each time; the
 * tasks/update that answers it writes the input to the program's
 * stdin, or closes it (eof, or a declined request), and the task works
 * on.  A task's stdin closes when it ends or is cancelled.
 *
 * Or a task may hold the shell its command runs in (sandbox/shell.h):
 * while the command waits reading the shell's terminal, the task is
 * input_required in the same way, and the input is typed as
 * write_stdin types it (sr_shell_write); eof and a declined request
 * type the terminal's end of file (^D), after which the command may
 * read again.  A shell whose waits cannot be seen (a Docker or SSH
 * machine's) leaves its task working, and its status message says so.
 *
 * The server holds one table of them.  A task's id is 128 random bits,
 * and it is found only by its owner (the caller's sandbox-session owner:
 * a bearer token, the stateless clients of a server without tokens; over
 * stdio the one client), as a sandbox session is.  An ended task is kept
 * task_keep, then forgotten.  A task is refcounted: the table holds one
 * reference, its run another.  */
#ifndef SR_MCP_TASKS_H
#define SR_MCP_TASKS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

#define SR_MCP_TASKS_EXTENSION "io.modelcontextprotocol/tasks"

struct sr_mcp_tasks;
struct sr_mcp_task;

/* An ended task is kept keep_ms.  */
struct sr_mcp_tasks *sr_mcp_tasks_new (uint64_t keep_ms);
/* Cancels the tasks still running, waits until their runs have dropped
 * them, and frees the table.  */
void sr_mcp_tasks_free (struct sr_mcp_tasks *t);

/* A new working task of owner (NULL: the one client of stdio) in the
 * table, with a reference for the caller; cancel_fd (its run's, which
 * stays the caller's) is written when the task is cancelled.  */
struct sr_mcp_task *sr_mcp_task_new (struct sr_mcp_tasks *t, const char *owner, int cancel_fd,
                                     sr_error_t *err);
void sr_mcp_task_ref (struct sr_mcp_task *task);
void sr_mcp_task_unref (struct sr_mcp_task *task);

/* The write end of the run's stdin (mcp/stdin-pipe.h), taken over.  */
void sr_mcp_task_set_stdin (struct sr_mcp_task *task, int fd);
/* The shell the run's command runs in, until it ends (NULL): the run
 * keeps it until then.  */
struct sr_shell;
void sr_mcp_task_set_shell (struct sr_mcp_task *task, struct sr_shell *sh);
/* Where the run is, for the status message.  */
void sr_mcp_task_progress (struct sr_mcp_task *task, const char *stage, uint64_t output_bytes);
/* The run ended with result (taken over; NULL: it failed with the
 * message failure).  A cancelled task stays cancelled.  */
void sr_mcp_task_end (struct sr_mcp_task *task, cJSON *result, const char *failure);
bool sr_mcp_task_cancelled (struct sr_mcp_task *task);
/* Cancels the task: its run is killed (cancel_fd), its status is
 * cancelled.  */
void sr_mcp_task_cancel (struct sr_mcp_task *task);
/* Waits for the run to end until until_ns (CLOCK_MONOTONIC, as
 * sr_now_ns); whether it did.  */
bool sr_mcp_task_wait (struct sr_mcp_task *task, uint64_t until_ns);
/* Takes a task that was never announced out of the table: its result
 * when it ended with one (the caller's), else NULL.  */
cJSON *sr_mcp_task_forget (struct sr_mcp_task *task);
/* The CreateTaskResult that announces the task.  */
cJSON *sr_mcp_task_created (struct sr_mcp_task *task);

/* Answers tasks/get, tasks/cancel or tasks/update (params an object or
 * NULL) from a caller who owns owner's tasks (NULL: every task): the
 * serialised response.  A task id that is not the caller's is -32602,
 * as one that never was; so is an answer to the open input request
 * that cannot be given (malformed, more than the stdin holds).  */
char *sr_mcp_tasks_handle (struct sr_mcp_tasks *t, const char *owner, const char *method,
                           const cJSON *id, const cJSON *params);

/* The task id names, as tasks/get gives it (a DetailedTask: its status
 * and its result, error or input requests), if owner has it; else
 * NULL.  */
cJSON *sr_mcp_tasks_detailed (struct sr_mcp_tasks *t, const char *owner, const char *id);

#endif
