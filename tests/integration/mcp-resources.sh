#!/bin/sh
# Session files as MCP resources through the official MCP client, over
# stdio and over HTTP (where notifications come on the GET stream): the
# template, a matplotlib chart listed and read back, paging, refusals,
# subscriptions and their notifications.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
# Small pages, so that a few files take several.
export SANDBOX_RESOURCE_PAGE_SIZE=2
require_image python python-data
require_node_modules

out=$(SANDBOX_RESOURCE_PAGE_SIZE=0 "$SR_BIN" config show 2>&1)
is "$?" 125 "resource_page_size 0 is refused, as any bad setting"
like "$out" "resource_page_size must be at least 1" "saying why"

run_mcp_client resources-client.mjs
run_mcp_client resources-client.mjs --http
done_testing
