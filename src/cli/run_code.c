/* sandbox-runner run-code --language L [--timeout S] [--json] [FILE|-]  */
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
#include "image/store.h"
#include "sandbox/code.h"
#include "sandbox/docker-run.h"
#include "store/history.h"

static void
usage (FILE *f, const struct sr_config *cfg)
{
  fprintf (f,
           "Usage: sandbox-runner run-code --language L [--timeout S] [--backend B] [--json]\n"
           "                                [FILE|-]\n\n"
           "Runs a snippet (from FILE, or stdin) in a fresh container of the language's\n"
           "image; compiled languages compile first, in a container of their own.\n\n"
           "  -l, --language L   one of the language table (sandbox-runner config show)\n"
           "  --timeout S        run-stage timeout in seconds (default %g, at most %g)\n"
           "  --backend B        native or docker (default: the configuration's, %s)\n"
           "  --json             print the result as JSON\n\n"
           "Exit status: the program's; 1 on a compile error, %d on timeout, %d when the\n"
           "request is invalid or the container could not be set up.\n",
           (double) cfg->timeout_ms / 1000, (double) cfg->max_timeout_ms / 1000, cfg->backend,
           SR_EXIT_TIMEOUT, SR_EXIT_RUNNER);
}

static cJSON *
code_result_json (const struct sr_code_result *r)
{
  cJSON *o = sr_result_to_json (&r->run);

  cJSON_ReplaceItemInObject (o, "status", cJSON_CreateString (sr_code_status_name (r->status)));
  cJSON_AddStringToObject (o, "language", r->language);
  if (r->compiled)
    cJSON_AddNumberToObject (o, "compile_ms", (double) r->compile_ms);
  return o;
}

/* A run that happened goes into the history; a failure to record it is
 * only a warning and leaves the run's exit status alone.  */
static void
record_history (const struct sr_config *cfg, const struct sr_code_request *req,
                const struct sr_code_result *res)
{
  struct sr_history *h = NULL;
  struct sr_history_entry e;
  sr_error_t err = NULL;

  if (cfg->history_db == NULL || *cfg->history_db == '\0')
    return;
  sr_history_entry_from_code (&e, req, res, "cli");
  if (sr_history_open (cfg->history_db, &h, &err) < 0 || sr_history_add (h, &e, &err) < 0)
    {
      fprintf (stderr, "sandbox-runner: warning: history: %s\n", err->msg);
      sr_error_free (&err);
    }
  sr_history_close (h);
  sr_history_entry_done (&e);
}

static int
exit_status_of (const struct sr_code_result *r)
{
  switch (r->status)
    {
    case SR_CODE_SUCCESS:
      return 0;
    case SR_CODE_COMPILE_ERROR:
      return 1;
    case SR_CODE_TIMEOUT:
      return SR_EXIT_TIMEOUT;
    default:
      return r->run.signal ? 128 + r->run.signal : (r->run.exit_code ? r->run.exit_code : 1);
    }
}

