/* The check of tool arguments against a tool's inputSchema: each rule
 * accepted and refused, with the message a client reads; the schemas of
 * the registry (tools/list), giving the messages the tools have always
 * given; and every one of them using only rules the check enforces.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "mcp/tool-args.h"
#include "mcp/tools-internal.h"
#include "mcp/tools.h"
#include "tests/unit/tap.h"

static cJSON *tools_list;

/* Every rule the validator knows, on one object.  */
static const char rules[] =
  "{\"type\":\"object\",\"properties\":{"
  "\"s\":{\"type\":\"string\",\"description\":\"a string\"},"
  "\"i\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10},"
  "\"n\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"exclusiveMaximum\":5},"
  "\"b\":{\"type\":\"boolean\"},"
  "\"o\":{\"type\":\"object\",\"properties\":{\"k\":{\"type\":\"string\"}},"
  "\"required\":[\"k\"],\"additionalProperties\":false},"
  "\"a\":{\"type\":\"array\",\"items\":{\"type\":\"integer\",\"minimum\":0}},"
  "\"e\":{\"type\":\"string\",\"enum\":[\"x\",\"y\"]},"
  "\"l\":{\"type\":\"string\",\"minLength\":2,\"maxLength\":3},"
  "\"m\":{\"type\":\"integer\",\"minimum\":1},"
  "\"r\":{\"type\":\"string\"},"
  "\"x\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"boolean\"}}},"
  "\"required\":[\"r\"],\"additionalProperties\":false}";

/* args (JSON text, or NULL: none) against schema: want is the message,
 * or NULL to accept.  */
static void
check (const char *schema_text, const char *args_text, const char *want, const char *name)
{
  cJSON *schema = cJSON_Parse (schema_text);
  cJSON *args = args_text ? cJSON_Parse (args_text) : NULL;
  _cleanup_free_ char *msg = NULL;

  if (!ok (schema && (args_text == NULL || args), "%s: the JSON parses", name))
    return;
  msg = sr_mcp_args_check (schema, args);
  is_str (msg, want, name);
  cJSON_Delete (schema);
  cJSON_Delete (args);
}

