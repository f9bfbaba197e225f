#!/bin/sh
# The MCP server over Streamable HTTP: the official TypeScript SDK client
# (sessions, SSE streams, progress, concurrency, cancellation, a stream
# resumed after a cut connection, DELETE); curl for the transport's
# refusals (session, Origin, Host, protocol version, size, path, bearer
# tokens, the download limit, idle sessions), for a client that hangs up
# mid-run and for Last-Event-ID; then the official conformance suite,
# one TAP line a scenario.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python cpp
command -v curl >/dev/null || skip_all "curl is not installed"
require_node_modules
containers=$SANDBOX_RUNTIME_DIR/containers

# post [CURL ARGS...]: a POST to $url; $status, $headers and $body.
# $accept (default: both types) is its Accept header.
post () {
  curl -s -o "$sr_tmp/body" -D "$sr_tmp/headers" -w '%{http_code}' --max-time 20 \
    -H 'Content-Type: application/json' -H "Accept: ${accept:-application/json, text/event-stream}" \
    "$@" "$url" >"$sr_tmp/status" 2>/dev/null
  status=$(cat "$sr_tmp/status")
  headers=$(tr -d '\r' < "$sr_tmp/headers")
  body=$(cat "$sr_tmp/body")
}
# post_accepting TYPE [CURL ARGS...]: post with that Accept header.
post_accepting () { accept=$1; shift; post "$@"; accept=""; }
header () { printf '%s\n' "$headers" | sed -n "s/^$1: *//Ip" | tail -1; }
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
ping='{"jsonrpc":"2.0","id":2,"method":"ping"}'

start_server
ok $? "serve --transport http listens on 127.0.0.1"
# On the native backend the light binary hands HTTP to sandbox-runner-http,
# which has libmicrohttpd and not libcurl nor libarchive.
like "$(readlink "/proc/$server/exe")" '/sandbox-runner-http$' "serve --transport http runs in sandbox-runner-http"
if ldd "$SR_BIN" | grep -q libasan; then
  skip "sandbox-runner-http maps neither libcurl nor libarchive: a sanitizer build links every library"
else
  is "$(grep -c 'libcurl\|libarchive' "/proc/$server/maps")" 0 "which maps neither libcurl nor libarchive"
fi

# --- the official SDK client ---
(cd "$NODE_DIR" && timeout 120 "$NODE" http-client.mjs "$url" "$containers") \
  >"$sr_tmp/client.out" 2>"$sr_tmp/client.err"
is "$?" 0 "the SDK client's run ends cleanly"
relay_results < "$sr_tmp/client.out"
grep -v '^RESULT' "$sr_tmp/client.err" | head -5 | sed 's/^/# stderr: /'
old_session=$(sed -n 's/^SESSION //p' "$sr_tmp/client.out")

# --- curl: sessions and refusals ---
post -d "$init"
is "$status" 200 "initialize over curl is 200"
sid=$(header Mcp-Session-Id)
like "$sid" '^[A-Za-z0-9_-]+\.[0-9a-f]{32}$' "with an Mcp-Session-Id: the server's id, '.', 128 random bits"
like "$(header Content-Type)" '^application/json' "as one JSON body, with nothing to stream before it"
is "$(header Keep-Alive)" "timeout=9" \
  "saying the connection may be kept 9 s idle: a second under the header deadline (10 s) that closes it"
post_accepting text/event-stream -d "$init"
like "$status $(header Content-Type)" '^200 text/event-stream' "a client that accepts only SSE gets SSE"
like "$body" '^event: message' "one SSE event carries the response"
post -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
is "$status" 202 "a notification is 202 Accepted"
is "$body" "" "with no body"

