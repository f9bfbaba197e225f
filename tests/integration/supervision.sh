#!/bin/sh
# The runner's side: exit statuses, timeouts, output caps, JSON results and
# the error for each kind of bad input.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs

run_in sh -c 'exit 3'
is "$rc" 3 "the command's exit status is the runner's"

# The timeout's SIGKILL ends the container's init, and the command with it.
run_sr run --json --timeout 0.3 --rootfs "$ROOTFS" -- sleep 10
is "$(json_field "$out" signal)" 9 "the JSON result names the signal that killed the command"
is "$(json_field "$out" exit_code)" 137 "and gives 128+N as exit_code"

run_sr run --json --rootfs "$ROOTFS" -- sh -c 'echo out; echo err >&2; exit 0'
is "$(json_field "$out" status)" success "JSON status success"
is "$(json_field "$out" exit_code)" 0 "JSON exit_code"
is "$(json_field "$out" stdout)" out "JSON stdout"
is "$(json_field "$out" stderr)" err "JSON stderr"
is "$(json_field "$out" stdout_truncated)" false "JSON stdout_truncated"
like "$(json_field "$out" duration_ms)" '^[0-9.]+$' "JSON duration_ms"

# The command is pid 2 under an init of ours, so the signals it sends
# itself end it as on a host, and the result is the command's own end.
run_sr run --json --timeout 10 --rootfs "$ROOTFS" -- sh -c 'kill -TERM $$; echo alive'
is "$(json_field "$out" signal)" 15 "kill -TERM \$\$ in sh ends it with SIGTERM"
is "$(json_field "$out" stdout)" "" "and nothing after the kill runs"
start=$(date +%s%N)
run_sr run --timeout 10 --rootfs "$ROOTFS" -- sh -c 'kill -KILL $$; sleep 10'
end=$(date +%s%N)
is "$rc" 137 "a command that SIGKILLs itself exits 137"
elapsed=$(( (end - start) / 1000000 ))
ok $([ "$elapsed" -lt 5000 ] && echo 0 || echo 1) "at once, not at the timeout (${elapsed} ms)"
run_in sh -c 'kill -ABRT $$'
is "$rc" 134 "SIGABRT is exit status 134 in the CLI"

# The init reaps orphans: a double-forked child that exits is no zombie.
run_in sh -c '(sleep 0.1 &); sleep 0.6; cat /proc/[0-9]*/stat | cut -d" " -f3 | grep -c Z'
is "$out" 0 "orphans are reaped"

# The CPU time is the command's and its orphans', from the init's report
# of the command's end (the runner answers on it, without waiting for the
# init's own end): an orphan's busy loop of some 300 ms counts.
run_sr run --json --rootfs "$ROOTFS" -- sh -c '( (awk "BEGIN { for (i = 0; i < 3000000; i++) ; }";
  touch /tmp/done) & ); until [ -e /tmp/done ]; do sleep 0.05; done; sleep 0.1'
cpu=$(json_field "$out" cpu_ms)
ok $(python3 -c "print(0 if 100 <= ${cpu:-0} <= $(json_field "$out" duration_ms) + 50 else 1)") \
  "the CPU time counts what an orphan used (${cpu:-?} ms)"

# A signal sent to the container's init from the host is passed on to the
# command.
"$SR_BIN" run --timeout 10 --rootfs "$ROOTFS" -- \
  sh -c 'trap "echo got TERM; exit 9" TERM; echo ready; sleep 8 & wait' > "$sr_tmp/fwd" 2>&1 &
runner=$!
for _ in $(seq 50); do grep -q ready "$sr_tmp/fwd" 2>/dev/null && break; sleep 0.1; done
kill -TERM "$(pgrep -P "$runner" | head -1)"
wait "$runner"
is "$?" 9 "a signal to the init reaches the command"
like "$(cat "$sr_tmp/fwd")" "got TERM" "which handles it"

# The runner's own cancel (SIGTERM to the CLI) still ends the container.
tag=78.$$
"$SR_BIN" run --timeout 20 --rootfs "$ROOTFS" -- \
  sh -c "(setsid sleep 2$tag &); echo ready; sleep 3$tag" > "$sr_tmp/cancel" 2>&1 &
runner=$!
for _ in $(seq 50); do grep -q ready "$sr_tmp/cancel" 2>/dev/null && break; sleep 0.1; done
kill -TERM "$runner"
wait "$runner"
is "$?" 137 "a cancelled run ends with the init's SIGKILL"
sleep 0.2
is "$(pgrep -f "sleep [23]$tag" || true)" "" "and nothing of its container is left"

# The command's end ends everything it started.
tag=79.$$
run_in sh -c "(setsid sleep 2$tag &); (sleep 3$tag &); exit 0"
is "$rc" 0 "a command that leaves daemons behind exits 0"
sleep 0.2
is "$(pgrep -f "sleep [23]$tag" || true)" "" "and its daemons die with it"

# The timeout kills the command and a daemon it left behind.
tag=77.$$
start=$(date +%s%N)
run_sr run --timeout 1 --rootfs "$ROOTFS" -- sh -c "(setsid sleep $tag &) ; (sleep 1$tag &); sleep 60"
end=$(date +%s%N)
is "$rc" 124 "a timeout exits 124"
like "$err" "timed out after 1.0 s" "and says so"
# Not before its second; and well before the 60 s the command would take
# (the margin is for container set-up on a loaded machine).
elapsed=$(( (end - start) / 1000000 ))
ok $([ "$elapsed" -ge 1000 ] && [ "$elapsed" -lt 20000 ] && echo 0 || echo 1) \
  "the timeout fires on time (${elapsed} ms)"
