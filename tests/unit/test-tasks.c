/* The table of tasks (mcp/tasks.h): a task is found by its owner only,
 * by an id of 128 random bits; it ends with a result or is cancelled (its
 * run's cancel_fd written); an ended one is forgotten after keep_ms; one
 * never announced is taken out with its result.  */
#include <config.h>

#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/util.h"
#include "mcp/tasks.h"
#include "tap.h"

/* The answer to METHOD {"taskId": ID} by owner, parsed.  */
static cJSON *
ask (struct sr_mcp_tasks *t, const char *owner, const char *method, const char *id)
{
  cJSON *params = cJSON_CreateObject ();
  cJSON *rpc_id = cJSON_CreateNumber (1);
  _cleanup_free_ char *reply = NULL;
  cJSON *root;

  cJSON_AddStringToObject (params, "taskId", id);
  reply = sr_mcp_tasks_handle (t, owner, method, rpc_id, params);
  root = cJSON_Parse (reply);
  cJSON_Delete (params);
  cJSON_Delete (rpc_id);
  return root;
}

/* root[a][b] when it is a string, else "".  */
static const char *
str_at (const cJSON *root, const char *a, const char *b)
{
  const cJSON *o = cJSON_GetObjectItemCaseSensitive (root, a);

  o = cJSON_GetObjectItemCaseSensitive (o, b);
  return cJSON_IsString (o) ? o->valuestring : "";
}

static const char *
str_of (const cJSON *root, const char *key)
{
  const cJSON *o = cJSON_GetObjectItemCaseSensitive (root, key);

  return cJSON_IsString (o) ? o->valuestring : "";
}

static int
code_of (const cJSON *root)
{
  const cJSON *code = cJSON_GetObjectItemCaseSensitive (root, "error");

  code = cJSON_GetObjectItemCaseSensitive (code, "code");
  return cJSON_IsNumber (code) ? code->valueint : 0;
}

int
main (void)
{
  struct sr_mcp_tasks *t = sr_mcp_tasks_new (200);
  int fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  struct sr_mcp_task *a, *b, *c;
  cJSON *created, *got, *result;
  char id_a[64], id_b[64];
  uint64_t n = 0;

  a = sr_mcp_task_new (t, "token:a", fd, NULL);
  b = sr_mcp_task_new (t, "token:a", -1, NULL);
  created = sr_mcp_task_created (a);
  ok (strcmp (str_of (created, "resultType"), "task") == 0,
      "a new task is announced with resultType task");
  snprintf (id_a, sizeof id_a, "%s", str_of (created, "taskId"));
  ok (strlen (id_a) == 32 && strspn (id_a, "0123456789abcdef") == 32, "its id is 32 hex digits");
  ok (strcmp (str_of (created, "status"), "working") == 0, "it is working");
  cJSON_Delete (created);
  created = sr_mcp_task_created (b);
  snprintf (id_b, sizeof id_b, "%s", str_of (created, "taskId"));
  ok (strcmp (id_a, id_b) != 0, "two tasks have two ids");
  cJSON_Delete (created);

  got = ask (t, "token:b", "tasks/get", id_a);
  ok (code_of (got) == -32602, "another owner does not find it");
  cJSON_Delete (got);
  got = ask (t, NULL, "tasks/get", id_a);
  ok (strcmp (str_at (got, "result", "status"), "working") == 0, "the one client of stdio does");
  cJSON_Delete (got);

  sr_mcp_task_progress (a, "run", 12);
  got = ask (t, "token:a", "tasks/get", id_a);
  ok (strcmp (str_at (got, "result", "statusMessage"), "run: 12 bytes of output so far") == 0,
      "its status message says the stage and the output so far");
  cJSON_Delete (got);

  got = ask (t, "token:a", "tasks/cancel", id_a);
  ok (strcmp (str_at (got, "result", "resultType"), "complete") == 0, "tasks/cancel acknowledges");
  cJSON_Delete (got);
  ok (read (fd, &n, sizeof n) == sizeof n && n == 1, "and writes the run's cancel_fd");
  ok (sr_mcp_task_cancelled (a), "the task is cancelled");
  result = cJSON_CreateObject ();
  sr_mcp_task_end (a, result, NULL);
  got = ask (t, "token:a", "tasks/get", id_a);
  ok (strcmp (str_at (got, "result", "status"), "cancelled") == 0,
      "a run that ends after the cancel leaves it cancelled");
  ok (cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (got, "result"),
                                        "result") == NULL,
      "with no result");
  cJSON_Delete (got);
  sr_mcp_task_unref (a);

  result = cJSON_CreateObject ();
  cJSON_AddStringToObject (result, "marker", "done");
  sr_mcp_task_end (b, result, NULL);
  ok (sr_mcp_task_wait (b, sr_now_ns ()), "an ended task's wait returns at once");
  got = ask (t, "token:a", "tasks/get", id_b);
  ok (strcmp (str_at (got, "result", "status"), "completed") == 0,
      "an ended run completes its task");
  ok (strcmp (str_at (cJSON_GetObjectItemCaseSensitive (got, "result"), "result", "marker"), "done")
          == 0,
      "whose result is inline");
  cJSON_Delete (got);
  sr_mcp_task_unref (b);

  c = sr_mcp_task_new (t, NULL, -1, NULL);
  ok (!sr_mcp_task_wait (c, sr_now_ns () + 20000000u), "a working task's wait times out");
  result = cJSON_CreateObject ();
  sr_mcp_task_end (c, result, NULL);
  result = sr_mcp_task_forget (c);
  ok (result != NULL, "a task never announced is taken out with its result");
  cJSON_Delete (result);
  sr_mcp_task_unref (c);

  usleep (300 * 1000);
  got = ask (t, "token:a", "tasks/get", id_b);
  ok (code_of (got) == -32602, "an ended task is forgotten after keep_ms");
  cJSON_Delete (got);

  sr_mcp_tasks_free (t);
  close (fd);
  return done_testing ();
}
