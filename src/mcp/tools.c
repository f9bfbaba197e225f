/* The registry of MCP tools and the dispatch of their calls.  */
#include "config.h"

#include "mcp/tools.h"
#include "mcp/tools-internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/json.h"
#include "common/util.h"
#include "mcp/tool-args.h"
#include "mcp/tool-schema.h"


enum
{
  RUNS_CODE = 1 << 0,    /* takes a run slot (max_concurrent) */
  SESSIONS = 1 << 1,     /* refused on a server without sessions */
  CODE_SANDBOX = 1 << 2, /* mcp-code-sandbox's name for one of ours: offered only under
                          * compat_tools = mcp-code-sandbox, and called through
                          * sr_mcp_code_sandbox_call (tools-compat.c) */
};

/* Every tool, one row each, in the order of tools/list: its name (what
 * src/mcp/schemas/NAME.json describes), flags, handler, and what its
 * text block says (tools-text.c).  The drop-in rows at the end are our
 * handlers under another server's names.  */
#define SR_MCP_TOOLS(TOOL)                                                             \
  TOOL (run_code, RUNS_CODE, sr_mcp_call_run_code, sr_mcp_text_run)                    \
  TOOL (list_supported_languages, 0, sr_mcp_call_list_languages, sr_mcp_text_summary)  \
  TOOL (get_execution_history, 0, sr_mcp_call_history, sr_mcp_text_summary)            \
  TOOL (audit_query, 0, sr_mcp_call_audit_query, sr_mcp_text_summary)                  \
  TOOL (create_session, SESSIONS, sr_mcp_call_create_session, sr_mcp_text_summary)     \
  TOOL (close_session, SESSIONS, sr_mcp_call_close_session, sr_mcp_text_summary)       \
  TOOL (list_sessions, SESSIONS, sr_mcp_call_list_sessions, sr_mcp_text_summary)       \
  TOOL (upload_file, SESSIONS, sr_mcp_call_upload_file, sr_mcp_text_summary)           \
  TOOL (list_artifacts, SESSIONS, sr_mcp_call_list_artifacts, sr_mcp_text_summary)     \
  TOOL (read_artifact, SESSIONS, sr_mcp_call_read_artifact, sr_mcp_text_artifact)      \
  TOOL (shell_new, SESSIONS, sr_mcp_call_shell_new, sr_mcp_text_summary)               \
  TOOL (shell_exec, SESSIONS, sr_mcp_call_shell_exec, sr_mcp_text_shell)               \
  TOOL (shell_read, SESSIONS, sr_mcp_call_shell_read, sr_mcp_text_shell)               \
  TOOL (write_stdin, SESSIONS, sr_mcp_call_write_stdin, sr_mcp_text_summary)           \
  TOOL (shell_list, SESSIONS, sr_mcp_call_shell_list, sr_mcp_text_summary)             \
  TOOL (shell_remove, SESSIONS, sr_mcp_call_shell_remove, sr_mcp_text_summary)         \
  TOOL (file_read, SESSIONS, sr_mcp_call_file_read, sr_mcp_text_file_read)             \
  TOOL (file_write, SESSIONS, sr_mcp_call_file_write, sr_mcp_text_summary)             \
  TOOL (file_patch, SESSIONS, sr_mcp_call_file_patch, sr_mcp_text_summary)             \
  TOOL (file_search, SESSIONS, sr_mcp_call_file_search, sr_mcp_text_file_search)      \
  TOOL (machine_list, SESSIONS, sr_mcp_call_machine_list, sr_mcp_text_machines)        \
  TOOL (default_set, SESSIONS, sr_mcp_call_default_set, sr_mcp_text_summary)           \
  /* env checks for sessions itself: help needs none, Docker says why. */                  \
  TOOL (env, 0, sr_mcp_call_env, sr_mcp_text_env)                                      \
  TOOL (sandbox_run_python, RUNS_CODE | SESSIONS | CODE_SANDBOX, sr_mcp_call_run_code,  \
        sr_mcp_text_run)                                                                 \
  TOOL (sandbox_upload_file, SESSIONS | CODE_SANDBOX, sr_mcp_call_upload_file,          \
        sr_mcp_text_summary)                                                             \
  TOOL (sandbox_read_artifact, SESSIONS | CODE_SANDBOX, sr_mcp_call_read_artifact_base64, \
        sr_mcp_text_summary)                                                             \
  TOOL (sandbox_list_artifacts, SESSIONS | CODE_SANDBOX, sr_mcp_call_list_artifacts,    \
        sr_mcp_text_summary)                                                             \
  TOOL (sandbox_close_session, SESSIONS | CODE_SANDBOX, sr_mcp_call_close_session,      \
        sr_mcp_text_summary)

