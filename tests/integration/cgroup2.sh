#!/bin/sh
# The cgroup v2 path, on a host (or in the cgroup2 guest) whose runner
# cgroup has the memory, cpu and pids controllers: every container gets a
# child cgroup that is removed afterwards, and a delegated subtree works
# for an unprivileged runner as systemd's Delegate=yes gives it.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs

[ "$(id -u)" -eq 0 ] || skip_all "needs root to set up delegated cgroups"
pure_cgroup2 || skip_all "not a pure cgroup v2 host"
own=$(own_cgroup2_dir)
for c in memory cpu pids; do
  grep -qw "$c" "$own/cgroup.controllers" 2>/dev/null ||
    skip_all "the $c controller is not available in $own"
done
# The runner creates containers beside its leaf when it had to move into one.
[ "${own##*/}" = sr-runner ] && own=${own%/sr-runner}
test_user=${SR_TEST_USER:-sr-test}

# What a container left below the runner's cgroup: nothing but the leaf.
leftovers () {
  find "$1" -mindepth 1 -maxdepth 1 -type d ! -name sr-runner | sed 's|.*/||' | tr '\n' ' '
}

run_sr run --json --memory 64M --cpus 1 --pids 32 --rootfs "$ROOTFS" -- cat /proc/self/cgroup
is "$(json_field "$out" limits)" '{"memory": "cgroup2", "cpu": "cgroup2", "pids": "cgroup2"}' \
  "the result says cgroup2 for each limit"
is "$(json_field "$out" stdout)" "0::/" "the container sees its own cgroup as the root of its namespace"
is "$(leftovers "$own")" "" "its cgroup is removed afterwards"

# The container is cloned straight into its cgroup, never moved there.
if command -v strace >/dev/null; then
  strace -f -e trace=clone3 -o "$sr_tmp/clone.trace" "$SR_BIN" run --rootfs "$ROOTFS" -- true
  like "$(cat "$sr_tmp/clone.trace")" "clone3\\(.*CLONE_INTO_CGROUP" "clone3 uses CLONE_INTO_CGROUP"
else
  skip "strace is not installed: cannot watch clone3"
fi

run_sr doctor
like "$out" "^ok +limits +memory: cgroup2, cpu: cgroup2, pids: cgroup2" "doctor reports cgroup2 for each limit"
is "$rc" 0 "and full isolation"
is "$(leftovers "$own")" "" "and removes the cgroup it tried"

# A daemon that escaped its parent by double-forking is still in the cgroup.
# (Its own duration, so no other test's sleep is mistaken for it; killed
# processes may take a moment to go, the daemon would stay 77 s.)
daemon=77.$$
run_sr run --json --timeout 1 --rootfs "$ROOTFS" -- sh -c "(sleep $daemon &); sleep 60"
is "$(json_field "$out" status)" timeout "the timeout ends the command"
daemon_gone () { ! pgrep -f "sleep $daemon" >/dev/null; }
wait_until 20 daemon_gone
is "$(pgrep -fc "sleep $daemon")" 0 "and its double-forked daemon"
is "$(leftovers "$own")" "" "and nothing is left below the runner's cgroup"

# A session's container lives until it is destroyed, its cgroup with it.
if [ -x "$SR_BUILDDIR/tests/helpers/session-driver" ]; then
  ROOTFS=$ROOTFS "$SR_BUILDDIR/tests/helpers/session-driver" 'sleep 50 & echo started' \
    'echo second' >"$sr_tmp/session.out" 2>&1
  like "$(cat "$sr_tmp/session.out")" "success 0 second" "a session runs its commands"
  is "$(leftovers "$own")" "" "its cgroup is gone after the session"
else
  skip "session-driver was not built"
  skip "session-driver was not built"
fi

