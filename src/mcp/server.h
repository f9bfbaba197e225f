/* The MCP server, independent of its transport.
 *
 * One sr_mcp_server holds what every client shares: the configuration,
 * the image store, the history and the limit of concurrent runs.  Each
 * client session (a stdio stream, an HTTP Mcp-Session-Id) is an
 * sr_mcp_conn.  The transport hands every JSON-RPC message it receives
 * to sr_mcp_conn_handle, which answers cheap requests at once and runs
 * tools/call on worker threads; everything the server says, replies and
 * notifications alike, goes out through the connection's send callback,
 * which may be called from any thread (the transport serialises).  */
#ifndef SR_MCP_SERVER_H
#define SR_MCP_SERVER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/error.h"
#include "mcp/jsonrpc.h"

/* The protocol versions initialize negotiates (the legacy era, one
 * session per client), newest first.  */
#define SR_MCP_PROTOCOL_LATEST "2025-11-25"
extern const char *const sr_mcp_protocol_versions[];
/* The modern era (2026-07-28): no initialize and no session; every
 * request carries its protocol version and the client's capabilities in
 * params._meta, and server/discover tells what the server speaks.  Both
 * eras are served side by side, chosen per request.  */
#define SR_MCP_PROTOCOL_MODERN "2026-07-28"
/* The key of a modern request's params._meta that names its version.  */
#define SR_MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"

/* Whether we speak protocol version v, of either era.  */
bool sr_mcp_protocol_known (const char *v);
/* Whether request (or notification) m is of the modern era: its _meta
 * names a protocol version, its method exists only there
 * (server/discover), or the transport's header_version (NULL: none) is
 * a modern one.  */
bool sr_mcp_request_modern (const struct sr_rpc_message *m, const char *header_version);
/* The checks of a modern request's _meta before it is handled: 0 when
 * it may be, else the JSON-RPC error code (-32602: protocolVersion or
 * clientCapabilities missing; -32022: a version we do not speak; -32021:
 * a task method from a client that does not declare the Tasks
 * extension) and *ret_error the reply answering m's id.  */
int sr_mcp_modern_check (const struct sr_rpc_message *m, char **ret_error);
/* Whether request m has something to say before its response: the
 * progress of a request with a progressToken, the notifications of a
 * subscriptions/listen (of either era's form).  */
bool sr_mcp_request_streams (const struct sr_rpc_message *m);
/* Whether a modern request of this method is served (initialize, ping,
 * logging/setLevel and resources/subscribe are gone from it).  */
bool sr_mcp_modern_method (const char *method);

struct sr_mcp_server;
struct sr_mcp_conn;

/* Sends one message.  related_id is the id of the request the message
 * belongs to (its response, or a progress notification of it), NULL for
 * messages of the session itself (logging); HTTP uses it to pick the
 * stream.  json is a complete message without a trailing newline.  */
typedef void (*sr_mcp_send_fn) (void *transport, const cJSON *related_id, const char *json);

/* cfg must outlive the server.  */
int sr_mcp_server_new (const struct sr_config *cfg, struct sr_mcp_server **ret, sr_error_t *err);
/* Cancels whatever still runs, waits for it and frees the server; every
 * connection must be closed first.  */
void sr_mcp_server_free (struct sr_mcp_server *s);

/* The server is about to stop (it drains): each subscriptions/listen
 * ends, gracefully, with its result.  */
void sr_mcp_server_drain (struct sr_mcp_server *s);

/* The server's sessions (NULL when they could not start), for the HTTP
 * file download.  */
struct sr_sessions *sr_mcp_server_sessions (struct sr_mcp_server *s);
/* The key of the server's signed download links (mcp/download-link.h),
 * drawn when it started.  */
struct sr_mcp_link_key;
const struct sr_mcp_link_key *sr_mcp_server_link_key (const struct sr_mcp_server *s);

struct sr_mcp_conn *sr_mcp_conn_new (struct sr_mcp_server *s, sr_mcp_send_fn send,
                                     void *transport);
/* Who the caller is (a token id, an MCP session id), before any
 * message: what the audit trail records, hashed, and what audit_query
 * shows it of.  A connection nobody names is "stdio".  */
void sr_mcp_conn_set_client (struct sr_mcp_conn *c, const char *identity);
/* Whose the sandbox sessions of the connection are (sandbox/session.h):
 * the sessions it makes are the owner's, and it finds only the owner's.
 * NULL (the default) is the one client of a server that has only one
 * (stdio), which owns every session.  Set before the first message.  */
void sr_mcp_conn_set_owner (struct sr_mcp_conn *c, const char *owner);
/* Where the requests handled from now on reach GET /files/
 * ("http://HOST:PORT", from the request's Host), for the download_url of
 * artifacts; NULL (the default): no download_url.  */
void sr_mcp_conn_set_files_url (struct sr_mcp_conn *c, const char *url);
/* Handles one message (a JSON text of len bytes).  Malformed input is
 * answered with the JSON-RPC error it deserves; nothing here fails.  */
void sr_mcp_conn_handle (struct sr_mcp_conn *c, const char *json, size_t len);
/* True once the client has completed initialize.  */
bool sr_mcp_conn_initialized (const struct sr_mcp_conn *c);
/* The protocol version negotiated at initialize (NULL before).  */
const char *sr_mcp_conn_protocol (const struct sr_mcp_conn *c);
/* Whether the request with this id is still in flight (HTTP keeps its
 * stream open until it is not).  */
bool sr_mcp_conn_pending (struct sr_mcp_conn *c, const cJSON *id);
/* How many tools/call requests are in flight (a subscriptions/listen is
 * none: it lasts until cancelled, and closing the connection ends it).  */
size_t sr_mcp_conn_in_flight (struct sr_mcp_conn *c);
/* Cancels the connection's calls in flight (their containers are
 * killed), waits for their threads, and frees it.  No send happens after
 * it returns.  */
void sr_mcp_conn_close (struct sr_mcp_conn *c);

/* The JSON-RPC error message for a message over max_message_size, for
 * transports that refuse it before parsing: it answers id (NULL: null,
 * when the id could not be found; see mcp/rpc-id.h) and names the
 * message's size when known (size 0: not known).  */
char *sr_mcp_oversized_error (const cJSON *id, uint64_t size, size_t limit);
/* The same for a message held whole (json, len bytes), its id looked for
 * as in mcp/rpc-id.h.  */
char *sr_mcp_oversized_reply (const char *json, size_t len, size_t limit);

#endif
