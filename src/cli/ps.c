#include <config.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/statedir.h"
#include "common/util.h"
#include "runtime/state.h"

char *
sr_cli_state_dir (const struct sr_config *cfg, sr_error_t *err)
{
  return sr_statedir_runtime_sub (cfg->runtime_dir, "containers", err);
}

static void
format_age (char *buf, size_t len, int64_t seconds)
{
  if (seconds < 120)
    snprintf (buf, len, "%llds", (long long) seconds);
  else if (seconds < 7200)
    snprintf (buf, len, "%lldm", (long long) seconds / 60);
  else
    snprintf (buf, len, "%lldh", (long long) seconds / 3600);
}

static void
print_table (const struct sr_state *list, size_t n)
{
  int64_t now = (int64_t) time (NULL);

  printf ("%-20s %-8s %-8s %-6s %-9s %-5s %-5s %-24s %s\n", "NAME", "KIND", "PID", "AGE",
          "MEMORY", "CPUS", "PIDS", "ENFORCED BY", "COMMAND");
  for (size_t i = 0; i < n; i++)
    {
      const struct sr_state *s = &list[i];
      char age[32], mem[32], enforced[64];

      format_age (age, sizeof age, now - s->created);
      if (s->memory)
        snprintf (mem, sizeof mem, "%lluM", (unsigned long long) (s->memory >> 20));
      else
        snprintf (mem, sizeof mem, "-");
      snprintf (enforced, sizeof enforced, "%s/%s/%s", sr_limit_mechanism_name (s->limits.memory),
                sr_limit_mechanism_name (s->limits.cpu), sr_limit_mechanism_name (s->limits.pids));
      printf ("%-20s %-8s %-8ld %-6s %-9s %-5g %-5u %-24s %s\n", s->name, s->kind,
              (long) s->init_pid, age, mem, s->cpus, s->pids, enforced, s->label);
    }
}

static void
print_json (const struct sr_state *list, size_t n)
{
  cJSON *arr = cJSON_CreateArray ();
  _cleanup_free_ char *text = NULL;

  for (size_t i = 0; i < n; i++)
    {
      const struct sr_state *s = &list[i];
      cJSON *o = cJSON_CreateObject (), *l;

      cJSON_AddStringToObject (o, "name", s->name);
      cJSON_AddStringToObject (o, "kind", s->kind);
      cJSON_AddNumberToObject (o, "pid", s->init_pid);
      cJSON_AddNumberToObject (o, "runner_pid", s->runner_pid);
      cJSON_AddNumberToObject (o, "created", (double) s->created);
      cJSON_AddNumberToObject (o, "memory", (double) s->memory);
      cJSON_AddNumberToObject (o, "cpus", s->cpus);
      cJSON_AddNumberToObject (o, "pids", s->pids);
      l = cJSON_AddObjectToObject (o, "limits");
      cJSON_AddStringToObject (l, "memory", sr_limit_mechanism_name (s->limits.memory));
      cJSON_AddStringToObject (l, "cpu", sr_limit_mechanism_name (s->limits.cpu));
      cJSON_AddStringToObject (l, "pids", sr_limit_mechanism_name (s->limits.pids));
      cJSON_AddStringToObject (o, "command", s->label);
      cJSON_AddItemToArray (arr, o);
    }
  text = cJSON_Print (arr);
  puts (text);
  cJSON_Delete (arr);
}

/* Shared by ps and kill: the config, then the list of live entries.  */
static int
load (struct sr_config *cfg, char **ret_dir, sr_error_t *err)
{
  if (sr_config_load (cfg, NULL, NULL, err) < 0)
    return -1;
  *ret_dir = sr_cli_state_dir (cfg, err);
  return *ret_dir ? 0 : -1;
}

/* ps and sessions: the live entries (of one kind, when kind is set).  */
static int
list_entries (int argc, char **argv, const char *kind, const char *usage)
{
  struct sr_config cfg = { 0 };
  _cleanup_free_ char *dir = NULL;
  struct sr_state *list = NULL, *live;
  size_t n = 0, n_live = 0;
  sr_error_t err = NULL;
  bool json = false;
  int status = SR_EXIT_RUNNER;

  for (int i = 1; i < argc; i++)
    {
      if (strcmp (argv[i], "--json") == 0)
        json = true;
      else if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0)
        {
          fputs (usage, stdout);
          return 0;
        }
      else
        {
          sr_cli_error ("%s: unknown option '%s'", argv[0], argv[i]);
          return SR_EXIT_RUNNER;
        }
    }
  if (load (&cfg, &dir, &err) < 0 || sr_state_list (dir, &list, &n, &err) < 0)
    {
      sr_cli_error ("%s", err->msg);
      sr_error_free (&err);
      goto out;
    }
  /* Entries of runners that died without cleaning up are not shown; the
   * next server start reclaims them.  */
  live = sr_xcalloc (n ? n : 1, sizeof *live);
  for (size_t i = 0; i < n; i++)
    if (sr_state_running (&list[i])
        && (kind == NULL || strcmp (list[i].kind, kind) == 0))
      live[n_live++] = list[i];
  if (json)
    print_json (live, n_live);
  else
    print_table (live, n_live);
  free (live);
  status = 0;
out:
  sr_state_list_free (list, n);
  sr_config_done (&cfg);
  return status;
}

int
sr_cmd_ps (int argc, char **argv)
{
  return list_entries (argc, argv, NULL,
                       "Usage: sandbox-runner ps [--json]\n\n"
                       "Lists running containers and sessions of this user's runners, with\n"
                       "their limits, what enforces them, and their age.\n");
}

int
sr_cmd_sessions (int argc, char **argv)
{
  return list_entries (argc, argv, "session",
                       "Usage: sandbox-runner sessions [--json]\n\n"
                       "Lists the open sessions of this user's MCP servers: the container\n"
                       "holding each (its COMMAND column names the session id and image),\n"
                       "its limits and its age.  'sandbox-runner kill NAME' closes one.\n");
}

int
sr_cmd_kill (int argc, char **argv)
{
  struct sr_config cfg = { 0 };
  _cleanup_free_ char *dir = NULL;
  sr_error_t err = NULL;
  int status = 0;

  if (argc >= 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
    {
      printf ("Usage: sandbox-runner kill NAME...\n\n"
              "Kills containers or sessions by the name 'ps' shows.\n");
      return 0;
    }
  if (argc < 2)
    {
      sr_cli_error ("kill: no container name given (see 'sandbox-runner ps')");
      return SR_EXIT_RUNNER;
    }
  if (load (&cfg, &dir, &err) < 0)
    {
      sr_cli_error ("%s", err->msg);
      sr_error_free (&err);
      sr_config_done (&cfg);
      return SR_EXIT_RUNNER;
    }
  for (int i = 1; i < argc; i++)
    if (sr_state_kill (dir, argv[i], &err) < 0)
      {
        sr_cli_error ("%s", err->msg);
        sr_error_free (&err);
        status = SR_EXIT_RUNNER;
      }
  sr_config_done (&cfg);
  return status;
}
