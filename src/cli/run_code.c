/* sandbox-runner run-code --language L [--timeout S] [--json] [--stdin FILE|-]
 *                          [--arg A]... [--file NAME=PATH]... [FILE|- [FILE]...]  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/result_json.h"
#include "common/config.h"
#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/backend.h"
#include "sandbox/service.h"

static void
usage (FILE *f, const struct sr_config *cfg)
{
  fprintf (f,
           "Usage: sandbox-runner run-code --language L [--timeout S] [--backend B] [--json]\n"
           "                                [--user USER[:GROUP]]\n"
           "                                [--stdin FILE|-] [--arg A]... [--file NAME=PATH]...\n"
           "                                [FILE|- [FILE]...]\n\n"
           "Runs a snippet (from the first FILE, or stdin) in a fresh container of the\n"
           "language's image; compiled languages compile first, in a container of their\n"
           "own.  The other FILEs go beside it under their base names (--file names one\n"
           "itself); a compiled language compiles those that are sources too.\n\n"
           "  -l, --language L   one of the language table (sandbox-runner config show)\n"
           "  --timeout S        run-stage timeout in seconds (default %g, at most %g)\n"
           "  --backend B        native or docker (default: the configuration's, %s)\n"
           "  --user U           who the program runs as inside: root, an id or a name\n"
           "                     of the image's /etc/passwd (default: the user\n"
           "                     setting's, %s)\n"
           "  --stdin FILE|-     the program's stdin (default: empty); - reads ours\n"
           "  --arg A            one more argument for the program (repeatable)\n"
           "  --file NAME=PATH   the file PATH beside the code as NAME (repeatable)\n"
           "  --json             print the result as JSON\n\n"
           "Exit status: the program's; %d on a compile error, %d on timeout, %d when\n"
           "the request is invalid or the container could not be set up.\n",
           (double) cfg->timeout_ms / 1000, (double) cfg->max_timeout_ms / 1000,
           sr_backend_kind_name (cfg->backend_kind), cfg->user,
           SR_EXIT_COMPILE, SR_EXIT_TIMEOUT, SR_EXIT_RUNNER);
}

/* What the options and the FILEs after the first name: read once the
 * runner that runs them is known (the full binary reads the same stdin).  */
struct inputs
{
  const char *stdin_path;
  char **args;            /* into argv */
  size_t n_args;
  char **names;           /* allocated */
  char **paths;           /* into argv */
  size_t n_files;
  char *stdin_data;
  char **contents;
  struct sr_code_file *files;
};

static void
inputs_done (struct inputs *in)
{
  for (size_t i = 0; i < in->n_files; i++)
    {
      free (in->names[i]);
      free (in->contents ? in->contents[i] : NULL);
    }
  free (in->contents);
  free (in->files);
  free (in->stdin_data);
  free (in->args);
  free (in->names);
  free (in->paths);
}

/* The file path as name (its first len bytes).  */
static void
add_file (struct inputs *in, const char *name, size_t len, char *path)
{
  in->names = sr_xrealloc (in->names, (in->n_files + 1) * sizeof *in->names);
  in->paths = sr_xrealloc (in->paths, (in->n_files + 1) * sizeof *in->paths);
  in->names[in->n_files] = sr_xasprintf ("%.*s", (int) len, name);
  in->paths[in->n_files++] = path;
}

/* Reads the stdin and the files into req; sizes over their caps are read
 * one byte past them, for sr_code_validate to refuse with its code.  */
static int
read_inputs (const struct sr_config *cfg, struct inputs *in, struct sr_code_request *req)
{
  if (in->stdin_path)
    {
      if (sr_cli_read_input ("run-code --stdin", in->stdin_path, cfg->max_stdin_size,
                             &in->stdin_data, &req->stdin_len) < 0)
        return -1;
      req->stdin_data = in->stdin_data;
    }
  req->args = in->args;
  req->n_args = in->n_args;
  in->contents = sr_xcalloc (in->n_files + 1, sizeof *in->contents);
  in->files = sr_xcalloc (in->n_files + 1, sizeof *in->files);
  for (size_t i = 0; i < in->n_files; i++)
    {
      /* "-" is not a file here: stdin is the code's or --stdin's.  */
      if (strcmp (in->paths[i], "-") == 0)
        {
          sr_cli_error ("run-code: --file %s: give a file, not -", in->names[i]);
          return -1;
        }
      if (sr_cli_read_input ("run-code --file", in->paths[i], cfg->max_code_file_size,
                             &in->contents[i], &in->files[i].len) < 0)
        return -1;
      in->files[i].name = in->names[i];
      in->files[i].content = in->contents[i];
    }
  req->files = in->files;
  req->n_files = in->n_files;
  return 0;
}

