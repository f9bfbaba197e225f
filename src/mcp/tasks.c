#include "config.h"

#include "mcp/tasks.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "mcp/jsonrpc.h"
#include "mcp/stdin-pipe.h"
#include "sandbox/shell.h"

/* How often a client is asked to poll tasks/get.  */
#define POLL_INTERVAL_MS 1000
#define TASK_ID_BYTES 16

/* The prefix of the keys of a task's stdin input requests, numbered
 * from 1: a key is never used twice in a task, as SEP-2663 asks.  */
#define STDIN_KEY "stdin-"

/* In this order: from COMPLETED on, the task has ended.  */
enum status
{
  WORKING,
  INPUT_REQUIRED,
  COMPLETED,
  FAILED,
  CANCELLED,
};

static const char *const status_names[] = {
  "working", "input_required", "completed", "failed", "cancelled",
};

struct sr_mcp_task
{
  struct sr_mcp_tasks *t;
  struct sr_mcp_task *next;  /* in t->tasks */
  unsigned refs;             /* under t->lock, as everything below */
  bool in_table;
  char id[2 * TASK_ID_BYTES + 1];
  char *owner;
  int cancel_fd;             /* -1 once the run ended */
  int stdin_fd;              /* the write end of the run's stdin; -1: none, or closed */
  struct sr_shell *shell;    /* or the shell its command runs in; NULL: none */
  unsigned typing;           /* updates typing at shell outside t->lock: it stays */
  unsigned input_key;        /* the number of the stdin request asked; 0: none yet */
  bool run_ended;
  enum status status;
  char *message;
  cJSON *result;
  char *failure;
  uint64_t created_ms, updated_ms; /* wall clock */
  uint64_t ended_ns;         /* monotonic */
};

struct sr_mcp_tasks
{
  uint64_t keep_ms;
  pthread_mutex_t lock;
  pthread_cond_t changed;    /* a task ended, a run let go of one, an update typed */
  struct sr_mcp_task *tasks;
};

static void
add_time (cJSON *o, const char *key, uint64_t ms)
{
  time_t secs = (time_t) (ms / 1000u);
  struct tm tm;
  char buf[40];

  gmtime_r (&secs, &tm);
  strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (buf + strlen (buf), sizeof buf - strlen (buf), ".%03uZ", (unsigned) (ms % 1000u));
  cJSON_AddStringToObject (o, key, buf);
}

struct sr_mcp_tasks *
sr_mcp_tasks_new (uint64_t keep_ms)
{
  struct sr_mcp_tasks *t = sr_xcalloc (1, sizeof *t);

  t->keep_ms = keep_ms;
  pthread_mutex_init (&t->lock, NULL);
  pthread_cond_init (&t->changed, NULL);
  return t;
}

/* t->lock held.  The program's stdin reaches its end (what the pipe
 * holds is still read).  */
static void
close_stdin_locked (struct sr_mcp_task *task)
{
  if (task->stdin_fd >= 0)
    close (task->stdin_fd);
  task->stdin_fd = -1;
}

static void
task_free (struct sr_mcp_task *task)
{
  close_stdin_locked (task);
  free (task->owner);
  free (task->message);
  free (task->failure);
  cJSON_Delete (task->result);
  free (task);
}

/* t->lock held.  Drops a reference; the last frees the task (which is
 * out of the table by then).  */
static void
unref_locked (struct sr_mcp_task *task)
{
  if (--task->refs == 0)
    task_free (task);
  else
    pthread_cond_broadcast (&task->t->changed);
}

/* t->lock held.  */
static void
unlink_locked (struct sr_mcp_task *task)
{
  for (struct sr_mcp_task **p = &task->t->tasks; *p; p = &(*p)->next)
    if (*p == task)
      {
        *p = task->next;
        task->in_table = false;
        unref_locked (task); /* the table's */
        return;
      }
}

