/* sandbox-runner serve [--transport stdio|http|sse] [--listen ADDR] ...  */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/log.h"
#include "common/util.h"
#include "mcp/server.h"
#include "mcp/stdio.h"
#include "runtime/spawner.h"
#include "sandbox/backend.h"

/* Set by serve_http.c, in sandbox-runner-http and -full.  */
sr_cli_serve_http_fn sr_cli_serve_http;

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: sandbox-runner serve [OPTIONS]\n\n"
           "Serves MCP: over stdin/stdout (the default, for clients that start the server)\n"
           "or over Streamable HTTP at /mcp (and with sse, also the HTTP+SSE transport\n"
           "of protocol 2024-11-05 at /sse, for older clients).\n\n"
           "  --transport stdio|http|sse  the transport (default stdio)\n"
           "  --listen ADDR:PORT      HTTP address (default: the listen setting)\n"
           "  --token-file FILE       bearer tokens, one per line (required off loopback)\n"
           "  --server-id ID          this server's name in a fleet (default HOSTNAME-PORT)\n"
           "  --log-file FILE         write logs there instead of stderr\n");
}

/* server_id left empty: the host's name and the port of listen, which
 * no other server of a fleet has, with every character a balancer's
 * server name or the Mcp-Session-Id cannot hold made '-'.  */
static void
default_server_id (struct sr_config *cfg)
{
  const char *port = strrchr (cfg->listen, ':');
  char host[64] = "localhost";
  _cleanup_free_ char *id = NULL;

  if (gethostname (host, sizeof host) < 0 || host[0] == '\0')
    snprintf (host, sizeof host, "localhost");
  host[sizeof host - 1] = '\0';
  /* The domain is the same for every host of a fleet: only its first
   * label tells them apart.  */
  host[strcspn (host, ".")] = '\0';
  id = sr_xasprintf ("%.40s-%.5s", host, port ? port + 1 : "0");
  for (char *p = id; *p; p++)
    if (!isalnum ((unsigned char) *p) && *p != '-' && *p != '_')
      *p = '-';
  /* A value of the allowed characters is always accepted.  */
  sr_config_set (cfg, "server_id", id, SR_ORIGIN_DEFAULT, "hostname and port", NULL);
}

