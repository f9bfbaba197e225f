#!/bin/sh
# Several servers behind HAProxy (issue 30): three `serve --transport
# http` on loopback ports, with distinct server ids and one token file,
# and Debian's haproxy in front with contrib/haproxy/sandbox-runner.cfg
# (its addresses replaced).  curl for /healthz, the server's id on
# responses and session ids, the 404 of a foreign session and draining;
# the official SDK client (tests/mcp/fleet-client.mjs) for ten clients
# that keep their sessions on one server, while one server drains and
# stops; one run history for the three in a PostgreSQL of the test's own.
. "${SR_SRCDIR}/tests/integration/lib.sh"
command -v haproxy >/dev/null || skip_all "haproxy is not installed (apt-get install haproxy)"
command -v curl >/dev/null || skip_all "curl is not installed"
require_image python
require_node_modules

cfg=$SR_SRCDIR/contrib/haproxy/sandbox-runner.cfg
haproxy -c -q -f "$cfg" >"$sr_tmp/check.out" 2>&1
ok $? "haproxy -c accepts contrib/haproxy/sandbox-runner.cfg as shipped"
sed 's/^/# /' "$sr_tmp/check.out"

pids=""
at_exit 'for p in $pids; do kill -KILL "$p" 2>/dev/null; done'

# What every server of a fleet sets: the same tokens, no limit per
# address (they all see HAProxy's).  Room for the test's sessions.
export SANDBOX_HTTP_MAX_CONNECTIONS_PER_IP=0 SANDBOX_MAX_SESSIONS=30 SANDBOX_MAX_SESSIONS_PER_OWNER=0

# server_id: a bad one stops the start, naming it; none is HOSTNAME-PORT.
"$SR_BIN" serve --transport http --listen 127.0.0.1:0 --server-id 'a.b' >/dev/null 2>"$sr_tmp/bad.err" </dev/null
like "$? $(grep '^sandbox-runner:' "$sr_tmp/bad.err")" "^125 .*server_id 'a\.b' is not 1 to 63 letters, digits, '-' or '_'" \
  "a server_id with a '.' is refused at start, and the error names it"
p=$(free_port)
SANDBOX_RUNTIME_DIR=$sr_tmp/run-default \
  "$SR_BIN" serve --transport http --listen "127.0.0.1:$p" >/dev/null 2>"$sr_tmp/default.err" </dev/null &
pid=$!
pids="$pids $pid"
wait_until 10 curl -s -o "$sr_tmp/default.json" "http://127.0.0.1:$p/healthz"
like "$(cat "$sr_tmp/default.json")" "\"server_id\":\"$(hostname | cut -d. -f1 | tr -c 'A-Za-z0-9_\n-' -)-$p\"" \
  "without server_id the server is named by the host's name and its port"
# Full: 64 MCP sessions, each with its GET stream open (none to end for a
# new one).
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
streams=""
for i in $(seq 1 64); do
  sid=$(curl -s -D - -o /dev/null -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -d "$init" "http://127.0.0.1:$p/mcp" | tr -d '\r' | sed -n 's/^Mcp-Session-Id: //Ip')
  curl -s -N -o /dev/null -H "Mcp-Session-Id: $sid" -H 'Accept: text/event-stream' "http://127.0.0.1:$p/mcp" &
  streams="$streams $!" pids="$pids $!"
done
full () { curl -s "http://127.0.0.1:$p/healthz" | grep -q '"status":"full"'; }
wait_until 10 full
ok $? "with 64 sessions whose streams are open, /healthz says full"
like "$(curl -s -w ' %{http_code}' "http://127.0.0.1:$p/healthz")" \
  '"accepting":false,"draining":false,"runs":0,"mcp_sessions":64,"free_session_slots":0\} 503$' "and is 503"
kill $streams
wait $streams 2>/dev/null
kill -TERM "$pid"
wait "$pid"

echo "tok-$$" > "$sr_tmp/tokens"
export SANDBOX_DRAIN_GRACE=15

# One history for the fleet: a PostgreSQL of the test's own, where one
# can run here (else each server keeps its own SQLite file).
start_postgres
pg_rc=$?
[ "$pg_rc" -ne 2 ] || echo "Bail out! $pg_missing"
fleet_history=""
if [ "$pg_rc" -eq 0 ]; then
  psql_q -d postgres -c "CREATE ROLE runner LOGIN PASSWORD 'fleet'" -c "CREATE DATABASE runs OWNER runner"
  fleet_history=postgresql://runner:fleet@127.0.0.1:$pgport/runs
fi

