#!/bin/sh
# The run history: run-code records every run that happened in SQLite,
# and `history` lists them, as a table or JSON, with filters.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run
export SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python

code () {
  # code CODE [ARGS...]: run-code -l python with CODE (and a newline) on stdin
  src=$1
  shift
  printf '%s\n' "$src" > "$sr_tmp/code"
  "$SR_BIN" run-code -l python "$@" < "$sr_tmp/code" > "$sr_tmp/out" 2>"$sr_tmp/err"
  rc=$?
  out=$(cat "$sr_tmp/out")
  err=$(cat "$sr_tmp/err")
}

# hist ARGS...: history --json ARGS in $out; jq EXPR evaluates EXPR on it
# with the parsed array as h (python, as json_field does).
hist () { run_sr history --json "$@"; }
jq () {
  printf '%s' "$out" | python3 -c 'import json, re, sys
h = json.load(sys.stdin)
v = eval(sys.argv[1])
print(json.dumps(v) if not isinstance(v, str) else v)' "$1"
}

run_sr history --json
is "$rc" 0 "history with no database yet succeeds"
is "$out" "[]" "and is an empty array"
[ ! -e "$SANDBOX_HISTORY_DB" ]; ok $? "listing does not create the database"

code 'print("one")'
is "$rc" 0 "a successful run"
[ -f "$SANDBOX_HISTORY_DB" ]; ok $? "the first run creates the database"
is "$(stat -c %a "$SANDBOX_HISTORY_DB")" 600 "the database is mode 0600"
sha_one=$(sha256sum < "$sr_tmp/code" | cut -d' ' -f1)
code 'import sys; print("to stderr", file=sys.stderr); sys.exit(3)'
is "$rc" 3 "a run that exits 3"
code 'while True: pass' --timeout 1
is "$rc" 124 "a run that times out"
code 'print("multi")
print("line")'

hist
is "$rc" 0 "history --json succeeds"
is "$(jq 'len(h)')" 4 "four runs are recorded"
is "$(jq '" ".join(e["status"] for e in h)')" "success timeout error success" \
  "newest first, with their statuses"
is "$(jq 'h[3]["code_preview"] == "print(\"one\")\n"')" true "code_preview is the code"
is "$(jq 'h[3]["code_sha256"]')" "sha256:$sha_one" "code_sha256 is the digest of the code"
is "$(jq 'h[3]["stdout_size"]')" 4 "stdout_size counts the bytes written"
is "$(jq 'h[2]["stderr_size"]')" 10 "stderr_size counts the bytes written"
is "$(jq 'h[2]["exit_code"]')" 3 "exit_code is the program's"
is "$(jq 'h[3]["language"]')" python "language"
is "$(jq 'h[3]["source"]')" cli "source is cli"
is "$(jq 'h[3]["session_id"]')" null "session_id is null for a one-shot run"
is "$(jq 'all(re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", e["id"]) is not None for e in h)')" \
  true "every id is a UUID v4"
is "$(jq 'len(set(e["id"] for e in h))')" 4 "ids are unique"
is "$(jq 'all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", e["timestamp"]) is not None for e in h)')" \
  true "timestamps are ISO 8601 UTC with milliseconds"
is "$(jq 'sorted((e["timestamp"] for e in h), reverse=True) == [e["timestamp"] for e in h]')" true \
  "timestamps go down"
is "$(jq 'h[1]["duration_ms"] >= 900')" true "duration_ms of the timeout covers the timeout"
now_year=$(date -u +%Y)
like "$(jq 'h[0]["timestamp"]')" "^$now_year-" "timestamps are of now"

hist --status error
is "$(jq '[e["status"] for e in h]')" '["error"]' "--status filters"
hist --status success
is "$(jq 'len(h)')" 2 "--status success: both"
hist --language python --limit 2
is "$(jq '[e["status"] for e in h]')" '["success", "timeout"]' "--limit keeps the newest"
hist --language cpp
is "$out" "[]" "--language filters"
run_sr history --status bogus
is "$rc" 125 "an unknown status is an error"
like "$err" "unknown status 'bogus' \(valid: success, error, timeout, compile_error, oom, cancelled\)" \
  "listing the valid ones"
run_sr history --limit 0
is "$rc" 125 "--limit 0 is refused"

code "$(printf 'print("tab\there", "esc\033[31m")  # a comment that makes this line longer than forty')"
hist --limit 1
newest=$(jq 'h[0]["id"][:8]')
run_sr history --limit 2
is "$rc" 0 "history prints a table"
like "$(echo "$out" | head -1)" "^ID +TIME +LANGUAGE +STATUS +EXIT +DURATION +OUT/ERR +CODE$" \
  "with a header"
is "$(echo "$out" | wc -l)" 3 "and one line per run"
line=$(echo "$out" | sed -n 2p)
like "$line" "^$newest  [0-9T:.-]+Z  python +success +0 +[0-9]+ms  [0-9]+/0 " \
  "a row: short id, time, language, status, exit, duration, sizes"
is "$(printf '%s' "$line" | sed 's/.*[0-9]\/0  *//')" \
  'print("tab here", "esc?[31m")  # a co...' \
  "the code column: first line, controls replaced, cut to 40 characters"
printf '%s' "$out" | grep -q "$(printf '\033')"
is $? 1 "no escape reaches the terminal"
like "$(echo "$out" | sed -n 3p)" 'print\("multi"\)$' "a multi-line snippet shows its first line"

hist --limit 1000
before=$(jq 'len(h)')
printf 'print(1)\n' > "$sr_tmp/one.py"
run_sr run-code -l cobol "$sr_tmp/one.py"
is "$rc" 125 "an unknown language is refused"
: > "$sr_tmp/empty"
run_sr run-code -l python "$sr_tmp/empty"
is "$rc" 125 "empty code is refused"
hist --limit 1000
is "$(jq 'len(h)')" "$before" "invalid requests are not recorded"

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

done_testing
