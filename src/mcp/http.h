/* MCP over Streamable HTTP (spec 2025-11-25, and the 2025-03-26 and
 * 2025-06-18 behaviour older clients still use), on libmicrohttpd.
 *
 * One endpoint, /mcp.  A POST carries one JSON-RPC message: a request is
 * answered on the same POST, as an SSE stream (its progress notifications,
 * then the response) or as one application/json body; a notification or
 * a response gets 202.  initialize opens a session (Mcp-Session-Id), GET
 * opens the session's own SSE stream for its logging, DELETE ends it.
 * Host and Origin are checked against DNS rebinding, and bearer tokens
 * from token_file are required when it is set (and it must be set when
 * the address is not loopback).  An Mcp-Session-Id unused for
 * session_idle_ms (no request, no stream open) is forgotten: its requests
 * get 404, the spec's sign for the client to initialize again.
 *
 * With sse, the HTTP+SSE transport of protocol 2024-11-05 too, for the
 * clients that speak only it: GET /sse opens a session and its stream,
 * whose first event, endpoint, names /messages?sessionId=ID; each message
 * POSTed there gets 202, and its response comes on the stream.  Same
 * checks as /mcp.
 *
 * GET /files/{session_id}/{path} serves a session's artifact under the
 * same checks, streamed from the open file (never read whole), and
 * answers 413 for a file over max_download_size.
 *
 * For a fleet behind a balancer: every Mcp-Session-Id is
 * "{server_id}.{random}", download links name "{server_id}.{session}",
 * every response has Sandbox-Runner-Server: {server_id}; GET /healthz
 * (no token needed) says whether the server takes new sessions; on
 * SIGTERM or SIGUSR2 it drains: initialize gets 503, the sessions it has
 * carry on until they end or drain_grace_ms is up, then it stops.  */
#ifndef SR_MCP_HTTP_H
#define SR_MCP_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "mcp/server.h"

struct sr_mcp_http_options
{
  const char *listen;           /* "127.0.0.1:8080", "[::1]:8080", "0.0.0.0:8080" */
  const char *token_file;       /* NULL or "": none */
  const char *allowed_origins;  /* comma-separated origins allowed besides localhost */
  size_t max_message_size;
  uint64_t max_download_size;   /* 0: SR_DEFAULT_MAX_ARTIFACT_SIZE */
  uint64_t session_idle_ms;     /* 0: HTTP_SESSION_IDLE_DEFAULT_MS of http.c, an hour */
  unsigned max_connections_per_ip; /* 0: no limit but the server's */
  uint64_t header_timeout_ms;   /* a request's headers must be in this soon; 0: no deadline */
  bool sse;                     /* also the HTTP+SSE transport (2024-11-05) */
  const char *server_id;        /* in every Mcp-Session-Id and response, for a balancer */
  uint64_t drain_grace_ms;      /* SIGTERM/SIGUSR2 drain this long; 0: stop at once */
};

/* Serves until a signal on the signalfd stop_fd says to stop (SIGHUP
 * reloads the tokens; SIGTERM and SIGUSR2 drain first, for up to
 * drain_grace_ms), then closes every session and returns 0.  A failure to start (a bad or busy address, a missing token
 * file) returns -1 with the reason in *err.  */
int sr_mcp_http_run (struct sr_mcp_server *s, const struct sr_mcp_http_options *o, int stop_fd,
                     sr_error_t *err);

#endif