static cJSON *
code_result_json (const struct sr_code_result *r)
{
  cJSON *o = sr_result_to_json (&r->run);

  cJSON_ReplaceItemInObject (o, "status", cJSON_CreateString (sr_code_status_name (r->status)));
  cJSON_AddStringToObject (o, "language", r->language);
  if (r->compiled)
    {
      cJSON_AddNumberToObject (o, "compile_ms", (double) r->compile_ms);
      cJSON_AddBoolToObject (o, "compile_cached", r->compile_cached);
    }
  return o;
}

/* The JSON of a request that ran nothing.  */
static void
print_refusal_json (const sr_error_t err)
{
  cJSON *o = cJSON_CreateObject ();
  const char *failure = sr_error_code (err);
  _cleanup_free_ char *text = NULL;

  cJSON_AddStringToObject (o, "status", "error");
  cJSON_AddStringToObject (o, "error", err->msg);
  cJSON_AddBoolToObject (o, "invalid_request", err->errnum == EINVAL);
  /* image_missing or sandbox_error, as the MCP tool reports it.  */
  if (err->errnum != EINVAL)
    cJSON_AddStringToObject (o, "failure", failure ? failure : "sandbox_error");
  text = cJSON_PrintUnformatted (o);
  puts (text);
  cJSON_Delete (o);
}

/* The program's output as it wrote it (ending with the truncation
 * marker sr_capture_finish put there), then what ended it.  */
static void
print_result (const struct sr_code_result *res)
{
  sr_write_all (STDOUT_FILENO, res->run.out.data ? res->run.out.data : "", res->run.out.len);
  sr_write_all (STDERR_FILENO, res->run.err.data ? res->run.err.data : "", res->run.err.len);
  if (res->status == SR_CODE_COMPILE_ERROR)
    sr_cli_error ("compile error (%s)", res->run.status == SR_RUN_TIMEOUT ? "the compiler timed out"
                                      : res->run.status == SR_RUN_OOM ? "the compiler ran out of memory"
                                      : "the compiler failed");
  else if (res->status == SR_CODE_TIMEOUT)
    sr_cli_error ("timed out; the container was killed");
  else if (res->status == SR_CODE_OOM)
    sr_cli_error ("out of memory: killed at the %llu MiB limit",
                  (unsigned long long) (res->run.memory_limit >> 20));
}

static int
exit_status_of (const struct sr_code_result *r)
{
  switch (r->status)
    {
    case SR_CODE_SUCCESS:
      return 0;
    case SR_CODE_COMPILE_ERROR:
      return SR_EXIT_COMPILE;
    case SR_CODE_TIMEOUT:
      return SR_EXIT_TIMEOUT;
    default:
      return r->run.signal ? 128 + r->run.signal : (r->run.exit_code ? r->run.exit_code : 1);
    }
}

/* Reads the options into config, req and json; -1 when the command ends
 * here with *status.  */
