/* sandbox-runner history [--limit N] [--status S] [--language L] [--json]  */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/util.h"
#include "sandbox/service.h"

#define CODE_COLUMN_CHARS 40

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: sandbox-runner history [--limit N] [--status S] [--language L] [--json]\n\n"
           "Lists past run-code runs, newest first, from the history database\n"
           "(setting history_db).\n\n"
           "  -n, --limit N      at most N runs (default %d, at most %d)\n"
           "  -s, --status S     only runs of status S (success, error, timeout,\n"
           "                     compile_error, oom, cancelled)\n"
           "  -l, --language L   only runs in language L\n"
           "  --json             print a JSON array with every field\n",
           SR_HISTORY_LIMIT_DEFAULT, SR_HISTORY_LIMIT_MAX);
}

/* Length of the UTF-8 character at s (s is valid UTF-8).  */
static size_t
char_len (const unsigned char *s)
{
  if (*s < 0x80)
    return 1;
  if (*s < 0xE0)
    return 2;
  if (*s < 0xF0)
    return 3;
  return 4;
}

/* True for what a terminal would act on rather than show: C0 and C1
 * controls, DEL, and the bidirectional overrides and isolates.  */
static bool
is_control (const unsigned char *s, size_t len)
{
  if (len == 1)
    return *s < 0x20 || *s == 0x7F;
  if (len == 2)
    return s[0] == 0xC2 && s[1] >= 0x80 && s[1] <= 0x9F;
  if (len == 3 && s[0] == 0xE2)
    return (s[1] == 0x80 && s[2] >= 0xAA && s[2] <= 0xAE)
           || (s[1] == 0x81 && s[2] >= 0xA6 && s[2] <= 0xA9);
  return false;
}

char *
sr_cli_printable (const char *text, size_t max)
{
  const unsigned char *s = (const unsigned char *) (text ? text : "");
  size_t cap = strlen ((const char *) s) + 4, n = 0, chars = 0;
  char *out = sr_xmalloc (cap);

  while (*s && *s != '\n' && *s != '\r')
    {
      size_t len = char_len (s);

      if (chars == max)
        {
          /* Make room for the marker within max characters.  */
          for (int k = 0; k < 3 && n > 0; k++)
            {
              do
                n--;
              while (n > 0 && ((unsigned char) out[n] & 0xC0) == 0x80);
            }
          memcpy (out + n, "...", 3);
          n += 3;
          break;
        }
      if (is_control (s, len))
        out[n++] = *s == '\t' ? ' ' : '?';
      else
        {
          memcpy (out + n, s, len);
          n += len;
        }
      s += len;
      chars++;
    }
  out[n] = '\0';
  return out;
}

/* The first line of the preview that is not blank, from its first
 * character that is not.  */
static const char *
first_line (const char *p)
{
  const char *c = p ? p : "";

  while (*c == '\n' || *c == ' ' || *c == '\t' || *c == '\r')
    c++;
  return c;
}

void
sr_cli_format_duration (char *buf, size_t len, int64_t ms)
{
  if (ms < 1000)
    snprintf (buf, len, "%lldms", (long long) ms);
  else
    snprintf (buf, len, "%.1fs", (double) ms / 1000);
}

static void
print_table (const struct sr_history_entry *v, size_t n)
{
  printf ("%-8s  %-24s  %-10s  %-13s  %4s  %8s  %-15s  %s\n", "ID", "TIME", "LANGUAGE", "STATUS",
          "EXIT", "DURATION", "OUT/ERR", "CODE");
  for (size_t i = 0; i < n; i++)
    {
      const struct sr_history_entry *e = &v[i];
      _cleanup_free_ char *time = sr_history_format_time (e->timestamp_ms);
      _cleanup_free_ char *lang = sr_cli_printable (e->language, 10);
      _cleanup_free_ char *status = sr_cli_printable (e->status, 13);
      _cleanup_free_ char *code
        = sr_cli_printable (first_line (e->code_preview), CODE_COLUMN_CHARS);
      char dur[32], sizes[48];

      sr_cli_format_duration (dur, sizeof dur, e->duration_ms);
      snprintf (sizes, sizeof sizes, "%lld/%lld", (long long) e->stdout_size,
                (long long) e->stderr_size);
      printf ("%-8.8s  %-24s  %-10s  %-13s  %4d  %8s  %-15s  %s\n", e->id, time, lang, status,
              e->exit_code, dur, sizes, code);
    }
}