int
sr_cmd_run_code (int argc, char **argv)
{
  static const struct option options[] = {
    { "language", required_argument, NULL, 'l' },
    { "timeout", required_argument, NULL, 't' },
    { "json", no_argument, NULL, 'j' },
    { "backend", required_argument, NULL, 'b' },
    { "help", no_argument, NULL, 'h' },
    { 0 },
  };
  struct sr_config config = { 0 };
  struct sr_code_request req = { .cancel_fd = -1 };
  struct sr_code_result res = { 0 };
  struct sr_store *store = NULL;
  _cleanup_free_ char *code = NULL;
  sr_error_t err = NULL;
  bool json = false;
  int c, status = SR_EXIT_RUNNER;

  if (sr_cli_load_config (&config) < 0)
    return SR_EXIT_RUNNER;
  optind = 1;
  while ((c = getopt_long (argc, argv, "l:h", options, NULL)) != -1)
    switch (c)
      {
      case 'l':
        req.language = optarg;
        break;
      case 't':
        if (sr_parse_seconds (optarg, &req.timeout_ms) < 0 || req.timeout_ms == 0)
          {
            sr_cli_error ("invalid --timeout '%s': expected seconds, such as 10 or 2.5", optarg);
            goto out;
          }
        break;
      case 'j':
        json = true;
        break;
      case 'b':
        if (strcmp (optarg, "native") != 0 && strcmp (optarg, "docker") != 0)
          {
            sr_cli_error ("invalid --backend '%s': expected native or docker", optarg);
            goto out;
          }
        free (config.backend);
        config.backend = sr_xstrdup (optarg);
        break;
      case 'h':
        usage (stdout, &config);
        status = 0;
        goto out;
      default:
        usage (stderr, &config);
        goto out;
      }
  if (req.language == NULL)
    {
      sr_cli_error ("run-code: --language is required");
      goto out;
    }
  if (argc - optind > 1)
    {
      sr_cli_error ("run-code: give at most one FILE");
      goto out;
    }
  /* Before the code is read: the full binary reads it from the same
   * stdin.  */
  if (strcmp (config.backend, "docker") == 0 && !sr_code_docker_available ())
    {
      status = sr_cli_exec_helper (SR_HELPER_FULL);
      goto out;
    }
  if (sr_cli_read_input ("run-code", optind < argc ? argv[optind] : NULL, config.max_code_size,
                         &code, &req.code_len) < 0)
    goto out;
  if (req.code_len > config.max_code_size)
    {
      sr_cli_error ("run-code: the code is over the limit of %llu bytes (max_code_size)",
                    (unsigned long long) config.max_code_size);
      goto out;
    }
  req.code = code;
  req.cancel_fd = sr_cli_cancel_fd ();
  if (sr_cli_open_store (&config, &store) < 0)
    goto out;

  if (sr_code_run (&config, store, &req, &res, &err) < 0)
    {
      if (json)
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
      else
        sr_cli_error ("%s", err->msg);
      sr_error_free (&err);
      goto out;
    }

  if (json)
    {
      cJSON *o = code_result_json (&res);
      _cleanup_free_ char *text = cJSON_PrintUnformatted (o);

      puts (text);
      cJSON_Delete (o);
    }
  else
    {
      sr_write_all (STDOUT_FILENO, res.run.out.data ? res.run.out.data : "", res.run.out.len);
      if (res.run.out.truncated)
        fprintf (stdout, SR_TRUNCATION_MARKER_FMT, res.run.out.len,
                 (unsigned long long) (res.run.out.total - res.run.out.len));
      fflush (stdout);
      sr_write_all (STDERR_FILENO, res.run.err.data ? res.run.err.data : "", res.run.err.len);
      if (res.run.err.truncated)
        fprintf (stderr, SR_TRUNCATION_MARKER_FMT, res.run.err.len,
                 (unsigned long long) (res.run.err.total - res.run.err.len));
      if (res.status == SR_CODE_COMPILE_ERROR)
        sr_cli_error ("compile error (%s)", res.run.status == SR_RUN_TIMEOUT ? "the compiler timed out"
                                          : res.run.status == SR_RUN_OOM ? "the compiler ran out of memory"
                                          : "the compiler failed");
      else if (res.status == SR_CODE_TIMEOUT)
        sr_cli_error ("timed out; the container was killed");
      else if (res.status == SR_CODE_OOM)
        sr_cli_error ("out of memory: killed at the %llu MiB limit",
                      (unsigned long long) (res.run.memory_limit >> 20));
    }
  fflush (stdout);
  record_history (&config, &req, &res);
  status = exit_status_of (&res);

out:
  if (req.cancel_fd >= 0)
    close (req.cancel_fd);
  sr_code_result_done (&res);
  sr_store_close (store);
  sr_config_done (&config);
  return status;
}
