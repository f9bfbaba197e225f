/* The safety nets of the file tools: the table of paths that look like
 * secrets (an advisory warning), and the syntax check of .json, .yaml,
 * .yml and .toml files before they are written.  Untrusted text is parsed
 * by well-kept libraries (cJSON, libyaml) or, for TOML, for which no C
 * library in Debian fits, by python3's tomllib inside the session's own
 * container, never by a parser of ours on the host.  */
#include <config.h>

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <yaml.h>

#include "common/run-result.h"
#include "common/util.h"
#include "sandbox/files-internal.h"

/* --- sensitive paths --- */

enum sensitive_match
{
  COMPONENT, /* a directory (or file) of that name anywhere in the path */
  NAME,      /* the base name matches the glob */
  ABSOLUTE,  /* the absolute path, or a path below it */
  TAIL,      /* the path ends with these components */
};

static const struct
{
  enum sensitive_match how;
  const char *pattern;
  const char *what;
} sensitive[] = {
  { COMPONENT, ".ssh", "SSH keys and configuration" },
  { COMPONENT, ".aws", "AWS credentials" },
  { COMPONENT, ".gnupg", "GnuPG keys" },
  { NAME, ".env", "environment secrets" },
  { NAME, ".env.*", "environment secrets" },
  { ABSOLUTE, "/etc/shadow", "password hashes" },
  { ABSOLUTE, "/etc/gshadow", "password hashes" },
  { ABSOLUTE, "/etc/sudoers", "sudo rules" },
  { ABSOLUTE, "/etc/sudoers.d", "sudo rules" },
  { NAME, "id_rsa*", "an SSH private key" },
  { NAME, "id_dsa*", "an SSH private key" },
  { NAME, "id_ecdsa*", "an SSH private key" },
  { NAME, "id_ed25519*", "an SSH private key" },
  { NAME, "*.pem", "a key or certificate" },
  { NAME, "*.key", "a private key" },
  { NAME, ".netrc", "login credentials" },
  { TAIL, ".docker/config.json", "Docker registry credentials" },
  { TAIL, ".kube/config", "Kubernetes credentials" },
};

static bool
has_component (const char *path, const char *name)
{
  size_t n = strlen (name);

  for (const char *p = path; (p = strstr (p, name)); p++)
    if ((p == path || p[-1] == '/') && (p[n] == '\0' || p[n] == '/'))
      return true;
  return false;
}

const char *
sr_files_sensitive (const char *path)
{
  const char *slash, *base;
  size_t len;

  if (path == NULL)
    return NULL;
  slash = strrchr (path, '/');
  base = slash ? slash + 1 : path;
  len = strlen (path);
  for (size_t i = 0; i < SR_ARRAY_SIZE (sensitive); i++)
    {
      const char *pat = sensitive[i].pattern;
      size_t n = strlen (pat);
      bool hit = false;

      switch (sensitive[i].how)
        {
        case COMPONENT:
          hit = has_component (path, pat);
          break;
        case NAME:
          hit = fnmatch (pat, base, FNM_PERIOD) == 0;
          break;
        case ABSOLUTE:
          hit = strncmp (path, pat, n) == 0 && (path[n] == '\0' || path[n] == '/');
          break;
        case TAIL:
          hit = len >= n && strcmp (path + len - n, pat) == 0
                && (len == n || path[len - n - 1] == '/');
          break;
        }
      if (hit)
        return sensitive[i].what;
    }
  return NULL;
}

/* --- syntax checks --- */

enum sr_lint_kind
sr_files_lint_kind (const char *path)
{
  const char *dot = path ? strrchr (path, '.') : NULL;

  if (dot == NULL || strchr (dot, '/'))
    return SR_LINT_NONE;
  if (strcasecmp (dot, ".json") == 0)
    return SR_LINT_JSON;
  if (strcasecmp (dot, ".yaml") == 0 || strcasecmp (dot, ".yml") == 0)
    return SR_LINT_YAML;
  if (strcasecmp (dot, ".toml") == 0)
    return SR_LINT_TOML;
  return SR_LINT_NONE;
}

static int
lint_failed (const char *abs, const char *syntax, unsigned long line, unsigned long column,
             const char *problem, sr_error_t *err)
{
  return sr_error_set_code (err, "lint_failed", 0,
                            "%s is not valid %s, so it was not written: line %lu, column %lu: %s",
                            abs, syntax, line, column, problem);
}

/* The 1-based line and column of byte pos of text.  */
static void
line_column (const char *text, size_t pos, unsigned long *ret_line, unsigned long *ret_col)
{
  unsigned long line = 1, col = 1;

  for (size_t i = 0; i < pos; i++)
    if (text[i] == '\n')
      line++, col = 1;
    else
      col++;
  *ret_line = line;
  *ret_col = col;
}

static int
lint_json (const char *abs, const char *content, size_t len, sr_error_t *err)
{
  const char *end = NULL;
  cJSON *v;
  unsigned long line, col;

  /* cJSON wants the text to end at len: a NUL inside it is an error too.  */
  if (memchr (content, '\0', len))
    {
      line_column (content, (size_t) ((const char *) memchr (content, '\0', len) - content),
                   &line, &col);
      return lint_failed (abs, "JSON", line, col, "a NUL byte", err);
    }
  v = cJSON_ParseWithLengthOpts (content, len, &end, false);
  if (v && end && (size_t) (end - content) < len)
    {
      /* Only white space may follow the value.  */
      size_t pos = (size_t) (end - content);

      while (pos < len && strchr (" \t\r\n", content[pos]))
        pos++;
      if (pos < len)
        {
          cJSON_Delete (v);
          line_column (content, pos, &line, &col);
          return lint_failed (abs, "JSON", line, col, "text after the JSON value", err);
        }
    }
  if (v)
    {
      cJSON_Delete (v);
      return 0;
    }
  line_column (content, end && end >= content ? (size_t) (end - content) : 0, &line, &col);
  return lint_failed (abs, "JSON", line, col,
                      len ? "a syntax error here" : "the file is empty", err);
}