post -d "$ping"
is "$status" 400 "a request without Mcp-Session-Id is 400"
post -H "Mcp-Session-Id: ${old_session:-0123456789abcdef0123456789abcdef}" -d "$ping"
is "$status" 404 "a deleted session's id is 404"
post -H "Mcp-Session-Id: $sid" -H 'Origin: http://evil.example' -d "$ping"
is "$status" 403 "Origin http://evil.example is 403"
post -H "Mcp-Session-Id: $sid" -H "Origin: http://localhost:$port" -d "$ping"
is "$status" 200 "Origin http://localhost is allowed"
post -H "Mcp-Session-Id: $sid" -H 'Host: evil.example' -d "$ping"
is "$status" 403 "a Host that is not loopback (DNS rebinding) is 403"
post -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 1999-01-01' -d "$ping"
is "$status" 400 "an unknown MCP-Protocol-Version is 400"
post -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-06-18' -d "$ping"
is "$status" 200 "a known MCP-Protocol-Version is accepted"
post_accepting text/html -H "Mcp-Session-Id: $sid" -d "$ping"
is "$status" 406 "an Accept without JSON or SSE is 406"
post -H "Mcp-Session-Id: $sid" -d 'not json'
like "$status $body" '^400 .*-32700' "malformed JSON is 400 with a JSON-RPC parse error"
python3 -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"x"*(5<<20)}}))' \
  > "$sr_tmp/big.json"
post -H "Mcp-Session-Id: $sid" --data-binary @"$sr_tmp/big.json"
like "$status $body" '^413 .*max_message_size' "a body over max_message_size is 413 with a JSON-RPC error"
like "$body" '"id":3,"error"' "answering the request's own id"
post -H "Mcp-Session-Id: $sid" -H 'Transfer-Encoding: chunked' --data-binary @"$sr_tmp/big.json"
is "$status" 413 "so is a chunked one"
like "$body" '"id":3,"error"' "with its id too"
status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/nope")
is "$status" 404 "GET /nope is 404"
status=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$url")
is "$status" 405 "PUT /mcp is 405"
status=$(curl -s -o /dev/null -w '%{http_code}' -H 'Accept: application/json' -H "Mcp-Session-Id: $sid" "$url")
is "$status" 406 "GET /mcp without Accept text/event-stream is 406"

# GET /files: a file over the download limit (max_artifact_size, 50 MiB
# by default) is 413, before any byte of it is sent.  A sparse file costs
# the session's tmpfs nothing.
call () {
  post_accepting application/json -H "Mcp-Session-Id: $sid" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}"
}
call 20 create_session '{"image":"python"}'
files_sid=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["session_id"])' 2>/dev/null)
like "$files_sid" '^[0-9a-zA-Z_-]{8,}$' "create_session over curl (for the download limit)"
call 21 run_code "{\"language\":\"python\",\"session_id\":\"$files_sid\",\"code\":\"open('/mnt/data/big.bin','wb').truncate((50<<20)+1); open('/mnt/data/small.txt','w').write('small')\"}"
like "$body" '"exit_code":0' "a run in it makes a sparse file one byte over 50 MiB"
is "$(header Keep-Alive)" "timeout=9" "a run's reply, streamed as it ends, says Keep-Alive too"
# Without tokens the session is its MCP session's: a download names it.
status=$(curl -s -o "$sr_tmp/dl" -w '%{http_code}' --max-time 20 -H "Mcp-Session-Id: $sid" "http://127.0.0.1:$port/files/$files_sid/big.bin")
is "$status" 413 "GET /files of a file over the download limit is 413"
like "$(cat "$sr_tmp/dl")" 'file_too_large: .*over the download limit of 52428800 bytes' "with a body that says why"
status=$(curl -s -o "$sr_tmp/dl" -w '%{http_code}' --max-time 20 -H "Mcp-Session-Id: $sid" "http://127.0.0.1:$port/files/$files_sid/small.txt")
is "$status $(cat "$sr_tmp/dl")" "200 small" "a file under it is served"
call 22 close_session "{\"session_id\":\"$files_sid\"}"