int
sr_cmd_serve (int argc, char **argv)
{
  enum { OPT_TRANSPORT = 1000, OPT_LISTEN, OPT_TOKEN_FILE, OPT_LOG_FILE, OPT_SERVER_ID };
  static const struct option options[] = {
    { "transport", required_argument, NULL, OPT_TRANSPORT },
    { "listen", required_argument, NULL, OPT_LISTEN },
    { "token-file", required_argument, NULL, OPT_TOKEN_FILE },
    { "log-file", required_argument, NULL, OPT_LOG_FILE },
    { "server-id", required_argument, NULL, OPT_SERVER_ID },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct sr_config config = { 0 };
  struct sr_mcp_server *server = NULL;
  const char *transport = "stdio";
  bool http;
  sr_error_t err = NULL;
  int c, stop_fd = -1, status = SR_EXIT_RUNNER;

  if (sr_cli_load_config (&config) < 0)
    goto out;
  optind = 1;
  while ((c = getopt_long (argc, argv, "h", options, NULL)) != -1)
    switch (c)
      {
      case OPT_TRANSPORT:
        transport = optarg;
        break;
      case OPT_LISTEN:
        if (sr_config_set (&config, "listen", optarg, SR_ORIGIN_FLAG, "--listen", &err) < 0)
          goto fail;
        break;
      case OPT_TOKEN_FILE:
        if (sr_config_set (&config, "token_file", optarg, SR_ORIGIN_FLAG, "--token-file", &err)
            < 0)
          goto fail;
        break;
      case OPT_LOG_FILE:
        if (sr_config_set (&config, "log_file", optarg, SR_ORIGIN_FLAG, "--log-file", &err) < 0)
          goto fail;
        break;
      case OPT_SERVER_ID:
        if (sr_config_set (&config, "server_id", optarg, SR_ORIGIN_FLAG, "--server-id", &err) < 0
            || sr_config_check_server_id (optarg, &err) < 0)
          goto fail;
        break;
      case 'h':
        usage (stdout);
        status = 0;
        goto out;
      default:
        usage (stderr);
        goto out;
      }
  if (optind < argc)
    {
      sr_cli_error ("serve: unexpected argument '%s'", argv[optind]);
      goto out;
    }
  http = strcmp (transport, "http") == 0 || strcmp (transport, "sse") == 0;
  if (strcmp (transport, "stdio") != 0 && !http)
    {
      sr_cli_error ("serve: --transport must be stdio, http or sse, not '%s'", transport);
      goto out;
    }
  /* The light binary serves stdio on the native backend itself, without
   * the libraries HTTP and Docker need (two thirds of its memory);
   * sandbox-runner-http serves HTTP with libmicrohttpd alone, and the
   * Docker backend is sandbox-runner-full's.  */
  if (sr_backend_find (config.backend_kind) == NULL)
    {
      sr_config_done (&config);
      return sr_cli_exec_helper (SR_HELPER_FULL);
    }
  if (http && sr_cli_serve_http == NULL)
    {
      sr_config_done (&config);
      return sr_cli_exec_helper (SR_HELPER_HTTP);
    }
  if (http && config.server_id[0] == '\0')
    default_server_id (&config);
  if (config.log_file[0])
    {
      int fd = open (config.log_file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

      if (fd < 0)
        {
          sr_cli_error ("serve: log file %s: %s", config.log_file, strerror (errno));
          goto out;
        }
      dup2 (fd, STDERR_FILENO);
      close (fd);
    }

  /* A client that goes away must not kill us with SIGPIPE; the signals
   * that end us are read from a signalfd, so that the runs are cancelled
   * and their containers removed first.  Blocked before any thread.  */
  signal (SIGPIPE, SIG_IGN);
  stop_fd = sr_cli_cancel_fd ();
  if (stop_fd >= 0 && http)
    {
      sigset_t set;

      /* SIGUSR2 drains an HTTP server (mcp/http.h), as SIGTERM does.  */
      sigemptyset (&set);
      sigaddset (&set, SIGINT);
      sigaddset (&set, SIGTERM);
      sigaddset (&set, SIGHUP);
      sigaddset (&set, SIGUSR2);
      if (sigprocmask (SIG_BLOCK, &set, NULL) < 0 || signalfd (stop_fd, &set, 0) < 0)
        {
          close (stop_fd);
          stop_fd = -1;
        }
    }
  if (stop_fd < 0)
    {
      sr_cli_error ("serve: signalfd: %s", strerror (errno));
      goto out;
    }
  {
    enum sr_log_level level = SR_LOG_INFO;
    bool json = false;
    char pid[24];

    /* Checked with the rest of the configuration already.  */
    sr_log_level_parse (config.log_level, &level, NULL);
    sr_log_format_parse (config.log_format, &json, NULL);
    sr_log_setup (level, json);
    snprintf (pid, sizeof pid, "%ld", (long) getpid ());
    sr_log (SR_LOG_INFO, "start", "version", PACKAGE_VERSION, "transport", transport, "backend",
            sr_backend_kind_name (config.backend_kind), "pid", pid, NULL);
  }
  /* Before the server's first thread, on this one, which lives as long
   * as the server: the containers' inits die with it.  Without a spawner
   * each thread clones its own.  */
  if (sr_spawner_start (&err) < 0)
    {
      sr_log (SR_LOG_WARNING, "spawner", "error", err->msg, NULL);
      sr_error_free (&err);
    }
  if (sr_mcp_server_new (&config, &server, &err) < 0)
    goto fail;

  if (strcmp (transport, "stdio") == 0)
    {
      if (sr_mcp_stdio_run (server, STDIN_FILENO, STDOUT_FILENO, stop_fd,
                            config.max_message_size, &err)
          < 0)
        goto fail;
    }
  else if (sr_cli_serve_http (server, &config, strcmp (transport, "sse") == 0, stop_fd, &err)
           < 0)
    goto fail;
  status = 0;
  goto out;

fail:
  sr_cli_error ("%s", err->msg);
  sr_error_free (&err);
out:
  sr_mcp_server_free (server);
  sr_spawner_stop ();
  sr_log (SR_LOG_INFO, "stop", "status", status == 0 ? "ok" : "failed", NULL);
  if (stop_fd >= 0)
    close (stop_fd);
  sr_config_done (&config);
  return status;
}