static void
test_rules (void)
{
  check (rules, "{\"r\":\"\"}", NULL, "the required argument alone is accepted");
  check (rules,
         "{\"r\":\"v\",\"s\":\"t\",\"i\":10,\"n\":4.5,\"b\":false,\"o\":{\"k\":\"v\"},"
         "\"a\":[0,1],\"e\":\"y\",\"l\":\"\xc3\xa9\xc3\xa9\xc3\xa9\",\"m\":7,\"x\":{\"q\":true}}",
         NULL, "every rule met is accepted");
  check (rules, "{\"r\":\"v\",\"s\":null,\"i\":null}", NULL, "a null argument counts as absent");
  check (rules, "{\"r\":\"v\",\"s\":\"\"}", NULL, "a string: accepted");
  check (rules, "{\"r\":\"v\",\"i\":1}", NULL, "a minimum: accepted at it");
  check (rules, "{\"r\":\"v\",\"i\":10.0}", NULL, "a maximum: accepted at it");
  check (rules, "{\"r\":\"v\",\"m\":1e15}", NULL, "an integer of SR_MCP_INTEGER_MAX: accepted");
  check (rules, "{\"r\":\"v\",\"n\":0.001}", NULL, "an exclusive minimum: accepted above it");
  check (rules, "{\"r\":\"v\",\"n\":4.999}", NULL, "an exclusive maximum: accepted below it");
  check (rules, "{\"r\":\"v\",\"b\":true}", NULL, "a boolean: accepted");
  check (rules, "{\"r\":\"v\",\"o\":{\"k\":\"\"}}", NULL, "an object: accepted");
  check (rules, "{\"r\":\"v\",\"a\":[]}", NULL, "an empty array: accepted");
  check (rules, "{\"r\":\"v\",\"a\":[0,5]}", NULL, "the items of an array: accepted");
  check (rules, "{\"r\":\"v\",\"e\":\"x\"}", NULL, "an enum: accepted");
  check (rules, "{\"r\":\"v\",\"l\":\"ab\"}", NULL, "a minLength: accepted at it");
  check (rules, "{\"r\":\"v\",\"l\":\"\xc3\xa9\xc3\xa9\xc3\xa9\"}", NULL,
         "a maxLength: counted in characters, not bytes");
  check (rules, "{\"r\":\"v\",\"x\":{\"q\":false}}", NULL,
         "additionalProperties as a schema: accepted");
  check (rules, NULL, "r is required and must be a string", "no arguments lack the required one");
  check (rules, "{}", "r is required and must be a string", "a missing required argument");
  check (rules, "{\"r\":null}", "r is required and must be a string", "a null required argument");
  check (rules, "{\"r\":1}", "r is required and must be a string",
         "a required one of the wrong type");
  check (rules, "[1]", "arguments must be an object", "arguments that are an array");
  check (rules, "null", "arguments must be an object", "arguments that are null");
  check (rules, "{\"r\":\"v\",\"zz\":1}", "unknown argument 'zz'", "an unknown argument");
  check (rules, "{\"zz\":1}", "unknown argument 'zz'", "unknown names come before the rest");
  check (rules, "{\"r\":\"v\",\"s\":1}", "s must be a string", "a string");
  check (rules, "{\"r\":\"v\",\"i\":1.5}", "i must be an integer from 1 to 10", "an integer");
  check (rules, "{\"r\":\"v\",\"i\":0}", "i must be an integer from 1 to 10", "a minimum");
  check (rules, "{\"r\":\"v\",\"i\":11}", "i must be an integer from 1 to 10", "a maximum");
  check (rules, "{\"r\":\"v\",\"i\":\"1\"}", "i must be an integer from 1 to 10",
         "an integer as a string");
  check (rules, "{\"r\":\"v\",\"m\":1e16}", "m must be an integer of at least 1",
         "an integer past SR_MCP_INTEGER_MAX");
  check (rules, "{\"r\":\"v\",\"n\":0}", "n must be a number above 0 and below 5",
         "an exclusive minimum");
  check (rules, "{\"r\":\"v\",\"n\":5}", "n must be a number above 0 and below 5",
         "an exclusive maximum");
  check (rules, "{\"r\":\"v\",\"n\":true}", "n must be a number above 0 and below 5", "a number");
  check (rules, "{\"r\":\"v\",\"b\":0}", "b must be true or false", "a boolean");
  check (rules, "{\"r\":\"v\",\"o\":[]}", "o must be an object", "an object");
  check (rules, "{\"r\":\"v\",\"o\":{}}", "o.k is required and must be a string",
         "a required member of an object");
  check (rules, "{\"r\":\"v\",\"o\":{\"k\":\"v\",\"z\":1}}", "unknown property 'z' in o",
         "an unknown member of an object");
  check (rules, "{\"r\":\"v\",\"x\":{\"q\":1}}", "x.q must be true or false",
         "additionalProperties as a schema");
  check (rules, "{\"r\":\"v\",\"a\":{}}", "a must be an array", "an array");
  check (rules, "{\"r\":\"v\",\"a\":[0,-1]}", "a[1] must be an integer of at least 0",
         "the items of an array");
  check (rules, "{\"r\":\"v\",\"e\":\"z\"}", "e must be one of \"x\", \"y\"", "an enum");
  check (rules, "{\"r\":\"v\",\"l\":\"a\"}", "l must be a string of 2 to 3 characters",
         "a minLength");
  check (rules, "{\"r\":\"v\",\"l\":\"abcd\"}", "l must be a string of 2 to 3 characters",
         "a maxLength");
}

static const cJSON *
input_schema (const char *tool)
{
  const cJSON *t;

  cJSON_ArrayForEach (t, cJSON_GetObjectItemCaseSensitive (tools_list, "tools"))
    if (strcmp (cJSON_GetObjectItemCaseSensitive (t, "name")->valuestring, tool) == 0)
      return cJSON_GetObjectItemCaseSensitive (t, "inputSchema");
  return NULL;
}

