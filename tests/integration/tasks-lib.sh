# Sourced after lib.sh by the tests of the Tasks extension over HTTP, with
# curl, once start_server has set $url.

# call TOKEN METHOD NAME PARAMS [EXTENSIONS]: a request of 2026-07-28 with
# the Mcp-Name NAME (none when empty); $body is the answer.  EXTENSIONS
# (default: the Tasks extension) are the client's.
tasks_ext='{"io.modelcontextprotocol/tasks":{}}'
call () {
  local meta="\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{\"extensions\":${5:-$tasks_ext}}}"
  set -- -H "Authorization: Bearer $1" -H "Mcp-Method: $2" ${3:+-H "Mcp-Name: $3"} \
    -d "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"$2\",\"params\":{$4${4:+,}$meta}}"
  body=$(curl -s --max-time "${max_time:-60}" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' "$@" "$url")
}
field () { printf '%s' "$body" | python3 -c "import json,sys; r=json.load(sys.stdin); print(eval(sys.argv[1]))" "$1" 2>/dev/null; }
tool () { call "$1" tools/call "$2" "\"name\":\"$2\",\"arguments\":$3" "${4-}"; }
# input_wait TOKEN TASK: polls tasks/get until the task asks for input
# (10 s at most); $key is the key of its request.
input_wait () {
  local i
  key=""
  for i in $(seq 1 100); do
    call "$1" tasks/get "$2" "\"taskId\":\"$2\""
    key=$(field 'list(r["result"].get("inputRequests", {}))[0]')
    [ -n "$key" ] && return 0
    sleep 0.1
  done
  return 1
}
# update TOKEN TASK KEY CONTENT: answers KEY with the content object.
update () {
  call "$1" tasks/update "$2" "\"taskId\":\"$2\",\"inputResponses\":{\"$3\":{\"action\":\"accept\",\"content\":$4}}"
}
# until_status TOKEN TASK STATUS: polls tasks/get until the task has STATUS
# (10 s at most); $body is the last answer.
until_status () {
  local i
  for i in $(seq 1 100); do
    call "$1" tasks/get "$2" "\"taskId\":\"$2\""
    [ "$(field 'r["result"]["status"]')" = "$3" ] && return 0
    sleep 0.1
  done
  return 1
}
# shell_task NEW_ARGS ID_RE COMMAND: shell_new with the arguments NEW_ARGS
# starts a shell ($shell) whose id matches ID_RE, and a shell_exec of
# COMMAND (as a JSON string holds it) there becomes a task ($task).
shell_task () {
  tool token-a shell_new "$1"
  shell=$(field 'r["result"]["structuredContent"]["shell_id"]')
  like "$shell" "$2" "a shell starts, its id naming its machine"
  tool token-a shell_exec "{\"shell_id\":\"$shell\",\"command\":\"$3\"}"
  task=$(field 'r["result"]["taskId"]')
  like "$task" '^[0-9a-f]{32}$' "a shell_exec there of $3 that waits past task_after becomes a task"
}