/* t->lock held.  Forgets the tasks that ended more than keep_ms ago.  */
static void
sweep_locked (struct sr_mcp_tasks *t)
{
  uint64_t now = sr_now_ns ();
  struct sr_mcp_task *task = t->tasks, *next;

  for (; task; task = next)
    {
      next = task->next;
      if (task->status >= COMPLETED && now - task->ended_ns > t->keep_ms * 1000000u)
        unlink_locked (task);
    }
}

/* t->lock held.  */
static void
cancel_locked (struct sr_mcp_task *task)
{
  uint64_t one = 1;

  if (task->status >= COMPLETED)
    return;
  task->status = CANCELLED;
  close_stdin_locked (task);
  free (TAKE_PTR (task->message));
  task->updated_ms = (uint64_t) sr_now_realtime_ms ();
  task->ended_ns = sr_now_ns ();
  if (task->cancel_fd >= 0)
    (void) !write (task->cancel_fd, &one, sizeof one);
  pthread_cond_broadcast (&task->t->changed);
}

void
sr_mcp_tasks_free (struct sr_mcp_tasks *t)
{
  bool busy = true;

  if (t == NULL)
    return;
  pthread_mutex_lock (&t->lock);
  for (struct sr_mcp_task *task = t->tasks; task; task = task->next)
    cancel_locked (task);
  while (busy)
    {
      busy = false;
      for (struct sr_mcp_task *task = t->tasks; task; task = task->next)
        busy |= task->refs > 1;
      if (busy)
        pthread_cond_wait (&t->changed, &t->lock);
    }
  while (t->tasks)
    unlink_locked (t->tasks);
  pthread_mutex_unlock (&t->lock);
  pthread_mutex_destroy (&t->lock);
  pthread_cond_destroy (&t->changed);
  free (t);
}

struct sr_mcp_task *
sr_mcp_task_new (struct sr_mcp_tasks *t, const char *owner, int cancel_fd, sr_error_t *err)
{
  struct sr_mcp_task *task = sr_xcalloc (1, sizeof *task);

  if (sr_random_hex (task->id, TASK_ID_BYTES, err) < 0)
    {
      free (task);
      return NULL;
    }
  task->t = t;
  task->refs = 2; /* the table's and the caller's */
  task->in_table = true;
  task->owner = owner ? sr_xstrdup (owner) : NULL;
  task->cancel_fd = cancel_fd;
  task->stdin_fd = -1;
  task->status = WORKING;
  task->created_ms = task->updated_ms = (uint64_t) sr_now_realtime_ms ();
  pthread_mutex_lock (&t->lock);
  sweep_locked (t);
  task->next = t->tasks;
  t->tasks = task;
  pthread_mutex_unlock (&t->lock);
  return task;
}

void
sr_mcp_task_ref (struct sr_mcp_task *task)
{
  pthread_mutex_lock (&task->t->lock);
  task->refs++;
  pthread_mutex_unlock (&task->t->lock);
}

void
sr_mcp_task_unref (struct sr_mcp_task *task)
{
  struct sr_mcp_tasks *t = task->t;

  pthread_mutex_lock (&t->lock);
  unref_locked (task);
  pthread_mutex_unlock (&t->lock);
}

void
sr_mcp_task_set_stdin (struct sr_mcp_task *task, int fd)
{
  pthread_mutex_lock (&task->t->lock);
  close_stdin_locked (task);
  if (task->status >= COMPLETED)
    close (fd);
  else
    task->stdin_fd = fd;
  pthread_mutex_unlock (&task->t->lock);
}

void
sr_mcp_task_set_shell (struct sr_mcp_task *task, struct sr_shell *sh)
{
  pthread_mutex_lock (&task->t->lock);
  /* The run lets go of its shell only when no update types there.  */
  while (sh == NULL && task->typing > 0)
    pthread_cond_wait (&task->t->changed, &task->t->lock);
  task->shell = sh;
  pthread_mutex_unlock (&task->t->lock);
}

