#!/bin/sh
# The cgroup v2 part of the suite (limits.sh expecting cgroup2,
# cgroup2.sh, and session.sh for the cgroup of each session command), run
# where v2 controllers exist: on this host when it is a pure v2 host, else
# in a throwaway QEMU guest booted by
# ../shared/cgroup2-vm/run-in-cgroup2-vm.sh, with the binary built here.
# The guest's TAP results are relayed one by one, renumbered.
. "${SR_SRCDIR}/tests/integration/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "the cgroup v2 tests set up cgroups as root (they run in the root suite)"
[ "${SR_SKIP_CGROUP2_VM:-0}" = 1 ] && skip_all "SR_SKIP_CGROUP2_VM=1"

vm=${SR_CGROUP2_VM:-$SR_SRCDIR/../shared/cgroup2-vm/run-in-cgroup2-vm.sh}
scripts="limits.sh cgroup2.sh session.sh"
cmd="export SR_BIN='$SR_BIN' SR_BUILDDIR='$SR_BUILDDIR' SR_SRCDIR='$SR_SRCDIR' \
SR_EXPECT_LIMITS=cgroup2 TMPDIR=/tmp; for t in $scripts; do echo \"# script \$t\"; \
sh '$SR_SRCDIR'/tests/integration/\$t; echo \"# exit \$?\"; done"

if pure_cgroup2 && grep -qw memory "$(own_cgroup2_dir)/cgroup.controllers" 2>/dev/null; then
  where="on this host"
  sh -c "$cmd" >"$sr_tmp/guest.out" 2>"$sr_tmp/guest.err"
  status=$?
else
  [ -x "$vm" ] || skip_all "no v2 controllers here and no cgroup2 guest at $vm"
  command -v qemu-system-x86_64 >/dev/null ||
    skip_all "no v2 controllers here and qemu is missing ($vm --setup installs it)"
  where="in the cgroup2 guest"
  # A non-root cgroup, as a systemd host gives the runner; the runner must
  # move itself into a leaf to hand controllers down.
  CGVM_CGROUP=/sandbox-runner.scope CGVM_TIMEOUT=${SR_CGROUP2_VM_TIMEOUT:-900} \
    "$vm" "$cmd" >"$sr_tmp/guest.out" 2>"$sr_tmp/guest.err"
  status=$?
fi

echo "# cgroup v2 tests $where"
script=""
ran=0
while IFS= read -r line; do
  case $line in
    "# script "*) script=${line#\# script } ;;
    "# exit "*)
      [ "${line#\# exit }" = 0 ] || { ok 1 "$script exited with status ${line#\# exit }"; } ;;
    "ok "*"# SKIP"* | "1..0 # SKIP"*) skip "[$script] ${line#*\# SKIP }" ;;
    "ok "*) ok 0 "[$script] $(printf '%s' "$line" | sed 's/^ok [0-9]* - //')"; ran=$((ran + 1)) ;;
    "not ok "*) ok 1 "[$script] $(printf '%s' "$line" | sed 's/^not ok [0-9]* - //')"; ran=$((ran + 1)) ;;
    "#"*) echo "$line" ;;
  esac
done <"$sr_tmp/guest.out"
echo "# $ran cgroup v2 tests ran $where"
if [ "$status" -ne 0 ] && [ "$ran" -eq 0 ]; then
  ok 1 "the cgroup v2 tests ran $where (status $status)"
  sed 's/^/#   /' "$sr_tmp/guest.err" | tail -20
fi
done_testing
