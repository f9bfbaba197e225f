#!/bin/sh
# The run history: run-code records every run that happened in SQLite,
# and `history` lists them, as a table or JSON, with filters.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run
export SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python

. "${SR_SRCDIR}/tests/integration/history-checks.sh"
[ ! -e "$sr_tmp/never.db" ] && SANDBOX_HISTORY_DB=$sr_tmp/never.db run_sr history --json \
  && [ ! -e "$sr_tmp/never.db" ]
ok $? "listing does not create the database"
is "$(stat -c %a "$SANDBOX_HISTORY_DB")" 600 "the database is mode 0600"

: > "$sr_tmp/not-a-dir"
SANDBOX_HISTORY_DB=$sr_tmp/not-a-dir/h.db code 'print("still runs")'
is "$rc" 0 "a history that cannot be written does not change the exit status"
is "$out" "still runs" "nor the output"
like "$err" "^sandbox-runner: warning: history: .*not-a-dir" "it is a warning naming the path"

head -c 8192 /dev/urandom > "$sr_tmp/corrupt.db"
SANDBOX_HISTORY_DB=$sr_tmp/corrupt.db code 'print("despite a corrupt database")'
is "$rc $out" "0 despite a corrupt database" "a corrupt database does not stop the run"
like "$err" "^sandbox-runner: warning: history: .*corrupt.db" "it is a warning naming the file"
if [ "$(id -u)" -ne 0 ]; then
  cp "$SANDBOX_HISTORY_DB" "$sr_tmp/ro.db" && chmod 0400 "$sr_tmp/ro.db"
  SANDBOX_HISTORY_DB=$sr_tmp/ro.db code 'print("read-only")'
  is "$rc $out" "0 read-only" "a read-only database does not stop the run"
  like "$err" "^sandbox-runner: warning: history: .*ro.db" "it is a warning naming the file"
else
  skip "root writes a 0400 file all the same: the read-only case runs in the rootless suite"
  skip "root writes a 0400 file all the same"
fi

# parallel_runs: 8 run-code at once; $fails counts those that failed or
# warned.
parallel_runs () {
  local i=0
  while [ $i -lt 8 ]; do
    printf 'print(%d)\n' $i > "$sr_tmp/par$i.py"
    "$SR_BIN" run-code -l python "$sr_tmp/par$i.py" > "$sr_tmp/par$i.out" 2>"$sr_tmp/par$i.err" &
    i=$((i + 1))
  done
  wait
  fails=0
  i=0
  while [ $i -lt 8 ]; do
    [ "$(cat "$sr_tmp/par$i.out")" = "$i" ] || fails=$((fails + 1))
    if [ -s "$sr_tmp/par$i.err" ]; then
      fails=$((fails + 1))
      sed 's/^/# /' "$sr_tmp/par$i.err"
    fi
    i=$((i + 1))
  done
}
all8='["print(0)\n", "print(1)\n", "print(2)\n", "print(3)\n", "print(4)\n", "print(5)\n", "print(6)\n", "print(7)\n"]'

parallel_runs
is "$fails" 0 "8 concurrent runs succeed with no history warning"
hist --limit 1000
is "$(jq 'len(h)')" $((before + 8)) "all 8 concurrent runs are recorded"
is "$(jq 'sorted(e["code_preview"] for e in h[:8])')" "$all8" "each of them once"

# The same on a database that does not exist yet: they race to create it,
# switch it to WAL and migrate its schema.
export SANDBOX_HISTORY_DB=$sr_tmp/fresh/h.db
parallel_runs
is "$fails" 0 "8 concurrent runs creating the database all succeed"
hist --limit 1000
is "$(jq 'sorted(e["code_preview"] for e in h)')" "$all8" "and all 8 are recorded"
is "$(python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("PRAGMA journal_mode").fetchone()[0], db.execute("PRAGMA user_version").fetchone()[0])' \
  "$SANDBOX_HISTORY_DB")" "wal 3" "the database is in WAL mode at schema version 3"

# A server whose history did not open tries again at its next use (at most
# once a second): runs are recorded once the database can be made.
: > "$sr_tmp/blocked"
mkfifo "$sr_tmp/srv.in"
SANDBOX_HISTORY_DB=$sr_tmp/blocked/h.db "$SR_BIN" serve <"$sr_tmp/srv.in" >"$sr_tmp/srv.out" 2>"$sr_tmp/srv.err" &
srv=$!
exec 5>"$sr_tmp/srv.in"
at_exit '[ -z "$srv" ] || kill "$srv" 2>/dev/null'
run_call () { # run_call ID: run_code print(ID) on the server, its answer in $answer
  printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"print(%s)"}}}\n' "$1" "$1" >&5
  wait_until 30 grep -q "\"id\":$1," "$sr_tmp/srv.out"
  answer=$(grep "\"id\":$1," "$sr_tmp/srv.out")
}
printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&5
run_call 2
like "$answer" '"history":"unavailable: [^"]*blocked' "a server whose history cannot be made runs code and says so"
rm "$sr_tmp/blocked"
sleep 1.1
run_call 3
like "$answer" '"history":"recorded"' "once it can, the server records runs again"
exec 5>&-
wait $srv
is "$?" 0 "the server exits cleanly"
srv=""

done_testing
