/* A task that holds its program's stdin (mcp/tasks.h, mcp/stdin-pipe.h),
 * with sh as the program: while it waits reading the pipe the task is
 * input_required and asks for input under a new key each time;
 * tasks/update gives it text or base64 bytes, closes it with eof or a
 * declined request; a cancelled task closes it; another owner's update,
 * and a malformed answer, are refused; an answer to no open request is
 * let be.  */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "mcp/stdin-pipe.h"
#include "mcp/tasks.h"
#include "tap.h"

/* The answer to METHOD {"taskId": ID, "inputResponses": RESPONSES (JSON
 * text, or NULL)} by owner, parsed.  */
static cJSON *
ask (struct sr_mcp_tasks *t, const char *owner, const char *method, const char *id,
     const char *responses)
{
  cJSON *params = cJSON_CreateObject ();
  cJSON *rpc_id = cJSON_CreateNumber (1);
  _cleanup_free_ char *reply = NULL;
  cJSON *root;

  cJSON_AddStringToObject (params, "taskId", id);
  if (responses)
    cJSON_AddItemToObject (params, "inputResponses", cJSON_Parse (responses));
  reply = sr_mcp_tasks_handle (t, owner, method, rpc_id, params);
  root = cJSON_Parse (reply);
  cJSON_Delete (params);
  cJSON_Delete (rpc_id);
  return root;
}

static int
code_of (const cJSON *root)
{
  const cJSON *code = cJSON_GetObjectItemCaseSensitive (root, "error");

  code = cJSON_GetObjectItemCaseSensitive (code, "code");
  return cJSON_IsNumber (code) ? code->valueint : 0;
}

static bool
acked (const cJSON *root)
{
  const cJSON *r = cJSON_GetObjectItemCaseSensitive (root, "result");
  const cJSON *type = cJSON_GetObjectItemCaseSensitive (r, "resultType");

  return cJSON_GetArraySize (r) == 1 && cJSON_IsString (type)
         && strcmp (type->valuestring, "complete") == 0;
}

/* Polls tasks/get until the task asks for input, for up to 5 s: the key
 * of its input request ("" if none came), and its method in *method.  */
static char *
wait_input (struct sr_mcp_tasks *t, const char *id, char **method)
{
  char *key = sr_xstrdup ("");

  *method = sr_xstrdup ("");
  for (int i = 0; i < 500; i++)
    {
      cJSON *got = ask (t, "token:a", "tasks/get", id, NULL);
      const cJSON *r = cJSON_GetObjectItemCaseSensitive (got, "result");
      const cJSON *status = cJSON_GetObjectItemCaseSensitive (r, "status");
      const cJSON *req = cJSON_GetObjectItemCaseSensitive (r, "inputRequests");

      if (cJSON_IsString (status) && strcmp (status->valuestring, "input_required") == 0
          && req && req->child)
        {
          const cJSON *m = cJSON_GetObjectItemCaseSensitive (req->child, "method");

          free (key);
          free (*method);
          key = sr_xstrdup (req->child->string);
          *method = sr_xstrdup (cJSON_IsString (m) ? m->valuestring : "");
          cJSON_Delete (got);
          break;
        }
      cJSON_Delete (got);
      usleep (10000);
    }
  return key;
}

/* A working task of token:a whose program is sh -c script, its stdin the
 * task's pipe and its stdout *out_fd's; its id in id (64 bytes).  */
static struct sr_mcp_task *
start (struct sr_mcp_tasks *t, const char *script, pid_t *pid, int *out_fd, char *id)
{
  struct sr_mcp_task *task = sr_mcp_task_new (t, "token:a", -1, NULL);
  int r, w, out[2];
  cJSON *created;

  if (sr_stdin_pipe_new (65536, &r, &w, NULL) < 0 || pipe (out) < 0)
    {
      printf ("Bail out! no pipe\n");
      exit (1);
    }
  sr_mcp_task_set_stdin (task, w);
  *pid = fork ();
  if (*pid == 0)
    {
      dup2 (r, 0);
      dup2 (out[1], 1);
      execl ("/bin/sh", "sh", "-c", script, (char *) NULL);
      _exit (127);
    }
  close (r);
  close (out[1]);
  *out_fd = out[0];
  created = sr_mcp_task_created (task);
  snprintf (id, 64, "%s", cJSON_GetObjectItemCaseSensitive (created, "taskId")->valuestring);
  cJSON_Delete (created);
  return task;
}

/* What the program printed, once it exited.  */
static char *
finish (pid_t pid, int out_fd)
{
  char buf[256];
  size_t len = 0;
  ssize_t n;
  int status;

  while (len < sizeof buf - 1 && (n = read (out_fd, buf + len, sizeof buf - 1 - len)) > 0)
    len += (size_t) n;
  close (out_fd);
  waitpid (pid, &status, 0);
  buf[len] = '\0';
  return sr_xstrdup (buf);
}

