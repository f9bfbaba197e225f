/* sandbox-runner session [--server URL] [--token-file FILE] COMMAND ...:
 * the session tools of a running `serve --transport http`, from a shell.
 *
 * Sessions live in the server (its containers stay between calls), so
 * this is a client of it: each invocation speaks MCP Streamable HTTP
 * itself (session_mcp.c) through libcurl, which is why it is in
 * sandbox-runner-full only.  This file is its command line: the
 * options, the table of subcommands, their help and the entry point;
 * session_client.h says where the rest is.  */
#include "config.h"

#include <curl/curl.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/session_client.h"
#include "common/util.h"

#define DEFAULT_URL "http://127.0.0.1:8080/mcp"

void
sr_client_fail (const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = sr_xvasprintf (fmt, ap);
  va_end (ap);
  sr_cli_error ("session: %s", msg);
}

/* The options every subcommand takes, besides its own.  */
enum
{
  OPT_SERVER = 1000,
  OPT_TOKEN_FILE,
  OPT_JSON,
  OPT_SESSION,
  OPT_SHELL,
  OPT_LANGUAGE,
  OPT_TIMEOUT,
  OPT_IMAGE,
  OPT_OVERWRITE,
  OPT_OUTPUT,
  OPT_NO_WAIT,
  OPT_OFFSET,
  OPT_LIMIT,
  OPT_OLD,
  OPT_NEW,
  OPT_ALL,
  OPT_DIFF,
  OPT_GLOB,
  OPT_PATH,
};

struct subcommand
{
  const char *name;
  int (*fn) (struct client *c, struct args *a);
  const char *synopsis;  /* after "sandbox-runner session NAME " */
  const char *brief;     /* one line, for the list of commands */
  const char *summary;
  const char *options;   /* its own options' help, "" for none */
  unsigned wanted;       /* its own options, as 1 << (OPT_x - OPT_SESSION) */
  int min_args, max_args;
  unsigned required;     /* of those, the ones it cannot do without */
};

#define W(opt) (1u << ((opt) - OPT_SESSION))

static const char global_options_help[] =
  "  --server URL       the server's MCP endpoint (default: $" SR_CLIENT_URL_ENV ", else\n"
  "                     " DEFAULT_URL ")\n"
  "  --token-file FILE  send the first token of FILE (one a line, # comments) as\n"
  "                     the bearer token\n"
  "  --json             print the tool's structured result as JSON\n";

static int
parse_args (const struct subcommand *sc, int argc, char **argv, struct args *a)
{
  static const struct option all[] = {
    { "server", required_argument, NULL, OPT_SERVER },
    { "token-file", required_argument, NULL, OPT_TOKEN_FILE },
    { "json", no_argument, NULL, OPT_JSON },
    { "help", no_argument, NULL, 'h' },
    { "session", required_argument, NULL, OPT_SESSION },
    { "shell", required_argument, NULL, OPT_SHELL },
    { "language", required_argument, NULL, OPT_LANGUAGE },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "image", required_argument, NULL, OPT_IMAGE },
    { "overwrite", no_argument, NULL, OPT_OVERWRITE },
    { "output", required_argument, NULL, OPT_OUTPUT },
    { "no-wait", no_argument, NULL, OPT_NO_WAIT },
    { "offset", required_argument, NULL, OPT_OFFSET },
    { "limit", required_argument, NULL, OPT_LIMIT },
    { "old", required_argument, NULL, OPT_OLD },
    { "new", required_argument, NULL, OPT_NEW },
    { "all", no_argument, NULL, OPT_ALL },
    { "diff", required_argument, NULL, OPT_DIFF },
    { "glob", required_argument, NULL, OPT_GLOB },
    { "path", required_argument, NULL, OPT_PATH },
    { NULL, 0, NULL, 0 },
  };
  int ch;

  optind = 1;
  /* "+": options only before the arguments, so that shell-exec's command
   * may hold dashes of its own.  */
  while ((ch = getopt_long (argc, argv, "+hs:S:l:o:", all, NULL)) != -1)
    {
      if (ch == 's')
        ch = OPT_SESSION;
      else if (ch == 'S')
        ch = OPT_SHELL;
      else if (ch == 'l')
        ch = OPT_LANGUAGE;
      else if (ch == 'o')
        ch = OPT_OUTPUT;
      if (ch >= OPT_SESSION && !(sc->wanted & W (ch)))
        {
          sr_client_fail ("%s: option '%s' does not apply here "
                          "(see 'sandbox-runner session %s --help')",
                          sc->name, argv[optind - 1], sc->name);
          return -1;
        }
      switch (ch)
        {
        case OPT_SERVER: a->server = optarg; break;
        case OPT_TOKEN_FILE: a->token_file = optarg; break;
        case OPT_JSON: a->json = true; break;
        case 'h': a->help = true; return 0;
        case OPT_SESSION: a->session = optarg; break;
        case OPT_SHELL: a->shell = optarg; break;
        case OPT_LANGUAGE: a->language = optarg; break;
        case OPT_IMAGE: a->image = optarg; break;
        case OPT_OVERWRITE: a->overwrite = true; break;
        case OPT_OUTPUT: a->output = optarg; break;
        case OPT_NO_WAIT: a->no_wait = true; break;
        case OPT_OLD: a->old_s = optarg; break;
        case OPT_NEW: a->new_s = optarg; break;
        case OPT_ALL: a->all = true; break;
        case OPT_DIFF: a->diff = optarg; break;
        case OPT_GLOB: a->glob = optarg; break;
        case OPT_PATH: a->path = optarg; break;
        case OPT_TIMEOUT:
          {
            char *end;

            errno = 0;
            a->timeout = strtod (optarg, &end);
            if (errno || end == optarg || *end || !isfinite (a->timeout) || a->timeout <= 0)
              {
                sr_client_fail ("%s: --timeout wants seconds above 0, not '%s'", sc->name, optarg);
                return -1;
              }
            break;
          }
        case OPT_OFFSET:
          if (sr_cli_parse_uint ("--offset", optarg, 1, &a->offset) < 0)
            return -1;
          break;
        case OPT_LIMIT:
          if (sr_cli_parse_uint ("--limit", optarg, 1, &a->limit) < 0)
            return -1;
          break;
        default:
          sr_client_fail ("%s: see 'sandbox-runner session %s --help'", sc->name, sc->name);
          return -1;
        }
    }
  a->argc = argc - optind;
  a->argv = argv + optind;
  if (a->argc < sc->min_args || a->argc > sc->max_args)
    {
      sr_client_fail ("%s: usage: sandbox-runner session %s %s", sc->name, sc->name, sc->synopsis);
      return -1;
    }
  return 0;
}

