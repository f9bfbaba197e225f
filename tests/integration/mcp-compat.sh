#!/bin/sh
# The drop-in names, through the official MCP client: the argument
# aliases (timeout) every setup takes, and mcp-code-sandbox's five tools
# under compat_tools, each called with its argument names and checked
# against its result fields.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python python-data
require_node_modules

run_mcp_client compat-client.mjs
done_testing