# A client that hangs up mid-run, waiting on an SSE stream or on a JSON
# body: the run is cancelled, its container goes.
run_running () { [ -n "$(running_containers "$containers")" ]; }
run_gone () { [ -z "$(running_containers "$containers")" ]; }
for accept in text/event-stream application/json; do
  curl -s -N --max-time 30 -H 'Content-Type: application/json' -H "Accept: $accept" \
    -H "Mcp-Session-Id: $sid" \
    -d '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"while True: pass","timeout_seconds":25}}}' \
    "$url" >/dev/null 2>&1 &
  hangup=$!
  wait_until 30 run_running
  ok $? "a run started by curl accepting $accept"
  kill "$hangup"
  wait "$hangup" 2>/dev/null
  # Prompt: well within the run's own 25 s, with room for a loaded machine.
  wait_until 10 run_gone
  ok $? "a client ($accept) that disconnects mid-run leaves no container within 10 s"
done

# SSE resumption (2025-11-25): a request's SSE stream numbers its events
# after a priming event (an id, retry, no data); a client whose stream
# broke off takes it up with GET and Last-Event-ID and gets what it
# missed, then the rest, the response included.
slow='{"jsonrpc":"2.0","id":30,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"import time\nprint(\"half\", flush=True)\ntime.sleep(4)\nprint(\"done\")"},"_meta":{"progressToken":"p30"}}}'
curl -s -N --max-time 2 -H 'Content-Type: application/json' -H 'Accept: text/event-stream' \
  -H "Mcp-Session-Id: $sid" -d "$slow" "$url" > "$sr_tmp/broken" 2>/dev/null
tr -d '\r' < "$sr_tmp/broken" > "$sr_tmp/broken.txt"
like "$(head -3 "$sr_tmp/broken.txt" | tr '\n' ' ')" '^id: [0-9]+-[0-9]+ retry: [0-9]+ data: *$' \
  "a resumable SSE stream opens with a priming event: an id, retry and empty data"
first=$(sed -n 's/^id: //p' "$sr_tmp/broken.txt" | head -1)
last=$(sed -n 's/^id: //p' "$sr_tmp/broken.txt" | tail -1)
! grep -q '"id":30' "$sr_tmp/broken.txt"; ok $? "the stream broke off before the response (last event $last)"
resume () {
  curl -s -N --max-time "$2" -H 'Accept: text/event-stream' -H "Mcp-Session-Id: $sid" \
    -H "Last-Event-ID: $1" "$url" 2>/dev/null | tr -d '\r'
}
replayed=$(resume "$first" 1)
[ "$first" != "$last" ] && printf '%s\n' "$replayed" | grep -q "^id: $last\$" ||
  [ "$first" = "$last" ]
ok $? "Last-Event-ID of the priming event replays the events after it"
! printf '%s\n' "$replayed" | grep -q "^id: $first\$"; ok $? "and not the event it names"
resumed=$(resume "$last" 20)
like "$resumed" '"id":30,"result".*done' "a GET with the last Last-Event-ID takes it up again: the run went on, its response comes"
! printf '%s\n' "$resumed" | grep -q "^id: $last\$"; ok $? "without the event it names"
status=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE -H "Mcp-Session-Id: $sid" "$url")
is "$status" 200 "DELETE /mcp ends the session"
post -H "Mcp-Session-Id: $sid" -d "$ping"
is "$status" 404 "and its id is then 404"

# --- 2026-07-28: no initialize, no session; the headers say what the body does ---
# modern [-v VERSION] [-m MCP_METHOD] METHOD PARAMS [CURL ARGS...]: a
# request of 2026-07-28 (id 40) with its standard headers; -v and -m
# replace the MCP-Protocol-Version and Mcp-Method headers (empty: none).
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
modern () {
  local v=2026-07-28 mm=- method params
  while :; do
    case $1 in
      -v) v=$2; shift 2 ;;
      -m) mm=$2; shift 2 ;;
      *) break ;;
    esac
  done
  method=$1 params=$2
  [ "$mm" != - ] || mm=$method
  shift 2
  [ -z "$mm" ] || set -- -H "Mcp-Method: $mm" "$@"
  [ -z "$v" ] || set -- -H "MCP-Protocol-Version: $v" "$@"
  post_accepting application/json "$@" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":40,\"method\":\"$method\",\"params\":{$params}}"
}
modern server/discover "$meta"
is "$status" 200 "server/discover without a session is 200"
is "$(header Mcp-Session-Id)" "" "and opens no MCP session"
like "$body" '"supportedVersions":\["2026-07-28","2025-11-25"' "it lists 2026-07-28 first, then the older versions"
like "$body" '"resultType":"complete".*"ttlMs":[0-9]+,"cacheScope":"public"' "with resultType and caching hints"
like "$body" '"io.modelcontextprotocol/serverInfo":\{"name":"sandbox-runner"' "naming the server in its _meta"
modern tools/list "$meta"
like "$status $body" '^200 .*"tools":\[.*"resultType":"complete","ttlMs":[0-9]+,"cacheScope":"public"' \
  "tools/list without a session carries caching hints"