# A runner killed with SIGKILL leaves its cgroup; the next run, started in
# another cgroup, still finds it (the state entry has its path), removes
# it, and only then the entry.
state_run=$sr_tmp/run
nap=64.$$
SANDBOX_RUNTIME_DIR=$state_run "$SR_BIN" run --rootfs "$ROOTFS" -- sleep "$nap" >/dev/null 2>&1 &
bg=$!
napping () { pgrep -f "^sleep $nap" >/dev/null && [ -n "$(ls "$state_run/containers")" ]; }
wait_until 30 napping
kill -9 "$bg"
wait "$bg" 2>/dev/null
is "$(leftovers "$own")" "sr-$bg-0 " "a runner killed with SIGKILL leaves its cgroup"
other=$own/sr-test-other
mkdir "$other"
at_exit "rmdir '$other/sr-runner' '$other' 2>/dev/null"
run_cmd sh -c 'echo $$ > "$1/cgroup.procs" && exec env SANDBOX_RUNTIME_DIR="$2" "$0" run \
  --rootfs "$3" -- true' "$SR_BIN" "$other" "$state_run" "$ROOTFS"
is "$rc" 0 "the next run starts in another cgroup"
is "$(leftovers "$own")" "sr-test-other " "and removes the killed runner's cgroup"
is "$(ls "$state_run/containers")" "" "and then its state entry"
rmdir "$other/sr-runner" "$other" 2>/dev/null

# Delegation as systemd does it for Delegate=yes: a subtree owned by the
# user, with the controllers enabled above it.
if id "$test_user" >/dev/null 2>&1; then
  parent=$own/sr-test-delegation
  deleg=$parent/user
  mkdir -p "$deleg"
  at_exit "rmdir '$deleg' '$parent/plain' '$parent' 2>/dev/null"
  echo "+memory +cpu +pids" > "$parent/cgroup.subtree_control"
  chown "$test_user" "$deleg" "$deleg/cgroup.procs" "$deleg/cgroup.subtree_control" \
    "$deleg/cgroup.threads"
  mkdir -p "$parent/plain"
  rootfs_u=$sr_tmp/rootfs
  chmod -R a+rX "$rootfs_u"

  # run_as CGROUP ARGS...: the runner as the test user, started in CGROUP.
  run_as () {
    cg=$1
    shift
    run_cmd sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec runuser -u "$0" -- env \
      HOME=/tmp XDG_RUNTIME_DIR= "$@"' "$test_user" "$cg" "$SR_BIN" "$@"
  }

  run_as "$deleg" run --json --memory 32M --pids 16 --cpus 0.5 --rootfs "$rootfs_u" -- \
    dd if=/dev/zero of=/dev/null bs=96M count=1
  is "$(json_field "$out" limits)" '{"memory": "cgroup2", "cpu": "cgroup2", "pids": "cgroup2"}' \
    "an unprivileged runner in a delegated subtree enforces cgroup2 limits"
  is "$(json_field "$out" status)" oom "and its balloon is reported as oom"
  is "$(leftovers "$deleg")" "" "and it cleans up below its delegated cgroup"
  # The first runner moved into the leaf it made; $deleg itself now
  # delegates controllers, so it can hold no process: start in the leaf.
  run_as "$deleg/sr-runner" doctor
  like "$out" "^ok +limits +memory: cgroup2, cpu: cgroup2, pids: cgroup2" \
    "doctor finds the delegated subtree"

  run_as "$parent/plain" run --json --memory 32M --pids 16 --cpus 0 --rootfs "$rootfs_u" -- true
  is "$(json_field "$out" limits)" '{"memory": "rlimit", "cpu": "none", "pids": "rlimit"}' \
    "without delegation it falls back to rlimits and says so"
  run_as "$parent/plain" doctor
  like "$out" "^warning +limits +memory: rlimit, cpu: none, pids: rlimit" \
    "doctor says what runs without delegation get"
  like "$out" "fix: (start it in a delegated cgroup: systemd-run --user --scope -p Delegate=yes|no systemd here: as root, mkdir /sys/fs/cgroup/sandbox-runner-)" \
    "and how to get delegation, with or without systemd"
  run_as "$parent/plain" run --strict-limits --cpus 0.5 --rootfs "$rootfs_u" -- true
  like "$err" "the CPU limit cannot be enforced" "--strict-limits refuses what nothing enforces"
  # The test shell's helpers moved into these cgroups and have exited.
  for d in "$deleg/sr-runner" "$deleg"/* ; do [ -d "$d" ] && rmdir "$d" 2>/dev/null; done
else
  for i in 1 2 3 4 5 6 7 8; do skip "no test user $test_user (tools/run-tests.sh creates it)"; done
fi

done_testing
