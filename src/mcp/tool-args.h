/* A tool's arguments, checked against the tool's inputSchema (JSON
 * Schema 2020-12, the subset the tool schemas use) before its handler
 * runs, and read back with typed getters once checked.
 *
 * The keywords understood are type (string, integer, number, boolean,
 * object, array, null), enum, minimum, maximum, exclusiveMinimum,
 * exclusiveMaximum, minLength, maxLength, properties, required,
 * additionalProperties (false or a schema) and items; title and
 * description are annotations.  A property whose value is null counts as
 * absent, as clients send null for an argument they leave out.  */
#ifndef SR_MCP_TOOL_ARGS_H
#define SR_MCP_TOOL_ARGS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest integer the schema type integer takes: every integer up to
 * it is exact in a double, and no count of a tool comes near it.  */
#define SR_MCP_INTEGER_MAX 1e15

/* NULL when args (an object, or NULL: no arguments) conforms to schema,
 * else the refusal's message, which the caller frees.  The message names
 * the argument and says what it must be, from its schema: "limit must be
 * an integer from 1 to 1000", "code is required and must be a string",
 * "unknown argument 'x'", "arguments must be an object".  Properties are
 * checked in the schema's order, after the unknown names.  */
char *sr_mcp_args_check (const cJSON *schema, const cJSON *args);

/* An argument also known by a second name, the one another server gave
 * it (a drop-in's prompts and workflows use it): alias stands for name in
 * every tool whose inputSchema has name.  */
struct sr_mcp_arg_alias
{
  const char *alias;
  const char *name;
};

/* Adds to schema's properties, after name, each alias of v[n] whose name
 * it has: a copy of name's schema whose description says it is an alias,
 * so that clients see it and the check accepts it.  */
void sr_mcp_schema_add_aliases (cJSON *schema, const struct sr_mcp_arg_alias *v, size_t n);

/* Renames in args (an object or NULL) each alias of v[n] that schema
 * takes (sr_mcp_schema_add_aliases added it) and that is given to its
 * name, in place; a null alias is dropped.  NULL, or the refusal's message, which
 * the caller frees, when an alias and its name are both given with
 * different values: "timeout and timeout_seconds are both given, with
 * different values".  Both given alike count as one.  */
char *sr_mcp_args_unalias (const cJSON *schema, cJSON *args, const struct sr_mcp_arg_alias *v,
                           size_t n);

/* NULL when schema uses only the keywords above (so that every one of its
 * rules is enforced), else a message naming the first other one, which
 * the caller frees.  */
char *sr_mcp_schema_check_supported (const cJSON *schema);

/* The getters of checked arguments: args may be NULL, and an absent or
 * null argument reads as absent.  */

/* The argument name, or NULL.  */
const cJSON *sr_mcp_arg (const cJSON *args, const char *name);
/* The string argument name, or NULL.  */
const char *sr_mcp_arg_string (const cJSON *args, const char *name);
/* The boolean argument name, or absent.  */
bool sr_mcp_arg_bool (const cJSON *args, const char *name, bool absent);
/* The integer argument name (of minimum 0 or more), or absent.  */
uint64_t sr_mcp_arg_count (const cJSON *args, const char *name, uint64_t absent);
/* Whether the number argument name is given; its value in *ret.  */
bool sr_mcp_arg_number (const cJSON *args, const char *name, double *ret);

#endif
