/* The stdio transport: newline-delimited JSON-RPC on stdin and stdout,
 * nothing but protocol on stdout.  */
#ifndef SR_MCP_STDIO_H
#define SR_MCP_STDIO_H

#include "common/error.h"
#include "mcp/server.h"

/* Serves one client on in_fd/out_fd until end of input or until stop_fd
 * becomes readable, then cancels what still runs and returns 0.  */
int sr_mcp_stdio_run (struct sr_mcp_server *s, int in_fd, int out_fd, int stop_fd,
                      size_t max_message_size, sr_error_t *err);

#endif
