/* The tool schemas are data, src/mcp/schemas/NAME.json (what tools/list
 * says of tool NAME), assembled into the binary as seccomp/default.json
 * is, so the binary never runs without them and a JSON tool can check
 * them (tests/integration/mcp-schemas.sh).  */
#ifndef SR_MCP_TOOL_SCHEMA_H
#define SR_MCP_TOOL_SCHEMA_H

/* At file scope: the NUL-terminated text of src/mcp/schemas/NAME.json as
 * the array sr_mcp_schema_NAME, local to the object.  The object must
 * depend on the file in its local.mk.  */
#define SR_MCP_EMBED_SCHEMA(name)                                                    \
  __asm__ (".section .rodata\n"                                                      \
           "sr_mcp_schema_" #name ":\n"                                              \
           ".incbin \"" SR_MCP_SCHEMA_DIR "/" #name ".json\"\n"                      \
           ".byte 0\n"                                                               \
           ".previous\n");                                                           \
  extern const char sr_mcp_schema_##name[] __asm__ ("sr_mcp_schema_" #name)

#endif
