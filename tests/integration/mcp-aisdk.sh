#!/bin/sh
# The data-science seed workflow through the Vercel AI SDK's MCP client,
# over stdio and over HTTP: a chart reaches the model as an image block
# whose bytes are the PNG (tests/mcp/aisdk-client.mjs).
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python python-data
require_node_modules

run_mcp_client aisdk-client.mjs
run_mcp_client aisdk-client.mjs --http
done_testing