modern -v '' tools/list "$meta"
like "$status $body" '^400 .*"id":40,"error":\{"code":-32020' "no MCP-Protocol-Version header: 400, -32020, the request's id"
modern -m prompts/list tools/list "$meta"
like "$status $body" '^400 .*"id":40,"error":\{"code":-32020' "an Mcp-Method that is not the body's: 400, -32020"
modern -m '' tools/list "$meta"
like "$status $body" '^400 .*"id":40,"error":\{"code":-32020' "no Mcp-Method header: 400, -32020"
modern tools/call "\"name\":\"list_supported_languages\",\"arguments\":{},$meta" -H 'Mcp-Name: run_code'
like "$status $body" '^400 .*"id":40,"error":\{"code":-32020' "an Mcp-Name that is not the tool called: 400, -32020"
modern tools/call "\"name\":\"list_supported_languages\",\"arguments\":{},$meta"
like "$status $body" '^400 .*"code":-32020' "no Mcp-Name header for tools/call: 400, -32020"
modern tools/call "\"name\":\"list_supported_languages\",\"arguments\":{},$meta" \
  -H 'Mcp-Name:   list_supported_languages  '
like "$status $body" '^200 .*"id":40,"result":.*"resultType":"complete"' "an Mcp-Name with whitespace around it is the name"
modern tools/call "\"name\":\"list_supported_languages\",\"arguments\":{},$meta" \
  -H "Mcp-Name: =?base64?$(printf list_supported_languages | base64 -w0)?="
is "$status" 200 "an Mcp-Name in base64 is decoded"
modern tools/list '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}'
like "$status $body" '^400 .*"id":40,"error":\{"code":-32602,"message":"[^"]*clientCapabilities' \
  "_meta without clientCapabilities: 400, -32602 naming it"
modern -v 2099-01-01 tools/list \
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}'
like "$status $body" '^400 .*"id":40,"error":\{"code":-32022,.*"data":\{"supported":\["2026-07-28"\],"requested":"2099-01-01"\}' \
  "a version we do not speak: 400, -32022 with the supported ones"
modern tools/list '"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}'
like "$status $body" '^400 .*"code":-32020' "a header that says another version than _meta: 400, -32020"
for method in initialize ping logging/setLevel resources/subscribe nope/nope; do
  modern "$method" "$meta"
  like "$status $body" '^404 .*"id":40,"error":\{"code":-32601' "$method is not of 2026-07-28: 404, -32601"
done
modern resources/read "\"uri\":\"sandbox://sessions/nope/files/x\",$meta" -H 'Mcp-Name: sandbox://sessions/nope/files/x'
like "$status $body" '^200 .*"error":\{"code":-32602,.*"data":\{"uri":"sandbox://sessions/nope/files/x"\}' \
  "a resource not found is -32602 with data.uri (SEP-2164)"
modern prompts/list "$meta"
like "$body" '"prompts":\[\].*"cacheScope"' "prompts/list is empty, with caching hints"
modern tools/call "\"name\":\"create_session\",\"arguments\":{\"image\":\"python\"},$meta" -H 'Mcp-Name: create_session'
modern_sid=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["session_id"])' 2>/dev/null)
like "$modern_sid" '^[0-9a-zA-Z_-]{8,}$' "create_session in one stateless request"
modern tools/call "\"name\":\"run_code\",\"arguments\":{\"language\":\"python\",\"session_id\":\"$modern_sid\",\"code\":\"print('in', 'session')\"},$meta" \
  -H 'Mcp-Name: run_code'