/* Checked before the subcommand runs, so that it need not.  */
static int
check_required (const struct subcommand *sc, const struct args *a)
{
  const char *opt = NULL;

  if ((sc->required & W (OPT_SESSION)) && a->session == NULL)
    opt = "--session";
  else if ((sc->required & W (OPT_SHELL)) && a->shell == NULL)
    opt = "--shell";
  if (opt == NULL)
    return 0;
  sr_client_fail ("%s: %s is required", sc->name, opt);
  return -1;
}

#define S_OPT "  -s, --session ID   the session\n"
#define SH_OPT "  -S, --shell ID     the shell (from shell-new)\n"

static const struct subcommand subcommands[] = {
  { "new", sr_client_cmd_new, "[--image IMAGE]", "create a session and print its id",
    "create a session and print its id",
    "  --image IMAGE      its image (default: the server's session_image)\n",
    W (OPT_IMAGE), 0, 0, 0 },
  { "list", sr_client_cmd_list, "",
    "list the server's sessions", "list the server's sessions", "", 0, 0, 0, 0 },
  { "run", sr_client_cmd_run, "[-s ID] [-l LANGUAGE] [--timeout S] [FILE|-]",
    "run code in a session (or once) and exit with its status",
    "run code (from FILE or stdin) in a session, or once without one; prints its\n"
    "stdout and stderr and exits with its exit status (123 on a compile error,\n"
    "124 on a timeout)",
    "  -s, --session ID   run in this session (default: a one-shot run)\n"
    "  -l, --language L   the language (default: the server's)\n"
    "  --timeout S        the run's timeout in seconds\n",
    W (OPT_SESSION) | W (OPT_LANGUAGE) | W (OPT_TIMEOUT), 0, 1, 0 },
  { "upload", sr_client_cmd_upload, "[-s ID] [--overwrite] LOCAL-FILE|- [NAME]",
    "copy a local file into a session's /mnt/data",
    "copy a local file into the session's /mnt/data (as NAME, default its own\n"
    "name); without --session a session is created and its id printed on stderr",
    "  -s, --session ID   the session (default: a new one)\n"
    "  --overwrite        replace an existing file\n",
    W (OPT_SESSION) | W (OPT_OVERWRITE), 1, 2, 0 },
  { "download", sr_client_cmd_download, "-s ID [-o FILE|-] PATH",
    "copy a file of a session's /mnt/data to a local file",
    "copy a file of the session's /mnt/data to a local file, streamed over\n"
    "GET /files/{session}/{path}",
    S_OPT "  -o, --output FILE  where to write it (default: its name, in the current\n"
    "                     directory; - for stdout)\n",
    W (OPT_SESSION) | W (OPT_OUTPUT), 1, 1, W (OPT_SESSION) },
  { "ls", sr_client_cmd_ls, "-s ID",
    "list the files of a session's /mnt/data",
    "list the files of the session's /mnt/data: size, modification time, MIME type\nand path",
    S_OPT, W (OPT_SESSION), 0, 0, W (OPT_SESSION) },
  { "close", sr_client_cmd_close, "-s ID",
    "close a session (its files are destroyed)",
    "close a session: its container and every file of its /mnt/data are destroyed",
    S_OPT, W (OPT_SESSION), 0, 0, W (OPT_SESSION) },
  { "shell-new", sr_client_cmd_shell_new, "[-s ID]", "start a persistent shell",
    "start a persistent shell (in a new session without --session) and print its id",
    "  -s, --session ID   the session (default: a new one)\n", W (OPT_SESSION), 0, 0, 0 },
  { "shell-exec", sr_client_cmd_shell_exec, "-S ID [--no-wait] [--timeout S] COMMAND...|-",
    "run a command line in a persistent shell",
    "run a command line (its words, or stdin for -) in a persistent shell; prints\n"
    "its output and exits with its status (124 when interrupted at the timeout)",
    SH_OPT "  --no-wait          return at once; shell-read collects the output\n"
    "  --timeout S        interrupt it (Ctrl-C) after S seconds\n",
    W (OPT_SHELL) | W (OPT_NO_WAIT) | W (OPT_TIMEOUT), 1, INT_MAX, W (OPT_SHELL) },
  { "shell-read", sr_client_cmd_shell_read, "-S ID",
    "print a shell's new output", "print what a shell printed since the last read",
    SH_OPT, W (OPT_SHELL), 0, 0, W (OPT_SHELL) },
  { "shell-write", sr_client_cmd_shell_write, "-S ID DATA", "type into a shell (\\x03 is Ctrl-C)",
    "type DATA into a shell's terminal: \\n ends a line, \\t and \\r are the\n"
    "characters, \\xHH a byte (\\x03 is Ctrl-C, \\x04 end of input), \\\\ a backslash",
    SH_OPT,
    W (OPT_SHELL), 1, 1, W (OPT_SHELL) },
  { "shell-ls", sr_client_cmd_shell_ls, "",
    "list the persistent shells", "list the persistent shells", "", 0, 0, 0, 0 },
  { "shell-rm", sr_client_cmd_shell_rm, "-S ID",
    "kill a persistent shell", "kill a persistent shell (the session stays)", SH_OPT,
    W (OPT_SHELL), 0, 0, W (OPT_SHELL) },
  { "file-read", sr_client_cmd_file_read, "-s ID [--offset N] [--limit N] PATH",
    "print lines of a text file of a session",
    "print lines of a text file of the session, each after its number",
    S_OPT "  --offset N         the first line (default 1)\n"
    "  --limit N          how many lines (default 2000)\n",
    W (OPT_SESSION) | W (OPT_OFFSET) | W (OPT_LIMIT), 1, 1, W (OPT_SESSION) },
  { "file-write", sr_client_cmd_file_write, "-s ID PATH [LOCAL-FILE|-]",
    "write a text file in a session",
    "write a whole text file in the session (atomically, parents created) from\n"
    "LOCAL-FILE or stdin",
    S_OPT, W (OPT_SESSION), 1, 2, W (OPT_SESSION) },
  { "file-patch", sr_client_cmd_file_patch,
    "-s ID (--old TEXT --new TEXT [--all] | --diff FILE|-) PATH",
    "edit a text file of a session",
    "edit a file of the session: replace TEXT once (every time with --all), or\n"
    "apply a unified diff; prints the number of replacements",
    S_OPT "  --old TEXT         the text to replace (it must occur once)\n"
    "  --new TEXT         what replaces it\n"
    "  --all              replace every occurrence\n"
    "  --diff FILE|-      a unified diff of the file instead\n",
    W (OPT_SESSION) | W (OPT_OLD) | W (OPT_NEW) | W (OPT_ALL) | W (OPT_DIFF), 1, 1,
    W (OPT_SESSION) },
  { "file-search", sr_client_cmd_file_search, "-s ID [--glob GLOB] [--path DIR] PATTERN",
    "search the text files of a session",
    "print the lines of the session's text files matching an extended regular\n"
    "expression, as PATH:LINE:TEXT",
    S_OPT "  --glob GLOB        only files whose name matches GLOB (*.py)\n"
    "  --path DIR         where to search (default /mnt/data)\n",
    W (OPT_SESSION) | W (OPT_GLOB) | W (OPT_PATH), 1, 1, W (OPT_SESSION) },
};

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: sandbox-runner session [--server URL] [--token-file FILE] COMMAND "
           "[OPTIONS] [ARGS]\n\n"
           "Uses the sessions of a running sandbox-runner server on the HTTP transport:\n"
           "the same tools an MCP client has (each command is one MCP tools/call).\n\n"
           "Commands:\n");
  for (size_t i = 0; i < SR_ARRAY_SIZE (subcommands); i++)
    fprintf (f, "  %-12s %s\n", subcommands[i].name, subcommands[i].brief);
  fprintf (f,
           "\nOptions (also accepted after COMMAND):\n%s\n"
           "Exit status: 0; for run and shell-exec the command's own; %d when the server\n"
           "refuses (\"sandbox-runner: session: CODE: MESSAGE\"), cannot be reached, or the\n"
           "arguments are wrong.\n\n"
           "Run 'sandbox-runner session COMMAND --help' for a command's options.\n",
           global_options_help, SR_EXIT_RUNNER);
}

