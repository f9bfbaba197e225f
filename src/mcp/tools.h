/* The MCP tools: their schemas and their calls.  A call returns a
 * CallToolResult object: structuredContent, every field for programs,
 * and content: a text block for people and models first (the output,
 * then a line of status; not JSON), then any image, embedded resource or
 * resource_link blocks.  A request the tool refuses has isError and one
 * text block, {"error": {"code": MACHINE-READABLE, "message": ...}}.  */
#ifndef SR_MCP_TOOLS_H
#define SR_MCP_TOOLS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/config.h"
#include "sandbox/service.h"

struct sr_shell;

struct sr_mcp_tool_ctx
{
  const struct sr_config *cfg;
  struct sr_service *service;   /* runs, images, the history */
  struct sr_sessions *sessions; /* the service's; NULL: unavailable */
  const char *owner;            /* the caller, for every session lookup (sandbox/session.h) */
  const char *files_url;        /* "http://host:port" when HTTP serves /files, or NULL */
  const char *client;           /* the caller, as sr_service_audit_client made it */
  const struct sr_mcp_link_key *link_key; /* signs download_url (mcp/download-link.h) */
  int cancel_fd;                /* readable: cancel the run */
  /* A task's run (mcp/tasks.h): the stdin_pipe (sandbox/code-request.h)
   * of a run_code given no stdin and no session; 0: none.  */
  int stdin_pipe;
  /* A task's run (mcp/tasks.h): told the shell a shell_exec with wait
   * runs its command in, before it runs and with NULL once it ended
   * (the shell is the call's until then), so that the task may type its
   * input; NULL: nobody is told.  */
  void (*on_shell) (struct sr_shell *sh, void *userdata);
  /* The argument whose string held a NUL, cut there by the JSON parser
   * (struct sr_rpc_message's nul_member), or NULL: the call is refused.  */
  const char *nul_argument;
  /* Progress of a run, from the calling thread: as struct
   * sr_code_request's on_progress (sandbox/code.h), and for a shell's
   * command stage "shell" and stream "output" (stdout and stderr as one,
   * as its terminal shows them).  */
  void (*on_progress) (const char *stage, uint64_t output_bytes, const char *stream,
                       const char *chunk, size_t len, void *userdata);
  /* A problem the operator should hear of that does not fail the call
   * (the history could not record a run); may be NULL.  */
  void (*on_warning) (const char *message, void *userdata);
  void *userdata;
};

/* {"tools": [...]}, the answer of tools/list: the tools cfg offers (the
 * drop-in ones of compat_tools too; cfg NULL: the core ones).  */
cJSON *sr_mcp_tools_list (const struct sr_config *cfg);
bool sr_mcp_tool_exists (const struct sr_config *cfg, const char *name);
/* Whether the tool takes a run slot (max_concurrent).  */
bool sr_mcp_tool_runs_code (const char *name);
/* Runs tool name with args (an object or NULL); never NULL.  *ret_cancelled
 * says the run was cancelled (no reply is due then).  */
cJSON *sr_mcp_tool_call (const struct sr_mcp_tool_ctx *ctx, const char *name, const cJSON *args,
                         bool *ret_cancelled);

#endif
