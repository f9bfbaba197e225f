#!/bin/sh
# The Tasks extension (io.modelcontextprotocol/tasks) over Streamable HTTP,
# with curl, for clients of 2026-07-28 that declare it: a C++ build and run
# that outlives task_after comes back as a task, is polled to its result
# with tasks/get, is found by its owner's token only; a second one is
# cancelled with tasks/cancel and leaves nothing running; a program that
# reads its stdin makes its task input_required, and gets its two lines
# through tasks/update (from its owner only); cancelled while it waits,
# it leaves no process, container or cgroup; a shell_exec in a session
# shell whose command reads the terminal goes input_required the same
# way, gets its lines typed through tasks/update (from its owner only),
# and cancelled while it waits leaves no process (one that ignores ^C
# killed) and the shell ready;
# subscriptions/listen sends
# notifications/tasks of the caller's tasks as their status changes; a
# quick run, and a client that does not declare the extension, get the
# result directly.
. "${SR_SRCDIR}/tests/integration/lib.sh"
. "${SR_SRCDIR}/tests/integration/tasks-lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python cpp python-data
command -v curl >/dev/null || skip_all "curl is not installed"
containers=$SANDBOX_RUNTIME_DIR/containers

printf 'token-a\ntoken-b\n' > "$sr_tmp/tokens"
# A rootless runner sees a program wait for input only when it runs as
# the runner itself, root inside: the kernel keeps the /proc entries of
# the containers' other users from it (sandbox-runner-mcp(7), Tasks).
[ "$(id -u)" -eq 0 ] || export SANDBOX_USER=root
# Without pre-started interpreters: a test below finds a program by the
# run's args on its command line, which a pre-started one does not show.
SANDBOX_LANGUAGE_PYTHON_WARM_START= SANDBOX_TASK_AFTER=1 SANDBOX_TASK_KEEP=60 \
  start_server --token-file "$sr_tmp/tokens" ||
  echo "Bail out! the HTTP server did not start"

run_code () { call "$1" tools/call run_code "\"name\":\"run_code\",\"arguments\":$2" "${3-}"; }

call token-a server/discover "" ""
like "$body" '"extensions":\{"io.modelcontextprotocol/tasks":\{\}\}' "server/discover offers the Tasks extension"

run_code token-a '{"language":"python","code":"print(1)"}'
like "$body" '"result":\{"content".*"stdout":"1\\n".*"resultType":"complete"' "a quick run answers at once, no task"

cpp='#include <iostream>\n#include <regex>\n#include <map>\n#include <thread>\n#include <chrono>\nint main() { std::this_thread::sleep_for(std::chrono::seconds(2)); std::map<int, std::string> m{{1, \"built\"}}; std::cout << std::regex_replace(m[1], std::regex(\"b\"), \"B\") << std::endl; }'
start=$(date +%s)
run_code token-a "{\"language\":\"cpp\",\"code\":\"$cpp\"}"
task=$(field 'r["result"]["taskId"]')
like "$(field 'r["result"]["resultType"]') $(field 'r["result"]["status"]')" '^task working$' \
  "a C++ build and run longer than task_after comes back as a task"
like "$task" '^[0-9a-f]{32}$' "whose id is 128 random bits"
like "$body" '"createdAt":"[0-9-]+T[0-9:.]+Z","lastUpdatedAt":"[^"]+","ttlMs":60000,"pollIntervalMs":[0-9]+' \
  "with its times, ttlMs (task_keep) and pollIntervalMs"
is "$(( $(date +%s) - start < 5 ))" 1 "before the run ends"
call token-b tasks/get "$task" "\"taskId\":\"$task\""
like "$body" '"error":\{"code":-32602' "another token does not find it"
polls=0
while :; do
  call token-a tasks/get "$task" "\"taskId\":\"$task\""
  status=$(field 'r["result"]["status"]')
  [ "$status" = working ] && [ "$polls" -lt 60 ] || break
  [ "$polls" -gt 0 ] || like "$body" '"statusMessage":"[a-z]+: [0-9]+ bytes of output so far"' \
    "tasks/get of a working task says its stage and output so far"
  polls=$((polls + 1))
  sleep 0.5
done
is "$status" completed "tasks/get polls it to its end ($polls polls)"
like "$(field 'r["result"]["result"]["structuredContent"]["stdout"]')" '^Built$' \
  "with the same CallToolResult a direct call gives, inline"