/* The messages the tools gave before their schemas checked them.  */
static void
test_tool_schemas (void)
{
  struct
  {
    const char *tool, *args, *want;
  } cases[] = {
    { "run_code", "{\"language\":\"python\"}", "code is required and must be a string" },
    { "run_code", "{\"code\":\"1\"}", "language is required and must be a string" },
    { "run_code", "{\"code\":\"1\",\"language\":\"c\",\"bogus\":1}",
      "unknown argument 'bogus'" },
    { "run_code", "{\"code\":\"1\",\"language\":\"c\",\"timeout_seconds\":0}",
      "timeout_seconds must be a number above 0" },
    { "run_code", "{\"code\":\"1\",\"language\":\"c\",\"timeout_seconds\":null}", NULL },
    { "get_execution_history", "{\"limit\":1001}", "limit must be an integer from 1 to 1000" },
    { "get_execution_history", "{\"status\":1}", "status must be a string" },
    { "get_execution_history", NULL, NULL },
    { "list_sessions", "{\"x\":1}", "unknown argument 'x'" },
    { "upload_file", "{\"filename\":\"f\"}", "content_base64 is required and must be a string" },
    { "file_read", "{\"session_id\":\"s\",\"path\":\"p\",\"offset\":0}",
      "offset must be an integer of at least 1" },
    { "file_read", "{\"session_id\":\"s\"}", "path is required and must be a string" },
    { "file_patch", "{\"session_id\":\"s\",\"path\":\"p\",\"replace_all\":1}",
      "replace_all must be true or false" },
    { "shell_exec", "{\"shell_id\":\"s\",\"command\":\"c\",\"wait\":\"no\"}",
      "wait must be true or false" },
    { "write_stdin", "{\"shell_id\":\"s\"}", "data is required and must be a string" },
  };

  for (size_t i = 0; i < SR_ARRAY_SIZE (cases); i++)
    {
      const cJSON *schema = input_schema (cases[i].tool);
      cJSON *args = cases[i].args ? cJSON_Parse (cases[i].args) : NULL;
      _cleanup_free_ char *msg = schema ? sr_mcp_args_check (schema, args) : NULL;
      _cleanup_free_ char *name = sr_xasprintf ("%s %s", cases[i].tool,
                                                cases[i].args ? cases[i].args
                                                              : "without arguments");

      if (ok (schema != NULL, "%s is registered", cases[i].tool))
        is_str (msg, cases[i].want, name);
      cJSON_Delete (args);
    }
}

/* Each schema of list (a tools/list answer) uses only rules the check
 * enforces; the number of tools.  */
static int
registry_supported (const cJSON *list)
{
  const cJSON *t;
  int n = 0;

  cJSON_ArrayForEach (t, cJSON_GetObjectItemCaseSensitive (list, "tools"))
    {
      const char *name = cJSON_GetObjectItemCaseSensitive (t, "name")->valuestring;
      _cleanup_free_ char *msg
        = sr_mcp_schema_check_supported (cJSON_GetObjectItemCaseSensitive (t, "inputSchema"));

      is_str (msg, NULL, name);
      n++;
    }
  return n;
}

static void
test_registry_supported (void)
{
  is_int (registry_supported (tools_list), 23, "tools/list has every tool");
}

static void
test_supported (void)
{
  cJSON *schema = cJSON_Parse (rules);
  cJSON *other = cJSON_Parse ("{\"type\":\"object\",\"properties\":{\"p\":{\"type\":\"string\","
                              "\"pattern\":\"^a\"}}}");
  _cleanup_free_ char *none = sr_mcp_schema_check_supported (schema);
  _cleanup_free_ char *msg = sr_mcp_schema_check_supported (other);

  is_str (none, NULL, "the rules used here are all enforced");
  is_str (msg, "the keyword pattern is not enforced", "a keyword not enforced is named");
  cJSON_Delete (schema);
  cJSON_Delete (other);
}

