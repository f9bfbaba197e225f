/* serve --transport http: libmicrohttpd is in sandbox-runner-http and
 * sandbox-runner-full only, which register the transport for serve.c
 * before main.  */
#include "config.h"

#include "cli/commands.h"
#include "mcp/http.h"

static int
serve_http (struct sr_mcp_server *server, const struct sr_config *cfg, int stop_fd,
            sr_error_t *err)
{
  struct sr_mcp_http_options o = {
    .listen = cfg->listen, .token_file = cfg->token_file,
    .allowed_origins = cfg->allowed_origins, .max_message_size = cfg->max_message_size,
    .max_download_size = cfg->max_artifact_size,
    .session_idle_ms = cfg->http_session_idle_ms,
  };

  return sr_mcp_http_run (server, &o, stop_fd, err);
}

__attribute__ ((constructor)) static void
register_http (void)
{
  sr_cli_serve_http = serve_http;
}
