#!/bin/sh
# A shell_exec task on an SSH host, over HTTP with curl: the host's bash
# runs on a terminal of the remote side, which the runner only relays, so
# its command's wait for input cannot be seen: the task stays working
# and its status message says so, write_stdin feeds the command, and the
# task completes with its output.
. "${SR_SRCDIR}/tests/integration/lib.sh"
command -v curl >/dev/null || skip_all "curl is not installed"
. "${SR_SRCDIR}/tests/integration/sshd.sh"
. "${SR_SRCDIR}/tests/integration/tasks-lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
ssh_target box "$d/known_hosts" > "$d/conf"
export SANDBOX_CONFIG=$d/conf

printf 'token-a\n' > "$sr_tmp/tokens"
SANDBOX_TASK_AFTER=1 start_server --token-file "$sr_tmp/tokens" ||
  echo "Bail out! the HTTP server did not start"

tool token-a env '{"action":"connect","name":"box"}'
shell_task '{"machine":"box"}' '^box-' 'read a; echo \"got $a\"'
sleep 1
call token-a tasks/get "$task" "\"taskId\":\"$task\""
is "$(field 'r["result"]["status"]')" working \
  "its command's wait for input cannot be seen on the SSH host: the task stays working"
like "$(field 'r["result"]["statusMessage"]')" "does not show when its command waits for input.*write_stdin" \
  "and its status message says so, and that write_stdin gives it input"
tool token-a write_stdin "{\"shell_id\":\"$shell\",\"data\":\"x\\n\"}"
until_status token-a "$task" completed
is "$(field 'r["result"]["result"]["structuredContent"]["output"]')" "got x" \
  "write_stdin feeds the command, and the task completes with its output"
tool token-a shell_remove "{\"shell_id\":\"$shell\"}"
stop_server
ok $? "the server stops"
done_testing