# Killed processes may take a moment to go; the daemons would stay 77 s.
ours_left () { ! pgrep -f "sleep 1?$tag" >/dev/null; }
wait_until 20 ours_left
left=$(pgrep -f "sleep 1?$tag" || true)
is "$left" "" "no process of the container is left on the host"

run_sr run --json --timeout 0.5 --rootfs "$ROOTFS" -- sleep 30
is "$(json_field "$out" status)" timeout "JSON status timeout"

# Output beyond the cap is drained and counted, not kept.
run_sr run --json --max-output 1000 --rootfs "$ROOTFS" -- sh -c 'head -c 300000 /dev/zero | tr "\0" a'
is "$(json_field "$out" stdout_truncated)" true "stdout past the cap is truncated"
is "$(json_field "$out" stdout_bytes)" 300000 "the whole output was drained and counted"
kept=$(json_field "$out" stdout)
is "$(printf '%s' "$kept" | head -1 | wc -c)" 1001 "the first 1000 bytes are kept"
is "$(printf '%s' "$kept" | tail -1)" "[sandbox-runner: output truncated after 1000 bytes; 299000 bytes dropped]" "the kept text ends with the marker"
run_sr run --max-output 10 --rootfs "$ROOTFS" -- sh -c 'echo 0123456789abcdef'
like "$out" "^0123456789$" "text mode passes the cap through"
like "$out" "output truncated after 10 bytes" "and prints the marker"

run_sr run --json --max-output 100 --rootfs "$ROOTFS" -- sh -c 'head -c 50000000 /dev/zero >&2; echo done'
is "$(json_field "$out" stderr_bytes)" 50000000 "a 50 MB flood on stderr is drained"
is "$(json_field "$out" stdout)" done "while stdout still arrives"

run_sr run --json --rootfs "$ROOTFS" -- printf 'bad \377\376 utf8'
like "$(json_field "$out" stdout)" "bad .* utf8" "invalid UTF-8 becomes replacement characters"

# Failures to exec.
run_in no-such-command
is "$rc" 127 "a missing command exits 127"
like "$err" "exec no-such-command: No such file or directory" "and names the command"
run_in /etc/passwd
is "$rc" 126 "a non-executable file exits 126"
like "$err" "Permission denied" "with the errno"

# Bad input: clear messages, status 125, nothing run.
run_sr run --rootfs "$sr_tmp/missing" -- true
is "$rc" 125 "a missing rootfs exits 125"
like "$err" "rootfs $sr_tmp/missing: No such file or directory" "and names it"
run_sr run --rootfs "$ROOTFS"
like "$err" "no command given" "no command"
run_sr run -- true
like "$err" "give one of --rootfs DIR and --image NAME" "no rootfs and no image"
run_sr run --timeout abc --rootfs "$ROOTFS" -- true
like "$err" "invalid --timeout 'abc'" "a bad timeout"
run_sr run --timeout 31 --rootfs "$ROOTFS" -- true
like "$err" "over the ceiling of 30 seconds" "a timeout over the ceiling"
run_sr run --bind nocolon --rootfs "$ROOTFS" -- true
like "$err" "invalid bind 'nocolon'" "a bad bind"
run_sr run --env =x --rootfs "$ROOTFS" -- true
like "$err" "invalid --env '=x'" "a bad env"
run_sr run --max-output lots --rootfs "$ROOTFS" -- true
like "$err" "invalid --max-output 'lots'" "a bad max-output"
run_sr run --bogus --rootfs "$ROOTFS" -- true
is "$rc" 125 "an unknown option exits 125"
run_sr frobnicate
like "$err" "unknown command 'frobnicate'" "an unknown subcommand"

# A setup step that fails names the step and leaves nothing behind: a
# bind into a directory the rootfs has, where it lacks the mount point (a
# missing top-level one would come from a tmpfs root of ours).
mkdir -p "$sr_tmp/broken"
cp -a "$ROOTFS"/. "$sr_tmp/broken"/
run_sr run --rootfs "$sr_tmp/broken" --bind "$sr_tmp:/etc/absent" -- true
is "$rc" 125 "a failed setup step exits 125"
like "$err" "mount point /etc/absent is missing in the rootfs" "and names the step"
run_sr run --json --rootfs "$sr_tmp/broken" --bind "$sr_tmp:/etc/absent" -- true
is "$(json_field "$out" status)" error "JSON status error for a setup failure"
like "$(json_field "$out" error)" "/etc/absent is missing" "JSON error names the step"
# The setup fails before exec, so anything left would still carry the
# runner's command line (other tests run beside this one: count only ours).
broken_left () { ! pgrep -f -- "--rootfs $sr_tmp/broken" >/dev/null; }
wait_until 10 broken_left
left=$(pgrep -f -- "--rootfs $sr_tmp/broken" | wc -l)
is "$left" 0 "no process left behind"

run_sr --version
like "$out" "^sandbox-runner [0-9]" "--version"

done_testing
