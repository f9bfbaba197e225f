/* sandbox-runner image import [--name NAME] PATH  */
#include "config.h"

#include <getopt.h>
#include <stdio.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/util.h"
#include "image/import.h"
#include "image/store.h"

int
sr_cmd_image_import (int argc, char **argv)
{
  static const struct option options[] = {
    { "name", required_argument, NULL, 'n' },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
  };
  _cleanup_free_ char *id = NULL, *name = NULL;
  const char *want_name = NULL;
  struct sr_config config = { 0 };
  struct sr_store *s = NULL;
  bool quiet = false;
  sr_error_t err = NULL;
  int c, status = SR_EXIT_RUNNER;

  optind = 1;
  while ((c = getopt_long (argc, argv, "n:qh", options, NULL)) != -1)
    switch (c)
      {
      case 'n':
        want_name = optarg;
        break;
      case 'q':
        quiet = true;
        break;
      case 'h':
        printf ("usage: sandbox-runner image import [--name NAME] [--quiet] PATH\n"
                "  PATH: an OCI image layout (directory or tar) or a docker-save archive\n");
        return 0;
      default:
        return SR_EXIT_RUNNER;
      }
  if (optind + 1 != argc)
    {
      sr_cli_error ("image import: give exactly one PATH (an OCI layout or a docker-save archive)");
      return SR_EXIT_RUNNER;
    }
  if (sr_cli_load_config (&config) < 0 || sr_cli_open_store (&config, true, &s) < 0)
    goto out;
  sr_cli_show_progress (s, quiet);
  if (sr_image_import (s, argv[optind], want_name, &id, &name, &err) < 0)
    {
      sr_cli_error ("%s", err->msg);
      sr_error_free (&err);
      goto out;
    }
  printf ("%s %s\n", name, id);
  status = 0;

out:
  sr_store_close (s);
  sr_config_done (&config);
  return status;
}