call token-a tasks/cancel "$task" "\"taskId\":\"$task\""
is "$body" '{"jsonrpc":"2.0","id":9,"result":{"resultType":"complete"}}' "tasks/cancel of an ended task is a plain ack"
call token-a tasks/get "$task" "\"taskId\":\"$task\""
is "$(field 'r["result"]["status"]')" completed "and leaves it completed"

run_code token-a "{\"language\":\"cpp\",\"code\":\"#include <unistd.h>\\nint main() { sleep(60); }\"}"
task2=$(field 'r["result"]["taskId"]')
like "$task2" '^[0-9a-f]{32}$' "a second long run becomes a task"
run_running () { [ -n "$(running_containers "$containers")" ]; }
wait_until 30 run_running
ok $? "its container runs"
call token-b tasks/cancel "$task2" "\"taskId\":\"$task2\""
like "$body" '"code":-32602' "another token cannot cancel it"
call token-a tasks/cancel "$task2" "\"taskId\":\"$task2\""
is "$body" '{"jsonrpc":"2.0","id":9,"result":{"resultType":"complete"}}' "tasks/cancel acknowledges"
call token-a tasks/get "$task2" "\"taskId\":\"$task2\""
is "$(field 'r["result"]["status"]')" cancelled "the task is cancelled"
run_gone () { [ -z "$(running_containers "$containers")" ]; }
wait_until 10 run_gone
ok $? "and its run's container is gone"

# --- a program that reads its stdin: input_required, fed by tasks/update ---
# two_lines TASK WHAT READS: TASK, whose WHAT reads READS (its stdin, its
# terminal), asks for input; another owner's answer is refused; it gets
# "one", asks again and gets "two"; it is polled until it completes.
two_lines () {
  input_wait token-a "$1"
  is "$(field 'r["result"]["status"]') $key" "input_required stdin-1" \
    "a $2 that reads $3 makes its task input_required, asking stdin-1"
  is "$(field 'r["result"]["inputRequests"]["stdin-1"]["method"]')" elicitation/create \
    "with an elicitation/create of the input"
  like "$(field 'r["result"]["statusMessage"]')" "waits for input on $3" \
    "and a status message that says it waits on $3"
  update token-b "$1" stdin-1 '{"text":"intruder\n"}'
  like "$body" '"error":\{"code":-32602' "an update to another owner's task is refused"
  update token-a "$1" stdin-1 '{"text":"one\n"}'
  is "$body" '{"jsonrpc":"2.0","id":9,"result":{"resultType":"complete"}}' \
    "tasks/update with the first line is a bare acknowledgement"
  input_wait token-a "$1"
  is "$key" stdin-2 "the $2 reads it and waits for the next line: stdin-2"
  update token-a "$1" stdin-2 '{"text":"two\n"}'
  until_status token-a "$1" completed
}
echo2='import sys\nfor i in range(2): print(\"got\", sys.stdin.readline().strip(), flush=True)'
run_code token-a "{\"language\":\"python\",\"code\":\"$echo2\"}"
two_lines "$(field 'r["result"]["taskId"]')" program "its stdin"
is "$(field 'r["result"]["result"]["structuredContent"]["stdout"]')" "got one
got two" "it ends with both lines echoed, as the output of the task's result"

# A task waiting for input that is cancelled leaves no process, no
# container, no cgroup.  The run's args mark its process.
mark=sr-input-$$
run_code token-a "{\"language\":\"python\",\"code\":\"import sys\\nsys.stdin.read()\",\"args\":[\"$mark\"]}"
task4=$(field 'r["result"]["taskId"]')
input_wait token-a "$task4"
is "$(field 'r["result"]["status"]')" input_required "a second program waits for input"
pid=$(pgrep -f -n "$mark")
# Its cgroup directories, those the server's own process is not in.
cgroups=$(awk -F: -v own="$(cat /proc/$server/cgroup)" 'index(own, $0) == 0 {
    d = $2; sub(/^name=/, "", d)
    print (d == "" ? "/sys/fs/cgroup" : "/sys/fs/cgroup/" d) $3 }' "/proc/$pid/cgroup" |
  while read -r d; do [ -d "$d" ] && echo "$d"; done)
