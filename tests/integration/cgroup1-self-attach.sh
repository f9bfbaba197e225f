#!/bin/sh
# On cgroup v1 a container's init moves itself into its cgroups (0
# written to each hierarchy's tasks file), which takes none of the RCU
# grace period the kernel makes a move by another process wait for: its
# processes are in the container's cgroups all the same, the limits hold,
# and nothing of the cgroups is left afterwards.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs
[ "$(id -u)" -eq 0 ] || skip_all "needs root: an ordinary user has no v1 cgroup of its own here"
pure_cgroup2 && skip_all "a pure cgroup v2 host: the container is cloned into its cgroup"
for ctl in memory cpu pids; do
  grep -q ":$ctl[,:]" /proc/self/cgroup || grep -q ":[a-z,]*,$ctl[,:]" /proc/self/cgroup ||
    skip_all "no v1 $ctl hierarchy on this host"
done
use_private_dirs

"$SR_BIN" run --rootfs "$ROOTFS" -- sleep 5 &
runner=$!
at_exit "kill $runner 2>/dev/null; wait $runner 2>/dev/null"
# procs CONTROLLER: the pids in the container's cgroup of CONTROLLER.
procs () {
  find "/sys/fs/cgroup/$1" -maxdepth 4 -type d -name "sr-$runner-0" \
    -exec cat {}/cgroup.procs \; 2>/dev/null | sort -n | tr '\n' ' '
}
two_procs () { [ "$(procs pids | wc -w)" -eq 2 ]; }
wait_until 10 two_procs
in_pids=$(procs pids)
is "$(echo "$in_pids" | wc -w)" 2 "the container's init and its command are in its pids cgroup"
is "$(procs memory)" "$in_pids" "and in its memory cgroup"
is "$(procs cpu)" "$in_pids" "and in its cpu cgroup"
kill "$runner"
wait "$runner" 2>/dev/null

run_sr run --json --rootfs "$ROOTFS" -- true
is "$(json_field "$out" limits)" '{"memory": "cgroup1", "cpu": "cgroup1", "pids": "cgroup1"}' \
  "cgroup v1 enforces each limit"
attach=$(json_field "$out" setup_ms.cgroup_attach)
ok "$(python3 -c "import sys; sys.exit(0 if $attach < 2 else 1)"; echo $?)" \
  "the runner waits for no move of its own (setup_ms.cgroup_attach $attach ms)"

run_sr run --json --memory 32M --rootfs "$ROOTFS" -- dd if=/dev/zero of=/dev/null bs=96M count=1
is "$(json_field "$out" status)" oom "a memory balloon past the limit is killed (status oom)"
run_sr run --pids 4 --rootfs "$ROOTFS" -- sh -c 'for i in 1 2 3 4 5 6; do sleep 1 & done; wait'
like "$err" "fork" "the pids limit refuses a fork past it"

no_cgroup () { [ -z "$(find /sys/fs/cgroup/memory /sys/fs/cgroup/cpu /sys/fs/cgroup/pids \
  -maxdepth 4 -type d -name "sr-$runner-*" 2>/dev/null)" ]; }
wait_until 10 no_cgroup
ok "$(no_cgroup; echo $?)" "the stopped run's cgroups are gone"
is "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null | wc -l)" 0 "and no state entry is left"

done_testing
