/* The subcommands of `sandbox-runner session` on persistent shells:
 * shell-new, shell-exec, shell-read, shell-write, shell-ls and shell-rm.  */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/session_client.h"
#include "common/util.h"

/* The arguments of a tool on a persistent shell (--shell is required).  */
static cJSON *
shell_args (const struct args *a)
{
  cJSON *args = cJSON_CreateObject ();

  cJSON_AddStringToObject (args, "shell_id", a->shell);
  return args;
}

static void
print_shell_id (const struct args *a, const cJSON *o)
{
  sr_client_note_new_session (a, o);
  puts (get_string (o, "shell_id") ?: "");
}

int
sr_client_cmd_shell_new (struct client *c, struct args *a)
{
  return sr_client_call_and_show (c, a, "shell_new", sr_client_session_args (a), print_shell_id,
                                  NULL);
}

/* shell-exec and shell-read print the output.  */
static void
print_shell_output (const struct args *a, const cJSON *o)
{
  (void) a;
  sr_client_write_output (STDOUT_FILENO, o, "output", "output_encoding");
  if (get_bool (o, "truncated"))
    sr_cli_error ("session: the output was cut; only its tail is shown");
  if (get_bool (o, "timed_out"))
    sr_cli_error ("session: timed out; the command was interrupted (Ctrl-C)");
}

/* shell-exec's status is the command's once it ended (124 when it was
 * interrupted at its timeout), 0 with --no-wait.  */
static int
shell_exec_status (const struct args *a, const cJSON *o)
{
  if (a->no_wait)
    return 0;
  if (get_bool (o, "timed_out"))
    return SR_EXIT_TIMEOUT;
  return (int) get_number (o, "exit_code", 0);
}

int
sr_client_cmd_shell_exec (struct client *c, struct args *a)
{
  _cleanup_free_ char *command = NULL;
  cJSON *args;

  if (a->argc == 1 && strcmp (a->argv[0], "-") == 0)
    {
      size_t len;

      if (sr_client_read_input ("-", &command, &len) < 0)
        return SR_EXIT_RUNNER;
    }
  else
    {
      /* The words join with spaces, as ssh joins them: the shell in the
       * session parses them again.  */
      size_t len = 0;

      for (int i = 0; i < a->argc; i++)
        len += strlen (a->argv[i]) + 1;
      command = sr_xmalloc (len + 1);
      command[0] = '\0';
      for (int i = 0; i < a->argc; i++)
        {
          if (i)
            strcat (command, " ");
          strcat (command, a->argv[i]);
        }
    }
  args = shell_args (a);
  cJSON_AddStringToObject (args, "command", command);
  if (a->no_wait)
    cJSON_AddBoolToObject (args, "wait", false);
  if (a->timeout > 0)
    cJSON_AddNumberToObject (args, "timeout_seconds", a->timeout);
  return sr_client_call_and_show (c, a, "shell_exec", args, print_shell_output, shell_exec_status);
}

int
sr_client_cmd_shell_read (struct client *c, struct args *a)
{
  return sr_client_call_and_show (c, a, "shell_read", shell_args (a), print_shell_output, NULL);
}

/* \n, \r and \t of DATA become the characters, so that a shell user can
 * type 'ls\n'; \xHH and \\ go as they are: write_stdin decodes them.  */
static char *
control_escapes (const char *s)
{
  char *out = sr_xmalloc (strlen (s) + 1), *o = out;

  for (; *s; s++)
    {
      if (s[0] == '\\' && s[1] == '\\')
        {
          *o++ = *s++;
          *o++ = *s;
        }
      else if (s[0] == '\\' && s[1] && strchr ("nrt", s[1]))
        {
          s++;
          *o++ = *s == 'n' ? '\n' : *s == 'r' ? '\r' : '\t';
        }
      else
        *o++ = *s;
    }
  *o = '\0';
  return out;
}

int
sr_client_cmd_shell_write (struct client *c, struct args *a)
{
  _cleanup_free_ char *data = control_escapes (a->argv[0]);
  cJSON *args = shell_args (a);

  cJSON_AddStringToObject (args, "data", data);
  return sr_client_call_and_show (c, a, "write_stdin", args, NULL, NULL);
}

static void
print_shells (const struct args *a, const cJSON *o)
{
  const cJSON *e;

  (void) a;
  printf ("%-32s  %-32s  %s\n", "SHELL", "SESSION", "STATE");
  cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "shells"))
    printf ("%-32s  %-32s  %s\n", get_string (e, "shell_id") ?: "",
            get_string (e, "session_id") ?: "", get_string (e, "state") ?: "");
}

int
sr_client_cmd_shell_ls (struct client *c, struct args *a)
{
  return sr_client_call_and_show (c, a, "shell_list", cJSON_CreateObject (), print_shells, NULL);
}

int
sr_client_cmd_shell_rm (struct client *c, struct args *a)
{
  return sr_client_call_and_show (c, a, "shell_remove", shell_args (a), NULL, NULL);
}
