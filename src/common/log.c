#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/log.h"
#include "common/util.h"

static const char *const level_names[] = { "debug", "info", "warning", "error" };

/* Set once by sr_log_setup, before the threads that log exist.  */
static bool enabled;
static bool as_json;
static enum sr_log_level threshold = SR_LOG_INFO;

int
sr_log_level_parse (const char *name, enum sr_log_level *ret, sr_error_t *err)
{
  for (size_t i = 0; i < SR_ARRAY_SIZE (level_names); i++)
    if (strcmp (name, level_names[i]) == 0)
      {
        *ret = (enum sr_log_level) i;
        return 0;
      }
  return sr_error_set (err, 0, "unknown log level '%s' (debug, info, warning, error)", name);
}

int
sr_log_format_parse (const char *name, bool *ret_json, sr_error_t *err)
{
  if (strcmp (name, "text") != 0 && strcmp (name, "json") != 0)
    return sr_error_set (err, 0, "unknown log format '%s' (text, json)", name);
  *ret_json = strcmp (name, "json") == 0;
  return 0;
}

void
sr_log_setup (enum sr_log_level level, bool json)
{
  threshold = level;
  as_json = json;
  enabled = true;
}

/* logfmt: a value with a blank, a quote, an equals sign or a control
 * character goes in quotes, with quotes and backslashes escaped.  */
static void
put_value (FILE *f, const char *v)
{
  bool quote = *v == '\0';

  for (const unsigned char *p = (const unsigned char *) v; *p && !quote; p++)
    quote = *p <= ' ' || *p == '"' || *p == '=' || *p == 0x7f;
  if (!quote)
    {
      fputs (v, f);
      return;
    }
  fputc ('"', f);
  for (const unsigned char *p = (const unsigned char *) v; *p; p++)
    if (*p == '"' || *p == '\\')
      fprintf (f, "\\%c", *p);
    else if (*p < ' ' || *p == 0x7f)
      fprintf (f, "\\x%02x", *p);
    else
      fputc (*p, f);
  fputc ('"', f);
}

void
sr_log (enum sr_log_level level, const char *event, ...)
{
  char stamp[64], *line = NULL;
  size_t len = 0;
  struct timespec ts;
  struct tm tm;
  va_list ap;
  FILE *f;

  if (!enabled || level < threshold)
    return;
  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  snprintf (stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
            tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000);
  va_start (ap, event);
  if (as_json)
    {
      cJSON *o = cJSON_CreateObject ();
      const char *k;

      cJSON_AddStringToObject (o, "time", stamp);
      cJSON_AddStringToObject (o, "level", level_names[level]);
      cJSON_AddStringToObject (o, "event", event);
      while ((k = va_arg (ap, const char *)))
        {
          const char *v = va_arg (ap, const char *);

          if (v)
            cJSON_AddStringToObject (o, k, v);
        }
      line = cJSON_PrintUnformatted (o);
      cJSON_Delete (o);
      len = strlen (line);
      line = sr_xrealloc (line, len + 2);
      line[len++] = '\n';
      line[len] = '\0';
    }
  else
    {
      const char *k;

      f = open_memstream (&line, &len);
      if (f == NULL)
        sr_oom ();
      fprintf (f, "%s %s %s", stamp, level_names[level], event);
      while ((k = va_arg (ap, const char *)))
        {
          const char *v = va_arg (ap, const char *);

          if (v == NULL)
            continue;
          fprintf (f, " %s=", k);
          put_value (f, v);
        }
      fputc ('\n', f);
      fclose (f);
    }
  va_end (ap);
  /* One write, so that lines of several threads do not mix; a full disk
   * or a closed stderr loses the line, never the server.  */
  ssize_t written = write (STDERR_FILENO, line, len);
  (void) written;
  free (line);
}