[ -n "$pid" ]; ok $? "its process is there, in $(echo "$cgroups" | grep -c .) cgroup directories of its own"
call token-a tasks/cancel "$task4" "\"taskId\":\"$task4\""
call token-a tasks/get "$task4" "\"taskId\":\"$task4\""
is "$(field 'r["result"]["status"]')" cancelled "tasks/cancel cancels it"
no_process () { ! pgrep -f "$mark" >/dev/null; }
wait_until 10 no_process
ok $? "and no process of it is left"
wait_until 10 run_gone
ok $? "nor its container"
left=$(for d in $cgroups; do [ -d "$d" ] && echo "$d"; done)
is "$left" "" "nor its cgroup"

# --- a shell_exec whose command reads its terminal ---
shell_task '{}' '-[0-9]+$' 'read a; read b; echo \"$a-$b\"'
two_lines "$task" command "its terminal"
is "$(field 'r["result"]["result"]["structuredContent"]["output"]') $(field 'r["result"]["result"]["structuredContent"]["exit_code"]')" \
  "one-two 0" "it completes with both lines in its output, and exit code 0"

# A command that does not read stays working; eof types ^D, after a
# line left open.
tool token-a shell_exec "{\"shell_id\":\"$shell\",\"command\":\"sleep 3; echo slept\"}"
task8=$(field 'r["result"]["taskId"]')
statuses=
for i in $(seq 1 100); do
  call token-a tasks/get "$task8" "\"taskId\":\"$task8\""
  statuses="$statuses $(field 'r["result"]["status"]')"
  [ "${statuses% completed}" = "$statuses" ] || break
  sleep 0.1
done
like "$statuses" '^( working)+ completed$' \
  "a shell command that reads nothing stays working to its end, never input_required"
tool token-a shell_exec "{\"shell_id\":\"$shell\",\"command\":\"sleep 2; cat\"}"
task9=$(field 'r["result"]["taskId"]')
input_wait token-a "$task9"
update token-a "$task9" "$key" '{"text":"no newline","eof":true}'
until_status token-a "$task9" completed
is "$(field 'r["result"]["result"]["structuredContent"]["output"]') $(field 'r["result"]["result"]["structuredContent"]["exit_code"]')" \
  "no newline 0" "eof ends the input of cat, after the line it left open"

# A program the command starts, cancelled while it waits for input,
# leaves no process, even one that ignores ^C: its arguments mark it.
tool token-a shell_exec "{\"shell_id\":\"$shell\",\"command\":\"sh -c 'trap \\\"\\\" INT; read x' $mark\"}"
task7=$(field 'r["result"]["taskId"]')
input_wait token-a "$task7"
is "$(field 'r["result"]["status"]')" input_required "a program started in the shell that reads its terminal makes the task input_required"
pgrep -f "$mark" >/dev/null; ok $? "its process is there"
# A ^C typed through tasks/update waits out the interrupt's grace (the
# program ignores it) without holding up the other calls on tasks.
(update token-a "$task7" "$key" '{"text":"\u0003"}'; printf '%s' "$body" > "$sr_tmp/typed") &
typing=$!
sleep 0.5
before=$(date +%s%N)
call token-a tasks/get "$task9" "\"taskId\":\"$task9\""
after=$(date +%s%N)
is "$(field 'r["result"]["status"]') $(( (after - before) / 1000000 < 1000 ))" "completed 1" \
  "a tasks/get while an update's ^C waits for the program is answered at once"
wait "$typing"
is "$(cat "$sr_tmp/typed")" '{"jsonrpc":"2.0","id":9,"result":{"resultType":"complete"}}' \
  "and the update is acknowledged when the grace is over"
call token-a tasks/cancel "$task7" "\"taskId\":\"$task7\""
call token-a tasks/get "$task7" "\"taskId\":\"$task7\""
is "$(field 'r["result"]["status"]')" cancelled "tasks/cancel cancels it"
wait_until 10 no_process
ok $? "and no process of it is left"
tool token-a shell_exec "{\"shell_id\":\"$shell\",\"command\":\"echo after\"}"
is "$(field 'r["result"]["structuredContent"]["output"]')" after "the shell is ready for the next command"
tool token-a shell_remove "{\"shell_id\":\"$shell\"}"

# --- subscriptions/listen: notifications/tasks of a caller's tasks ---
run_code token-a '{"language":"python","code":"import sys\nprint(sys.stdin.readline().upper())"}'
task5=$(field 'r["result"]["taskId"]')
unknown=0123456789abcdef0123456789abcdef
# A listen of 8 s at most: the stream lasts until the client goes.
(max_time=8 call token-a subscriptions/listen "" \
  "\"notifications\":{\"taskIds\":[\"$task5\",\"$unknown\"],\"toolsListChanged\":true}"
  printf '%s\n' "$body" > "$sr_tmp/listen") &
