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

(cd "$NODE_DIR" && timeout 300 "$NODE" resources-client.mjs "$SR_BIN") \
  > "$sr_tmp/stdio.out" 2>"$sr_tmp/stdio.err"
is "$?" 0 "the stdio client ends cleanly"
relay_results < "$sr_tmp/stdio.out"
grep -v '^RESULT' "$sr_tmp/stdio.err" | head -5 | sed 's/^/# stderr: /'

echo "tok-$$" > "$sr_tmp/tokens"
start_server --token-file "$sr_tmp/tokens" || echo "Bail out! the HTTP server did not start"
(cd "$NODE_DIR" && timeout 300 "$NODE" resources-client.mjs --http "$url" "tok-$$") \
  > "$sr_tmp/http.out" 2>&1
is "$?" 0 "the HTTP client ends cleanly"
relay_results < "$sr_tmp/http.out"
grep -v '^RESULT\|^#' "$sr_tmp/http.out" | head -5 | sed 's/^/# output: /'
stop_server
is "$?" 0 "the HTTP server exits cleanly"
done_testing
