/* What the subcommands of `sandbox-runner session` have in common (one
 * tool call, its result shown as text or JSON, local input read), and
 * the subcommands on sessions themselves: new, list, close, run, upload
 * and ls.  */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/session_client.h"
#include "common/util.h"

/* Local files read for upload, file-write and run are bounded by the
 * server's limits; this only keeps a mistaken argument (a disk image)
 * from filling our memory first.  */
#define MAX_LOCAL_INPUT (256u << 20)

int
sr_client_read_input (const char *path, char **ret, size_t *ret_len)
{
  if (sr_cli_read_input ("session", path, MAX_LOCAL_INPUT, ret, ret_len) < 0)
    return -1;
  if (*ret_len > MAX_LOCAL_INPUT)
    {
      sr_client_fail ("%s is over %u MiB", path && strcmp (path, "-") != 0 ? path : "stdin",
                      MAX_LOCAL_INPUT >> 20);
      free (*ret);
      *ret = NULL;
      return -1;
    }
  return 0;
}

int
sr_client_read_text (const char *path, const char *nul_message, char **ret)
{
  size_t len;

  if (sr_client_read_input (path, ret, &len) < 0)
    return -1;
  if (strlen (*ret) != len)
    {
      sr_client_fail ("%s", nul_message);
      free (*ret);
      *ret = NULL;
      return -1;
    }
  return 0;
}

void
sr_client_print_json (const cJSON *o)
{
  _cleanup_free_ char *text = cJSON_PrintUnformatted (o);

  if (text == NULL)
    sr_oom ();
  puts (text);
}

void
sr_client_write_output (int fd, const cJSON *o, const char *key, const char *encoding_key)
{
  const char *text = get_string (o, key), *enc = get_string (o, encoding_key);

  if (text == NULL)
    return;
  if (enc && strcmp (enc, "base64") == 0)
    {
      _cleanup_free_ char *raw = NULL;
      size_t len;

      if (sr_base64_decode (text, strlen (text), &raw, &len) == 0)
        sr_write_all (fd, raw, len);
      return;
    }
  sr_write_all (fd, text, strlen (text));
}

void
sr_client_note_new_session (const struct args *a, const cJSON *o)
{
  const char *sid = get_string (o, "session_id");

  if (a->session == NULL && sid && !a->json)
    sr_cli_error ("session: created session %s", sid);
}

int
sr_client_call_and_show (struct client *c, const struct args *a, const char *tool, cJSON *args,
                         print_fn *print, status_fn *status)
{
  cJSON *o = sr_client_call_tool (c, tool, args);
  int ret;

  if (o == NULL)
    return SR_EXIT_RUNNER;
  if (a->json)
    sr_client_print_json (o);
  else if (print)
    print (a, o);
  ret = status ? status (a, o) : 0;
  cJSON_Delete (o);
  return ret;
}

cJSON *
sr_client_session_args (const struct args *a)
{
  cJSON *args = cJSON_CreateObject ();

  if (a->session)
    cJSON_AddStringToObject (args, "session_id", a->session);
  return args;
}

static void
print_session_id (const struct args *a, const cJSON *o)
{
  (void) a;
  puts (get_string (o, "session_id") ?: "");
}

/* For file-write, whose --session is required, note_new_session says
 * nothing.  */
void
sr_client_print_path (const struct args *a, const cJSON *o)
{
  sr_client_note_new_session (a, o);
  puts (get_string (o, "path") ?: "");
}

int
sr_client_cmd_new (struct client *c, struct args *a)
{
  cJSON *args = cJSON_CreateObject ();

  if (a->image)
    cJSON_AddStringToObject (args, "image", a->image);
  return sr_client_call_and_show (c, a, "create_session", args, print_session_id, NULL);
}

static void
print_sessions (const struct args *a, const cJSON *o)
{
  const cJSON *e;

  (void) a;
  printf ("%-32s  %-12s  %-20s  %8s  %s\n", "SESSION", "IMAGE", "CREATED", "IDLE", "BUSY");
  cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "sessions"))
    printf ("%-32s  %-12s  %-20s  %7.0fs  %s\n", get_string (e, "session_id") ?: "",
            get_string (e, "image") ?: "", get_string (e, "created") ?: "",
            get_number (e, "idle_seconds", 0), get_bool (e, "busy") ? "yes" : "no");
}

