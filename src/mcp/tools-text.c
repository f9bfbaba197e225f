/* The text block of a tool's result: what a person (or a model) reads,
 * made from the structuredContent programs read, so the two never
 * disagree and no result carries its JSON twice.  Output comes as it
 * is, then one bracketed line of status; other results as short
 * "key: value" lines.  */
#include "config.h"

#include "mcp/tools-internal.h"

#include <stdio.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"

/* The items of an array the generic summary lists before "... N more".  */
#define SUMMARY_MAX_ITEMS 50

static const char *
str (const cJSON *o, const char *key)
{
  return cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (o, key));
}

static bool
flag (const cJSON *o, const char *key)
{
  return cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (o, key));
}

static double
number (const cJSON *o, const char *key)
{
  const cJSON *n = cJSON_GetObjectItemCaseSensitive (o, key);

  return cJSON_IsNumber (n) ? n->valuedouble : 0;
}

static const cJSON *
num (const cJSON *o, const char *key)
{
  const cJSON *n = cJSON_GetObjectItemCaseSensitive (o, key);

  return cJSON_IsNumber (n) ? n : NULL;
}

/* Writes buf for reading: invalid UTF-8 and control characters other
 * than tab, newline and carriage return (terminal escapes, NULs) become
 * U+FFFD, so the text is valid and JSON escapes nothing to six bytes.  */
static void
put_text (FILE *f, const char *buf, size_t len)
{
  size_t clean_len;
  _cleanup_free_ char *clean = sr_utf8_sanitize (buf, len, &clean_len);

  for (size_t i = 0; i < clean_len; i++)
    {
      unsigned char ch = (unsigned char) clean[i];

      if ((ch < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || ch == 0x7f)
        fputs ("\xef\xbf\xbd", f);
      else
        fputc (ch, f);
    }
}

/* Output field key of o (decoded when encoding_key says base64), ending
 * with a newline; returns whether there was any.  */
static bool
put_output (FILE *f, const cJSON *o, const char *key, const char *encoding_key)
{
  const char *s = str (o, key), *enc = encoding_key ? str (o, encoding_key) : NULL;
  _cleanup_free_ char *raw = NULL;
  size_t len;

  if (s == NULL || *s == '\0')
    return false;
  if (enc && strcmp (enc, "base64") == 0 && sr_base64_decode (s, strlen (s), &raw, &len) == 0)
    put_text (f, raw, len);
  else
    put_text (f, s, strlen (s));
  if (s[strlen (s) - 1] != '\n')
    fputc ('\n', f);
  return true;
}

/* "[output truncated: ...]" for a shell's output cut short.  */
static void
put_truncation (FILE *f, const cJSON *o)
{
  if (flag (o, "truncated"))
    fprintf (f, "[output truncated: its newest %.0f bytes shown (max_output)]\n",
             number (o, "max_output"));
}

static void
put_hint (FILE *f, const cJSON *o)
{
  const char *hint = str (o, "hint");

  if (hint)
    fprintf (f, "[%s]\n", hint);
}

/* The artifacts a run made or changed, by name.  */
static void
put_artifacts (FILE *f, const cJSON *o)
{
  const cJSON *list = cJSON_GetObjectItemCaseSensitive (o, "artifacts"), *e;
  int n = cJSON_GetArraySize (list), i = 0;

  if (n == 0)
    return;
  fprintf (f, "[%d file%s in /mnt/data made or changed:", n, n == 1 ? "" : "s");
  cJSON_ArrayForEach (e, list)
    {
      if (i++ == SUMMARY_MAX_ITEMS)
        {
          fprintf (f, " ... %d more (list_artifacts)", n - SUMMARY_MAX_ITEMS);
          break;
        }
      fprintf (f, "%s %s (%s, %.0f bytes)", i == 1 ? "" : ",", str (e, "path"),
               str (e, "mime_type") ? str (e, "mime_type") : "?", number (e, "size"));
    }
  fputs ("]\n", f);
}

void
sr_mcp_text_run (FILE *f, const cJSON *o)
{
  const char *status = str (o, "status");
  const cJSON *exit_code = num (o, "exit_code"), *sig = num (o, "signal"),
              *ms = num (o, "duration_ms"), *compile_ms = num (o, "compile_ms");

  put_output (f, o, "stdout", "stdout_encoding");
  if (str (o, "stderr") && *str (o, "stderr"))
    fputs ("[stderr]\n", f);
  put_output (f, o, "stderr", "stderr_encoding");
  fprintf (f, "[%s", status ? status : "?");
  if (sig)
    fprintf (f, ", killed by signal %.0f", sig->valuedouble);
  else if (exit_code)
    fprintf (f, ", exit code %.0f", exit_code->valuedouble);
  if (ms)
    fprintf (f, ", %.0f ms", ms->valuedouble);
  if (compile_ms && flag (o, "compile_cached"))
    fputs (" (compile cached)", f);
  else if (compile_ms)
    fprintf (f, " (compile %.0f ms)", compile_ms->valuedouble);
  /* Each cut stream ends with the runner's marker saying how much.  */
  if (flag (o, "stdout_truncated") || flag (o, "stderr_truncated"))
    fprintf (f, ", output truncated (max_output %.0f)", number (o, "max_output"));
  if (str (o, "session_id"))
    fprintf (f, ", session %s", str (o, "session_id"));
  fputs ("]\n", f);
  put_artifacts (f, o);
}

void
sr_mcp_text_shell (FILE *f, const cJSON *o)
{
  const cJSON *exit_code = num (o, "exit_code");

  put_output (f, o, "output", "output_encoding");
  put_truncation (f, o);
  fprintf (f, "[shell %s: %s", str (o, "shell_id"), str (o, "state"));
  if (exit_code)
    fprintf (f, ", exit code %.0f", exit_code->valuedouble);
  if (flag (o, "timed_out"))
    fputs (", still running after the timeout: shell_read for more, write_stdin \"\\x03\" to "
           "interrupt",
           f);
  fputs ("]\n", f);
}

void
sr_mcp_text_file_read (FILE *f, const cJSON *o)
{

  if (!put_output (f, o, "content", NULL))
    fprintf (f, "[%s: no lines here; the file has %.0f]\n", str (o, "path"),
             number (o, "total_lines"));
  put_hint (f, o);
}

void
sr_mcp_text_file_search (FILE *f, const cJSON *o)
{
  const cJSON *e;
  double files = number (o, "files_read");
  int n = cJSON_GetArraySize (cJSON_GetObjectItemCaseSensitive (o, "matches"));

  cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "matches"))
    {
      const char *text = str (e, "text");

      fprintf (f, "%s:%.0f: ", str (e, "path"), number (e, "line"));
      put_text (f, text, strlen (text));
      fputc ('\n', f);
    }
  fprintf (f, "[%d match%s, %.0f file%s read%s]\n", n, n == 1 ? "" : "es", files,
           files == 1 ? "" : "s",
           flag (o, "truncated") ? "; the search stopped early" : "");
  put_hint (f, o);
}