# start_one NAME: a server whose id is NAME (one of the cfg's server
# names), on a free port, with a runtime dir and history of its own;
# sets port_NAME and pid_NAME.
start_one () {
  local name=$1 p pid i
  p=$(free_port)
  SANDBOX_RUNTIME_DIR=$sr_tmp/run-$name SANDBOX_HISTORY_DB=${fleet_history:-$sr_tmp/$name.db} \
    "$SR_BIN" serve --transport http --listen "127.0.0.1:$p" --server-id "$name" \
    --token-file "$sr_tmp/tokens" >"$sr_tmp/$name.out" 2>"$sr_tmp/$name.err" </dev/null &
  pid=$!
  pids="$pids $pid"
  eval "port_$(echo "$name" | tr - _)=$p pid_$(echo "$name" | tr - _)=$pid"
  for i in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$p/healthz" && return 0
    sleep 0.1
  done
  sed 's/^/# serve: /' "$sr_tmp/$name.err"
  return 1
}
for name in host-a-8080 host-b-8080 host-c-8080; do
  start_one "$name" || echo "Bail out! server $name did not start"
done

# The shipped configuration with the servers' ports, HAProxy's own port,
# quick checks, and its log and stats in the test's directory.
hport=$(free_port)
sh "$SR_SRCDIR/tests/fleet/haproxy-cfg.sh" "$hport" "$sr_tmp/haproxy.sock" \
  "$port_host_a_8080" "$port_host_b_8080" "$port_host_c_8080" > "$sr_tmp/haproxy.cfg"
grep -q "127.0.0.1:$port_host_c_8080" "$sr_tmp/haproxy.cfg" && grep -q "bind 127.0.0.1:$hport" "$sr_tmp/haproxy.cfg"
ok $? "the test's haproxy.cfg is the shipped one with the ports put in"
haproxy -c -q -f "$sr_tmp/haproxy.cfg" >"$sr_tmp/check.out" 2>&1
ok $? "haproxy -c accepts it"
sed 's/^/# /' "$sr_tmp/check.out"
haproxy -db -f "$sr_tmp/haproxy.cfg" >"$sr_tmp/haproxy.log" 2>&1 </dev/null &
hpid=$!
pids="$pids $hpid"
base=http://127.0.0.1:$hport
wait_until 10 curl -sf -o /dev/null -H "Authorization: Bearer tok-$$" "$base/healthz"
ok $? "haproxy listens and forwards"
# Every server is up in HAProxy's checks before the clients come.
up () { [ "$(echo 'show stat' | python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.read().encode())
print(b"".join(iter(lambda: s.recv(65536), b"")).decode())' "$sr_tmp/haproxy.sock" | grep -c ',UP,')" -ge 3 ]; }
wait_until 10 up
ok $? "HAProxy's health checks (GET /healthz) find the three servers up"

# --- /healthz, the server id, a foreign session ---
h=$(curl -s -D "$sr_tmp/hh" "http://127.0.0.1:$port_host_b_8080/healthz")
like "$h" '^\{"server_id":"host-b-8080","status":"ok","accepting":true,"draining":false,"runs":0,"mcp_sessions":0,"free_session_slots":[0-9]+\}$' \
  "GET /healthz without a token says the server takes work: runs, sessions, free slots"
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port_host_b_8080/healthz")" 200 "and is 200"
like "$(tr -d '\r' < "$sr_tmp/hh")" 'Sandbox-Runner-Server: host-b-8080' "every response names its server"
is "$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example' "http://127.0.0.1:$port_host_b_8080/healthz")" 403 \
  "/healthz checks Host as the rest does"
is "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$port_host_b_8080/healthz")" 405 "/healthz is GET only"
is "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port_host_b_8080/mcp")" 401 "/mcp still needs the token"

mcp () { # mcp URL [CURL ARGS...]: a POST; $status, $headers, $body
  local u=$1; shift
  status=$(curl -s -o "$sr_tmp/body" -D "$sr_tmp/headers" -w '%{http_code}' --max-time 20 \
    -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    -H "Authorization: Bearer tok-$$" "$@" "$u")
  headers=$(tr -d '\r' < "$sr_tmp/headers")
  body=$(cat "$sr_tmp/body")
}
header () { printf '%s\n' "$headers" | sed -n "s/^$1: *//Ip" | tail -1; }
mcp "$base/mcp" -d "$init"
sid=$(header Mcp-Session-Id)
like "$status $sid" '^200 host-[abc]-8080\.[0-9a-f]{32}$' "initialize through HAProxy: an Mcp-Session-Id that starts with the server's id"
is "$(header Sandbox-Runner-Server)" "${sid%%.*}" "the response names the same server"
for i in 1 2 3 4 5; do
  mcp "$base/mcp" -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","id":2,"method":"ping"}'
  echo "$status $(header Sandbox-Runner-Server)"
