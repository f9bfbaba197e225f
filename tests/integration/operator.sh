#!/bin/sh
# The sysadmin's view: config show, ps, kill, and reclaiming what a dead
# runner left behind.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs

export XDG_RUNTIME_DIR=$sr_tmp/run XDG_CONFIG_HOME=$sr_tmp/config
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/sandbox-runner"
if [ "$(id -u)" -eq 0 ]; then
  export SANDBOX_RUNTIME_DIR=$sr_tmp/run/sandbox-runner
fi
state=${SANDBOX_RUNTIME_DIR:-$XDG_RUNTIME_DIR/sandbox-runner}/containers

run_sr config show
like "$out" "^memory += 256M +# default" "config show prints the default memory limit"
echo "pids = 20" > "$XDG_CONFIG_HOME/sandbox-runner/sandbox-runner.conf"
SANDBOX_MEMORY=128M run_sr config show
like "$out" "^pids += 20 +# user file \(.*sandbox-runner.conf:1\)" "a user file setting names its file and line"
like "$out" "^memory += 128M +# environment \(SANDBOX_MEMORY\)" "an environment setting names its variable"
run_sr config show --json
is "$(json_field "$out" pids.value)" 20 "config show --json"
echo "bogus = 1" > "$XDG_CONFIG_HOME/sandbox-runner/sandbox-runner.conf"
run_sr run --rootfs "$ROOTFS" -- true
is "$rc" 125 "an unknown setting stops every command"
like "$err" "sandbox-runner.conf:1: unknown setting 'bogus'" "naming the file and line"
rm "$XDG_CONFIG_HOME/sandbox-runner/sandbox-runner.conf"

"$SR_BIN" run --json --rootfs "$ROOTFS" -- sleep 60 > "$sr_tmp/bg.json" 2>&1 &
bg=$!
listed () { run_sr ps --json; [ "$out" != "[]" ]; }
wait_until 30 listed
name=$(printf '%s' "$out" | python3 -c 'import json,sys; l=json.load(sys.stdin); print(l[0]["name"] if l else "")')
like "$name" "^sr-[0-9]+-[0-9]+$" "ps lists the running container"
run_sr ps
like "$out" "$name +run +[0-9]+ +[0-9]+s +256M +0.5 +64 .*sleep 60" "ps shows its limits, age and command"
run_sr kill "$name"
is "$rc" 0 "kill kills it"
wait "$bg"
is "$(json_field "$(cat "$sr_tmp/bg.json")" signal)" 9 "its runner reports SIGKILL"
run_sr ps --json
is "$out" "[]" "and it is gone from ps"
ls "$state" > "$sr_tmp/left"
is "$(cat "$sr_tmp/left")" "" "its state entry is removed"
run_sr kill sr-0-0
like "$err" "no container named 'sr-0-0'" "kill of an unknown name says so"

# A runner killed with SIGKILL leaves its entry behind (its container dies
# with it); the next run reclaims it.
# A duration of our own, so no other test's sleep is mistaken for ours.
nap=60.$$
"$SR_BIN" run --rootfs "$ROOTFS" -- sleep "$nap" >/dev/null 2>&1 &
bg=$!
napping () { pgrep -f "^sleep $nap" >/dev/null && [ -n "$(ls "$state")" ]; }
wait_until 30 napping
kill -9 "$bg"
wait "$bg" 2>/dev/null
is "$(ls "$state" | wc -l)" 1 "a killed runner leaves its entry"
run_sr ps --json
is "$out" "[]" "but ps does not list a dead container"
run_sr run --rootfs "$ROOTFS" -- true
is "$(ls "$state" | wc -l)" 0 "the next run reclaims it"
# Killed processes may take a moment to go; the container's would stay 60 s.
nap_gone () { ! pgrep -f "sleep $nap" >/dev/null; }
wait_until 20 nap_gone
left=$(pgrep -af "sleep $nap" || true)
is "$left" "" "nothing of the killed runner's container is left"

done_testing
