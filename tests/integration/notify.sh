#!/bin/sh
# The readiness protocol of a Type=notify unit: the HTTP server says
# READY=1 once it listens and STOPPING=1 when it stops, as datagrams to
# $NOTIFY_SOCKET (a path or an abstract name), read here by a listener of
# the test's own; and SIGHUP, which reloads the token file (RELOADING=1,
# then READY=1) while sessions live on.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
command -v curl >/dev/null || skip_all "curl is not installed"
require_image python

# listen_notify ADDRESS OUT: collects the datagrams sent to ADDRESS (a
# path, or @name) into OUT, one a line, for 60 s at most.
listen_notify () {
  python3 - "$1" "$2" <<'PY' &
import socket, sys
addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
s.settimeout(60)
open(out + ".bound", "w").close()
with open(out, "w", buffering=1) as f:
    try:
        while True:
            f.write(s.recv(4096).decode() + "\n")
    except socket.timeout:
        pass
PY
  listener=$!
  at_exit "kill $listener 2>/dev/null"
  bound () { [ -e "$2.bound" ]; }
  wait_until 10 bound "$1" "$2"
}

for addr in "$sr_tmp/notify.sock" "@sr-notify-$$"; do
  listen_notify "$addr" "$sr_tmp/notified"
  NOTIFY_SOCKET=$addr start_server || echo "Bail out! the HTTP server did not start"
  ready () { grep -qx 'READY=1' "$sr_tmp/notified"; }
  wait_until 10 ready
  ok $? "READY=1 reaches the service manager once the server listens ($addr)"
  stop_server
  stopping () { grep -qx 'STOPPING=1' "$sr_tmp/notified"; }
  wait_until 10 stopping
  ok $? "and STOPPING=1 when it stops"
  kill "$listener" 2>/dev/null
  rm -f "$sr_tmp/notified" "$sr_tmp/notified.bound"
done

# --- SIGHUP: the token file again, sessions kept ---
# mcp TOKEN [SID] BODY: a POST to $url as that token; $status, $sid (the
# Mcp-Session-Id it gave), $body.
mcp () {
  local token=$1 session=${3:+$2} data=${3:-$2}
  status=$(curl -s -o "$sr_tmp/body" -D "$sr_tmp/headers" -w '%{http_code}' --max-time 20 \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Authorization: Bearer $token" ${session:+-H "Mcp-Session-Id: $session"} \
    -H 'MCP-Protocol-Version: 2025-11-25' -d "$data" "$url")
  sid=$(tr -d '\r' < "$sr_tmp/headers" | sed -n 's/^Mcp-Session-Id: *//Ip')
  body=$(cat "$sr_tmp/body")
}
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
listen_notify "$sr_tmp/reload.sock" "$sr_tmp/notified"
echo "tok-a-$$" > "$sr_tmp/tokens"
NOTIFY_SOCKET=$sr_tmp/reload.sock start_server --token-file "$sr_tmp/tokens" \
  --log-file "$sr_tmp/reload.log" || echo "Bail out! the HTTP server did not start"
mcp "tok-a-$$" "$init"
a=$sid
mcp "tok-a-$$" "$a" '{"jsonrpc":"2.0","method":"notifications/initialized"}'
mcp "tok-a-$$" "$a" '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create_session","arguments":{"image":"python"}}}'
session=$(printf '%s' "$body" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["session_id"])' 2>/dev/null)
like "$session" '^[0-9a-f]{32}$' "token A makes a session"
mcp "tok-b-$$" "$init"
is "$status" 401 "token B is not in the token file yet"
printf 'tok-a-%s\ntok-b-%s\n' $$ $$ > "$sr_tmp/tokens"
kill -HUP "$server"
reloaded () { [ "$(grep -c '^READY=1$' "$sr_tmp/notified")" -ge 2 ]; }
wait_until 10 reloaded
ok $? "SIGHUP: RELOADING=1 then READY=1 reach the service manager"
like "$(grep -x 'RELOADING=1' "$sr_tmp/notified")" "RELOADING=1" "RELOADING=1 among them"
mcp "tok-b-$$" "$init"
is "$status" 200 "after SIGHUP the added token is accepted"
mcp "tok-a-$$" "$a" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}'
like "$status $body" "^200 .*$session" "and token A's MCP session and sandbox session live on"
echo "tok-b-$$" > "$sr_tmp/tokens"
kill -HUP "$server"
revoked () { mcp "tok-a-$$" "$a" '{"jsonrpc":"2.0","id":4,"method":"ping"}'; [ "$status" = 401 ]; }
wait_until 10 revoked
ok $? "a token taken out of the file is refused after the next SIGHUP"
: > "$sr_tmp/tokens"
kill -HUP "$server"
failed () { grep -q reload_failed "$sr_tmp/reload.log"; }
wait_until 10 failed
mcp "tok-b-$$" "$init"
is "$status" 200 "a token file that cannot be used leaves the tokens as they were"
kill -0 "$server"
ok $? "the server kept running through the reloads"
stop_server
like "$(grep ' reload ' "$sr_tmp/reload.log" | tr '\n' ' ')" " info reload tokens=2 .* info reload tokens=1 " \
  "each reload is logged with the number of tokens"
like "$(grep reload_failed "$sr_tmp/reload.log")" " error reload_failed error=\"token_file .* holds no token" \
  "and a failed one says why"
kill "$listener" 2>/dev/null

NOTIFY_SOCKET=$sr_tmp/nobody.sock start_server --log-file "$sr_tmp/server.log" ||
  echo "Bail out! the HTTP server did not start"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url")
stop_server
ok $([ "$code" != 000 ] && echo 0 || echo 1) "a socket nobody listens on does not stop the server (HTTP $code)"
like "$(grep notify_failed "$sr_tmp/server.log" | head -1)" " warning notify_failed state=\"READY=1\" error=" \
  "it is logged"
done_testing
