#!/bin/sh
# The audit trail and the safety nets of the file tools, through the
# official MCP client (tests/mcp/safety-client.mjs): audit_query, the
# syntax check of JSON, YAML and TOML, sensitive-path warnings, fuzzy
# file_patch, file_search by mtime; then the audit table itself (no code,
# no file content), `sandbox-runner audit`, its retention, and HTTP
# clients that each see only their own calls.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
require_node_modules
command -v curl >/dev/null || skip_all "curl is not installed"

secret="audit-secret-$$-7c1e"
(cd "$NODE_DIR" && timeout 300 "$NODE" safety-client.mjs "$SR_BIN" "$secret") \
  > "$sr_tmp/client.out" 2>"$sr_tmp/client.err"
is "$?" 0 "the SDK client's run ends cleanly"
relay_results < "$sr_tmp/client.out"
grep -v '^RESULT' "$sr_tmp/client.err" | head -5 | sed 's/^/# stderr: /'

# The audit table holds digests, never the code or the file contents the
# calls carried (the run history keeps a preview of run_code's code, by
# design; the audit rows must not).
audit_rows=$(python3 -c 'import sqlite3, sys
for row in sqlite3.connect(sys.argv[1]).execute("SELECT * FROM audit"):
    print("|".join(map(str, row)))' "$SANDBOX_HISTORY_DB")
like "$audit_rows" '\|stdio\|.*\|file_write\|lint_failed\|' "the audit table records the calls"
case $audit_rows in
  *"$secret"*) ok 1 "no code nor file content in the audit table" ;;
  *) ok 0 "no code nor file content in the audit table" ;;
esac

json=$("$SR_BIN" audit --json --tool file_patch --status ambiguous_match)
is "$(printf '%s' "$json" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')" 1 \
  "sandbox-runner audit --json filters by tool and status"
like "$("$SR_BIN" audit --limit 3)" 'TIME +CLIENT +MACHINE +TOOL +STATUS' "sandbox-runner audit prints a table"
"$SR_BIN" audit --since yesterday >/dev/null 2>"$sr_tmp/since.err"
is "$?" 125 "an unreadable --since is refused"

# Retention: a row older than audit_retention_days goes, the rest stays
# (every run of `audit` prunes first: 0 keeps everything).
python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO audit VALUES (1000, ?, ?, ?, ?, 1, ?)", ("stdio", "", "old_tool", "ok", "sha256:00"))
db.commit()' "$SANDBOX_HISTORY_DB"
before=$(SANDBOX_AUDIT_RETENTION_DAYS=0 "$SR_BIN" audit --json --limit 1000 | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
is "$(SANDBOX_AUDIT_RETENTION_DAYS=0 "$SR_BIN" audit --json --tool old_tool | grep -c old_tool)" 1 \
  "audit_retention_days 0 keeps every row"
is "$(SANDBOX_AUDIT_RETENTION_DAYS=1 "$SR_BIN" audit --json --tool old_tool | grep -c old_tool)" 0 \
  "a row older than audit_retention_days is pruned"
after=$("$SR_BIN" audit --json --limit 1000 | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')
is "$after" "$((before - 1))" "and only that row"

# HTTP: each client sees its own calls.
printf 'tok-a-%s\ntok-b-%s\n' $$ $$ > "$sr_tmp/tokens"
start_server --token-file "$sr_tmp/tokens" || echo "Bail out! the HTTP server did not start"
(cd "$NODE_DIR" && timeout 120 "$NODE" safety-client.mjs --http "$url" "tok-a-$$" "tok-b-$$") \
  > "$sr_tmp/http.out" 2>"$sr_tmp/http.err"
is "$?" 0 "the SDK clients' HTTP run ends cleanly"
relay_results < "$sr_tmp/http.out"
grep -v '^RESULT' "$sr_tmp/http.err" | head -5 | sed 's/^/# stderr: /'
stop_server
ok $? "the HTTP server stops"

done_testing