#define EMBED(name, flags, call, text) SR_MCP_EMBED_SCHEMA (name);
SR_MCP_TOOLS (EMBED)
#undef EMBED

struct tool
{
  const char *name;
  const char *definition; /* the JSON text of src/mcp/schemas/NAME.json */
  unsigned flags;
  sr_mcp_tool_fn *call;
  sr_mcp_text_fn *text;
};

#define ENTRY(name, flags, call, text) { #name, sr_mcp_schema_##name, flags, call, text },
static const struct tool tools[] = { SR_MCP_TOOLS (ENTRY) };
#undef ENTRY

/* Other servers' names of our arguments, taken by every tool that has the
 * argument (sandbox_runner's and sandbox-env-mcp's timeout).  */
static const struct sr_mcp_arg_alias aliases[] = {
  { "timeout", "timeout_seconds" },
  /* sandbox-env-mcp's: a session is a machine (sandbox/session.h).  */
  { "machine", "session_id" },
};

/* Whether cfg (NULL: a plain one) offers tool t.  */
static bool
offered (const struct tool *t, const struct sr_config *cfg)
{
  if (t->flags & CODE_SANDBOX)
    return cfg && (cfg->compat_tools & SR_COMPAT_CODE_SANDBOX);
  return true;
}

/* The definitions, parsed once: tools/list's array, and each tool's
 * inputSchema in it.  Never freed: they live as long as the program.  */
static pthread_once_t parse_once = PTHREAD_ONCE_INIT;
static cJSON *definitions;
static const cJSON *input_schemas[SR_ARRAY_SIZE (tools)];

/* A definition that does not parse, or names another tool, is a broken
 * build (tests/integration/mcp-schemas.sh checks the files).  */
static void __attribute__ ((noreturn))
broken_definition (const char *name)
{
  static const char msg[] = "sandbox-runner: a built-in MCP tool definition is broken: ";

  (void) !write (STDERR_FILENO, msg, sizeof msg - 1);
  (void) !write (STDERR_FILENO, name, strlen (name));
  (void) !write (STDERR_FILENO, "\n", 1);
  abort ();
}

static void
parse_definitions (void)
{
  definitions = cJSON_CreateArray ();
  for (size_t i = 0; i < SR_ARRAY_SIZE (tools); i++)
    {
      cJSON *d = cJSON_Parse (tools[i].definition);
      const cJSON *name = cJSON_GetObjectItemCaseSensitive (d, "name");

      cJSON *input = cJSON_GetObjectItemCaseSensitive (d, "inputSchema");

      if (!cJSON_IsString (name) || strcmp (name->valuestring, tools[i].name) != 0)
        broken_definition (tools[i].name);
      sr_mcp_schema_add_aliases (input, aliases, SR_ARRAY_SIZE (aliases));
      input_schemas[i] = input;
      cJSON_AddItemToArray (definitions, d);
    }
}

/* Tool name, offered or not.  */
static const struct tool *
lookup (const char *name, const cJSON **ret_schema)
{
  pthread_once (&parse_once, parse_definitions);
  for (size_t i = 0; i < SR_ARRAY_SIZE (tools); i++)
    if (strcmp (tools[i].name, name) == 0)
      {
        if (ret_schema)
          *ret_schema = input_schemas[i];
        return &tools[i];
      }
  return NULL;
}

/* Tool name if cfg offers it.  */
static const struct tool *
find (const struct sr_config *cfg, const char *name, const cJSON **ret_schema)
{
  const struct tool *t = lookup (name, ret_schema);

  return t && offered (t, cfg) ? t : NULL;
}

cJSON *
sr_mcp_tools_list (const struct sr_config *cfg)
{
  cJSON *o = cJSON_CreateObject (), *list = cJSON_AddArrayToObject (o, "tools");

  pthread_once (&parse_once, parse_definitions);
  for (size_t i = 0; i < SR_ARRAY_SIZE (tools); i++)
    if (offered (&tools[i], cfg))
      cJSON_AddItemToArray (list, cJSON_Duplicate (cJSON_GetArrayItem (definitions, (int) i),
                                                   true));
  return o;
}