void
sr_mcp_task_progress (struct sr_mcp_task *task, const char *stage, uint64_t output_bytes)
{
  char *message = sr_xasprintf ("%s: %llu bytes of output so far", stage,
                                (unsigned long long) output_bytes);

  pthread_mutex_lock (&task->t->lock);
  if (task->message == NULL || strcmp (task->message, message) != 0)
    task->updated_ms = (uint64_t) sr_now_realtime_ms ();
  free (task->message);
  task->message = message;
  pthread_mutex_unlock (&task->t->lock);
}

void
sr_mcp_task_end (struct sr_mcp_task *task, cJSON *result, const char *failure)
{
  pthread_mutex_lock (&task->t->lock);
  task->cancel_fd = -1;
  task->run_ended = true;
  close_stdin_locked (task);
  if (task->status < COMPLETED)
    {
      task->status = result ? COMPLETED : FAILED;
      task->result = result;
      task->failure = result ? NULL : sr_xstrdup (failure);
      result = NULL;
      task->updated_ms = (uint64_t) sr_now_realtime_ms ();
      task->ended_ns = sr_now_ns ();
      free (task->message);
      task->message = NULL;
    }
  pthread_cond_broadcast (&task->t->changed);
  pthread_mutex_unlock (&task->t->lock);
  cJSON_Delete (result);
}

bool
sr_mcp_task_cancelled (struct sr_mcp_task *task)
{
  bool cancelled;

  pthread_mutex_lock (&task->t->lock);
  cancelled = task->status == CANCELLED;
  pthread_mutex_unlock (&task->t->lock);
  return cancelled;
}

void
sr_mcp_task_cancel (struct sr_mcp_task *task)
{
  pthread_mutex_lock (&task->t->lock);
  cancel_locked (task);
  pthread_mutex_unlock (&task->t->lock);
}

bool
sr_mcp_task_wait (struct sr_mcp_task *task, uint64_t until_ns)
{
  struct timespec ts;
  uint64_t now = sr_now_ns ();
  bool ended;

  pthread_mutex_lock (&task->t->lock);
  if (!task->run_ended && now < until_ns)
    {
      sr_deadline_after (CLOCK_REALTIME, (until_ns - now) / 1000000u, &ts);
      pthread_cond_timedwait (&task->t->changed, &task->t->lock, &ts);
    }
  ended = task->run_ended;
  pthread_mutex_unlock (&task->t->lock);
  return ended;
}

cJSON *
sr_mcp_task_forget (struct sr_mcp_task *task)
{
  cJSON *result;

  pthread_mutex_lock (&task->t->lock);
  result = task->status == COMPLETED ? TAKE_PTR (task->result) : NULL;
  if (task->in_table)
    unlink_locked (task);
  pthread_mutex_unlock (&task->t->lock);
  return result;
}

/* t->lock held.  What every answer about the task says.  */
static void
add_task_locked (cJSON *o, const struct sr_mcp_task *task)
{
  cJSON_AddStringToObject (o, "taskId", task->id);
  cJSON_AddStringToObject (o, "status", status_names[task->status]);
  if (task->status == INPUT_REQUIRED)
    cJSON_AddStringToObject (o, "statusMessage",
                             task->shell ? "the command waits for input on its terminal"
                                         : "the program waits for input on its stdin");
  else if (task->shell && !sr_shell_sees_input (task->shell))
    {
      _cleanup_free_ char *m = sr_xasprintf ("%s%sthis machine's shell does not show when its "
                                             "command waits for input: the task stays working; "
                                             "give input with write_stdin",
                                             task->message ? task->message : "",
                                             task->message ? "; " : "");

      cJSON_AddStringToObject (o, "statusMessage", m);
    }
  else if (task->message)
    cJSON_AddStringToObject (o, "statusMessage", task->message);
  add_time (o, "createdAt", task->created_ms);
  add_time (o, "lastUpdatedAt", task->updated_ms);
  cJSON_AddNumberToObject (o, "ttlMs", (double) task->t->keep_ms);
  cJSON_AddNumberToObject (o, "pollIntervalMs", POLL_INTERVAL_MS);
}