static void
add_string_or_null (cJSON *o, const char *key, const char *s)
{
  if (s)
    cJSON_AddStringToObject (o, key, s);
  else
    cJSON_AddNullToObject (o, key);
}

static void
print_json (const struct sr_history_entry *v, size_t n)
{
  cJSON *arr = cJSON_CreateArray ();
  _cleanup_free_ char *text = NULL;

  for (size_t i = 0; i < n; i++)
    {
      const struct sr_history_entry *e = &v[i];
      _cleanup_free_ char *time = sr_history_format_time (e->timestamp_ms);
      cJSON *o = cJSON_CreateObject ();

      cJSON_AddStringToObject (o, "id", e->id);
      cJSON_AddStringToObject (o, "timestamp", time);
      add_string_or_null (o, "language", e->language);
      add_string_or_null (o, "status", e->status);
      cJSON_AddNumberToObject (o, "exit_code", e->exit_code);
      cJSON_AddNumberToObject (o, "duration_ms", (double) e->duration_ms);
      cJSON_AddNumberToObject (o, "stdout_size", (double) e->stdout_size);
      cJSON_AddNumberToObject (o, "stderr_size", (double) e->stderr_size);
      add_string_or_null (o, "code_preview", e->code_preview);
      add_string_or_null (o, "code_sha256", e->code_sha256);
      add_string_or_null (o, "session_id", e->session_id);
      add_string_or_null (o, "source", e->source);
      cJSON_AddItemToArray (arr, o);
    }
  text = cJSON_Print (arr);
  puts (text);
  cJSON_Delete (arr);
}

int
sr_cli_parse_limit (const char *arg, size_t max, size_t *ret)
{
  char *end;
  unsigned long long l;

  errno = 0;
  l = strtoull (arg, &end, 10);
  if (errno || end == arg || *end || *arg == '-' || l < 1 || l > max)
    {
      sr_cli_error ("invalid --limit '%s': expected a number from 1 to %zu", arg, max);
      return -1;
    }
  *ret = (size_t) l;
  return 0;
}

int
sr_cmd_history (int argc, char **argv)
{
  static const struct option options[] = {
    { "limit", required_argument, NULL, 'n' },
    { "status", required_argument, NULL, 's' },
    { "language", required_argument, NULL, 'l' },
    { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
  };
  struct sr_config config = { 0 };
  struct sr_history_filter filter = { 0 };
  struct sr_history_entry *v = NULL;
  size_t n = 0;
  sr_error_t err = NULL;
  bool json = false;
  int c, status = SR_EXIT_RUNNER;

  if (sr_cli_load_config (&config) < 0)
    return SR_EXIT_RUNNER;
  optind = 1;
  while ((c = getopt_long (argc, argv, "n:s:l:h", options, NULL)) != -1)
    switch (c)
      {
      case 'n':
        if (sr_cli_parse_limit (optarg, SR_HISTORY_LIMIT_MAX, &filter.limit) < 0)
          goto out;
        break;
      case 's':
        filter.status = optarg;
        break;
      case 'l':
        filter.language = optarg;
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
      sr_cli_error ("history: unexpected argument '%s'", argv[optind]);
      goto out;
    }
  if (filter.status && sr_history_check_status (filter.status, &err) < 0)
    {
      sr_cli_error ("history: --status: %s", err->msg);
      sr_error_free (&err);
      goto out;
    }
  if (config.history_db == NULL || *config.history_db == '\0')
    {
      sr_cli_error ("history: the history is off (history_db is empty)");
      goto out;
    }

  if (sr_service_history_query (&config, &filter, &v, &n, &err) < 0)
    {
      sr_cli_error ("history: %s", err->msg);
      sr_error_free (&err);
      goto out;
    }

  if (json)
    print_json (v, n);
  else
    print_table (v, n);
  status = 0;

out:
  sr_history_entries_free (v, n);
  sr_config_done (&config);
  return status;
}