static void
test_getters (void)
{
  cJSON *args = cJSON_Parse ("{\"s\":\"t\",\"b\":true,\"c\":12,\"n\":0.5,\"z\":null}");
  double x = 0;

  is_str (sr_mcp_arg_string (args, "s"), "t", "a string argument");
  is_str (sr_mcp_arg_string (args, "z"), NULL, "a null string argument is absent");
  is_str (sr_mcp_arg_string (NULL, "s"), NULL, "no arguments: absent");
  ok (sr_mcp_arg_bool (args, "b", false), "a boolean argument");
  ok (sr_mcp_arg_bool (args, "q", true), "an absent boolean takes its default");
  is_int (sr_mcp_arg_count (args, "c", 0), 12, "a count argument");
  is_int (sr_mcp_arg_count (args, "z", 7), 7, "an absent count takes its default");
  ok (sr_mcp_arg_number (args, "n", &x) && x == 0.5, "a number argument");
  ok (!sr_mcp_arg_number (args, "z", &x), "a null number is absent");
  ok (sr_mcp_arg (args, "z") == NULL, "a null argument reads as absent");
  cJSON_Delete (args);
}

/* The registry checks before any handler runs: nothing of ctx but
 * sessions (none) is needed for these.  */
static void
test_dispatch (void)
{
  struct
  {
    const char *tool, *args, *text;
  } cases[] = {
    { "no_such_tool", "{}",
      "{\"error\":{\"code\":\"unknown_tool\",\"message\":\"no tool no_such_tool\"}}" },
    { "list_sessions", "{\"x\":1}",
      "{\"error\":{\"code\":\"invalid_arguments\",\"message\":\"unknown argument 'x'\"}}" },
    { "close_session", "{}", "{\"error\":{\"code\":\"invalid_arguments\",\"message\":"
                             "\"session_id is required and must be a string\"}}" },
    { "list_sessions", "{}", "{\"error\":{\"code\":\"sessions_unavailable\",\"message\":"
                             "\"this server has no session support\"}}" },
    { "shell_list", "null", "{\"error\":{\"code\":\"invalid_arguments\",\"message\":"
                            "\"arguments must be an object\"}}" },
  };
  const struct sr_mcp_tool_ctx ctx = { .cancel_fd = -1 };

  for (size_t i = 0; i < SR_ARRAY_SIZE (cases); i++)
    {
      cJSON *args = cJSON_Parse (cases[i].args);
      bool cancelled = true;
      cJSON *r = sr_mcp_tool_call (&ctx, cases[i].tool, args, &cancelled);
      const cJSON *content
        = cJSON_GetArrayItem (cJSON_GetObjectItemCaseSensitive (r, "content"), 0);
      _cleanup_free_ char *name = sr_xasprintf ("%s %s is refused", cases[i].tool, cases[i].args);

      is_str (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (content, "text")),
              cases[i].text, name);
      ok (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (r, "isError")) && !cancelled,
          "%s: an error, not cancelled", name);
      cJSON_Delete (r);
      cJSON_Delete (args);
    }
  ok (sr_mcp_tool_runs_code ("run_code") && !sr_mcp_tool_runs_code ("list_sessions")
        && !sr_mcp_tool_runs_code ("no_such_tool"),
      "only run_code takes a run slot");
  ok (sr_mcp_tool_exists (NULL, "file_search") && !sr_mcp_tool_exists (NULL, "no_such_tool"),
      "the registry knows its tools");
}

/* An alias: in the schema next to its name, marked as an alias; given,
 * it reaches the handler under its name; given with its name, the same
 * value counts once and another is refused naming both.  */
