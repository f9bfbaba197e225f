#!/bin/sh
# The run history in PostgreSQL (history_db a URI), against a real server
# this test starts as the postgres user on a loopback port of its own: the
# same checks as with SQLite (history-checks.sh), the owner of each run over
# MCP, migrations from an empty database and from the previous version,
# three HTTP servers writing at once, and a server whose database is down,
# which keeps running code and records again once it is back.
. "${SR_SRCDIR}/tests/integration/lib.sh"
command -v curl >/dev/null || skip_all "curl is not installed"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run
require_image python

# --- a PostgreSQL of this test's own ---
start_postgres
case $? in
  0) ;;
  1) skip_all "$pg_missing" ;;
  *) echo "Bail out! $pg_missing"; exit 1 ;;
esac
# What README.md tells an administrator to create: a role that owns a database.
psql_q -d postgres -c "CREATE ROLE runner LOGIN PASSWORD 's3cretpw'" \
  -c "CREATE DATABASE runs OWNER runner" -c "CREATE DATABASE old OWNER runner"
uri_of () { echo "postgresql://runner:s3cretpw@127.0.0.1:$pgport/$1"; }
shown_of () { echo "postgresql://runner:\*\*\*@127.0.0.1:$pgport/$1"; }
q () { psql_q -d "${db:-runs}" -c "$1"; }

# --- the checks that hold for SQLite, on an empty database ---
export SANDBOX_HISTORY_DB=$(uri_of runs)
. "${SR_SRCDIR}/tests/integration/history-checks.sh"
is "$(q 'SELECT version FROM schema_version')" 3 "an empty database is migrated to version 3"
is "$(q 'SELECT count(*) FROM runs')" "$before" "the runs are rows of the table runs"
is "$(q "SELECT count(*) FROM runs WHERE owner IS NULL AND source = 'cli'")" "$before" \
  "runs of the CLI have no owner"

# --- a role that may only read and write rows (README.md's grants) ---
psql_q -d runs -c "CREATE ROLE writer LOGIN" \
  -c "GRANT SELECT, INSERT, DELETE ON runs, audit, schema_version TO writer" \
  -c "GRANT USAGE ON SEQUENCE runs_seq_seq, audit_seq_seq TO writer"
printf 'print("writer")\n' > "$sr_tmp/w.py"
SANDBOX_HISTORY_DB=postgresql://writer@127.0.0.1:$pgport/runs run_sr run-code -l python "$sr_tmp/w.py"
is "$rc $err" "0 " "a role with the documented grants records runs once the tables exist"
is "$(q "SELECT count(*) FROM runs WHERE code_preview = 'print(\"writer\")' || chr(10)")" 1 \
  "its run is in the database"

# --- migration from the previous version (2: no owner yet) ---
db=old q "CREATE TABLE schema_version (version INTEGER NOT NULL);
  INSERT INTO schema_version VALUES (2);
  CREATE TABLE runs (seq BIGSERIAL NOT NULL, id TEXT PRIMARY KEY NOT NULL,
    timestamp_ms BIGINT NOT NULL, language TEXT NOT NULL, code_preview TEXT, code_sha256 TEXT,
    status TEXT NOT NULL, exit_code INTEGER NOT NULL, duration_ms BIGINT NOT NULL,
    stdout_size BIGINT NOT NULL, stderr_size BIGINT NOT NULL, session_id TEXT,
    source TEXT NOT NULL);
  CREATE TABLE audit (seq BIGSERIAL NOT NULL, timestamp_ms BIGINT NOT NULL, client TEXT NOT NULL,
    machine TEXT NOT NULL, tool TEXT NOT NULL, status TEXT NOT NULL,
    duration_ms BIGINT NOT NULL, args_sha256 TEXT NOT NULL);
  INSERT INTO runs VALUES (DEFAULT, 'r1', 1, 'python', 'old', NULL, 'success', 0, 1, 0, 0,
    NULL, 'cli');
  ALTER TABLE runs OWNER TO runner; ALTER TABLE audit OWNER TO runner;
  ALTER TABLE schema_version OWNER TO runner" >/dev/null
SANDBOX_HISTORY_DB=$(uri_of old) run_sr history --json
is "$rc" 0 "a version 2 database opens"
like "$out" '"code_preview":[[:space:]]*"old"' "its runs are kept"
is "$(db=old q 'SELECT version FROM schema_version')" 3 "and it is migrated to version 3"
db=old q "UPDATE schema_version SET version = 99" >/dev/null
SANDBOX_HISTORY_DB=$(uri_of old) run_sr history --json
is "$rc" 125 "a database of a newer schema is refused"
like "$err" "schema version 99, newer than this sandbox-runner knows" "saying why"

# --- runners that open an empty database at once migrate it once ---
psql_q -d postgres -c "CREATE DATABASE fresh OWNER runner"
for i in 1 2 3 4 5 6; do
  SANDBOX_HISTORY_DB=$(uri_of fresh) "$SR_BIN" history --json >"$sr_tmp/fresh$i.out" 2>&1 &