cJSON *
sr_mcp_task_created (struct sr_mcp_task *task)
{
  cJSON *result = cJSON_CreateObject ();

  cJSON_AddStringToObject (result, "resultType", "task");
  pthread_mutex_lock (&task->t->lock);
  add_task_locked (result, task);
  pthread_mutex_unlock (&task->t->lock);
  return result;
}

/* t->lock held.  A working task whose program waits on its stdin asks
 * for input, under a new key; it stays input_required until the request
 * is answered, or the task ends.  */
static void
refresh_input_locked (struct sr_mcp_task *task)
{
  if (task->status != WORKING
      || !(task->shell ? sr_shell_waits_input (task->shell)
                       : sr_stdin_pipe_waiting (task->stdin_fd)))
    return;
  task->status = INPUT_REQUIRED;
  task->input_key++;
  task->updated_ms = (uint64_t) sr_now_realtime_ms ();
}

static void
add_property (cJSON *props, const char *name, const char *type, const char *description)
{
  cJSON *p = cJSON_AddObjectToObject (props, name);

  cJSON_AddStringToObject (p, "type", type);
  cJSON_AddStringToObject (p, "description", description);
}

/* t->lock held.  The inputRequests of an input_required task: one
 * elicitation of what the program's stdin is to get.  */
static void
add_input_requests_locked (cJSON *o, const struct sr_mcp_task *task)
{
  char key[32];
  cJSON *request, *params, *schema, *props;

  snprintf (key, sizeof key, STDIN_KEY "%u", task->input_key);
  request = cJSON_AddObjectToObject (cJSON_AddObjectToObject (o, "inputRequests"), key);
  cJSON_AddStringToObject (request, "method", "elicitation/create");
  params = cJSON_AddObjectToObject (request, "params");
  cJSON_AddStringToObject (params, "mode", "form");
  cJSON_AddStringToObject (params, "message",
                           task->shell
                           ? "The command waits for input on its terminal. Give it text (or "
                             "base64 for bytes), typed as write_stdin types it, and eof to type "
                             "the end of file (^D) after that; declining types ^D."
                           : "The program waits for input on its stdin. Give it text (or base64 "
                             "for bytes), and eof to close its stdin after that; declining "
                             "closes its stdin.");
  schema = cJSON_AddObjectToObject (params, "requestedSchema");
  cJSON_AddStringToObject (schema, "type", "object");
  props = cJSON_AddObjectToObject (schema, "properties");
  add_property (props, "text", "string", "What the program reads, as UTF-8 text");
  add_property (props, "base64", "string", "Or what it reads, as base64 bytes");
  add_property (props, "eof", "boolean",
                task->shell ? "Type the end of file (^D) after this input"
                            : "Close its stdin after this input");
}

/* t->lock held.  The task as tasks/get gives it: its result, error or
 * input requests inline.  */
static void
add_detailed_locked (cJSON *o, const struct sr_mcp_task *task)
{
  add_task_locked (o, task);
  if (task->status == COMPLETED)
    cJSON_AddItemToObject (o, "result", cJSON_Duplicate (task->result, 1));
  else if (task->status == FAILED)
    {
      cJSON *error = cJSON_AddObjectToObject (o, "error");

      cJSON_AddNumberToObject (error, "code", SR_RPC_INTERNAL_ERROR);
      cJSON_AddStringToObject (error, "message", task->failure);
    }
  else if (task->status == INPUT_REQUIRED)
    add_input_requests_locked (o, task);
}

/* What an answer to an input request gives the program: len bytes of
 * data (none: len 0), then the end of its input if eof.  */
struct input
{
  char *bytes;               /* owned: base64 decoded; or NULL */
  const char *data;
  size_t len;
  bool eof;
};

