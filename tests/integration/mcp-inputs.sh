#!/bin/sh
# run_code's stdin, args and files through the official MCP client over
# stdio: one-shot (warm and compiled) and in a session, and the refusals
# of bad inputs with their codes.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python cpp
require_node_modules

run_mcp_client inputs-client.mjs
[ -z "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null)" ]; ok $? "no container is left after the server exits"
[ -z "$(ls "$SANDBOX_RUNTIME_DIR/scratch" 2>/dev/null)" ]; ok $? "no scratch directory is left after the server exits"
done_testing