like "$body" '"stdout":"in session\\n"' "run_code in that session from the next: the sandbox session keeps its id"
modern tools/call "\"name\":\"close_session\",\"arguments\":{\"session_id\":\"$modern_sid\"},$meta" -H 'Mcp-Name: close_session'
like "$body" '"result"' "and close_session from a third"
post -H 'MCP-Protocol-Version: 1999-01-01' -d "$ping"
like "$status $body" '^400 .*"id":2,"error"' "a legacy request with an unknown version is refused with its id"
post -d "$ping"
like "$status $body" '^400 .*"id":2,"error"' "so is one without a session"

# --- the conformance suites, one line a scenario ---
# conformance NAME PACKAGE LIST_ARGS -- RUN_ARGS: runs the suite in
# node_modules/PACKAGE against $url, one check a scenario it lists (and
# one a scenario it ran besides); unsupported_NAME SCENARIO says why a
# scenario cannot pass here (nothing: it must), excused_NAME SCENARIO
# the ids of its checks that cannot, for the same kind of reason (the
# rest of the scenario must pass).
conformance () {
  local name=$1 js=$NODE_DIR/node_modules/$2/dist/index.js list_args="" out=$sr_tmp/conf-$1
  local scenarios s why checks verdict
  shift 2
  while [ "$1" != -- ]; do list_args="$list_args $1"; shift; done
  shift
  # shellcheck disable=SC2086 # the arguments are words
  (cd "$sr_tmp" && timeout 30 "$NODE" "$js" list $list_args) >"$sr_tmp/scenarios.txt" 2>&1
  (cd "$sr_tmp" && timeout 300 "$NODE" "$js" server --url "$url" "$@" -o "$out") \
    >"$sr_tmp/conf-$name.out" 2>&1
  scenarios=$( (sed -n '/^Server scenarios/,/^$/s/^ *- \([^ ]*\).*/\1/p' "$sr_tmp/scenarios.txt"
    ls "$out" 2>/dev/null | sed -n 's/^server-\(.*\)-[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T.*/\1/p') |
    awk '!seen[$0]++')
  if [ -z "$scenarios" ]; then
    ok 1 "the conformance suite $name lists its server scenarios"
    sed 's/^/# /' "$sr_tmp/scenarios.txt" | head -5
  fi
  for s in $scenarios; do
    why=$("unsupported_$name" "$s")
    if [ -n "$why" ]; then
      skip "conformance $name $s: $why"
      continue
    fi
    checks=$(ls -d "$out/server-$s-"[0-9]*/checks.json 2>/dev/null | head -1)
    if [ -z "$checks" ]; then
      ok 1 "conformance $name $s (no result: the suite timed out or crashed)"
      continue
    fi
    # shellcheck disable=SC2046 # the ids are words
    python3 - "$checks" $("excused_$name" "$s") >"$sr_tmp/verdict" <<'EOF'
import json, sys
checks = json.load(open(sys.argv[1]))
excused = set(sys.argv[2:])
bad = [c for c in checks if c.get("status") == "FAILURE" and c.get("id") not in excused]
for c in checks:
    if c.get("status") in ("FAILURE", "WARNING"):
        print("# %s%s %s: %s" % (c["status"].lower(), " (excused)" if c.get("id") in excused else "",
                                 c.get("id"), (c.get("errorMessage") or "")[:300]))
print("FAILED" if bad or not checks else "PASSED")
EOF
    verdict=$(tail -1 "$sr_tmp/verdict")
    [ "$verdict" = PASSED ]; ok $? "conformance $name $s"
    sed '$d' "$sr_tmp/verdict"
  done
}