bool
sr_mcp_tool_exists (const struct sr_config *cfg, const char *name)
{
  return find (cfg, name, NULL) != NULL;
}

bool
sr_mcp_tool_runs_code (const char *name)
{
  const struct tool *t = lookup (name, NULL);

  return t && (t->flags & RUNS_CODE);
}

/* The bytes of v as cJSON prints it unformatted, give or take a number's
 * digits (counted at their most): cheaper than printing it to see.  */
static size_t
json_size (const cJSON *v)
{
  size_t n = v->string ? strlen (v->string) + 3 : 0; /* "key": */
  const cJSON *c;

  if (cJSON_IsString (v))
    {
      n += 2;
      for (const unsigned char *p = (const unsigned char *) v->valuestring; *p; p++)
        n += *p < 0x20 ? 6 : (*p == '"' || *p == '\\') ? 2 : 1;
      return n;
    }
  if (cJSON_IsNumber (v))
    return n + 24;
  if (!cJSON_IsArray (v) && !cJSON_IsObject (v))
    return n + 5;
  n += 2;
  cJSON_ArrayForEach (c, v)
    n += json_size (c) + 1;
  return n;
}

/* Puts the tool's text block, made from r's structuredContent, first in
 * r's content (a refusal has its own).  Returns r.  */
static cJSON *
with_text (const struct tool *t, cJSON *r)
{
  const cJSON *structured = cJSON_GetObjectItemCaseSensitive (r, "structuredContent");
  _cleanup_free_ char *s = NULL;
  cJSON *block;

  if (structured == NULL)
    return r;
  s = sr_mcp_text (t->text, structured);
  block = cJSON_CreateObject ();
  cJSON_AddStringToObject (block, "type", "text");
  cJSON_AddStringToObject (block, "text", s);
  cJSON_InsertItemInArray (cJSON_GetObjectItemCaseSensitive (r, "content"), 0, block);
  return r;
}

static cJSON *
dispatch (const struct sr_mcp_tool_ctx *ctx, const char *name, const cJSON *args,
          bool *ret_cancelled)
{
  const cJSON *schema = NULL;
  const struct tool *t = find (ctx->cfg, name, &schema);
  _cleanup_json_ cJSON *own = NULL;
  _cleanup_free_ char *bad = NULL;
  size_t size;
  cJSON *r;

  *ret_cancelled = false;
  if (t == NULL)
    return sr_mcp_tool_error ("unknown_tool", "no tool %s", name);
  /* The handlers read each argument by its one name.  */
  own = args ? cJSON_Duplicate (args, true) : NULL;
  if ((bad = sr_mcp_args_unalias (schema, own, aliases, SR_ARRAY_SIZE (aliases)))
      || (bad = sr_mcp_args_check (schema, own)))
    return sr_mcp_tool_error ("invalid_arguments", "%s", bad);
  if (ctx->nul_argument)
    return sr_mcp_tool_error ("binary_content",
                              "%s holds a NUL character (\\u0000), which a text argument cannot "
                              "carry; write binary content with file_write's encoding \"base64\" "
                              "or upload_file", ctx->nul_argument);
  if ((t->flags & SESSIONS) && ctx->sessions == NULL)
    return sr_mcp_no_sessions ();
  r = with_text (t, t->flags & CODE_SANDBOX
                        ? sr_mcp_code_sandbox_call (ctx, t->call, own, ret_cancelled)
                        : t->call (ctx, own, ret_cancelled));
  /* What no argument of a tool bounds (a listing of 10000 deep paths)
   * is refused here rather than dropping the client's connection.  */
  if ((size = json_size (r)) > SR_MAX_RESULT_SIZE)
    {
      cJSON_Delete (r);
      return sr_mcp_tool_error ("result_too_large",
                                "the result is about %zu bytes, over the %u a client accepts; "
                                "ask for less (a smaller max_output, offset and limit, "
                                "read_artifact's offset and length, a narrower path)",
                                size, SR_MAX_RESULT_SIZE);
    }
  return r;
}

/* Every call, of every tool, known or not, goes through here: the one
 * place the audit trail records it.  */
cJSON *
sr_mcp_tool_call (const struct sr_mcp_tool_ctx *ctx, const char *name, const cJSON *args,
                  bool *ret_cancelled)
{
  uint64_t start = sr_now_ns ();
  cJSON *result = dispatch (ctx, name, args, ret_cancelled);

  sr_mcp_audit_call (ctx, name, args, result, sr_now_ns () - start);
  return result;
}
