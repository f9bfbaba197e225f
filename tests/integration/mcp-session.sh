#!/bin/sh
# Sessions through the official MCP client: the data workflow (upload a
# CSV, pandas and matplotlib, read the chart back), persistence, busy,
# limits, quota, expiry, the file tools, path escapes, the HTTP download
# route; then a server killed with sessions open, whose next start
# reclaims them.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python cpp python-data
require_node_modules
containers=$SANDBOX_RUNTIME_DIR/containers

# A host file nothing in a session may ever read.
secret=$sr_tmp/host-secret.txt
echo "host-secret $$" > "$secret"
chmod 644 "$secret"

(cd "$NODE_DIR" && timeout 300 "$NODE" session-client.mjs "$SR_BIN" "$secret") \
  > "$sr_tmp/client.out" 2>"$sr_tmp/client.err"
is "$?" 0 "the SDK client's sessions end cleanly"
relay_results < "$sr_tmp/client.out"
grep -v '^RESULT' "$sr_tmp/client.err" | head -5 | sed 's/^/# stderr: /'
[ -z "$(ls "$containers" 2>/dev/null)" ]; ok $? "no session container is left after the server exits"
[ -z "$(ls "$SANDBOX_RUNTIME_DIR/scratch" 2>/dev/null)" ]; ok $? "no session code directory is left"

# A strict client: every byte of every answer is UTF-8, even for a file
# named with invalid UTF-8 (the SDK client above would mend bad bytes
# into U+FFFD and lose the name).
timeout 120 python3 - "$SR_BIN" > "$sr_tmp/strict.out" 2>&1 <<'PY'
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def call(i, method, params):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n").encode())
    p.stdin.flush()
    while True:
        line = p.stdout.readline()
        try:
            m = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            return None, "%s: %r" % (e, line[:300])
        if m.get("id") == i:
            return m.get("result", {}).get("structuredContent"), line
call(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "strict", "version": "1"}})
sid = call(1, "tools/call", {"name": "create_session", "arguments": {}})[0]["session_id"]
want = "YmFk/y50eHQ="  # b"bad\xff.txt"
for i, (tool, args, get) in enumerate([
        ("run_code", {"language": "python", "code": "open(b'bad\\xff.txt', 'w').write('strict')"},
         lambda r: r["artifacts"]),
        ("list_artifacts", {}, lambda r: r["artifacts"]),
        ("read_artifact", {"path": "x", "path_base64": want}, lambda r: [r])], 2):
    res, raw = call(i, "tools/call", {"name": tool, "arguments": dict(args, session_id=sid)})
    good = res is not None and any(a.get("path_base64") == want for a in get(res))
    print("RESULT %d %s answers in strict UTF-8 JSON, the name in path_base64" % (0 if good else 1, tool))
    if not good:
        print("# %s" % raw)
p.stdin.close()
p.wait()
PY
relay_results < "$sr_tmp/strict.out"

# HTTP: the artifacts' download route, under the bearer token.
echo "tok-$$" > "$sr_tmp/tokens"
start_server --token-file "$sr_tmp/tokens" || echo "Bail out! the HTTP server did not start"
(cd "$NODE_DIR" && timeout 120 "$NODE" session-client.mjs --http "$url" "tok-$$") \
  > "$sr_tmp/http-client.out" 2>&1
is "$?" 0 "the HTTP client ends cleanly"
relay_results < "$sr_tmp/http-client.out"
stop_server
is "$?" 0 "the HTTP server exits cleanly"

# kill -9 with a session open: its container dies with the server, and
# the next start removes what is left.
serve_holding_session native
like "$(cat "$sr_tmp/killed.out")" '"session_id"' "a session is created"
session_box=$(running_containers "$containers" | head -1)
init=$(sed -n 's/.*"init_pid":[[:space:]]*\([0-9]*\).*/\1/p' "$containers/$session_box.json" 2>/dev/null)
[ -n "$init" ] && kill -0 "$init" 2>/dev/null; ok $? "its init runs (pid ${init:-none})"
kill -9 "$server"
wait "$server" 2>/dev/null
exec 3>&-
for i in $(seq 1 150); do
  kill -0 "$init" 2>/dev/null || break
  sleep 0.1
done
! kill -0 "$init" 2>/dev/null; ok $? "the session's init dies with the killed server"
printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' |
  timeout 20 "$SR_BIN" serve >/dev/null 2>&1
[ -z "$(ls "$containers" 2>/dev/null)" ]; ok $? "the next start reclaims the dead server's session"
done_testing