# 0.1.16: every scenario of 2025-11-25 and before.
unsupported_0_1 () {
  case $1 in
    completion-*) echo "completions are not implemented" ;;
    resources-list) ;;
    resources-*) echo "needs the suite's test resources (test://static-text, test://watched-resource, ...); ours are session files" ;;
    prompts-*) echo "prompts are not implemented" ;;
    tools-call-sampling | tools-call-elicitation | elicitation-*)
      echo "needs sampling/elicitation and the suite's test tools, not implemented" ;;
    json-schema-2020-12) echo "needs the suite's json_schema_2020_12_tool test tool" ;;
    tools-call-*) echo "needs the suite's test tools (test_simple_text, ...); our tools are run_code & co." ;;
  esac
}
excused_0_1 () { :; }
conformance 0_1 @modelcontextprotocol/conformance -- --suite all

# 0.2.0-alpha: what revision 2026-07-28 requires, and what it runs beside
# that (the tasks extension, the pending scenarios).
unsupported_0_2 () {
  case $1 in
    completion-*) echo "completions are not implemented" ;;
    resources-list) ;;
    resources-*) echo "needs the suite's test resources (test://static-text, ...); ours are session files" ;;
    prompts-list) ;;
    prompts-*) echo "needs the suite's test prompts; this server has none (prompts/list is empty)" ;;
    json-schema-2020-12) echo "needs the suite's json_schema_2020_12_tool test tool" ;;
    tools-call-*) echo "needs the suite's test tools (test_simple_text, ...); our tools are run_code & co." ;;
    input-required-result-missing-input-response | input-required-result-unsupported-methods | \
      input-required-result-ignore-extra-params | input-required-result-validate-input) ;;
    input-required-result-*)
      echo "needs the suite's input-required test tools and prompts (multi round-trip requests are not implemented)" ;;
    http-custom-header-server-validation)
      echo "needs a tool with x-mcp-header parameters (Mcp-Param-* headers); ours declare none" ;;
    tasks-capability-negotiation | tasks-dispatch-and-envelope) ;;
    tasks-*) echo "needs the suite's task fixture tools (greet, slow_compute, failing_job, confirm_delete, ...); the tasks of run_code and shell_exec are tested in mcp-tasks.sh" ;;
  esac
}
excused_0_2 () {
  case $1 in
    # The checks that need the suite's diagnostic tools (test_missing_capability,
    # test_streaming_elicitation, test_logging_tool).
    server-stateless)
      echo sep-2575-server-rejects-undeclared-capability sep-2575-missing-capability-http-400 \
        sep-2575-http-server-no-independent-requests-on-stream sep-2575-server-no-log-without-loglevel ;;
    # Those that call the suite's task fixture tools.
    tasks-capability-negotiation)
      echo sep-2663-server-rejects-undeclared-client tasks-per-request-meta-opt-in ;;
    tasks-dispatch-and-envelope)
      echo tasks-server-directed-creation-no-hint sep-2663-legacy-task-param-ignored \
        tasks-immediate-result-shortcut tasks-result-type-complete-on-non-task-responses \
        sep-2663-durable-create-strong-consistency ;;
  esac
}
conformance 0_2 @modelcontextprotocol/conformance-next --requirements 2026-07-28 -- \
  --requirements 2026-07-28

stop_server
ok $? "SIGTERM stops the server cleanly (exit 0)"
[ -z "$(ls "$containers" 2>/dev/null)" ]; ok $? "no container is left"

# --- bearer tokens ---
printf '# tokens for the test\n\nwrong-one\n  s3cret-token  \n' > "$sr_tmp/tokens"
start_server --token-file "$sr_tmp/tokens"
ok $? "serve starts with --token-file"
post -d "$init"
is "$status" 401 "without a token: 401"
like "$(header WWW-Authenticate)" '^Bearer' "with WWW-Authenticate: Bearer"
post -H 'Authorization: Bearer s3cret-tokex' -d "$init"
is "$status" 401 "a wrong token: 401"
post -H 'Authorization: Bearer s3cret-token' -d "$init"
is "$status" 200 "the right token: 200"
post -H 'Authorization: Bearer wrong-one' -d "$init"
is "$status" 200 "every token of the file is accepted"
post -H 'Authorization: Bearer # tokens for the test' -d "$init"
is "$status" 401 "a comment line is no token"
stop_server
ok $? "the server with tokens stops cleanly"

