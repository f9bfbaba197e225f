/* The registry of MCP tools and the dispatch of their calls.  */
#include "config.h"

#include "mcp/tools.h"
#include "mcp/tools-internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "mcp/tool-args.h"
#include "mcp/tool-schema.h"

enum
{
  RUNS_CODE = 1 << 0, /* takes a run slot (max_concurrent) */
  SESSIONS = 1 << 1,  /* refused on a server without sessions */
};

/* Every tool, one row each, in the order of tools/list: its name (what
 * src/mcp/schemas/NAME.json describes), flags and handler.  */
#define SR_MCP_TOOLS(TOOL)                                                  \
  TOOL (run_code, RUNS_CODE, sr_mcp_call_run_code)                          \
  TOOL (list_supported_languages, 0, sr_mcp_call_list_languages)            \
  TOOL (get_execution_history, 0, sr_mcp_call_history)                      \
  TOOL (audit_query, 0, sr_mcp_call_audit_query)                            \
  TOOL (create_session, SESSIONS, sr_mcp_call_create_session)               \
  TOOL (close_session, SESSIONS, sr_mcp_call_close_session)                 \
  TOOL (list_sessions, SESSIONS, sr_mcp_call_list_sessions)                 \
  TOOL (upload_file, SESSIONS, sr_mcp_call_upload_file)                     \
  TOOL (list_artifacts, SESSIONS, sr_mcp_call_list_artifacts)               \
  TOOL (read_artifact, SESSIONS, sr_mcp_call_read_artifact)                 \
  TOOL (shell_new, SESSIONS, sr_mcp_call_shell_new)                         \
  TOOL (shell_exec, SESSIONS, sr_mcp_call_shell_exec)                       \
  TOOL (shell_read, SESSIONS, sr_mcp_call_shell_read)                       \
  TOOL (write_stdin, SESSIONS, sr_mcp_call_write_stdin)                     \
  TOOL (shell_list, SESSIONS, sr_mcp_call_shell_list)                       \
  TOOL (shell_remove, SESSIONS, sr_mcp_call_shell_remove)                   \
  TOOL (file_read, SESSIONS, sr_mcp_call_file_read)                         \
  TOOL (file_write, SESSIONS, sr_mcp_call_file_write)                       \
  TOOL (file_patch, SESSIONS, sr_mcp_call_file_patch)                       \
  TOOL (file_search, SESSIONS, sr_mcp_call_file_search)

#define EMBED(name, flags, call) SR_MCP_EMBED_SCHEMA (name);
SR_MCP_TOOLS (EMBED)
#undef EMBED

struct tool
{
  const char *name;
  const char *definition; /* the JSON text of src/mcp/schemas/NAME.json */
  unsigned flags;
  sr_mcp_tool_fn *call;
};

#define ENTRY(name, flags, call) { #name, sr_mcp_schema_##name, flags, call },
static const struct tool tools[] = { SR_MCP_TOOLS (ENTRY) };
#undef ENTRY

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

      if (!cJSON_IsString (name) || strcmp (name->valuestring, tools[i].name) != 0)
        broken_definition (tools[i].name);
      input_schemas[i] = cJSON_GetObjectItemCaseSensitive (d, "inputSchema");
      cJSON_AddItemToArray (definitions, d);
    }
}

static const struct tool *
find (const char *name, const cJSON **ret_schema)
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

cJSON *
sr_mcp_tools_list (void)
{
  cJSON *o = cJSON_CreateObject ();

  pthread_once (&parse_once, parse_definitions);
  cJSON_AddItemToObject (o, "tools", cJSON_Duplicate (definitions, true));
  return o;
}

bool
sr_mcp_tool_exists (const char *name)
{
  return find (name, NULL) != NULL;
}

bool
sr_mcp_tool_runs_code (const char *name)
{
  const struct tool *t = find (name, NULL);

  return t && (t->flags & RUNS_CODE);
}

static cJSON *
dispatch (const struct sr_mcp_tool_ctx *ctx, const char *name, const cJSON *args,
          bool *ret_cancelled)
{
  const cJSON *schema = NULL;
  const struct tool *t = find (name, &schema);
  _cleanup_free_ char *bad = NULL;

  *ret_cancelled = false;
  if (t == NULL)
    return sr_mcp_tool_error ("unknown_tool", "no tool %s", name);
  if ((bad = sr_mcp_args_check (schema, args)))
    return sr_mcp_tool_error ("invalid_arguments", "%s", bad);
  if ((t->flags & SESSIONS) && ctx->sessions == NULL)
    return sr_mcp_no_sessions ();
  return t->call (ctx, args, ret_cancelled);
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