/* Reads response (an ElicitResult, answering key) into *in: text or
 * bytes, then the end if asked; a declined or cancelled request ends
 * the input.  */
static int
parse_input (const char *key, const cJSON *response, struct input *in, sr_error_t *err)
{
  const cJSON *action = cJSON_GetObjectItemCaseSensitive (response, "action");
  const cJSON *content = cJSON_GetObjectItemCaseSensitive (response, "content");
  const cJSON *text = cJSON_GetObjectItemCaseSensitive (content, "text");
  const cJSON *b64 = cJSON_GetObjectItemCaseSensitive (content, "base64");
  const cJSON *eof = cJSON_GetObjectItemCaseSensitive (content, "eof");

  *in = (struct input){ NULL, NULL, 0, true };
  if (cJSON_IsString (action)
      && (strcmp (action->valuestring, "decline") == 0
          || strcmp (action->valuestring, "cancel") == 0))
    return 0;
  if (!cJSON_IsString (action) || strcmp (action->valuestring, "accept") != 0)
    return sr_error_set_plain (err, "invalid_arguments", EINVAL,
                               "inputResponses.%s.action must be accept, decline or cancel",
                               key);
  if ((text && !cJSON_IsString (text)) || (b64 && !cJSON_IsString (b64))
      || (eof && !cJSON_IsBool (eof)) || (text && b64) || (!text && !b64 && !cJSON_IsTrue (eof)))
    return sr_error_set_plain (err, "invalid_arguments", EINVAL,
                               "inputResponses.%s.content must give text (a string) or "
                               "base64 (a string), or eof (true), or both",
                               key);
  if (b64 && sr_base64_decode (b64->valuestring, strlen (b64->valuestring), &in->bytes, &in->len)
                 < 0)
    return sr_error_set_plain (err, "invalid_arguments", EINVAL,
                               "inputResponses.%s.content.base64 is not valid base64", key);
  if (text)
    {
      in->data = text->valuestring;
      in->len = strlen (text->valuestring);
    }
  else
    in->data = in->bytes;
  in->eof = cJSON_IsTrue (eof);
  return 0;
}

/* Types in at sh's terminal, as write_stdin types; its end is ^D.  */
static int
type_input (struct sr_shell *sh, const struct input *in, sr_error_t *err)
{
  enum sr_shell_state state;

  if (in->len && sr_shell_write (sh, in->data, in->len, &state, err) < 0)
    return -1;
  return in->eof ? sr_shell_write_eof (sh, &state, err) : 0;
}

/* t->lock held.  Gives the program in: through its stdin pipe, or typed
 * at its shell's terminal.  Typing may wait for an interrupt's grace
 * (seconds), so it is done with t->lock let go, the task held.  */
static int
give_input_locked (struct sr_mcp_task *task, const struct input *in, sr_error_t *err)
{
  struct sr_shell *sh = task->shell;
  int r;

  if (sh == NULL)
    {
      if (in->len && sr_stdin_pipe_write (task->stdin_fd, in->data, in->len, err) < 0)
        return -1;
      if (in->eof)
        close_stdin_locked (task);
      return 0;
    }
  task->refs++;
  task->typing++;
  pthread_mutex_unlock (&task->t->lock);
  r = type_input (sh, in, err);
  pthread_mutex_lock (&task->t->lock);
  task->typing--;
  unref_locked (task); /* which wakes set_shell; or frees a task dropped meanwhile */
  return r;
}

/* t->lock held.  Answers the input request key with response; the task
 * works on.  */
static int
answer_input_locked (struct sr_mcp_task *task, const char *key, const cJSON *response,
                     sr_error_t *err)
{
  struct input in;
  int r;

  if (parse_input (key, response, &in, err) < 0)
    return -1;
  /* Answered: a second update of the same key, while this one types,
   * finds nothing to answer.  */
  task->status = WORKING;
  task->updated_ms = (uint64_t) sr_now_realtime_ms ();
  r = give_input_locked (task, &in, err);
  free (in.bytes);
  return r;
}