int
sr_client_cmd_list (struct client *c, struct args *a)
{
  return sr_client_call_and_show (c, a, "list_sessions", cJSON_CreateObject (), print_sessions,
                                  NULL);
}

int
sr_client_cmd_close (struct client *c, struct args *a)
{
  return sr_client_call_and_show (c, a, "close_session", sr_client_session_args (a), NULL,
                                  NULL);
}

static void
print_run (const struct args *a, const cJSON *o)
{
  const char *status = get_string (o, "status") ?: "";

  (void) a;
  /* A truncated output ends with the server's truncation marker.  */
  sr_client_write_output (STDOUT_FILENO, o, "stdout", "stdout_encoding");
  fflush (stdout);
  sr_client_write_output (STDERR_FILENO, o, "stderr", "stderr_encoding");
  if (strcmp (status, "compile_error") == 0)
    sr_cli_error ("compile error");
  else if (strcmp (status, "timeout") == 0)
    sr_cli_error ("timed out; the run was killed");
  else if (strcmp (status, "oom") == 0)
    sr_cli_error ("out of memory: the run was killed at its memory limit");
}

/* The run's own exit status, as `sandbox-runner run` gives it.  */
static int
run_status (const struct args *a, const cJSON *o)
{
  const char *status = get_string (o, "status") ?: "";

  (void) a;
  if (strcmp (status, "compile_error") == 0)
    return SR_EXIT_COMPILE;
  if (strcmp (status, "timeout") == 0)
    return SR_EXIT_TIMEOUT;
  return (int) get_number (o, "exit_code", 0);
}

int
sr_client_cmd_run (struct client *c, struct args *a)
{
  _cleanup_free_ char *code = NULL;
  const char *path = a->argc ? a->argv[0] : NULL;
  cJSON *args;

  if (sr_client_read_text (path, "run: the code holds a NUL byte", &code) < 0)
    return SR_EXIT_RUNNER;
  args = sr_client_session_args (a);
  cJSON_AddStringToObject (args, "code", code);
  if (a->language)
    cJSON_AddStringToObject (args, "language", a->language);
  if (a->timeout > 0)
    cJSON_AddNumberToObject (args, "timeout_seconds", a->timeout);
  return sr_client_call_and_show (c, a, "run_code", args, print_run, run_status);
}

const char *
sr_client_base_name (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash ? slash + 1 : path;
}

int
sr_client_cmd_upload (struct client *c, struct args *a)
{
  _cleanup_free_ char *data = NULL, *b64 = NULL;
  const char *local = a->argv[0];
  const char *name = a->argc > 1 ? a->argv[1] : sr_client_base_name (local);
  size_t len;
  cJSON *args;

  if (strcmp (local, "-") == 0 && a->argc < 2)
    {
      sr_client_fail ("upload: give the NAME of a file read from stdin");
      return SR_EXIT_RUNNER;
    }
  if (*name == '\0')
    {
      sr_client_fail ("upload: '%s' names no file", local);
      return SR_EXIT_RUNNER;
    }
  if (sr_client_read_input (local, &data, &len) < 0)
    return SR_EXIT_RUNNER;
  b64 = sr_base64_encode (data, len);
  args = sr_client_session_args (a);
  cJSON_AddStringToObject (args, "filename", name);
  cJSON_AddStringToObject (args, "content_base64", b64);
  if (a->overwrite)
    cJSON_AddBoolToObject (args, "overwrite", true);
  return sr_client_call_and_show (c, a, "upload_file", args, sr_client_print_path, NULL);
}

static void
print_artifacts (const struct args *a, const cJSON *o)
{
  const cJSON *e;

  (void) a;
  cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "artifacts"))
    printf ("%10.0f  %-20s  %-24s  %s\n", get_number (e, "size", 0),
            get_string (e, "mtime") ?: "", get_string (e, "mime_type") ?: "-",
            get_string (e, "path") ?: "");
  if (get_bool (o, "truncated"))
    sr_cli_error ("session: ls: the list is truncated");
}

int
sr_client_cmd_ls (struct client *c, struct args *a)
{
  return sr_client_call_and_show (c, a, "list_artifacts", sr_client_session_args (a),
                                  print_artifacts, NULL);
}
