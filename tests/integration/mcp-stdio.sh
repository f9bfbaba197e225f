#!/bin/sh
# The MCP server over stdio: the official TypeScript SDK client drives
# every tool, errors, progress, concurrency and cancellation; raw JSON-RPC
# checks the protocol errors; a client killed mid-run leaves nothing.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/history.db
require_image python cpp
require_node_modules
containers=$SANDBOX_RUNTIME_DIR/containers

(cd "$NODE_DIR" && timeout 240 "$NODE" stdio-client.mjs "$SR_BIN") > "$sr_tmp/client.out" 2>"$sr_tmp/client.err"
is "$?" 0 "the SDK client's session ends cleanly"
relay_results < "$sr_tmp/client.out"
grep -v '^RESULT' "$sr_tmp/client.err" | head -5 | sed 's/^/# stderr: /'
[ -z "$(ls "$containers" 2>/dev/null)" ]; ok $? "no container is left after the session"

# Raw JSON-RPC: every error has its code, and the server keeps serving.
rpc () { printf '%s\n' "$@" | timeout 20 "$SR_BIN" serve 2>"$sr_tmp/serve.err"; }
init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
out=$(rpc "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  'not json' '[{"jsonrpc":"2.0","id":1,"method":"ping"}]' '{"jsonrpc":"1.0","id":2,"method":"ping"}' \
  '{"jsonrpc":"2.0","id":3,"method":"no/such"}' '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}}' \
  '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":[1]}' '{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}' \
  '{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"loud"}}' \
  '{"jsonrpc":"2.0","id":7,"method":"ping"}')
code_of () { printf '%s\n' "$out" | python3 -c 'import json,sys
want=sys.argv[1]
for line in sys.stdin:
    m=json.loads(line)
    if json.dumps(m.get("id"))==want: print(m["error"]["code"] if "error" in m else "result")' "$1"; }
like "$(printf '%s\n' "$out" | head -2 | tail -1)" '"id":null,"error":\{"code":-32700' "malformed JSON is -32700"
like "$out" '"id":null,"error":\{"code":-32600,"message":"Invalid Request: batches' "a batch is -32600"
is "$(code_of 2)" -32600 "a wrong jsonrpc version is -32600"
is "$(code_of 3)" -32601 "an unknown method is -32601"
is "$(code_of 4)" -32602 "tools/call without a name is -32602"
is "$(code_of 5)" -32602 "params that are not an object are -32602"
like "$out" '"error":\{"code":-32600,"message":"Invalid Request: id must be a string or an integer' \
  "an id that is an object is -32600"
is "$(code_of 6)" -32602 "an unknown log level is -32602"
is "$(code_of 7)" result "the server still answers after all that"
is "$(code_of 0)" result "initialize is answered"
like "$(printf '%s\n' "$out" | head -1)" '"protocolVersion":"2025-11-25"' "the latest protocol version is accepted"
out=$(rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}')
like "$out" '"protocolVersion":"2025-11-25"' "an unknown version is answered with ours"
out=$(rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}')
like "$out" '"protocolVersion":"2024-11-05"' "an older version we speak is kept"
out=$(rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2026-07-28","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}')
like "$out" '"protocolVersion":"2025-11-25"' "initialize never negotiates 2026-07-28, which has none"

# 2026-07-28 over stdio: no initialize; each request carries its _meta.
meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
out=$(rpc "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{$meta}}" \
  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{$meta}}" \
  '{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}' \
  '{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{}}' \
  '{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}' \
  "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":{$meta}}" \
  "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"run_code\",\"arguments\":{\"language\":\"python\",\"code\":\"print(5)\"},$meta}}")
line_of () { printf '%s\n' "$out" | grep "\"id\":$1,"; }
like "$(line_of 1)" '"result":\{"supportedVersions":\["2026-07-28","2025-11-25".*"resultType":"complete"' \
  "server/discover with no initialize lists 2026-07-28 first"
like "$(line_of 2)" '"result":\{"tools":\[.*"resultType":"complete","ttlMs":[0-9]+,"cacheScope":"public"' \
  "a tools/list of 2026-07-28 has resultType and caching hints"
like "$(line_of 3)" '"code":-32602,"message":"[^"]*clientCapabilities' "a _meta without clientCapabilities is -32602"
like "$(line_of 4)" '"code":-32602' "server/discover without _meta is -32602"
like "$(line_of 5)" '"code":-32022,.*"supported":\["2026-07-28"\],"requested":"2099-01-01"' \
  "an unknown modern version is -32022 with the supported ones"
like "$(line_of 6)" '"code":-32601' "ping is not of 2026-07-28: -32601"
like "$(line_of 7)" '"stdout":"5\\n".*"resultType":"complete"' "run_code over 2026-07-28 with no initialize"

python3 -c 'import json; print(json.dumps({"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"x"*70000}}))' > "$sr_tmp/big.json"
out=$(printf '%s\n' "$(cat "$sr_tmp/big.json")" '{"jsonrpc":"2.0","id":10,"method":"ping"}' |
  SANDBOX_MAX_MESSAGE_SIZE=64K timeout 20 "$SR_BIN" serve 2>/dev/null)
like "$out" '"code":-32600,"message":"Invalid Request: the message is larger than the limit of 65536 bytes' \
  "a message over max_message_size is refused"
like "$out" '"id":9,"error"' "with its own id"
like "$out" '"id":10,"result"' "and the next one is served"

# End of input with a run in flight: the run finishes and is answered.
out=$(printf '%s\n' "$init" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"import time; time.sleep(0.5); print(42)"}}}' |
  timeout 20 "$SR_BIN" serve 2>/dev/null)
like "$out" '"id":1,"result".*42' "a run in flight at end of input is still answered"

# A history database that is corrupt: the run still runs, and says so.
head -c 8192 /dev/urandom > "$sr_tmp/corrupt.db"
out=$(printf '%s\n' "$init" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"print(7)"}}}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_execution_history","arguments":{}}}' |
  SANDBOX_HISTORY_DB=$sr_tmp/corrupt.db timeout 20 "$SR_BIN" serve 2>/dev/null)
like "$out" '"id":1,"result".*"structuredContent":.*"stdout":"7\\n".*"history":"unavailable: ' \
  "with a corrupt history database run_code works and says the history is unavailable"
like "$out" '"id":2,"result".*history_unavailable.*"isError":true' \
  "get_execution_history says why it cannot answer"

# A client killed in the middle of a run: the server notices, kills the
# container and exits.
mkfifo "$sr_tmp/in"
( printf '%s\n' "$init" '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"while True: pass","timeout_seconds":25}}}'; sleep 60 ) > "$sr_tmp/in" &
writer=$!
"$SR_BIN" serve < "$sr_tmp/in" 2>/dev/null | head -1 > /dev/null &
pipeline=$!
serve_pid=""
for i in $(seq 1 300); do
  serve_pid=$(pgrep -f "^$SR_BIN serve$" -P $$ 2>/dev/null | head -1)
  [ -n "$(ls "$containers" 2>/dev/null)" ] && break
  sleep 0.1
done
[ -n "$(ls "$containers" 2>/dev/null)" ]; ok $? "the run started"
kill -9 $writer 2>/dev/null
wait $writer 2>/dev/null
gone=1
for i in $(seq 1 150); do
  if [ -z "$(ls "$containers" 2>/dev/null)" ] && ! kill -0 $pipeline 2>/dev/null; then gone=0; break; fi
  sleep 0.1
done
ok $gone "a client killed mid-run leaves no container and no server"

done_testing