static void
subcommand_usage (const struct subcommand *sc)
{
  printf ("Usage: sandbox-runner session %s %s\n\n%s.\n\n%s%s", sc->name, sc->synopsis,
          sc->summary, sc->options, global_options_help);
}

/* The first token of a token file (the server's format: one a line, #
 * comments, blanks trimmed).  */
static int
read_token (const char *path, char **ret)
{
  _cleanup_free_ char *text = NULL;
  sr_error_t err = NULL;
  char *save = NULL;
  size_t len;

  if (sr_read_file (path, &text, &len, &err) < 0)
    {
      sr_client_fail ("--token-file: %s", err->msg);
      sr_error_free (&err);
      return -1;
    }
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *t = line, *end;

      while (*t == ' ' || *t == '\t')
        t++;
      end = t + strlen (t);
      while (end > t && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        *--end = '\0';
      if (*t && *t != '#')
        {
          *ret = sr_xstrdup (t);
          explicit_bzero (text, len);
          return 0;
        }
    }
  explicit_bzero (text, len);
  sr_client_fail ("--token-file: %s holds no token (one a line, # comments)", path);
  return -1;
}

int
sr_cmd_session (int argc, char **argv)
{
  enum { G_SERVER = 1, G_TOKEN_FILE, G_JSON };
  static const struct option options[] = {
    { "server", required_argument, NULL, G_SERVER },
    { "token-file", required_argument, NULL, G_TOKEN_FILE },
    { "json", no_argument, NULL, G_JSON },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const struct subcommand *sc = NULL;
  struct args a = { 0 };
  struct client c = { .next_id = 1, .state_dir = -1 };
  const char *env;
  int ch, status = SR_EXIT_RUNNER;

  optind = 1;
  while ((ch = getopt_long (argc, argv, "+h", options, NULL)) != -1)
    switch (ch)
      {
      case G_SERVER: a.server = optarg; break;
      case G_TOKEN_FILE: a.token_file = optarg; break;
      case G_JSON: a.json = true; break;
      case 'h':
        usage (stdout);
        return 0;
      default:
        usage (stderr);
        return SR_EXIT_RUNNER;
      }
  if (optind >= argc)
    {
      usage (stderr);
      return SR_EXIT_RUNNER;
    }
  for (size_t i = 0; i < SR_ARRAY_SIZE (subcommands); i++)
    if (strcmp (argv[optind], subcommands[i].name) == 0)
      sc = &subcommands[i];
  if (sc == NULL)
    {
      sr_client_fail ("unknown command '%s' (see 'sandbox-runner session --help')", argv[optind]);
      return SR_EXIT_RUNNER;
    }
  if (parse_args (sc, argc - optind, argv + optind, &a) < 0)
    return SR_EXIT_RUNNER;
  if (a.help)
    {
      subcommand_usage (sc);
      return 0;
    }

  env = getenv (SR_CLIENT_URL_ENV);
  c.url = sr_xstrdup (a.server ? a.server : env && *env ? env : DEFAULT_URL);
  if (a.token_file && read_token (a.token_file, &c.token) < 0)
    goto out;
  if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK || (c.curl = curl_easy_init ()) == NULL)
    {
      sr_client_fail ("libcurl could not start");
      goto out;
    }
  sr_client_resume (&c);
  status = check_required (sc, &a) < 0 ? SR_EXIT_RUNNER : sc->fn (&c, &a);
  fflush (stdout);
  sr_client_keep (&c);
  curl_easy_cleanup (c.curl);
  curl_global_cleanup ();
out:
  if (c.token)
    explicit_bzero (c.token, strlen (c.token));
  free (c.token);
  free (c.url);
  free (c.session_id);
  free (c.protocol);
  return status;
}