/* t->lock held.  tasks/update: the response to the input request still
 * open, if any; the other keys (answered already, never asked) are let
 * be, as SEP-2663 asks.  */
static int
update_locked (struct sr_mcp_task *task, const cJSON *responses, sr_error_t *err)
{
  char key[32];
  const cJSON *response;

  if (task->status != INPUT_REQUIRED)
    return 0;
  snprintf (key, sizeof key, STDIN_KEY "%u", task->input_key);
  response = cJSON_GetObjectItemCaseSensitive (responses, key);
  return response ? answer_input_locked (task, key, response, err) : 0;
}

/* t->lock held.  The task id names, if owner may see it.  */
static struct sr_mcp_task *
find_locked (struct sr_mcp_tasks *t, const char *owner, const char *id)
{
  for (struct sr_mcp_task *task = t->tasks; task; task = task->next)
    if (strcmp (task->id, id) == 0)
      return owner == NULL || (task->owner && strcmp (task->owner, owner) == 0) ? task : NULL;
  return NULL;
}

/* The empty result of tasks/cancel and tasks/update, and what tasks/get
 * adds to.  */
static cJSON *
ack (void)
{
  cJSON *result = cJSON_CreateObject ();

  cJSON_AddStringToObject (result, "resultType", "complete");
  return result;
}

char *
sr_mcp_tasks_handle (struct sr_mcp_tasks *t, const char *owner, const char *method,
                     const cJSON *id, const cJSON *params)
{
  const cJSON *task_id = cJSON_GetObjectItemCaseSensitive (params, "taskId");
  const cJSON *responses = cJSON_GetObjectItemCaseSensitive (params, "inputResponses");
  bool update = strcmp (method, "tasks/update") == 0;
  _cleanup_free_ char *msg = NULL;
  struct sr_mcp_task *task;
  sr_error_t err = NULL;
  cJSON *result = NULL;

  if (!cJSON_IsString (task_id))
    return sr_rpc_error (id, SR_RPC_INVALID_PARAMS, "Invalid params: taskId must be a string",
                         NULL);
  if (update && !cJSON_IsObject (responses))
    return sr_rpc_error (id, SR_RPC_INVALID_PARAMS,
                         "Invalid params: inputResponses must be an object", NULL);
  pthread_mutex_lock (&t->lock);
  sweep_locked (t);
  task = find_locked (t, owner, task_id->valuestring);
  if (task && strcmp (method, "tasks/get") == 0)
    {
      result = ack ();
      refresh_input_locked (task);
      add_detailed_locked (result, task);
    }
  else if (task && strcmp (method, "tasks/cancel") == 0)
    {
      cancel_locked (task);
      result = ack ();
    }
  else if (task && update && update_locked (task, responses, &err) == 0)
    result = ack ();
  pthread_mutex_unlock (&t->lock);
  if (result)
    return sr_rpc_result (id, result);
  if (err)
    {
      msg = sr_xasprintf ("Invalid params: %s", err->msg);
      sr_error_free (&err);
      return sr_rpc_error (id, SR_RPC_INVALID_PARAMS, msg, NULL);
    }
  msg = sr_xasprintf ("Invalid params: no task %s (it never was, it is another caller's, or it "
                      "ended longer ago than task_keep)",
                      task_id->valuestring);
  return sr_rpc_error (id, SR_RPC_INVALID_PARAMS, msg, NULL);
}

cJSON *
sr_mcp_tasks_detailed (struct sr_mcp_tasks *t, const char *owner, const char *id)
{
  struct sr_mcp_task *task;
  cJSON *o = NULL;

  pthread_mutex_lock (&t->lock);
  sweep_locked (t);
  task = find_locked (t, owner, id);
  if (task)
    {
      o = cJSON_CreateObject ();
      refresh_input_locked (task);
      add_detailed_locked (o, task);
    }
  pthread_mutex_unlock (&t->lock);
  return o;
}
