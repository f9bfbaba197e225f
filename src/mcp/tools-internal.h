/* What the tool modules share: the handlers the registry (tools.c) calls,
 * and the builders of results and refusals (tools-result.c).  The tool
 * families are tools-run.c (run_code, list_supported_languages,
 * get_execution_history), tools-session.c (sessions and their artifacts),
 * tools-files.c (the file tools) and tools-shell.c (persistent shells).
 *
 * A handler runs after the registry checked its arguments against the
 * tool's inputSchema (src/mcp/schemas/NAME.json) and, for a tool of
 * sessions, that the server has them: it reads the arguments with the
 * getters of mcp/tool-args.h and checks only what a schema cannot say.  */
#ifndef SR_MCP_TOOLS_INTERNAL_H
#define SR_MCP_TOOLS_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/run-result.h"
#include "mcp/tool-args.h"
#include "mcp/tools.h"
#include "sandbox/files.h"

struct sr_session;

/* A tool's call: its CallToolResult, never NULL.  *ret_cancelled (false
 * on entry) says a run was cancelled: no reply is due then.  */
typedef cJSON *sr_mcp_tool_fn (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                               bool *ret_cancelled);

sr_mcp_tool_fn sr_mcp_call_run_code, sr_mcp_call_list_languages, sr_mcp_call_history;
sr_mcp_tool_fn sr_mcp_call_create_session, sr_mcp_call_close_session, sr_mcp_call_list_sessions,
  sr_mcp_call_upload_file, sr_mcp_call_list_artifacts, sr_mcp_call_read_artifact;
sr_mcp_tool_fn sr_mcp_call_file_read, sr_mcp_call_file_write, sr_mcp_call_file_patch,
  sr_mcp_call_file_search;
sr_mcp_tool_fn sr_mcp_call_audit_query;
sr_mcp_tool_fn sr_mcp_call_shell_new, sr_mcp_call_shell_exec, sr_mcp_call_shell_read,
  sr_mcp_call_write_stdin, sr_mcp_call_shell_list, sr_mcp_call_shell_remove;

/* Records a call in the audit trail (tools-audit.c), unless ctx has no
 * service; a failure is only a warning.  */
void sr_mcp_audit_call (const struct sr_mcp_tool_ctx *ctx, const char *name, const cJSON *args,
                        const cJSON *result, uint64_t duration_ns);
/* v (NULL: {}) as JSON with every object's members sorted by name.  */
char *sr_mcp_canonical_json (const cJSON *v);

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

/* The refusal of a tool that needs sessions on a server without them.  */
cJSON *sr_mcp_no_sessions (void);

/* The timeout of argument name (seconds) in *ret_ms, or absent_ms when it
 * is not given.  NULL, or the refusal of one over the server's ceiling.  */
cJSON *sr_mcp_timeout_arg (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                           const char *name, uint64_t absent_ms, uint64_t *ret_ms);

/* Adds key (the captured text, or its base64 when not valid UTF-8) and
 * encoding_key ("utf-8" or "base64").  */
void sr_mcp_add_output (cJSON *o, const char *key, const char *encoding_key,
                        const struct sr_captured *c);

/* The path argument key of args in *ret_path (the caller's to free;
 * NULL when not given), or the bytes of "<key>_base64" when that is
 * given: a name that is not valid UTF-8, given back as a result gave it
 * (sr_utf8_add_name).  NULL, or the refusal of a "<key>_base64" that is
 * not base64 or holds a NUL.  */
cJSON *sr_mcp_path_arg (const cJSON *args, const char *key, char **ret_path);
/* "artifacts": [{path, path_base64, size, mtime, mime_type,
 * download_url}] on o (path_base64 only for a path not valid UTF-8).  */
void sr_mcp_add_artifacts (cJSON *o, const struct sr_mcp_tool_ctx *ctx, const char *session_id,
                           const struct sr_artifact *v, size_t n);

/* The work of a tool inside its session, between acquire and release:
 * 0, or -1 with *err set (its code: sr_mcp_tool_refusal).  data is the
 * tool's own: its inputs and what it brings out.  */
typedef int (*sr_mcp_session_work_fn) (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s,
                                       void *data, sr_error_t *err);

/* Takes the session of args' session_id (a new one when create and none
 * is given), runs work in it and releases it.  NULL on success, else the
 * refusal to return.  */
cJSON *sr_mcp_with_session (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, bool create,
                            sr_mcp_session_work_fn work, void *data);

#endif