listener=$!
input_wait token-a "$task5"
update token-a "$task5" "$key" '{"text":"hi\n"}'
wait "$listener"
# frames EXPR: EXPR of the list of the stream's messages (f).
frames () {
  python3 -c 'import json,sys
f = [json.loads(l[6:]) for l in open(sys.argv[1]) if l.startswith("data: ")]
print(eval(sys.argv[2]))' "$sr_tmp/listen" "$1" 2>/dev/null
}
is "$(frames 'f[0]["method"], f[0]["params"]["notifications"]')" \
  "('notifications/subscriptions/acknowledged', {'taskIds': ['$task5']})" \
  "subscriptions/listen acknowledges first, agreeing to the caller's task only (not an unknown one, nor tools)"
is "$(frames 'set(m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for m in f)')" "{9}" \
  "every message on its stream names the subscription (the listen's id)"
is "$(frames '[m["params"]["status"] for m in f[1:] if m["method"] == "notifications/tasks"][0]')" \
  input_required "notifications/tasks says the task asks for input"
is "$(frames '[m["params"]["result"]["structuredContent"]["stdout"] for m in f if m["params"].get("status") == "completed"][0]')" \
  HI "and, once it completed, gives its result inline"
max_time=3 call token-a subscriptions/listen "" "\"notifications\":{\"taskIds\":[\"$task5\"]}" '{}'
like "$body" '"code":-32021' "a listen to tasks from a client that does not declare the extension is -32021"

start=$(date +%s)
run_code token-a '{"language":"python","code":"import time; time.sleep(2); print(2)"}' '{}'
like "$body" '"result":\{"content".*"stdout":"2\\n"' "a client that does not declare the extension gets the result directly"
call token-a tasks/get "$task" "\"taskId\":\"$task\"" '{}'
like "$body" '"code":-32021,.*"requiredCapabilities":\{"extensions":\{"io.modelcontextprotocol/tasks":\{\}\}\}' \
  "tasks/get from a client that does not declare the extension is -32021"
call token-a tasks/get "0123456789abcdef0123456789abcdef" '"taskId":"0123456789abcdef0123456789abcdef"'
like "$body" '"code":-32602,"message":"Invalid params: no task' "an unknown task id is -32602"
for method in tasks/list tasks/result; do
  curl -s -o "$sr_tmp/body" -w '%{http_code}' -H 'Content-Type: application/json' -H 'Accept: application/json' \
    -H 'Authorization: Bearer token-a' -H 'MCP-Protocol-Version: 2026-07-28' -H "Mcp-Method: $method" \
    -d "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"$method\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}" \
    "$url" > "$sr_tmp/status"
  like "$(cat "$sr_tmp/status") $(cat "$sr_tmp/body")" '^404 .*-32601' "$method, gone from the extension, is 404 -32601"
done

# A task still running when the server stops is cancelled with it, one
# waiting for input too.
run_code token-a '{"language":"python","code":"import time; time.sleep(60)"}'
like "$(field 'r["result"]["resultType"]')" task "a run left running as a task"
run_code token-a "{\"language\":\"python\",\"code\":\"import sys\\nsys.stdin.read()\",\"args\":[\"$mark\"]}"
input_wait token-a "$(field 'r["result"]["taskId"]')"
is "$(field 'r["result"]["status"]')" input_required "and one waiting for input"
wait_until 30 run_running
stop_server
ok $? "SIGTERM stops the server with a task running"
wait_until 10 run_gone
ok $? "and no container is left"
no_process
ok $? "nor the process that waited for input"

# A server that drains ends a listen with its result, and need not wait
# its drain grace out.
SANDBOX_DRAIN_GRACE=20 start_server --token-file "$sr_tmp/tokens" ||
  echo "Bail out! the HTTP server did not start"
(max_time=20 call token-a subscriptions/listen "" '"notifications":{"taskIds":[]}'
  printf '%s\n' "$body" > "$sr_tmp/listen") &
listener=$!
sleep 1
start=$(date +%s)
stop_server
ok $? "SIGTERM stops a server with a listen open"
wait "$listener"
is "$(( $(date +%s) - start < 5 ))" 1 "within seconds, not its drain grace"
is "$(frames 'f[-1]["result"]["_meta"]')" "{'io.modelcontextprotocol/subscriptionId': 9}" \
  "the listen ends with its result, naming the subscription"
done_testing