void
sr_mcp_text_artifact (FILE *f, const cJSON *o)
{
  const char *how = str (o, "delivery");

  fprintf (f, "%s: %s, %.0f bytes", str (o, "path"), str (o, "mime_type"), number (o, "size"));
  if (how && strcmp (how, "image") == 0)
    fputs (", shown as an image", f);
  else if (how && strcmp (how, "resource") == 0)
    fputs (", its bytes in the embedded resource", f);
  else if (how && strcmp (how, "text") == 0)
    fputs (", its text follows", f);
  else if (how && strcmp (how, "link") == 0)
    fprintf (f, ", too large to send inline: read it from %s", str (o, "uri"));
  fputc ('\n', f);
  put_hint (f, o);
}

/* A scalar as text: strings as they are, numbers without a needless
 * fraction.  */
static void
put_scalar (FILE *f, const cJSON *v)
{
  if (cJSON_IsString (v))
    put_text (f, v->valuestring, strlen (v->valuestring));
  else if (cJSON_IsNumber (v))
    fprintf (f, "%.15g", v->valuedouble);
  else if (cJSON_IsBool (v))
    fputs (cJSON_IsTrue (v) ? "true" : "false", f);
  else
    fputs ("null", f);
}

/* An array's element on one line: "- k: v, k: v" of its scalars.  */
static void
put_item (FILE *f, const cJSON *e)
{
  const cJSON *v;
  bool first = true;

  fputs ("- ", f);
  if (!cJSON_IsObject (e))
    put_scalar (f, e);
  cJSON_ArrayForEach (v, e)
    {
      if (cJSON_IsArray (v) || cJSON_IsObject (v) || (v->string && strstr (v->string, "_base64")))
        continue;
      fprintf (f, "%s%s: ", first ? "" : ", ", v->string);
      put_scalar (f, v);
      first = false;
    }
  fputc ('\n', f);
}

void
sr_mcp_text_summary (FILE *f, const cJSON *o)
{
  const cJSON *v;

  cJSON_ArrayForEach (v, o)
    {
      const cJSON *e;
      int n = 0, size = cJSON_GetArraySize (v);

      if (strstr (v->string, "_base64"))
        continue;
      if (!cJSON_IsArray (v))
        {
          fprintf (f, "%s: ", v->string);
          if (cJSON_IsObject (v))
            put_item (f, v);
          else
            {
              put_scalar (f, v);
              fputc ('\n', f);
            }
          continue;
        }
      fprintf (f, "%s: %d\n", v->string, size);
      cJSON_ArrayForEach (e, v)
        {
          if (n++ == SUMMARY_MAX_ITEMS)
            {
              fprintf (f, "... %d more\n", size - SUMMARY_MAX_ITEMS);
              break;
            }
          put_item (f, e);
        }
    }
}

