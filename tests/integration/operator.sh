#!/bin/sh
# The sysadmin's view: config show, ps, kill, and reclaiming what a dead
# runner left behind.
. "${SR_SRCDIR}/tests/load/leaks.sh"
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs

use_private_dirs
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

# The same when the next run starts in another memory cgroup (v1: each
# controller a hierarchy of its own): the entry says where each cgroup of
# the killed runner is, and goes only once all of them are gone.
memcg=$(cgroup_dirs memory)
freezer=$(cgroup_dirs freezer)
# killed_runner NAP [CGROUP]: a runner of `sleep NAP` ($bg), started in
# the v1 cgroup CGROUP when given, killed with SIGKILL once it sleeps;
# $made: the cgroups it had made.
killed_runner () {
  nap=$1
  sh -c '[ -z "$3" ] || echo $$ > "$3/cgroup.procs"; exec "$0" run --rootfs "$1" -- sleep "$2"' \
    "$SR_BIN" "$ROOTFS" "$nap" "${2:-}" >/dev/null 2>&1 &
  bg=$!
  wait_until 30 napping
  made=$(anywhere_cgroups "$bg")
  kill -9 "$bg"
  wait "$bg" 2>/dev/null
  wait_until 20 nap_gone
}
# anywhere_cgroups PID: the cgroups of runner PID in every hierarchy,
# wherever they are.
anywhere_cgroups () { find /sys/fs/cgroup -type d -name "sr-$1-*" 2>/dev/null; }
if [ "$(id -u)" -ne 0 ] || [ -z "$memcg" ]; then
  reason="no v1 memory hierarchy here"
  [ "$(id -u)" -ne 0 ] && reason="not root: its runs make no v1 cgroup to leave"
  for i in 1 2 3 4 5 6 7 8 9 10 11; do skip "reclaim of cgroups from another memory cgroup: $reason"; done
else
  killed_runner 61.$$
  like "$made" "$memcg/sr-$bg-0" "a killed runner leaves its memory cgroup"
  other=$memcg/sr-test-other.$$
  mkdir "$other"
  at_exit "rmdir '$other' 2>/dev/null"
  run_cmd sh -c 'echo $$ > "$1/cgroup.procs" && exec "$0" run --rootfs "$2" -- true' \
    "$SR_BIN" "$other" "$ROOTFS"
  is "$rc" 0 "the next run starts in another memory cgroup"
  is "$(runner_cgroups "$bg" | tr '\n' ' ')" "" \
    "and reclaims the killed runner's cgroups in every hierarchy"
  is "$(ls "$state" | wc -l)" 0 "and its state entry"

  # Started in a memory cgroup A of its own (its memory cgroup is below
  # A, the others below the test's), reclaimed from B.
  cg_a=$memcg/sr-test-a.$$
  mkdir "$cg_a"
  at_exit "rmdir '$cg_a'/sr-* '$cg_a' 2>/dev/null"
  killed_runner 64.$$ "$cg_a"
  like "$made" "$cg_a/sr-$bg-0" "a runner started in memory cgroup A leaves its memory cgroup below A"
  run_cmd sh -c 'echo $$ > "$1/cgroup.procs" && exec "$0" run --rootfs "$2" -- true' \
    "$SR_BIN" "$other" "$ROOTFS"
  is "$(anywhere_cgroups "$bg" | tr '\n' ' ')" "" \
    "the next run, from memory cgroup B, removes its cgroups in every hierarchy"
  is "$(ls "$state" | wc -l)" 0 "and its state entry"

  # A cgroup that cannot go yet: a process of the test's own in it,
  # frozen (a frozen task dies of SIGKILL only once thawed).
  if [ -z "$freezer" ]; then
    for i in 1 2 3 4; do skip "a reclaim that cannot remove a cgroup: no v1 freezer here"; done
  else
    killed_runner 62.$$
    ice=$freezer/sr-test-ice.$$
    mkdir "$ice"
    sleep 63.$$ &
    stuck=$!
    at_exit "echo THAWED > '$ice/freezer.state'; kill -9 $stuck 2>/dev/null; sleep 0.2; rmdir '$ice'"
    echo "$stuck" > "$memcg/sr-$bg-0/cgroup.procs"
    echo "$stuck" > "$ice/cgroup.procs"
    echo FROZEN > "$ice/freezer.state"
    frozen () { [ "$(cat "$ice/freezer.state")" = FROZEN ]; }
    wait_until 10 frozen
    run_sr run --rootfs "$ROOTFS" -- true
    is "$rc" 0 "a run starts while a killed runner's memory cgroup holds a frozen process"
    is "$(ls "$state" | wc -l) $(runner_cgroups "$bg" | grep -c memory)" "1 1" \
      "it leaves that cgroup, and the state entry for a later try"
    echo THAWED > "$ice/freezer.state"
    run_sr run --rootfs "$ROOTFS" -- true
    wait "$stuck" 2>/dev/null
    is "$(runner_cgroups "$bg" | tr '\n' ' ')" "" "once thawed, the next run removes the cgroups"
    is "$(ls "$state" | wc -l)" 0 "and then the entry"
  fi
fi

done_testing
