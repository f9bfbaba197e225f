#!/bin/sh
# Shells that answer at once (wait=false, Ctrl-C then the next command),
# content with a NUL refused and binary content as base64, and pandas in
# a one-shot run_code (language python-data), through the official MCP
# client over stdio.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python python-data
require_node_modules

run_mcp_client shells-client.mjs
[ -z "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null)" ]; ok $? "no container is left after the server exits"
done_testing
