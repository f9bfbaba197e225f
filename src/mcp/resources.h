/* Session files as MCP resources (the "resources" capability): the
 * template of their URIs (mcp/resource-uri.h), resources/list of the
 * files of every session the caller sees, paged, resources/read, and
 * resources/subscribe and unsubscribe.
 *
 * One sr_mcp_resources per connection follows its sessions' files once
 * the client has asked about resources: after each tools/call that names
 * a session it lists that session's files (paths, sizes, mtimes; only a
 * file changed in the last second is read, as sr_artifacts_changed says)
 * and compares them with what it saw last, sending
 * notifications/resources/list_changed when files came or went and
 * notifications/resources/updated for each subscribed URI that changed.
 * A client that never asks about resources costs nothing.  Changes made
 * between calls (a shell command in the background) are seen at the next
 * call, or the next resources/list.  */
#ifndef SR_MCP_RESOURCES_H
#define SR_MCP_RESOURCES_H

#include <cjson/cJSON.h>

#include "mcp/tools.h"

struct sr_mcp_resources;

/* Sends a notification (a complete JSON-RPC message, taken over) on the
 * connection's own stream; any thread.  */
typedef void (*sr_mcp_notify_fn) (void *userdata, char *json);

struct sr_mcp_resources *sr_mcp_resources_new (sr_mcp_notify_fn notify, void *userdata);
/* No call of the connection may be running any more.  */
void sr_mcp_resources_free (struct sr_mcp_resources *r);

/* The "resources" object of initialize's capabilities.  */
cJSON *sr_mcp_resources_capability (void);

/* Answers a request of method resources/... (params an object or NULL):
 * the serialised response, or NULL when method is none of ours.  ctx is
 * the connection's, as its tool calls get it (cancel_fd -1).  */
char *sr_mcp_resources_handle (struct sr_mcp_resources *r, const struct sr_mcp_tool_ctx *ctx,
                               const char *method, const cJSON *id, const cJSON *params);

/* After a tools/call (args, and its result) on the calling thread, before
 * its response goes out: the notifications of what it changed in the
 * files of the session it named.  */
void sr_mcp_resources_after_call (struct sr_mcp_resources *r, const struct sr_mcp_tool_ctx *ctx,
                                  const cJSON *args, const cJSON *result);

#endif
