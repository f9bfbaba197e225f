/* sandbox-runner image pull  */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/util.h"
#include "image/registry.h"
#include "image/store.h"

#define MAX_PASSWORD 4096

static void
pull_usage (FILE *f)
{
  fprintf (f, "Usage: sandbox-runner image pull [OPTIONS] REF\n\n"
              "Pulls REF ([HOST[:PORT]/]REPOSITORY[:TAG][@sha256:DIGEST]) from its registry\n"
              "into the image store and names it.  No host means Docker Hub, no tag latest.\n\n"
              "  --username USER      authenticate as USER\n"
              "  --password-stdin     read the password from standard input\n"
              "  --plain-http         allow plain HTTP (always allowed for localhost, 127.x)\n"
              "  --ca-file FILE       trust the CA certificates in FILE\n"
              "  -q, --quiet          print no progress\n"
              "  -h, --help           show this help\n\n"
              "Prints the image's name and id.\n");
}

/* The password is the whole of stdin without its trailing line ending.  */
static char *
read_password (void)
{
  char *buf = sr_xmalloc (MAX_PASSWORD + 1);
  size_t len = 0;

  for (;;)
    {
      ssize_t n = read (STDIN_FILENO, buf + len, MAX_PASSWORD - len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          sr_cli_error ("image pull: read the password from stdin: %s", strerror (errno));
          free (buf);
          return NULL;
        }
      if (n == 0)
        break;
      len += (size_t) n;
      if (len == MAX_PASSWORD)
        {
          sr_cli_error ("image pull: the password on stdin is longer than %d bytes",
                        MAX_PASSWORD);
          free (buf);
          return NULL;
        }
    }
  while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
    len--;
  buf[len] = '\0';
  return buf;
}

int
sr_cmd_image_pull (int argc, char **argv)
{
  enum { OPT_USERNAME = 1000, OPT_PASSWORD_STDIN, OPT_PLAIN_HTTP, OPT_CA_FILE };
  static const struct option options[] = {
    { "username", required_argument, NULL, OPT_USERNAME },
    { "password-stdin", no_argument, NULL, OPT_PASSWORD_STDIN },
    { "plain-http", no_argument, NULL, OPT_PLAIN_HTTP },
    { "ca-file", required_argument, NULL, OPT_CA_FILE },
    { "quiet", no_argument, NULL, 'q' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct sr_registry_options o = { 0 };
  struct sr_config config = { 0 };
  struct sr_image_ref ref = { 0 };
  struct sr_store *s = NULL;
  _cleanup_free_ char *password = NULL, *id = NULL, *name = NULL;
  bool password_stdin = false, quiet = false;
  sr_error_t err = NULL;
  int status = SR_EXIT_RUNNER;
  int c;

  optind = 1;
  while ((c = getopt_long (argc, argv, "qh", options, NULL)) != -1)
    switch (c)
      {
      case OPT_USERNAME:
        o.username = optarg;
        break;
      case OPT_PASSWORD_STDIN:
        password_stdin = true;
        break;
      case OPT_PLAIN_HTTP:
        o.plain_http = true;
        break;
      case OPT_CA_FILE:
        o.ca_file = optarg;
        break;
      case 'q':
        quiet = true;
        break;
      case 'h':
        pull_usage (stdout);
        return 0;
      default:
        pull_usage (stderr);
        return SR_EXIT_RUNNER;
      }
  if (optind + 1 != argc)
    {
      sr_cli_error ("image pull: give exactly one image reference");
      pull_usage (stderr);
      return SR_EXIT_RUNNER;
    }
  if (password_stdin && o.username == NULL)
    {
      sr_cli_error ("image pull: --password-stdin needs --username");
      return SR_EXIT_RUNNER;
    }
  if (o.ca_file && access (o.ca_file, R_OK) < 0)
    {
      sr_cli_error ("image pull: --ca-file %s: %s", o.ca_file, strerror (errno));
      return SR_EXIT_RUNNER;
    }
  if (sr_image_ref_parse (argv[optind], &ref, &err) < 0)
    {
      sr_cli_error ("image pull: %s", err->msg);
      sr_error_free (&err);
      return SR_EXIT_RUNNER;
    }
  name = sr_image_ref_name (&ref);
  sr_image_ref_done (&ref);
  if (password_stdin)
    {
      password = read_password ();
      if (password == NULL)
        return SR_EXIT_RUNNER;
      o.password = password;
    }

  if (sr_cli_load_config (&config) < 0)
    goto out;
  if (sr_cli_open_store (&config, true, &s) < 0)
    goto out;
  sr_cli_show_progress (s, quiet);
  if (sr_registry_pull (s, argv[optind], &o, &id, &err) < 0)
    {
      sr_cli_error ("%s", err->msg);
      sr_error_free (&err);
      goto out;
    }
  printf ("%s %s\n", name, id);
  status = 0;

out:
  if (password)
    explicit_bzero (password, strlen (password));
  sr_store_close (s);
  sr_config_done (&config);
  return status;
}
