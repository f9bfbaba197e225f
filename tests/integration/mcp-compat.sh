#!/bin/sh
# The drop-in names, through the official MCP client: the argument
# aliases (timeout) every setup takes, and mcp-code-sandbox's five tools
# under compat_tools, each called with its argument names and checked
# against its result fields.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python python-data
require_node_modules

(cd "$NODE_DIR" && timeout 300 "$NODE" compat-client.mjs "$SR_BIN") \
  > "$sr_tmp/client.out" 2>"$sr_tmp/client.err"
is "$?" 0 "the SDK client's drop-in calls end cleanly"
relay_results < "$sr_tmp/client.out"
grep -v '^RESULT' "$sr_tmp/client.err" | head -5 | sed 's/^/# stderr: /'
done_testing
