#!/bin/sh
# The data-science seed workflow through the Vercel AI SDK's MCP client,
# over stdio and over HTTP: a chart reaches the model as an image block
# whose bytes are the PNG (tests/mcp/aisdk-client.mjs).
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python python-data
require_node_modules

(cd "$NODE_DIR" && timeout 300 "$NODE" aisdk-client.mjs "$SR_BIN") \
  > "$sr_tmp/stdio.out" 2>"$sr_tmp/stdio.err"
is "$?" 0 "the stdio client ends cleanly"
relay_results < "$sr_tmp/stdio.out"
grep -v '^RESULT' "$sr_tmp/stdio.err" | head -5 | sed 's/^/# stderr: /'

echo "tok-$$" > "$sr_tmp/tokens"
start_server --token-file "$sr_tmp/tokens" || echo "Bail out! the HTTP server did not start"
(cd "$NODE_DIR" && timeout 300 "$NODE" aisdk-client.mjs --http "$url" "tok-$$") \
  > "$sr_tmp/http.out" 2>&1
is "$?" 0 "the HTTP client ends cleanly"
relay_results < "$sr_tmp/http.out"
grep -v '^RESULT\|^#' "$sr_tmp/http.out" | head -5 | sed 's/^/# output: /'
stop_server
is "$?" 0 "the HTTP server exits cleanly"
done_testing
