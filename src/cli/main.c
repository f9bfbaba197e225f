#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"

struct command
{
  const char *name;
  int (*fn) (int argc, char **argv);
  const char *summary;
};

static const struct command commands[] = {
  { "run", sr_cmd_run, "run a command in a fresh container" },
  { "run-code", sr_cmd_run_code, "run a code snippet in one of the configured languages" },
  { "config", sr_cmd_config, "show the effective configuration" },
  { "ps", sr_cmd_ps, "list running containers and sessions" },
  { "sessions", sr_cmd_sessions, "list the open sessions of MCP servers" },
  { "kill", sr_cmd_kill, "kill a container or session" },
  { "image", sr_cmd_image, "import, pull, list and remove images" },
  { "history", sr_cmd_history, "list past runs" },
  { "audit", sr_cmd_audit, "list the audit trail of MCP tool calls" },
  { "doctor", sr_cmd_doctor, "check what this host supports and will enforce" },
  { "serve", sr_cmd_serve, "serve MCP over stdio or HTTP" },
  { "session", sr_cmd_session, "use the sessions of a running HTTP server" },
};

void
sr_cli_error (const char *fmt, ...)
{
  va_list ap;

  fputs ("sandbox-runner: ", stderr);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
}

int
sr_cli_parse_uint (const char *opt, const char *s, uint64_t min, uint64_t *ret)
{
  char *end;
  unsigned long long v;

  errno = 0;
  v = strtoull (s, &end, 10);
  if (errno || end == s || *end || *s == '-' || v < min)
    {
      sr_cli_error ("invalid %s '%s': expected a whole number of at least %" PRIu64, opt, s, min);
      return -1;
    }
  *ret = v;
  return 0;
}

static void
usage (FILE *f)
{
  fprintf (f, "Usage: sandbox-runner [--version] [--help] [--config FILE] COMMAND [ARGS...]\n\n"
              "  --config FILE  read this config file only (as SANDBOX_CONFIG does)\n\n"
              "Commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf (f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf (f, "\nRun 'sandbox-runner COMMAND --help' for a command's options.\n");
}

char **sr_cli_argv;

/* --config FILE or --config=FILE before the command: the file goes to
 * common/config.c through SR_CONFIG_ENV, which also carries it to the
 * helper binaries a command is handed to.  Returns the arguments it took,
 * or -1.  */
static int
parse_config_option (int argc, char **argv)
{
  const char *file;
  int taken = 1;

  if (strncmp (argv[1], "--config=", 9) == 0)
    file = argv[1] + 9;
  else if (argc > 2)
    file = argv[2], taken = 2;
  else
    file = "";
  if (*file == '\0')
    {
      sr_cli_error ("--config needs a file name");
      return -1;
    }
  setenv (SR_CONFIG_ENV, file, 1);
  return taken;
}

int
sr_cli_main (int argc, char **argv)
{
  /* The options taken out, so that sr_cli_argv is "sandbox-runner
   * COMMAND ..." for whoever reads it or hands it over.  */
  while (argc >= 2
         && (strcmp (argv[1], "--config") == 0 || strncmp (argv[1], "--config=", 9) == 0))
    {
      int taken = parse_config_option (argc, argv);

      if (taken < 0)
        return SR_EXIT_RUNNER;
      argv[taken] = argv[0];
      argc -= taken;
      argv += taken;
    }
  sr_cli_argv = argv;
  if (argc < 2)
    {
      usage (stderr);
      return SR_EXIT_RUNNER;
    }
  if (strcmp (argv[1], "--version") == 0 || strcmp (argv[1], "version") == 0)
    {
      printf ("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
      return 0;
    }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0
      || strcmp (argv[1], "help") == 0)
    {
      usage (stdout);
      return 0;
    }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      return commands[i].fn (argc - 1, argv + 1);
  sr_cli_error ("unknown command '%s' (see 'sandbox-runner --help')", argv[1]);
  return SR_EXIT_RUNNER;
}
