/* sandbox-runner audit [--tool T] [--machine M] [--status S] [--since WHEN]
 *                      [--limit N] [--json]
 * The administrator's view of the audit trail: every client's calls.  */
#include <config.h>

#include <getopt.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/util.h"
#include "sandbox/service.h"

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: sandbox-runner audit [--tool T] [--machine M] [--status S]\n"
           "                            [--since WHEN] [--limit N] [--json]\n\n"
           "Lists the MCP tool calls of every client, newest first, from the audit\n"
           "trail in the history database (settings history_db, audit_retention_days).\n\n"
           "  -t, --tool T       only calls of tool T\n"
           "  -m, --machine M    only calls on machine M (a session id)\n"
           "  -s, --status S     only calls that ended with S (ok, or an error code)\n"
           "  -S, --since WHEN   only calls from WHEN on: an ISO 8601 UTC time\n"
           "                     (2026-12-05T01:00:00Z) or a number of seconds back\n"
           "  -n, --limit N      at most N calls (default %d, at most %d)\n"
           "  --json             print a JSON array with every field\n",
           SR_AUDIT_LIMIT_DEFAULT, SR_AUDIT_LIMIT_MAX);
}

static void
print_table (const struct sr_audit_entry *v, size_t n)
{
  printf ("%-24s  %-22s  %-36s  %-20s  %-18s  %8s  %s\n", "TIME", "CLIENT", "MACHINE", "TOOL",
          "STATUS", "DURATION", "ARGS");
  for (size_t i = 0; i < n; i++)
    {
      const struct sr_audit_entry *e = &v[i];
      _cleanup_free_ char *time = sr_history_format_time (e->timestamp_ms);
      _cleanup_free_ char *client = sr_cli_printable (e->client, 22);
      _cleanup_free_ char *machine = sr_cli_printable (*e->machine ? e->machine : "-", 36);
      _cleanup_free_ char *tool = sr_cli_printable (e->tool, 20);
      _cleanup_free_ char *status = sr_cli_printable (e->status, 18);
      _cleanup_free_ char *args = sr_cli_printable (e->args_sha256, 23);
      char dur[32];

      sr_cli_format_duration (dur, sizeof dur, e->duration_ms);
      printf ("%-24s  %-22s  %-36s  %-20s  %-18s  %8s  %s\n", time, client, machine, tool, status,
              dur, args);
    }
}

static void
print_json (const struct sr_audit_entry *v, size_t n)
{
  cJSON *arr = cJSON_CreateArray ();
  _cleanup_free_ char *text = NULL;

  for (size_t i = 0; i < n; i++)
    {
      const struct sr_audit_entry *e = &v[i];
      _cleanup_free_ char *time = sr_history_format_time (e->timestamp_ms);
      cJSON *o = cJSON_CreateObject ();

      cJSON_AddStringToObject (o, "timestamp", time);
      cJSON_AddStringToObject (o, "client", e->client);
      cJSON_AddStringToObject (o, "machine", e->machine);
      cJSON_AddStringToObject (o, "tool", e->tool);
      cJSON_AddStringToObject (o, "status", e->status);
      cJSON_AddNumberToObject (o, "duration_ms", (double) e->duration_ms);
      cJSON_AddStringToObject (o, "args_sha256", e->args_sha256);
      cJSON_AddItemToArray (arr, o);
    }
  text = cJSON_Print (arr);
  puts (text);
  cJSON_Delete (arr);
}

int
sr_cmd_audit (int argc, char **argv)
{
  static const struct option options[] = {
    { "tool", required_argument, NULL, 't' },
    { "machine", required_argument, NULL, 'm' },
    { "status", required_argument, NULL, 's' },
    { "since", required_argument, NULL, 'S' },
    { "limit", required_argument, NULL, 'n' },
    { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
  };
  struct sr_config config = { 0 };
  struct sr_audit_filter filter = { 0 };
  struct sr_audit_entry *v = NULL;
  size_t n = 0;
  sr_error_t err = NULL;
  bool json = false;
  int c, status = SR_EXIT_RUNNER;

  if (sr_cli_load_config (&config) < 0)
    return SR_EXIT_RUNNER;
  optind = 1;
  while ((c = getopt_long (argc, argv, "t:m:s:S:n:h", options, NULL)) != -1)
    switch (c)
      {
      case 't':
        filter.tool = optarg;
        break;
      case 'm':
        filter.machine = optarg;
        break;
      case 's':
        filter.status = optarg;
        break;
      case 'S':
        if (sr_history_parse_since (optarg, sr_now_realtime_ms (), &filter.since_ms, &err) < 0)
          {
            sr_cli_error ("audit: --since: %s", err->msg);
            sr_error_free (&err);
            goto out;
          }
        break;
      case 'n':
        if (sr_cli_parse_limit (optarg, SR_AUDIT_LIMIT_MAX, &filter.limit) < 0)
          goto out;
        break;
      case 'j':
        json = true;
        break;
      case 'h':
        usage (stdout);
        status = 0;
        goto out;
      default:
        usage (stderr);
        goto out;
      }
  if (optind < argc)
    {
      sr_cli_error ("audit: unexpected argument '%s'", argv[optind]);
      goto out;
    }
  if (config.history_db == NULL || *config.history_db == '\0')
    {
      sr_cli_error ("audit: the history is off (history_db is empty)");
      goto out;
    }
  if (sr_service_audit_query (&config, &filter, &v, &n, &err) < 0)
    {
      sr_cli_error ("audit: %s", err->msg);
      sr_error_free (&err);
      goto out;
    }
  if (json)
    print_json (v, n);
  else
    print_table (v, n);
  status = 0;

out:
  sr_audit_entries_free (v, n);
  sr_config_done (&config);
  return status;
}
