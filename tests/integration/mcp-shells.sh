#!/bin/sh
# Shells that answer at once (wait=false, Ctrl-C then the next command),
# content with a NUL refused and binary content as base64, and pandas in
# a one-shot run_code (language python-data), through the official MCP
# client over stdio.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python python-data
require_node_modules

(cd "$NODE_DIR" && timeout 240 "$NODE" shells-client.mjs "$SR_BIN") \
  > "$sr_tmp/client.out" 2>"$sr_tmp/client.err"
is "$?" 0 "the SDK client's calls end cleanly"
relay_results < "$sr_tmp/client.out"
grep -v '^RESULT' "$sr_tmp/client.err" | head -5 | sed 's/^/# stderr: /'
[ -z "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null)" ]; ok $? "no container is left after the server exits"
done_testing
