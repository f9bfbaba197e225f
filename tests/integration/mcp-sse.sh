#!/bin/sh
# serve --transport sse: the HTTP+SSE transport of protocol 2024-11-05
# (GET /sse, POST /messages?sessionId=ID) that older clients still speak,
# through the official SDK's SSEClientTransport; curl for its refusals,
# which are the Streamable HTTP transport's (token, Host, Origin).
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
command -v curl >/dev/null || skip_all "curl is not installed"
require_node_modules

printf 's3cret-token\n' > "$sr_tmp/tokens"
start_server --transport sse --token-file "$sr_tmp/tokens"
ok $? "serve --transport sse listens"
base=http://127.0.0.1:$port

(cd "$NODE_DIR" && timeout 120 "$NODE" sse-client.mjs "$base/sse" s3cret-token) \
  > "$sr_tmp/client.out" 2>"$sr_tmp/client.err"
is "$?" 0 "the SDK's SSE client ends cleanly"
relay_results < "$sr_tmp/client.out"
grep -v '^RESULT' "$sr_tmp/client.err" | head -5 | sed 's/^/# stderr: /'

# code URL [CURL ARGS...]: the status of a request that gives up after 2 s
# (a stream that opens never ends by itself).
code () {
  u=$1
  shift
  curl -s -o "$sr_tmp/body" -w '%{http_code}' --max-time 2 "$@" "$base$u" 2>/dev/null
}
tok='Authorization: Bearer s3cret-token'
is "$(code /sse)" 401 "GET /sse without a token: 401"
is "$(code /sse -H "$tok" -H 'Origin: http://evil.example')" 403 "a foreign Origin: 403"
is "$(code /sse -H "$tok" -H 'Host: evil.example')" 403 "a foreign Host: 403"
code /sse -H "$tok" >/dev/null
head -c 200 "$sr_tmp/body" | grep -q "^event: endpoint" ; ok $? "the stream opens with its endpoint event"
is "$(code '/messages?sessionId=0123' -H "$tok" -H 'Content-Type: application/json' -d '{}')" 404 \
  "POST to an unknown session: 404"
is "$(code /messages -H "$tok" -H 'Content-Type: application/json' -d '{}')" 404 \
  "POST without a session id: 404"
is "$(code /sse -H "$tok" -X POST -d '{}')" 405 "POST /sse: 405"
stop_server
ok $? "the server stops cleanly"

start_server
ok $? "serve --transport http"
base=http://127.0.0.1:$port
is "$(code /sse)" 404 "serves no /sse without --transport sse"
stop_server
done_testing
