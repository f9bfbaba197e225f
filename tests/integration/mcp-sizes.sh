#!/bin/sh
# Sizes that fit clients: an 8 MiB file uploaded and read back in pieces
# through the official SDK client over stdio and HTTP, the session alive
# afterwards; a request over max_message_size answered with its own id
# over both transports (raw JSON), the server still serving.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
command -v curl >/dev/null || skip_all "curl is not installed"
require_node_modules

# --- pieces, through the SDK client ---
(cd "$NODE_DIR" && timeout 300 "$NODE" sizes-client.mjs "$SR_BIN") \
  >"$sr_tmp/stdio.out" 2>"$sr_tmp/stdio.err"
is "$?" 0 "stdio: the SDK client's run ends cleanly"
sed 's/^RESULT \([01]\) /RESULT \1 stdio: /' "$sr_tmp/stdio.out" > "$sr_tmp/stdio.tap"
relay_results < "$sr_tmp/stdio.tap"
grep -v '^RESULT' "$sr_tmp/stdio.err" | head -5 | sed 's/^/# stderr: /'

token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token" > "$sr_tmp/tokens"
start_server --token-file "$sr_tmp/tokens"
ok $? "the HTTP server listens"
(cd "$NODE_DIR" && timeout 300 "$NODE" sizes-client.mjs --http "$url" "$token") \
  >"$sr_tmp/http.out" 2>"$sr_tmp/http.err"
is "$?" 0 "HTTP: the SDK client's run ends cleanly"
sed 's/^RESULT \([01]\) /RESULT \1 HTTP: /' "$sr_tmp/http.out" > "$sr_tmp/http.tap"
relay_results < "$sr_tmp/http.tap"
grep -v '^RESULT' "$sr_tmp/http.err" | head -5 | sed 's/^/# stderr: /'

# --- an over-size request, answered with its id ---
# As the official SDK writes a request: the id last, after the payload.
python3 - "$sr_tmp/big.json" <<'PY'
import json, sys
pad = "A" * (6 << 20)
msg = {"method": "tools/call", "params": {"name": "upload_file",
       "arguments": {"filename": "x.bin", "content_base64": pad}},
       "jsonrpc": "2.0", "id": "big-\"7\""}
open(sys.argv[1], "w").write(json.dumps(msg, separators=(",", ":")))
PY
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
out=$( { printf '%s\n' "$init"; cat "$sr_tmp/big.json"; printf '\n%s\n' '{"jsonrpc":"2.0","id":2,"method":"ping"}'; } |
  timeout 60 "$SR_BIN" serve 2>/dev/null)
like "$out" '"id":"big-\\"7\\"","error":\{"code":-32600,"message":"Invalid Request: the message is larger' \
  "stdio: a request over max_message_size is refused with its own id (a string with quotes, written last)"
like "$out" '"id":2,"result"' "stdio: the server goes on serving"

curl -s -o "$sr_tmp/body" -D "$sr_tmp/headers" -w '%{http_code}' --max-time 20 \
  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Authorization: Bearer $token" -d "$init" "$url" >"$sr_tmp/status"
sid=$(tr -d '\r' < "$sr_tmp/headers" | sed -n 's/^Mcp-Session-Id: *//Ip')
# Two requests on one connection: the 413, then a ping, which must find
# the connection still open (curl reuses it; a reset would fail it).
curl -s --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Authorization: Bearer $token" -H "Mcp-Session-Id: $sid" \
  -w '\nSTATUS %{http_code} %{num_connects}\n' --data-binary @"$sr_tmp/big.json" "$url" \
  --next -s --max-time 30 -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Authorization: Bearer $token" -H "Mcp-Session-Id: $sid" \
  -w '\nSTATUS %{http_code} %{num_connects}\n' -d '{"jsonrpc":"2.0","id":5,"method":"ping"}' "$url" \
  >"$sr_tmp/two.out" 2>&1
rc=$?
is "$rc" 0 "HTTP: curl sees no reset"
like "$(cat "$sr_tmp/two.out")" '"id":"big-\\"7\\"","error":\{"code":-32600' \
  "HTTP: a request over max_message_size is refused with its own id"
like "$(sed -n 2p "$sr_tmp/two.out")" '^STATUS 413 1' "HTTP: as 413"
like "$(sed -n '3,4p' "$sr_tmp/two.out" | tr '\n' ' ')" '"id":5,"result".*STATUS 200 0' \
  "HTTP: and the next request on the same connection is answered"
stop_server
is "$?" 0 "the HTTP server stops cleanly"
done_testing
