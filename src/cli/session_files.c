/* The subcommands of `sandbox-runner session` on a session's files:
 * file-read, file-write, file-patch and file-search.  */
#include "config.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#include "cli/commands.h"
#include "cli/session_client.h"
#include "common/util.h"

/* The arguments of the file tools: the session and the file.  */
static cJSON *
file_args (const struct args *a)
{
  cJSON *args = sr_client_session_args (a);

  cJSON_AddStringToObject (args, "path", a->argv[0]);
  return args;
}

static void
print_content (const struct args *a, const cJSON *o)
{
  (void) a;
  fputs (get_string (o, "content") ?: "", stdout);
}

int
sr_client_cmd_file_read (struct client *c, struct args *a)
{
  cJSON *args = file_args (a);

  if (a->offset)
    cJSON_AddNumberToObject (args, "offset", (double) a->offset);
  if (a->limit)
    cJSON_AddNumberToObject (args, "limit", (double) a->limit);
  return sr_client_call_and_show (c, a, "file_read", args, print_content, NULL);
}

int
sr_client_cmd_file_write (struct client *c, struct args *a)
{
  _cleanup_free_ char *content = NULL;
  cJSON *args;

  if (sr_client_read_text (a->argc > 1 ? a->argv[1] : NULL,
                           "file-write: the content holds a NUL byte (use upload for binary files)",
                           &content) < 0)
    return SR_EXIT_RUNNER;
  args = file_args (a);
  cJSON_AddStringToObject (args, "content", content);
  return sr_client_call_and_show (c, a, "file_write", args, sr_client_print_path, NULL);
}

static void
print_replacements (const struct args *a, const cJSON *o)
{
  (void) a;
  printf ("%.0f\n", get_number (o, "replacements", 0));
}

int
sr_client_cmd_file_patch (struct client *c, struct args *a)
{
  _cleanup_free_ char *diff = NULL;
  cJSON *args;

  if (a->diff ? a->old_s || a->new_s : !a->old_s || !a->new_s)
    {
      sr_client_fail ("file-patch: give either --old TEXT and --new TEXT, or --diff FILE");
      return SR_EXIT_RUNNER;
    }
  if (a->diff)
    {
      size_t len;

      if (sr_client_read_input (a->diff, &diff, &len) < 0)
        return SR_EXIT_RUNNER;
    }
  args = file_args (a);
  if (diff)
    cJSON_AddStringToObject (args, "diff", diff);
  else
    {
      cJSON_AddStringToObject (args, "old_string", a->old_s);
      cJSON_AddStringToObject (args, "new_string", a->new_s);
      if (a->all)
        cJSON_AddBoolToObject (args, "replace_all", true);
    }
  return sr_client_call_and_show (c, a, "file_patch", args, print_replacements, NULL);
}

/* As grep -rn prints them.  */
static void
print_matches (const struct args *a, const cJSON *o)
{
  const cJSON *e;

  (void) a;
  cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "matches"))
    printf ("%s:%.0f:%s\n", get_string (e, "path") ?: "", get_number (e, "line", 0),
            get_string (e, "text") ?: "");
  if (get_bool (o, "truncated"))
    sr_cli_error ("session: file-search: more matches were left out");
}

int
sr_client_cmd_file_search (struct client *c, struct args *a)
{
  cJSON *args = sr_client_session_args (a);

  cJSON_AddStringToObject (args, "pattern", a->argv[0]);
  if (a->glob)
    cJSON_AddStringToObject (args, "glob", a->glob);
  if (a->path)
    cJSON_AddStringToObject (args, "path", a->path);
  return sr_client_call_and_show (c, a, "file_search", args, print_matches, NULL);
}