static void
test_aliases (void)
{
  static const struct sr_mcp_arg_alias v[] = { { "timeout", "timeout_seconds" } };
  cJSON *schema = cJSON_Parse ("{\"type\":\"object\",\"properties\":{"
                               "\"timeout_seconds\":{\"type\":\"number\",\"exclusiveMinimum\":0,"
                               "\"description\":\"Wall-clock limit\"},\"code\":{\"type\":\"string\"}},"
                               "\"additionalProperties\":false}");
  cJSON *plain = cJSON_Parse ("{\"type\":\"object\",\"properties\":{\"code\":{\"type\":"
                              "\"string\"}},\"additionalProperties\":false}");
  const cJSON *props, *alias;
  struct
  {
    const cJSON *schema;
    const char *args, *want_args, *want_msg;
  } cases[] = {
    { NULL, "{\"timeout\":5}", "{\"timeout_seconds\":5}", NULL },
    { NULL, "{\"timeout_seconds\":5}", "{\"timeout_seconds\":5}", NULL },
    { NULL, "{\"timeout\":5,\"timeout_seconds\":5}", "{\"timeout_seconds\":5}", NULL },
    { NULL, "{\"timeout\":null,\"timeout_seconds\":5}", "{\"timeout_seconds\":5}", NULL },
    { NULL, "{\"timeout\":5,\"timeout_seconds\":6}", NULL,
      "timeout and timeout_seconds are both given, with different values" },
    { NULL, "{\"timeout\":-1}", "{\"timeout_seconds\":-1}", NULL },
  };

  sr_mcp_schema_add_aliases (schema, v, SR_ARRAY_SIZE (v));
  sr_mcp_schema_add_aliases (plain, v, SR_ARRAY_SIZE (v));
  props = cJSON_GetObjectItemCaseSensitive (schema, "properties");
  alias = cJSON_GetObjectItemCaseSensitive (props, "timeout");
  ok (alias && alias->prev && strcmp (alias->prev->string, "timeout_seconds") == 0,
      "the alias is in the schema, after its name");
  is_str (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (alias, "description")),
          "Alias of timeout_seconds: Wall-clock limit", "its description says it is an alias");
  ok (cJSON_GetObjectItemCaseSensitive (alias, "exclusiveMinimum") != NULL,
      "it has its name's rules");
  ok (!cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (plain, "properties"),
                                         "timeout"),
      "a schema without the name gets no alias");
  for (size_t i = 0; i < SR_ARRAY_SIZE (cases); i++)
    {
      cJSON *args = cJSON_Parse (cases[i].args);
      _cleanup_free_ char *msg = sr_mcp_args_unalias (schema, args, v, SR_ARRAY_SIZE (v));
      _cleanup_free_ char *text = NULL;

      is_str (msg, cases[i].want_msg, cases[i].args);
      if (cases[i].want_args)
        {
          text = cJSON_PrintUnformatted (args);
          is_str (text, cases[i].want_args, "the handler reads it by its name");
        }
      cJSON_Delete (args);
    }
  {
    cJSON *args = cJSON_Parse ("{\"timeout\":-1}");
    _cleanup_free_ char *msg = sr_mcp_args_unalias (schema, args, v, SR_ARRAY_SIZE (v));
    _cleanup_free_ char *bad = sr_mcp_args_check (schema, args);

    is_str (bad, "timeout_seconds must be a number above 0",
            "an alias's bad value is refused with its name's rules");
    cJSON_Delete (args);
    args = cJSON_Parse ("{\"timeout\":5}");
    free (msg);
    msg = sr_mcp_args_unalias (plain, args, v, SR_ARRAY_SIZE (v));
    free (bad);
    bad = sr_mcp_args_check (plain, args);
    is_str (bad, "unknown argument 'timeout'", "a tool without the name refuses the alias");
    cJSON_Delete (args);
  }
  {
    /* default_set's machine is its own argument, not session_id's
     * alias.  */
    static const struct sr_mcp_arg_alias m[] = { { "machine", "session_id" } };
    cJSON *own = cJSON_Parse ("{\"type\":\"object\",\"properties\":{\"machine\":"
                              "{\"type\":\"string\"}},\"additionalProperties\":false}");
    cJSON *args = cJSON_Parse ("{\"machine\":\"box\"}");
    _cleanup_free_ char *msg = NULL, *bad = NULL, *text = NULL;

    sr_mcp_schema_add_aliases (own, m, SR_ARRAY_SIZE (m));
    msg = sr_mcp_args_unalias (own, args, m, SR_ARRAY_SIZE (m));
    bad = sr_mcp_args_check (own, args);
    text = cJSON_PrintUnformatted (args);
    ok (msg == NULL && bad == NULL && strcmp (text, "{\"machine\":\"box\"}") == 0,
        "an argument of the tool's own named as an alias stays itself");
    cJSON_Delete (args);
    cJSON_Delete (own);
  }
  cJSON_Delete (schema);
  cJSON_Delete (plain);
}

/* The registry: timeout in the schemas of the tools of timeout_seconds;
 * the drop-in tools offered only under compat_tools; the both-given
 * refusal through a call.  */
