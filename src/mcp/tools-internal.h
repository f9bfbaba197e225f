/* What the tool modules share: the handlers the registry (tools.c) calls,
 * and the builders of results and refusals (tools-result.c).  The tool
 * families are tools-run.c (run_code, list_supported_languages,
 * get_execution_history), tools-session.c (sessions and their artifacts),
 * tools-files.c (the file tools) and tools-shell.c (persistent shells);
 * tools-compat.c maps the drop-in tools of other servers onto them.
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
#include <stdio.h>

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
  sr_mcp_call_upload_file, sr_mcp_call_list_artifacts, sr_mcp_call_read_artifact,
  sr_mcp_call_read_artifact_base64;
sr_mcp_tool_fn sr_mcp_call_file_read, sr_mcp_call_file_write, sr_mcp_call_file_patch,
  sr_mcp_call_file_search;
sr_mcp_tool_fn sr_mcp_call_audit_query;
sr_mcp_tool_fn sr_mcp_call_machine_list, sr_mcp_call_default_set, sr_mcp_call_env;
sr_mcp_tool_fn sr_mcp_call_shell_new, sr_mcp_call_shell_exec, sr_mcp_call_shell_read,
  sr_mcp_call_write_stdin, sr_mcp_call_shell_list, sr_mcp_call_shell_remove;

/* Calls call, the handler of one of our tools, as mcp-code-sandbox's tool
 * of the same work (the registry's CODE_SANDBOX rows): args (checked
 * against that tool's schema, changed here) mapped to ours, and the
 * result given the fields the original named.  sandbox_run_python runs
 * python, in a new session on session_image when no session_id is given,
 * as the original did.  */
cJSON *sr_mcp_code_sandbox_call (const struct sr_mcp_tool_ctx *ctx, sr_mcp_tool_fn *call,
                                 cJSON *args, bool *ret_cancelled);

/* Records a call in the audit trail (tools-audit.c), unless ctx has no
 * service; a failure is only a warning.  */
void sr_mcp_audit_call (const struct sr_mcp_tool_ctx *ctx, const char *name, const cJSON *args,
                        const cJSON *result, uint64_t duration_ns);
/* v (NULL: {}) as JSON with every object's members sorted by name.  */
char *sr_mcp_canonical_json (const cJSON *v);

/* A CallToolResult of structured (taken over): its structuredContent,
 * and content blocks a handler may add (sr_mcp_result_add); the registry
 * puts the tool's text block (its sr_mcp_text_fn) first.  A refusal
 * carries its JSON in a text block only: clients check structured
 * content against the tool's output schema, which describes results.  */
cJSON *sr_mcp_tool_result (cJSON *structured, bool is_error);
/* Appends block (taken over) to the content of result r.  */
void sr_mcp_result_add (cJSON *r, cJSON *block);

/* The text block of a result, from its structuredContent: what people
 * and models read (tools-text.c), written to f.  run: stdout, stderr,
 * then one line of status; shell: the output then the shell's state;
 * file_read: the lines and any hint; file_search: path:line: text lines;
 * artifact: one line on the file and where its bytes are; machines: a
 * line a machine, defaults marked; env: a help text as it is, else the
 * actions, machines, shells and targets a line each; summary (every
 * other tool): "key: value" lines, arrays an item a line.  */
typedef void sr_mcp_text_fn (FILE *f, const cJSON *structured);
sr_mcp_text_fn sr_mcp_text_run, sr_mcp_text_shell, sr_mcp_text_file_read,
  sr_mcp_text_file_search, sr_mcp_text_artifact, sr_mcp_text_machines, sr_mcp_text_env,
  sr_mcp_text_summary;
/* What fn writes of structured, without a final newline; allocated.  */
char *sr_mcp_text (sr_mcp_text_fn *fn, const cJSON *structured);

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
/* "artifacts": [{path, path_base64, size, mtime, mime_type, uri,
 * download_url}] on o (path_base64 only for a path not valid UTF-8).  */
void sr_mcp_add_artifacts (cJSON *o, const struct sr_mcp_tool_ctx *ctx, const char *session_id,
                           const struct sr_artifact *v, size_t n);

/* The largest file read_artifact sends inline (as an image, text or an
 * embedded blob); a larger one comes as a resource_link, so a result
 * stays well under the official SDK's 10 MiB message.  */
#define SR_MCP_INLINE_MAX (1u << 20)

/* The most resource_link blocks one result carries; the structured
 * artifacts list has them all.  */
#define SR_MCP_MAX_LINKS 50

/* A resource_link block to path of session_id (mcp/resource-uri.h),
 * named by its last segment.  */
cJSON *sr_mcp_resource_link (const char *session_id, const char *path, const char *mime_type,
                             uint64_t size);
/* A resource_link block on result r for each of the first
 * SR_MCP_MAX_LINKS artifacts.  */
void sr_mcp_add_artifact_links (cJSON *r, const char *session_id, const struct sr_artifact *v,
                                size_t n);

/* The output a call returns at most: its max_output argument, or the
 * configured max_output, capped at max_output_ceiling.  */
uint64_t sr_mcp_max_output_arg (const struct sr_mcp_tool_ctx *ctx, const cJSON *args);
/* Cuts out and err (their heads kept, at a UTF-8 boundary) so together
 * they hold at most max bytes of output, each cut one ending with the
 * truncation marker (sr_captured_cut) and marked truncated.  */
void sr_mcp_fit_output (struct sr_captured *out, struct sr_captured *err, size_t max);
/* len (at most data's length), moved back off the middle of a UTF-8
 * sequence in data: where to cut data.  */
size_t sr_mcp_utf8_cut (const char *data, size_t len);
/* Keeps the last max bytes of data[0..*len) (from a UTF-8 boundary),
 * setting *truncated when it drops any: a shell's newest output.  */
void sr_mcp_fit_tail (char *data, size_t *len, size_t max, bool *truncated);

/* The work of a tool inside its session, between acquire and release:
 * 0, or -1 with *err set (its code: sr_mcp_tool_refusal).  data is the
 * tool's own: its inputs and what it brings out.  */
typedef int (*sr_mcp_session_work_fn) (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s,
                                       void *data, sr_error_t *err);

/* Takes the session id (a new one when create and id is NULL or ""),
 * runs work in it and releases it: the one way a call reaches a session
 * the caller names.  0, or -1 with *err set (its code:
 * sr_mcp_tool_refusal).  */
int sr_mcp_session_do (const struct sr_mcp_tool_ctx *ctx, const char *id, bool create,
                       sr_mcp_session_work_fn work, void *data, sr_error_t *err);

/* sr_mcp_session_do on args' session_id; without one and without
 * create, on the caller's default machine (default_set).  NULL on
 * success, else the refusal to return.  */
cJSON *sr_mcp_with_session (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, bool create,
                            sr_mcp_session_work_fn work, void *data);

/* "shells": [{shell_id, MACHINE_KEY, state}] on o: the caller's shells,
 * machine_key naming their machine (shell_list's session_id).  */
void sr_mcp_add_shells (const struct sr_mcp_tool_ctx *ctx, cJSON *o, const char *machine_key);

struct sr_session_info;
/* The sandbox sessions the caller may see (list_sessions,
 * resources/list), oldest first: not its SSH machines; sr_session_infos_free (*ret, *ret_n).  */
void sr_mcp_sessions_visible (const struct sr_mcp_tool_ctx *ctx, struct sr_session_info **ret,
                              size_t *ret_n);

#endif
