/* The MCP tools of sessions: create_session, close_session,
 * list_sessions, upload_file, list_artifacts, read_artifact, the file
 * tools file_read, file_write, file_patch, file_search, and the persistent
 * shells shell_new, shell_exec, shell_read, write_stdin, shell_list,
 * shell_remove.  Their refusals
 * carry the codes of sandbox/session.h and sandbox/files.h.  */
#ifndef SR_MCP_SESSION_TOOLS_H
#define SR_MCP_SESSION_TOOLS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "mcp/tools.h"
#include "sandbox/files.h"

/* Appends their definitions to a tools/list array.  */
void sr_mcp_session_tools_add (cJSON *tools);
bool sr_mcp_session_tool_exists (const char *name);
/* NULL when name is not one of them.  */
cJSON *sr_mcp_session_tool_call (const struct sr_mcp_tool_ctx *ctx, const char *name,
                                 const cJSON *args);

/* "artifacts": [{path, size, mtime, mime_type, download_url}] on o.  */
void sr_mcp_add_artifacts (cJSON *o, const struct sr_mcp_tool_ctx *ctx, const char *session_id,
                           const struct sr_artifact *v, size_t n);

#endif
