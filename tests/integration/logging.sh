#!/bin/sh
# The server's log: a line per event on stderr (or log_file), logfmt or
# JSON, at or above log_level; the one-shot commands log nothing.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
command -v curl >/dev/null || skip_all "curl is not installed"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
inited='{"jsonrpc":"2.0","method":"notifications/initialized"}'
run='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"run_code","arguments":{"language":"python","code":"print(1)"}}}'
bad='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"close_session","arguments":{"session_id":"nope"}}}'
serve_stdio () { printf '%s\n' "$init" "$inited" "$run" "$bad" | timeout 30 "$SR_BIN" serve "$@" 2>"$sr_tmp/log" >/dev/null; }

serve_stdio
is "$?" 0 "serve over stdio ends at EOF"
stamp='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12}Z'
like "$(sed -n 1p "$sr_tmp/log")" "^$stamp info start version=[^ ]+ transport=stdio backend=native pid=[0-9]+$" \
  "the first line says the server started, how and where"
like "$(grep ' run ' "$sr_tmp/log")" "^$stamp info run language=python status=success duration_ms=[0-9]+ run_id=[0-9a-f-]{36}$" \
  "a run is logged with its language, status, duration and history id"
like "$(grep 'tool=run_code' "$sr_tmp/log")" " info request method=tools/call tool=run_code status=ok duration_ms=[0-9.]+ client=stdio$" \
  "each tool call is a request line"
like "$(grep 'tool=close_session' "$sr_tmp/log")" " status=session_not_found .* machine=nope$" \
  "with the code of a refusal and the machine it named"
like "$(tail -1 "$sr_tmp/log")" "^$stamp info stop status=ok$" "the last line says it stopped"

SANDBOX_LOG_FORMAT=json serve_stdio
is "$(python3 -c 'import json,sys
lines=[json.loads(l) for l in open(sys.argv[1])]
print(lines[0]["event"], lines[-1]["event"], " ".join(sorted(l["event"] for l in lines[1:-1])),
      all({"time","level","event"} <= l.keys() for l in lines))' "$sr_tmp/log" 2>&1)" \
  "start stop request request run True" "log_format json: one JSON object a line, with time, level and event"

SANDBOX_LOG_LEVEL=warning serve_stdio
is "$(cat "$sr_tmp/log")" "" "log_level warning leaves the info lines out"
out=$(SANDBOX_LOG_LEVEL=loud "$SR_BIN" config show 2>&1)
like "$? $out" "^125 .*unknown log level 'loud' \(debug, info, warning, error\)" "an unknown level is refused"
out=$(SANDBOX_LOG_FORMAT=xml "$SR_BIN" config show 2>&1)
like "$? $out" "^125 .*unknown log format 'xml' \(text, json\)" "and so is an unknown format"

echo 'print(1)' | "$SR_BIN" run-code --language python >/dev/null 2>"$sr_tmp/err"
is "$? $(cat "$sr_tmp/err")" "0 " "a one-shot run-code logs nothing"

echo "tok-$$" > "$sr_tmp/tokens"
start_server --token-file "$sr_tmp/tokens" --log-file "$sr_tmp/server.log" ||
  echo "Bail out! the HTTP server did not start"
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer wrong" \
  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d "$init" "$url")
is "$code" 401 "a wrong token is refused"
stop_server
like "$(grep ' listen ' "$sr_tmp/server.log")" " info listen address=127.0.0.1:$port transport=http server_id=[A-Za-z0-9_-]+-$port$" \
  "over HTTP, the address it listens on and its server_id, in log_file"
like "$(grep auth_failed "$sr_tmp/server.log")" " warning auth_failed peer=127.0.0.1 reason=\"Unauthorized: a valid bearer token is required\"$" \
  "an authentication failure, with the peer's address and why"
like "$(grep ' shutdown ' "$sr_tmp/server.log")" " info shutdown address=127.0.0.1:$port$" "and its shutdown"
done_testing
