#!/bin/sh
# What the Docker backend starts does not outlive its runner: a run-code
# killed with SIGKILL mid-run, and a server killed with a session open,
# leave their containers on the daemon, and the next runner on Docker (a
# run-code, not only a server) removes them before it starts its own.
# Where dockerd cannot run (a rootless suite), the whole test is skipped.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_image python
require_dockerd
docker_image_from_cache python python:3.12-slim

# of_runner PID: the ids of our containers (all states) made by runner PID
# on this host.
of_runner () {
  docker ps -a --filter label=org.sandbox-runner \
    --format '{{.ID}} {{.Label "org.sandbox-runner.runner"}}' |
    awk -v id="$(hostname):$1:" 'index($2, id) == 1 { print $1 }'
}
# cleanup_of PID: what a failed check leaves of runner PID goes at the end.
cleanup_of () { at_exit "of_runner $1 | xargs -r docker rm -f >/dev/null 2>&1"; }

printf 'print("next")\n' > "$sr_tmp/next.py"

# --- a run-code killed with SIGKILL in the middle of its run ---
printf 'import time\ntime.sleep(60)\n' > "$sr_tmp/nap.py"
"$SR_BIN" run-code --backend docker -l python "$sr_tmp/nap.py" >/dev/null 2>&1 &
victim=$!
cleanup_of "$victim"
holds_container () { [ -n "$(of_runner "$victim")" ]; }
wait_until 60 holds_container
ok $? "a run-code on Docker runs its container"
sleep 1
kill -9 "$victim"
wait "$victim" 2>/dev/null
is "$(of_runner "$victim" | wc -l)" 1 "killed with SIGKILL, it leaves its container behind"
run_sr run-code --backend docker -l python "$sr_tmp/next.py"
is "$rc $out" "0 next" "the next run-code on Docker runs"
is "$(of_runner "$victim" | tr '\n' ' ')" "" "and removes the killed run-code's container"

# --- a server killed with a session open, then a server or a run-code ---
# killed_session_server: a server on Docker ($server) with a session open,
# killed with SIGKILL.
killed_session_server () {
  serve_holding_session docker
  cleanup_of "$server"
  sid=$(sed -n 's/.*"session_id":"\([0-9a-f]*\)".*/\1/p' "$sr_tmp/killed.out" | head -1)
  ok "$([ -n "$sid" ] && [ -n "$(docker ps -q --filter "label=org.sandbox-runner.session=$sid")" ]; echo $?)" \
    "a server's session container runs (session ${sid:-none})"
  kill -9 "$server"
  wait "$server" 2>/dev/null
  exec 3>&-
  rm -f "$sr_tmp/in"
  is "$(of_runner "$server" | wc -l)" 1 "killed with SIGKILL, the server leaves it"
}
killed_session_server
printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' |
  SANDBOX_BACKEND=docker timeout 60 "$SR_BIN" serve >/dev/null 2>&1
is "$(of_runner "$server" | tr '\n' ' ')" "" "the next server removes the killed server's session container"
killed_session_server
run_sr run-code --backend docker -l python "$sr_tmp/next.py"
is "$rc $out" "0 next" "the next run-code on Docker runs"
is "$(of_runner "$server" | tr '\n' ' ')" "" "and removes the killed server's session container"

# --- what that costs a run-code ---
t0=$(date +%s%N)
run_sr run-code --backend docker -l python "$sr_tmp/next.py"
t1=$(date +%s%N)
echo "# a run-code on Docker with nothing to reap: $(( (t1 - t0) / 1000000 )) ms"
done_testing