/* cat (then "end") as the program of a task: once it waits for input,
 * method (with responses, or none) is asked of it; what it printed by
 * its end.  Its task's id in id.  */
static char *
answer_cat (struct sr_mcp_tasks *t, const char *method, const char *responses, char *id)
{
  struct sr_mcp_task *task;
  _cleanup_free_ char *key = NULL, *request = NULL;
  char *printed;
  pid_t pid;
  int out;

  task = start (t, "cat; echo end", &pid, &out, id);
  key = wait_input (t, id, &request);
  cJSON_Delete (ask (t, "token:a", method, id, responses));
  printed = finish (pid, out);
  sr_mcp_task_end (task, cJSON_CreateObject (), NULL);
  sr_mcp_task_unref (task);
  return printed;
}

int
main (void)
{
  struct sr_mcp_tasks *t = sr_mcp_tasks_new (60000);
  struct sr_mcp_task *task;
  _cleanup_free_ char *key = NULL, *key2 = NULL, *method = NULL, *printed = NULL;
  char id[64];
  cJSON *got;
  pid_t pid;
  int out;

  signal (SIGPIPE, SIG_IGN);
  task = start (t, "read a; read b; printf '%s+%s' \"$a\" \"$b\"", &pid, &out, id);

  key = wait_input (t, id, &method);
  is_str (key, "stdin-1",
          "a task whose program waits reading its stdin is input_required, asking stdin-1");
  ok (strcmp (method, "elicitation/create") == 0, "which is an elicitation/create");

  got = ask (t, "token:b", "tasks/update", id, "{\"stdin-1\":{\"action\":\"accept\","
                                              "\"content\":{\"text\":\"x\\n\"}}}");
  ok (code_of (got) == -32602, "an update to another owner's task is refused (-32602)");
  cJSON_Delete (got);
  got = ask (t, "token:a", "tasks/update", id, "{\"stdin-1\":{\"action\":\"accept\","
                                              "\"content\":{\"text\":\"x\",\"base64\":\"eA==\"}}}");
  ok (code_of (got) == -32602, "an answer giving both text and base64 is refused (-32602)");
  cJSON_Delete (got);
  got = ask (t, "token:a", "tasks/update", id, "[]");
  ok (code_of (got) == -32602, "inputResponses that is no object is refused (-32602)");
  cJSON_Delete (got);
  got = ask (t, "token:a", "tasks/update", id, "{\"stdin-9\":{\"action\":\"accept\"}}");
  ok (acked (got), "an answer to no open request is acknowledged and let be");
  cJSON_Delete (got);

  got = ask (t, "token:a", "tasks/update", id, "{\"stdin-1\":{\"action\":\"accept\","
                                              "\"content\":{\"text\":\"one\\n\"}}}");
  ok (acked (got), "tasks/update with the text for stdin-1 is a bare acknowledgement");
  cJSON_Delete (got);
  free (method);
  key2 = wait_input (t, id, &method);
  is_str (key2, "stdin-2", "the program read the line and waits again: stdin-2");
  /* "two\n" */
  got = ask (t, "token:a", "tasks/update", id,
             "{\"stdin-2\":{\"action\":\"accept\",\"content\":{\"base64\":\"dHdvCg==\"}}}");
  ok (acked (got), "tasks/update with base64 bytes for stdin-2 is acknowledged");
  cJSON_Delete (got);
  printed = finish (pid, out);
  is_str (printed, "one+two", "the program read both lines, as given");
  sr_mcp_task_end (task, cJSON_CreateObject (), NULL);
  sr_mcp_task_unref (task);

  free (printed);
  printed = answer_cat (t, "tasks/update", "{\"stdin-1\":{\"action\":\"accept\","
                                           "\"content\":{\"text\":\"last\\n\",\"eof\":true}}}",
                        id);
  is_str (printed, "last\nend\n", "text with eof gives the text, then the end of stdin");
  free (printed);
  printed = answer_cat (t, "tasks/update", "{\"stdin-1\":{\"action\":\"decline\"}}", id);
  is_str (printed, "end\n", "a declined request closes the program's stdin");
  free (printed);
  printed = answer_cat (t, "tasks/cancel", NULL, id);
  is_str (printed, "end\n", "cancelling a task that waits for input closes its stdin");
  got = ask (t, "token:a", "tasks/get", id, NULL);
  is_str (cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (got, "result"),
                                            "status")->valuestring,
          "cancelled", "and the task is cancelled");
  cJSON_Delete (got);

  sr_mcp_tasks_free (t);
  return done_testing ();
}