done
wait
is "$(cat "$sr_tmp"/fresh*.out | sort | uniq -c | sed 's/^ *//')" "6 []" \
  "six runners opening an empty database at once all succeed"
is "$(db=fresh q 'SELECT count(*), max(version) FROM schema_version')" "1|3" \
  "and leave one schema version, 3"

# --- MCP: stdio and HTTP servers record their runs, with their owners ---
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
inited='{"jsonrpc":"2.0","method":"notifications/initialized"}'
call () { # call ID TOOL ARGS-JSON
  echo "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}"
}
printf '%s\n' "$init" "$inited" "$(call 2 run_code '{"language":"python","code":"print(\"stdio\")"}')" \
  | "$SR_BIN" serve > "$sr_tmp/stdio.out" 2>"$sr_tmp/stdio.err"
like "$(grep '"id":2' "$sr_tmp/stdio.out")" '"history":"recorded"' "the stdio server records a run"
is "$(q "SELECT count(*) FROM runs WHERE source = 'mcp' AND owner IS NULL AND code_preview LIKE 'print(\"stdio\")%'")" 1 \
  "as a run of MCP, nobody's in particular"

# Without tokens, each MCP session over HTTP is an owner: "mcp:<its id>".
# mcp URL CALL...: one MCP session over HTTP that makes each CALL ("TOOL
# ARGS-JSON") in turn; prints "SESSION <id>", then a line per call: its
# structured result, or the JSON of its error.
cat > "$sr_tmp/mcp.py" <<'PY'
import json, sys, urllib.request
url = sys.argv[1]
def post(body, sid=None):
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if sid:
        h["Mcp-Session-Id"] = sid
    r = urllib.request.urlopen(urllib.request.Request(url, json.dumps(body).encode(), h), timeout=120)
    data = r.read().decode()
    if r.headers.get("Content-Type", "").startswith("text/event-stream"):
        data = [l[5:] for l in data.splitlines() if l.startswith("data:")][-1]
    return r.headers.get("Mcp-Session-Id"), json.loads(data) if data else None
sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "py", "version": "1"}}})
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
print("SESSION", sid, flush=True)
for i, c in enumerate(sys.argv[2:]):
    name, args = c.split(" ", 1)
    _, resp = post({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call",
                    "params": {"name": name, "arguments": json.loads(args)}}, sid)
    res = resp["result"]
    print(res["content"][0]["text"] if res.get("isError") else json.dumps(res["structuredContent"]),
          flush=True)
PY
mcp () { python3 "$sr_tmp/mcp.py" "$@"; }
# pick N EXPR: EXPR (python, on r) of the structured result on line N of $out.
pick () {
  printf '%s\n' "$out" | sed -n "$1p" | python3 -c 'import json, sys
r = json.load(sys.stdin)
v = eval(sys.argv[1])
print(json.dumps(v) if not isinstance(v, str) else v)' "$2"
}
runpy () { echo "run_code {\"language\":\"python\",\"code\":\"print($1)\"}"; }

start_server
ok $? "an HTTP server starts with a PostgreSQL history"
out=$(mcp "$url" "$(runpy 11)" "$(runpy 12)" 'get_execution_history {"limit":10}' 'audit_query {}')
sid_a=$(printf '%s\n' "$out" | sed -n 's/^SESSION //p')
is "$(pick 2 'r["history"]')" recorded "an MCP session's run is recorded"
is "$(pick 4 '[e["code_preview"] for e in r["runs"]]')" '["print(12)", "print(11)"]' \
  "get_execution_history lists that session's runs, newest first"
is "$(pick 5 '[e["tool"] for e in r["calls"]]')" '["get_execution_history", "run_code", "run_code"]' \
  "audit_query lists its calls"
out=$(mcp "$url" "$(runpy 21)" 'get_execution_history {}')
sid_b=$(printf '%s\n' "$out" | sed -n 's/^SESSION //p')
is "$(pick 3 '[e["code_preview"] for e in r["runs"]]')" '["print(21)"]' \
  "another session sees its own runs only"
is "$(q "SELECT string_agg(code_preview, ',' ORDER BY seq) FROM runs WHERE owner = 'mcp:$sid_a'")" \
  "print(11),print(12)" "each run keeps its owner in the database"
is "$(q "SELECT count(*) FROM runs WHERE owner = 'mcp:$sid_b'")" 1 "the other's too"
run_sr history --json --limit 3
like "$out" '"code_preview":[[:space:]]*"print\(21\)"' "the CLI lists the runs of the server"
stop_server
is "$?" 0 "the server exits cleanly"

# --- the audit trail's retention prunes the shared table ---
q "INSERT INTO audit (timestamp_ms, client, machine, tool, status, duration_ms, args_sha256)
   VALUES (1, 'stdio', '', 'run_code', 'ok', 1, 'sha256:00')" >/dev/null
