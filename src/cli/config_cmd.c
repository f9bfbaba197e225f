#include <config.h>

#include <stdio.h>
#include <string.h>

#include "cli/commands.h"
#include "common/config.h"

static void
config_usage (FILE *f)
{
  fprintf (f, "Usage: sandbox-runner config show [--json]\n\n"
              "Prints the effective value of every setting and where it came from:\n"
              "the built-in default, " SR_SYSCONFDIR "/sandbox-runner/sandbox-runner.conf,\n"
              "~/.config/sandbox-runner/sandbox-runner.conf, the one file SANDBOX_CONFIG\n"
              "(or the global option before the command) names instead of those two, or a\n"
              "SANDBOX_* variable.\n");
}

int
sr_cmd_config (int argc, char **argv)
{
  struct sr_config cfg;
  sr_error_t err = NULL;
  bool json = false;

  if (argc >= 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
    {
      config_usage (stdout);
      return 0;
    }
  if (argc < 2 || strcmp (argv[1], "show") != 0)
    {
      config_usage (stderr);
      return SR_EXIT_RUNNER;
    }
  for (int i = 2; i < argc; i++)
    {
      if (strcmp (argv[i], "--json") == 0)
        json = true;
      else if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0)
        {
          config_usage (stdout);
          return 0;
        }
      else
        {
          sr_cli_error ("config show: unknown option '%s'", argv[i]);
          return SR_EXIT_RUNNER;
        }
    }
  if (sr_config_load (&cfg, NULL, NULL, &err) < 0)
    {
      sr_cli_error ("%s", err->msg);
      sr_error_free (&err);
      sr_config_done (&cfg);
      return SR_EXIT_RUNNER;
    }
  sr_config_print (&cfg, stdout, json);
  sr_config_done (&cfg);
  return 0;
}