static int
lint_yaml (const char *abs, const char *content, size_t len, sr_error_t *err)
{
  yaml_parser_t parser;
  yaml_event_t event;
  bool done = false;
  int r = 0;

  if (!yaml_parser_initialize (&parser))
    return sr_error_set_code (err, "io_error", ENOMEM, "libyaml could not start");
  yaml_parser_set_input_string (&parser, (const unsigned char *) content, len);
  /* Events only: aliases are not expanded, so no "billion laughs".  */
  while (!done)
    {
      if (!yaml_parser_parse (&parser, &event))
        {
          _cleanup_free_ char *problem
            = sr_xasprintf ("%s%s%s", parser.problem ? parser.problem : "a syntax error",
                            parser.context ? " " : "", parser.context ? parser.context : "");

          r = lint_failed (abs, "YAML", (unsigned long) parser.problem_mark.line + 1,
                           (unsigned long) parser.problem_mark.column + 1, problem, err);
          break;
        }
      done = event.type == YAML_STREAM_END_EVENT;
      yaml_event_delete (&event);
    }
  yaml_parser_delete (&parser);
  return r;
}

/* Run by python3 in the container, the file on its standard input: exit
 * 0 when it parses; 1 and "LINE COLUMN MESSAGE" when it does not; 3 when
 * there is no tomllib (Python before 3.11).  Python before 3.14 has the
 * position only in the message.  */
static const char toml_script[] =
  "import re, sys\n"
  "try:\n"
  "    import tomllib\n"
  "except ImportError:\n"
  "    sys.exit(3)\n"
  "try:\n"
  "    tomllib.loads(sys.stdin.buffer.read().decode('utf-8'))\n"
  "except UnicodeDecodeError as e:\n"
  "    print(1, e.start + 1, 'not UTF-8')\n"
  "    sys.exit(1)\n"
  "except tomllib.TOMLDecodeError as e:\n"
  "    m = re.search(r' \\(at line (\\d+), column (\\d+)\\)$', str(e))\n"
  "    if m:\n"
  "        print(m.group(1), m.group(2), str(e)[:m.start()])\n"
  "    else:\n"
  "        print(getattr(e, 'lineno', 0), getattr(e, 'colno', 0), getattr(e, 'msg', str(e)))\n"
  "    sys.exit(1)\n";

/* How long the TOML check may take, and how much it may print.  */
#define TOML_TIMEOUT_MS 20000
#define TOML_MAX_OUTPUT 4096

static int
lint_unavailable (const char *abs, const char *why, sr_error_t *err)
{
  return sr_error_set_code (err, "lint_unavailable", ENOTSUP,
                            "%s was not written: its TOML cannot be checked here (%s)", abs, why);
}

static int
lint_toml (const struct sr_fsroot *r, const char *abs, const char *content, size_t len,
           sr_error_t *err)
{
  char *const argv[] = { (char *) "python3", (char *) "-c", (char *) toml_script, NULL };
  const struct sr_exec_spec spec = { .argv = argv };
  struct sr_run_result res = { 0 };
  unsigned long line = 0, col = 0;
  int fd, used = 0, rv;

  if (r == NULL || r->exec == NULL)
    return lint_unavailable (abs, "no command runs where the file is", err);
  fd = sr_files_copy_fd (abs, content, len, NULL, err);
  if (fd < 0)
    return -1;
  {
    struct sr_run_options opts = {
      .timeout_ms = TOML_TIMEOUT_MS, .max_output = TOML_MAX_OUTPUT, .stdin_fd = fd,
      .cancel_fd = -1,
    };

    rv = r->exec (r->exec_ctx, &spec, &opts, &res, err);
  }
  close (fd);
  if (rv < 0)
    return -1;
  if (res.status == SR_RUN_SUCCESS)
    rv = 0;
  else if (res.status == SR_RUN_ERROR && res.signal == 0 && res.exit_code == 1
           && sscanf (res.out.data ? res.out.data : "", "%lu %lu %n", &line, &col, &used) == 2)
    {
      char *nl = strchr (res.out.data + used, '\n');

      if (nl)
        *nl = '\0';
      rv = lint_failed (abs, "TOML", line, col, res.out.data + used, err);
    }
  else if (res.status == SR_RUN_ERROR && res.signal == 0 && res.exit_code == 3)
    rv = lint_unavailable (abs, "the session's python3 has no tomllib: Python 3.11 or later "
                                "is needed", err);
  else if (res.status == SR_RUN_ERROR && res.signal == 0 && res.exit_code == 127)
    rv = lint_unavailable (abs, "the session has no python3", err);
  else
    rv = lint_unavailable (abs, sr_run_status_name (res.status), err);
  sr_run_result_done (&res);
  return rv;
}

int
sr_files_lint (const struct sr_fsroot *r, const char *abs, const char *content, size_t len,
               sr_error_t *err)
{
  switch (sr_files_lint_kind (abs))
    {
    case SR_LINT_JSON:
      return lint_json (abs, content, len, err);
    case SR_LINT_YAML:
      return lint_yaml (abs, content, len, err);
    case SR_LINT_TOML:
      return lint_toml (r, abs, content, len, err);
    case SR_LINT_NONE:
      break;
    }
  return 0;
}