/* The machines of o, a line each, then the caller's defaults.  */
static void
put_machines (FILE *f, const cJSON *o)
{
  const cJSON *e;
  const char *def = str (o, "default_machine"), *def_shell = str (o, "default_shell");

  cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "machines"))
    {
      double shells = number (e, "shells");

      fprintf (f, "%s%s [%s, %s, %.0f shell%s]: ", str (e, "name"),
               flag (e, "default") ? " (default)" : "", str (e, "backend"), str (e, "status"),
               shells, shells == 1 ? "" : "s");
      put_text (f, str (e, "purpose"), strlen (str (e, "purpose")));
      fputc ('\n', f);
    }
  if (cJSON_GetArraySize (cJSON_GetObjectItemCaseSensitive (o, "machines")) == 0)
    fputs ("[no machines: create_session makes a sandbox, env(action=\"connect\") an SSH "
           "host]\n", f);
  fprintf (f, "[default machine: %s; default shell: %s]\n", def && *def ? def : "none",
           def_shell && *def_shell ? def_shell : "none");
}

void
sr_mcp_text_machines (FILE *f, const cJSON *o)
{
  put_machines (f, o);
}

/* Text that ends its last line, whether or not it did.  */
static void
put_lines (FILE *f, const char *text)
{
  size_t n = strlen (text);

  put_text (f, text, n);
  if (n && text[n - 1] != '\n')
    fputc ('\n', f);
}

void
sr_mcp_text_env (FILE *f, const cJSON *o)
{
  const char *text = str (o, "text");
  const cJSON *e;

  if (text)
    {
      fprintf (f, "%s: ", str (o, "topic"));
      put_text (f, text, strlen (text));
      fputc ('\n', f);
      return;
    }
  if (cJSON_GetObjectItemCaseSensitive (o, "actions"))
    {
      cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "actions"))
        fprintf (f, "%s: %s\n", str (e, "action"), str (e, "summary"));
      fputs ("[env(action=\"help\", topic=ACTION) documents one]\n", f);
      return;
    }
  if (cJSON_GetObjectItemCaseSensitive (o, "machines"))
    {
      put_machines (f, o);
      cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "shells"))
        fprintf (f, "shell %s on %s: %s\n", str (e, "shell_id"), str (e, "machine"),
                 str (e, "state"));
      return;
    }
  if (cJSON_GetObjectItemCaseSensitive (o, "targets"))
    {
      cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "targets"))
        fprintf (f, "%s: %s%s%s port %.0f%s\n", str (e, "name"), str (e, "user"),
                 *str (e, "user") ? "@" : "", str (e, "host"), number (e, "port"),
                 flag (e, "connected") ? " (connected)" : "");
      fputs ("[env(action=\"connect\", name=NAME) connects one; a Host of the server's "
             "OpenSSH configuration may be named too]\n", f);
      return;
    }
  if (cJSON_GetObjectItemCaseSensitive (o, "containers"))
    {
      cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "containers"))
        fprintf (f, "%s [%s, %s, %.0f shells]\n", str (e, "machine"), str (e, "image"),
                 str (e, "state"), number (e, "shells"));
      if (cJSON_GetArraySize (cJSON_GetObjectItemCaseSensitive (o, "containers")) == 0)
        fputs ("[no Docker machines: env(action=\"run\", image=...) starts one]\n", f);
      return;
    }
  if (cJSON_GetObjectItemCaseSensitive (o, "stdout"))
    {
      put_lines (f, str (o, "stdout"));
      if (*str (o, "stderr"))
        {
          fputs ("[stderr]\n", f);
          put_lines (f, str (o, "stderr"));
        }
      fprintf (f, "[logs of %s%s]\n", str (o, "machine"),
               flag (o, "truncated") ? ", truncated at max_output" : "");
      return;
    }
  sr_mcp_text_summary (f, o);
}

char *
sr_mcp_text (sr_mcp_text_fn *fn, const cJSON *structured)
{
  char *buf = NULL;
  size_t len;
  FILE *f = open_memstream (&buf, &len);

  if (f == NULL)
    sr_oom ();
  fn (f, structured);
  if (fclose (f) != 0)
    sr_oom ();
  /* No trailing newline: the text ends where its last line does.  */
  if (len && buf[len - 1] == '\n')
    buf[len - 1] = '\0';
  return buf;
}
