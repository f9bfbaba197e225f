/* The URIs of a session's files, as MCP resources and resource_link
 * blocks name them: sandbox://sessions/{session_id}/files/{path}, each
 * segment of the session id and of the path percent-encoded (RFC 3986's
 * unreserved characters kept, '/' kept between the path's segments).
 * The one place such a URI is built or read.  */
#ifndef SR_MCP_RESOURCE_URI_H
#define SR_MCP_RESOURCE_URI_H

#include "common/error.h"

#define SR_MCP_URI_SESSIONS "sandbox://sessions/"

/* path percent-encoded for a URI's path: RFC 3986's unreserved
 * characters and '/' kept, every other byte %XX; allocated.  */
char *sr_mcp_uri_path (const char *path);

/* The URI of path (relative to the session's /mnt/data, any bytes but
 * NUL) in session session_id; allocated.  */
char *sr_mcp_file_uri (const char *session_id, const char *path);

/* The session id and path of a URI sr_mcp_file_uri made (both
 * allocated, the caller's to free).  Fails with code invalid_uri (errnum
 * EINVAL) for another scheme or shape, an empty id or path, a malformed
 * escape, or an escaped NUL or '/' inside a segment; *ret_* are left
 * untouched then.  */
int sr_mcp_file_uri_parse (const char *uri, char **ret_session_id, char **ret_path,
                           sr_error_t *err);

#endif