SANDBOX_AUDIT_RETENTION_DAYS=1 run_sr audit --json
is "$rc" 0 "audit lists the trail"
is "$(q 'SELECT count(*) FROM audit WHERE timestamp_ms = 1') $(q 'SELECT count(*) > 0 FROM audit')" \
  "0 t" "rows past audit_retention_days are pruned, the others kept"

# --- three servers write at once: no run is lost ---
three_servers () {
  local i
  pids=""
  for i in 1 2 3; do
    start_server || echo "Bail out! server $i did not start"
    eval "url$i=\$url pid$i=\$server"
    mv "$sr_tmp/serve.err" "$sr_tmp/serve$i.err"
    pids="$pids $server"
  done
  server=""
}
three_servers
at_exit 'for p in $pids; do kill -KILL $p 2>/dev/null; done'
before=$(q 'SELECT count(*) FROM runs')
clients=""
for i in 1 2 3; do
  for c in 1 2; do
    eval "u=\$url$i"
    mcp "$u" "$(runpy "$i$c"1)" "$(runpy "$i$c"2)" "$(runpy "$i$c"3)" "$(runpy "$i$c"4)" \
      > "$sr_tmp/c$i$c.out" 2>&1 &
    clients="$clients $!"
  done
done
wait $clients
is "$(cat "$sr_tmp"/c*.out | grep -c '"history": "recorded"')" 24 \
  "24 runs on three servers at once (6 clients) are all recorded"
is "$(q "SELECT count(*) FROM runs") $(q 'SELECT count(DISTINCT owner) FROM runs WHERE seq > (SELECT max(seq) FROM runs) - 24')" \
  "$((before + 24)) 6" "all 24 land in the database, each with its client's owner"
for p in $pids; do kill -TERM "$p"; wait "$p"; done
pids=""

# --- a database down: runs go on, history says it is unavailable ---
pg_stop
printf 'print("down")\n' > "$sr_tmp/down.py"
run_sr run-code -l python "$sr_tmp/down.py"
is "$rc $out" "0 down" "run-code runs with its database down"
like "$err" "^sandbox-runner: warning: history: $(shown_of runs): cannot connect" \
  "and warns, naming the database without its password"
start_server
ok $? "a server starts with its database down"
like "$(cat "$sr_tmp/serve.err")" "history_unavailable.*$(shown_of runs)" \
  "it warns that the history is unavailable, naming the database"
grep -q s3cretpw "$sr_tmp/serve.err"
is "$?" 1 "without its password"
out=$(mcp "$url" "$(runpy 31)" 'get_execution_history {}' 'audit_query {}')
is "$(pick 2 'r["stdout"]')" 31 "it still runs code"
like "$(pick 2 'r["history"]')" "^unavailable: .*cannot connect" "the run says the history is unavailable"
is "$(pick 3 'r["error"]["code"]')" history_unavailable "get_execution_history: history_unavailable"
is "$(pick 4 'r["error"]["code"]')" audit_unavailable "audit_query: audit_unavailable"
pg_start
ok $? "the database starts again"
sleep 1.1  # the server tries again at most once a second
out=$(mcp "$url" "$(runpy 32)" 'get_execution_history {}')
is "$(pick 2 'r["history"]')" recorded "once it is back, runs are recorded again"
is "$(pick 3 '[e["code_preview"] for e in r["runs"]]')" '["print(32)"]' "and listed"

# --- the database restarts under a running server: the next write reconnects ---
as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -m fast -w restart >/dev/null 2>&1 \
  -o "-k $pgdir -p $pgport -c listen_addresses=127.0.0.1"
out=$(mcp "$url" "$(runpy 33)")
is "$(pick 2 'r["history"]')" recorded "after a restart of the database, the next run is recorded"
is "$(q "SELECT count(*) FROM runs WHERE code_preview = 'print(33)'")" 1 "once"
stop_server
is "$?" 0 "the server exits cleanly"
grep -q s3cretpw "$sr_tmp/serve.err" "$sr_tmp"/serve*.err
is "$?" 1 "no log holds the password"

# --- libpq is loaded only for a PostgreSQL history ---
# maps_libpq DB: how many maps of libpq a stdio server with history_db DB
# has once it answered initialize.
maps_libpq () {
  rm -f "$sr_tmp/in" && mkfifo "$sr_tmp/in"
  SANDBOX_HISTORY_DB=$1 "$SR_BIN" serve <"$sr_tmp/in" >"$sr_tmp/maps.out" 2>/dev/null &
  local pid=$!
  exec 4>"$sr_tmp/in"
  printf '%s\n' "$init" >&4
  wait_until 10 grep -q '"id":1' "$sr_tmp/maps.out"
  grep -c 'libpq' "/proc/$pid/maps"
  exec 4>&-
  wait "$pid"
}
is "$(maps_libpq "$sr_tmp/h.db")" 0 "a stdio server with a SQLite history maps no libpq"
[ "$(maps_libpq "$(uri_of runs)")" -gt 0 ]
ok $? "one with a PostgreSQL history loads it"

done_testing
