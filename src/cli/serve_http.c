/* serve --transport http (or sse): libmicrohttpd is in sandbox-runner-http and
 * sandbox-runner-full only, whose mains register the transport for
 * serve.c (main-http.c, main-full.c).  */
#include "config.h"

#include "cli/commands.h"
#include "mcp/http.h"

int
sr_cli_serve_mhd (struct sr_mcp_server *server, const struct sr_config *cfg, bool sse,
                  int stop_fd, sr_error_t *err)
{
  struct sr_mcp_http_options o = {
    .listen = cfg->listen, .token_file = cfg->token_file,
    .allowed_origins = cfg->allowed_origins, .max_message_size = cfg->max_message_size,
    .max_download_size = cfg->max_artifact_size,
    .session_idle_ms = cfg->http_session_idle_ms, .sse = sse,
    .max_connections_per_ip = (unsigned) cfg->http_max_connections_per_ip,
    .header_timeout_ms = cfg->http_header_timeout_ms,
    .server_id = cfg->server_id, .drain_grace_ms = cfg->drain_grace_ms,
  };

  return sr_mcp_http_run (server, &o, stop_fd, err);
}
