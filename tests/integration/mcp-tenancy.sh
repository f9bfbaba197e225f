#!/bin/sh
# Over HTTP, sandbox sessions belong to whoever made them: two bearer
# tokens, and without tokens two MCP sessions, cannot list, use, read,
# close or download each other's sessions (session_not_found / 404), and
# an MCP session that ends takes its sandbox sessions with it.  An
# artifact's download_url is built from the request's Host and works
# without the bearer header until download_url_ttl, and not with its
# signature changed or for another path.  Through the official SDK
# client (tests/mcp/tenancy-client.mjs) and curl.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
command -v curl >/dev/null || skip_all "curl is not installed"
require_node_modules
export SANDBOX_SESSION_IMAGE=python
"$SR_BIN" config show 2>/dev/null | grep -q '^download_url_ttl' ||
  skip_all "this build has no download_url_ttl setting"

# --- two bearer tokens ---
printf 'token-a-%s\ntoken-b-%s\n' $$ $$ > "$sr_tmp/tokens"
ttl=6
SANDBOX_DOWNLOAD_URL_TTL=$ttl start_server --token-file "$sr_tmp/tokens"
ok $? "serve starts with two tokens and download_url_ttl=$ttl"
(cd "$NODE_DIR" && timeout 120 "$NODE" tenancy-client.mjs tokens "http://localhost:$port/mcp" \
  "token-a-$$" "token-b-$$" "$ttl") >"$sr_tmp/tokens.out" 2>"$sr_tmp/tokens.err"
is "$?" 0 "the SDK clients of two tokens end cleanly"
relay_results < "$sr_tmp/tokens.out"
grep -v '^RESULT' "$sr_tmp/tokens.err" | head -5 | sed 's/^/# stderr: /'
! grep -q "token-[ab]-$$" "$sr_tmp/serve.out" "$sr_tmp/serve.err"; ok $? "the server logs no token"
stop_server
ok $? "the server stops cleanly"

# --- a quota per client ---
SANDBOX_MAX_SESSIONS_PER_OWNER=2 start_server --token-file "$sr_tmp/tokens"
(cd "$NODE_DIR" && timeout 120 "$NODE" tenancy-client.mjs quota "http://localhost:$port/mcp" \
  "token-a-$$" "token-b-$$") >"$sr_tmp/quota.out" 2>"$sr_tmp/quota.err"
is "$?" 0 "the SDK clients of the quota test end cleanly"
relay_results < "$sr_tmp/quota.out"
grep -v '^RESULT' "$sr_tmp/quota.err" | head -5 | sed 's/^/# stderr: /'
stop_server

# --- no tokens: the MCP session owns its sandbox sessions ---
start_server
ok $? "serve starts without tokens"
(cd "$NODE_DIR" && timeout 120 "$NODE" tenancy-client.mjs mcp-sessions "http://localhost:$port/mcp") \
  >"$sr_tmp/mcp.out" 2>"$sr_tmp/mcp.err"
is "$?" 0 "the SDK clients of two MCP sessions end cleanly"
relay_results < "$sr_tmp/mcp.out"
grep -v '^RESULT' "$sr_tmp/mcp.err" | head -5 | sed 's/^/# stderr: /'
stop_server
ok $? "the server stops cleanly"
[ -z "$(running_containers "$SANDBOX_RUNTIME_DIR/containers")" ]; ok $? "no container is left"

done_testing