# --- idle MCP sessions expire ---
# http_session_idle_timeout (default an hour); 404 is the spec's sign for
# the client to initialize again.  The gaps between requests are sleeps
# (at least that long) with 2 s to spare below the 5 s timeout for a
# loaded machine; two of them add up to more than the timeout.
if "$SR_BIN" config show 2>/dev/null | grep -q '^http_session_idle_timeout'; then
  export SANDBOX_HTTP_SESSION_IDLE_TIMEOUT=5
  start_server
  ok $? "serve starts with http_session_idle_timeout=5"
  unset SANDBOX_HTTP_SESSION_IDLE_TIMEOUT
  post -d "$init"
  sid=$(header Mcp-Session-Id)
  post -H "Mcp-Session-Id: $sid" -d "$ping"
  is "$status" 200 "a session in use answers"
  sleep 3
  post -H "Mcp-Session-Id: $sid" -d "$ping"
  is "$status" 200 "a request within the timeout keeps it"
  sleep 3
  post -H "Mcp-Session-Id: $sid" -d "$ping"
  is "$status" 200 "the idle time counts from its last request"
  sleep 6
  post -H "Mcp-Session-Id: $sid" -d "$ping"
  is "$status" 404 "idle past the timeout, its id is 404"
  post -d "$init"
  is "$status" 200 "and the client can initialize again"
  stop_server
  ok $? "the server stops cleanly"
else
  skip "session expiry: this build has no http_session_idle_timeout setting"
fi

# --- idle connections of one address lock nobody else out ---
# 130 sockets from 127.0.0.1 that never send a request (more than
# http_max_connections_per_ip); a client from 127.0.0.2 still gets in.
start_server || echo "Bail out! the HTTP server did not start"
hold_idle 130
wait_until 20 idle_done
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --interface 127.0.0.2 \
  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d "$init" "http://127.0.0.1:$port/mcp")
is "$code" 200 "with 130 idle connections from one address, a client from another gets in"
ok $([ "$(cat "$sr_tmp/idle")" -le 64 ] && echo 0 || echo 1) \
  "the idle address holds at most http_max_connections_per_ip (64) of them ($(cat "$sr_tmp/idle") kept)"
kill "$idle" 2>/dev/null
stop_server

# --- refusals at start ---
# The message of a refusal, without the server's log lines around it.
refusal () { printf '%s' "$err" | grep '^sandbox-runner: '; }
port=$(free_port)
run_sr serve --transport http --listen "0.0.0.0:$port"
is "$rc" 125 "listening on 0.0.0.0 without a token file is refused"
like "$err" "token_file" "the message names token_file"
run_sr serve --transport http --listen "127.0.0.1:$port" --token-file "$sr_tmp/missing"
like "$rc $(refusal)" "^125 .*token_file.*missing" "a missing token file is refused"
printf '# nothing here\n\n' > "$sr_tmp/empty-tokens"
run_sr serve --transport http --listen "127.0.0.1:$port" --token-file "$sr_tmp/empty-tokens"
like "$rc $(refusal)" "^125 .*holds no token" "a token file without a token is refused"
run_sr serve --transport http --listen "nonsense"
like "$rc $(refusal)" "^125 .*HOST:PORT" "a bad listen address is refused"
python3 -c 'import socket,time,sys; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)' > "$sr_tmp/busy" &
busy=$!
for i in $(seq 1 50); do [ -s "$sr_tmp/busy" ] && break; sleep 0.1; done
run_sr serve --transport http --listen "127.0.0.1:$(cat "$sr_tmp/busy")"
like "$rc $(refusal)" "^125 .*Address already in use" "an address in use is refused"
kill "$busy"

done_testing
