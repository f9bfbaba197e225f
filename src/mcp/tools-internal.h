/* What the tool modules (tools.c, session-tools.c) share: building
 * results and refusals, checking arguments.  */
#ifndef SR_MCP_TOOLS_INTERNAL_H
#define SR_MCP_TOOLS_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "common/error.h"
#include "mcp/tools.h"
#include "common/run-result.h"

/* A CallToolResult of structured (taken over): structuredContent and the
 * same as text; a refusal carries its JSON in the text only.  */
cJSON *sr_mcp_tool_result (cJSON *structured, bool is_error);

/* A refusal: {"error": {"code": code, "message": ...}}.  */
cJSON *sr_mcp_tool_error (const char *code, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* The refusal for a call that failed with *err: the error's code
 * (sandbox_error when it has none) and message.  Frees *err.  The one
 * place a tool turns an sr_error_t into its answer.  */
cJSON *sr_mcp_tool_refusal (sr_error_t *err);

/* NULL when args is NULL or an object of known keys only, else the
 * refusal to return.  */
cJSON *sr_mcp_check_arguments (const cJSON *args, const char *const *known);

/* Adds key (the captured text, or its base64 when not valid UTF-8) and
 * encoding_key ("utf-8" or "base64").  */
void sr_mcp_add_output (cJSON *o, const char *key, const char *encoding_key,
                        const struct sr_captured *c);

#endif