static void
test_registry_aliases (void)
{
  struct sr_config cfg = { .compat_tools = SR_COMPAT_CODE_SANDBOX };
  const struct sr_mcp_tool_ctx ctx = { .cfg = &cfg, .cancel_fd = -1 };
  cJSON *compat = sr_mcp_tools_list (&cfg);
  const cJSON *t;
  static const char *const drop_in_names[] = { "sandbox_run_python", "sandbox_upload_file",
                                               "sandbox_read_artifact", "sandbox_list_artifacts",
                                               "sandbox_close_session" };
  int with_alias = 0, drop_ins = 0;
  _cleanup_free_ char *text = NULL;
  bool cancelled;
  cJSON *args, *r;

  cJSON_ArrayForEach (t, cJSON_GetObjectItemCaseSensitive (tools_list, "tools"))
    {
      const cJSON *props = cJSON_GetObjectItemCaseSensitive (
        cJSON_GetObjectItemCaseSensitive (t, "inputSchema"), "properties");

      with_alias += cJSON_GetObjectItemCaseSensitive (props, "timeout_seconds")
                    && cJSON_GetObjectItemCaseSensitive (props, "timeout");
    }
  is_int (with_alias, 2, "run_code and shell_exec, the tools of timeout_seconds, take timeout");
  is_int (registry_supported (compat), 28, "compat_tools = mcp-code-sandbox adds five tools");
  for (size_t i = 0; i < SR_ARRAY_SIZE (drop_in_names); i++)
    drop_ins += sr_mcp_tool_exists (&cfg, drop_in_names[i]);
  is_int (drop_ins, 5, "named as mcp-code-sandbox named them");
  ok (!sr_mcp_tool_exists (NULL, "sandbox_run_python")
        && sr_mcp_tool_exists (&cfg, "sandbox_run_python"),
      "a plain setup does not offer them");
  ok (sr_mcp_tool_runs_code ("sandbox_run_python"), "sandbox_run_python takes a run slot");
  args = cJSON_Parse ("{\"code\":\"1\",\"language\":\"python\",\"timeout\":1,"
                      "\"timeout_seconds\":2}");
  r = sr_mcp_tool_call (&ctx, "run_code", args, &cancelled);
  ok (strstr (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (
                cJSON_GetArrayItem (cJSON_GetObjectItemCaseSensitive (r, "content"), 0), "text")),
              "timeout and timeout_seconds are both given") != NULL,
      "run_code refuses timeout and timeout_seconds at odds");
  cJSON_Delete (r);
  r = sr_mcp_tool_call (&(struct sr_mcp_tool_ctx) { .cancel_fd = -1 }, "sandbox_close_session",
                        args, &cancelled);
  text = cJSON_PrintUnformatted (r);
  ok (strstr (text, "unknown_tool") != NULL, "a plain setup refuses a drop-in tool as unknown");
  cJSON_Delete (r);
  cJSON_Delete (args);
  cJSON_Delete (compat);
}

/* The audit trail hashes the arguments as canonical JSON: the same
 * arguments in any order of members are the same text.  */
static void
test_canonical (void)
{
  cJSON *a = cJSON_Parse ("{\"b\":1,\"a\":{\"y\":[{\"d\":1,\"c\":2}],\"x\":null}}");
  cJSON *b = cJSON_Parse ("{\"a\":{\"x\":null,\"y\":[{\"c\":2,\"d\":1}]},\"b\":1}");
  _cleanup_free_ char *ca = sr_mcp_canonical_json (a);
  _cleanup_free_ char *cb = sr_mcp_canonical_json (b);
  _cleanup_free_ char *none = sr_mcp_canonical_json (NULL);

  is_str (ca, "{\"a\":{\"x\":null,\"y\":[{\"c\":2,\"d\":1}]},\"b\":1}",
          "canonical JSON sorts the members of every object");
  is_str (cb, ca, "the same arguments in another order are the same text");
  is_str (none, "{}", "no arguments are {}");
  cJSON_Delete (a);
  cJSON_Delete (b);
}

int
main (void)
{
  tools_list = sr_mcp_tools_list (NULL);
  test_rules ();
  test_tool_schemas ();
  test_supported ();
  test_getters ();
  test_registry_supported ();
  test_dispatch ();
  test_aliases ();
  test_registry_aliases ();
  test_canonical ();
  cJSON_Delete (tools_list);
  return done_testing ();
}
