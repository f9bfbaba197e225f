# The checks of the run history that hold for every store history_db
# names (SQLite, PostgreSQL): sourced by history.sh and history-pg.sh with
# SANDBOX_HISTORY_DB set to a store that holds no run yet.  run-code
# records every run that happened, and `history` lists them, as a table or
# JSON, with filters.  Leaves $before, the number of runs recorded.

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

code 'print("one")'
is "$rc" 0 "a successful run"
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