static int
parse_options (int argc, char **argv, struct sr_config *config, struct sr_code_request *req,
               struct inputs *in, bool *json, int *status)
{
  static const struct option options[] = {
    { "language", required_argument, NULL, 'l' },
    { "timeout", required_argument, NULL, 't' },
    { "json", no_argument, NULL, 'j' },
    { "backend", required_argument, NULL, 'b' },
    { "user", required_argument, NULL, 'u' },
    { "stdin", required_argument, NULL, 'i' },
    { "arg", required_argument, NULL, 'a' },
    { "file", required_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
  };
  int c;

  optind = 1;
  while ((c = getopt_long (argc, argv, "l:h", options, NULL)) != -1)
    switch (c)
      {
      case 'l':
        req->language = optarg;
        break;
      case 'i':
        in->stdin_path = optarg;
        break;
      case 'a':
        in->args = sr_xrealloc (in->args, (in->n_args + 1) * sizeof *in->args);
        in->args[in->n_args++] = optarg;
        break;
      case 'f':
        {
          char *eq = strchr (optarg, '=');

          if (eq == NULL || eq == optarg || eq[1] == '\0')
            {
              sr_cli_error ("invalid --file '%s': expected NAME=PATH", optarg);
              return -1;
            }
          /* argv stays as it is: the full binary may be exec'd with it.  */
          add_file (in, optarg, (size_t) (eq - optarg), eq + 1);
        }
        break;
      case 't':
        if (sr_parse_seconds (optarg, &req->timeout_ms) < 0 || req->timeout_ms == 0)
          {
            sr_cli_error ("invalid --timeout '%s': expected seconds, such as 10 or 2.5", optarg);
            return -1;
          }
        break;
      case 'j':
        *json = true;
        break;
      case 'b':
        if (sr_config_set (config, "backend", optarg, SR_ORIGIN_FLAG, "--backend", NULL) < 0)
          {
            sr_cli_error ("invalid --backend '%s': expected native or docker", optarg);
            return -1;
          }
        break;
      case 'u':
        (void) sr_config_set (config, "user", optarg, SR_ORIGIN_FLAG, "--user", NULL);
        break;
      case 'h':
        usage (stdout, config);
        *status = 0;
        return -1;
      default:
        usage (stderr, config);
        return -1;
      }
  return 0;
}

int
sr_cmd_run_code (int argc, char **argv)
{
  struct sr_config config = { 0 };
  struct sr_code_request req = { .cancel_fd = -1 };
  struct sr_service_run run = { 0 };
  struct sr_service *service = NULL;
  struct inputs in = { 0 };
  _cleanup_free_ char *code = NULL;
  const char *code_path;
  sr_error_t err = NULL;
  bool json = false;
  int status = SR_EXIT_RUNNER;

  if (sr_cli_read_config (&config) < 0)
    return SR_EXIT_RUNNER;
  if (parse_options (argc, argv, &config, &req, &in, &json, &status) < 0)
    goto out;
  /* A --timeout replaces the configured one, which is then not checked;
   * the flag itself is checked against max_timeout with the request.  */
  if (req.timeout_ms && req.timeout_ms <= config.max_timeout_ms)
    config.timeout_ms = req.timeout_ms;
  if (sr_cli_check_config (&config) < 0)
    goto out;
  if (req.language == NULL)
    {
      sr_cli_error ("run-code: --language is required");
      goto out;
    }
  code_path = optind < argc ? argv[optind] : NULL;
  for (int i = optind + 1; i < argc; i++)
    {
      const char *slash = strrchr (argv[i], '/'), *base = slash ? slash + 1 : argv[i];

      add_file (&in, base, strlen (base), argv[i]);
    }
  if (in.stdin_path && strcmp (in.stdin_path, "-") == 0
      && (code_path == NULL || strcmp (code_path, "-") == 0))
    {
      sr_cli_error ("run-code: --stdin - and the code cannot both come from stdin: give the "
                    "code as a FILE");
      goto out;
    }
  /* Before the code is read: the full binary reads it from the same
   * stdin.  */
  if (sr_backend_find (config.backend_kind) == NULL)
    {
      status = sr_cli_exec_helper (SR_HELPER_FULL);
      goto out;
    }
  if (sr_cli_read_input ("run-code", code_path, config.max_code_size, &code, &req.code_len) < 0
      || read_inputs (&config, &in, &req) < 0)
    goto out;
  if (req.code_len > config.max_code_size)
    {
      sr_cli_error ("run-code: the code is over the limit of %llu bytes (max_code_size)",
                    (unsigned long long) config.max_code_size);
      goto out;
    }
  req.code = code;
  req.cancel_fd = sr_cli_cancel_fd ();
  if (sr_service_open (&config, SR_SERVICE_ONE_SHOT, "cli", &service, &err) < 0)
    {
      sr_cli_error ("%s", err->msg);
      sr_error_free (&err);
      goto out;
    }
  if (sr_service_run_code (service, &req, NULL, NULL, &run, &err) < 0)
    {
      if (json)
        print_refusal_json (err);
      else
        sr_cli_error ("%s", err->msg);
      sr_error_free (&err);
      goto out;
    }

  if (json)
    {
      cJSON *o = code_result_json (&run.code);
      _cleanup_free_ char *text = cJSON_PrintUnformatted (o);

      puts (text);
      cJSON_Delete (o);
    }
  else
    print_result (&run.code);
  fflush (stdout);
  /* A failure to record the run is only a warning and leaves the run's
   * exit status alone.  */
  if (run.history_failed)
    fprintf (stderr, "sandbox-runner: warning: history: %s\n", run.history_problem);
  status = exit_status_of (&run.code);

out:
  if (req.cancel_fd >= 0)
    close (req.cancel_fd);
  sr_service_run_done (&run);
  sr_service_close (service);
  inputs_done (&in);
  sr_config_done (&config);
  return status;
}
