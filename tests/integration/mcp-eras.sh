#!/bin/sh
# Both protocol eras side by side, over stdio and over HTTP: the official
# v2 client negotiates 2026-07-28 (server/discover, no initialize, no MCP
# session) and runs code in a sandbox session across requests; the 1.x
# SDK still negotiates 2025-11-25 (tests/mcp/eras-client.mjs).
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
require_node_modules

run_mcp_client eras-client.mjs
run_mcp_client eras-client.mjs --http
done_testing