done > "$sr_tmp/pings"
is "$(sort -u "$sr_tmp/pings")" "200 ${sid%%.*}" "five requests of the session all reach its server"
other=host-a-8080
[ "${sid%%.*}" != host-a-8080 ] || other=host-c-8080
port_other=$(eval echo "\$port_$(echo $other | tr - _)")
mcp "http://127.0.0.1:$port_other/mcp" -H "Mcp-Session-Id: $sid" -d '{"jsonrpc":"2.0","id":2,"method":"ping"}'
like "$status $body" '^404 .*Session not found' "another server answers the session's id with 404, not 400"
mcp "$base/mcp" -H "Mcp-Session-Id: host-z-8080.0123456789abcdef0123456789abcdef" -d '{"jsonrpc":"2.0","id":2,"method":"ping"}'
is "$status" 404 "an id naming no server of HAProxy's is 404 too"
mcp "$base/mcp" -H "Mcp-Session-Id: $sid" -X DELETE
is "$status" 200 "DELETE of the session through HAProxy"
# 2026-07-28: no MCP session to route by; the request is balanced and answered.
mcp "$base/mcp" -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' \
  -d '{"jsonrpc":"2.0","id":3,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
like "$status $(header Sandbox-Runner-Server) $(header Mcp-Session-Id)" '^200 host-[abc]-8080 $' \
  "a request of 2026-07-28 (no session) is balanced, answered, and names its server"

# --- ten SDK clients; host-a drains and stops while they work ---
(cd "$NODE_DIR" && timeout 240 "$NODE" fleet-client.mjs "$base/mcp" "tok-$$" "$pid_host_a_8080" host-a-8080 \
  "http://127.0.0.1:$port_host_a_8080/healthz") >"$sr_tmp/client.out" 2>"$sr_tmp/client.err"
is "$?" 0 "the SDK clients' run ends cleanly"
relay_results < "$sr_tmp/client.out"
grep -v '^RESULT' "$sr_tmp/client.err" | head -5 | sed 's/^/# stderr: /'
wait "$pid_host_a_8080"
is "$?" 0 "the drained server exited with status 0"
grep -q 'info drain server_id=host-a-8080 grace_s=15' "$sr_tmp/host-a-8080.err"
ok $? "its log says it drained"
is "$(ls "$sr_tmp/run-host-a-8080/containers" 2>/dev/null | wc -l)" 0 "and it left no container state behind"
grep -q '/files/host-[abc]-8080\.[0-9a-f]\{32\}/out.txt' "$sr_tmp/haproxy.log"
ok $? "HAProxy's log shows the download links it routed by their path"

# Every run the clients made, on whichever server, is a row of the one
# history, with its owner (the client's token).
if [ -n "$fleet_history" ]; then
  grep '^RUN ' "$sr_tmp/client.out" > "$sr_tmp/runs"
  lost=0
  while read -r _ server session; do
    [ "$(psql_q -d runs -c "SELECT count(*) FROM runs WHERE session_id = '$session' AND owner IS NOT NULL")" = 1 ] ||
      { lost=$((lost + 1)); echo "# not in the history: the run in $session on $server"; }
  done < "$sr_tmp/runs"
  is "$lost" 0 "the PostgreSQL history holds each of the clients' $(wc -l < "$sr_tmp/runs") runs, with its owner"
  is "$(cut -d' ' -f2 "$sr_tmp/runs" | sort -u | tr '\n' ' ')" \
    "host-a-8080 host-b-8080 host-c-8080 " "from all three servers"
else
  skip "one history for the fleet in PostgreSQL: $pg_missing"
  skip "from all three servers: $pg_missing"
fi

# --- the end: the other two stop, by the other ways ---
# host-b keeps a session: SIGTERM drains it, a second SIGTERM ends it at once.
mcp "http://127.0.0.1:$port_host_b_8080/mcp" -d "$init"
kill -TERM "$pid_host_b_8080"
draining () { curl -s "http://127.0.0.1:$port_host_b_8080/healthz" | grep -q '"draining":true'; }
wait_until 5 draining
ok $? "host-b-8080, a session open, drains on SIGTERM"
sleep 0.5
kill -0 "$pid_host_b_8080" 2>/dev/null
ok $? "and keeps serving while the session is there"
start=$(date +%s)
kill -TERM "$pid_host_b_8080"
wait "$pid_host_b_8080"
is "$? $(( $(date +%s) - start < 5 ))" "0 1" "a second SIGTERM ends it at once, with status 0"
# host-c has no session left: SIGUSR2 drains it, and it exits at once.
kill -USR2 "$pid_host_c_8080"
wait "$pid_host_c_8080"
is "$?" 0 "host-c-8080, with no session left, drains on SIGUSR2 and exits"
grep -q 'info drain server_id=host-c-8080' "$sr_tmp/host-c-8080.err"
ok $? "its log says it drained"
kill -TERM "$hpid"
wait "$hpid" 2>/dev/null
pids=""
done_testing
