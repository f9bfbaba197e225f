#!/bin/sh
# The Keep-Alive hint of the HTTP transport against its idle close: with a
# short header deadline (4 s), SDK clients call all at once, over and over,
# with their connections idle just short of the deadline, then just past
# it, as the server shuts them; every call must succeed.  With a hint past
# the deadline (the 60 s once sent), Node's fetch reuses connections the
# server is shutting and some calls fail ("fetch failed": other side
# closed).
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db SANDBOX_WARM_CONTAINERS=0
require_node_modules
command -v curl >/dev/null || skip_all "curl is not installed"
"$SR_BIN" serve --help 2>&1 | grep -q -- "--transport" ||
  skip_all "this build has no HTTP transport"

# The probes that find the server's tick hold up to some 50 connections.
SANDBOX_HTTP_HEADER_TIMEOUT=4 SANDBOX_HTTP_MAX_CONNECTIONS_PER_IP=0 start_server
ok $? "serve --transport http listens, http_header_timeout=4"
(cd "$NODE_DIR" && timeout 300 "$NODE" keep-alive-client.mjs "$url" 12 8 4000) \
  > "$sr_tmp/client.out" 2> "$sr_tmp/client.err"
is "$?" 0 "the SDK clients end cleanly"
relay_results < "$sr_tmp/client.out"
sed 's/^/# client: /' "$sr_tmp/client.err" | head -20
stop_server
ok $? "the server stops"
done_testing
