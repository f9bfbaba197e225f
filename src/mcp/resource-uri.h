/* The URIs of session files as MCP resources:
 *
 *   sandbox://sessions/{session_id}/files/{path}
 *
 * path is relative to SR_DATA_DIR; each of its segments is
 * percent-encoded (RFC 3986: the unreserved characters and the '/'
 * between segments kept, every other byte as %XX), so any name a
 * container makes, bytes that are not UTF-8 included, has one URI.  */
#ifndef SR_MCP_RESOURCE_URI_H
#define SR_MCP_RESOURCE_URI_H

#define SR_MCP_RESOURCE_URI_TEMPLATE "sandbox://sessions/{session_id}/files/{path}"

/* path with every byte but the unreserved ones and '/' percent-encoded:
 * the path part of a URI (also of the HTTP download URL).  */
char *sr_mcp_uri_path_encode (const char *path);

/* The URI of file path (relative to SR_DATA_DIR) of session session_id.  */
char *sr_mcp_resource_uri (const char *session_id, const char *path);

/* Splits a URI sr_mcp_resource_uri makes into its session id and its
 * decoded path (the caller's to free).  -1 when uri is not of that form:
 * another scheme, a bad %-escape, an escaped '/' or NUL, an empty
 * session id or path.  The path is not checked any further here: the
 * file functions that get it validate it.  */
int sr_mcp_resource_uri_parse (const char *uri, char **ret_session_id, char **ret_path);

#endif
