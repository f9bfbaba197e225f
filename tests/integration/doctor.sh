#!/bin/sh
# sandbox-runner doctor: what the host supports and what runs will enforce.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run
require_image python

run_sr doctor
doctor_rc=$rc
like "$out" "^ok +user namespaces" "doctor finds user namespaces"
like "$out" "^ok +seccomp" "and seccomp"
like "$out" "^ok +openat2" "and openat2"
like "$out" "^ok +image python +language python: python \([0-9a-f]{12}\)" "and the python image"
like "$out" "^warning +image cpp .*not in" "and says the cpp image is missing"
like "$out" "fix: as root \\(every user reads root's images\\) /.*/rootfs/build-all.sh --import cpp, or sandbox-runner image import --name cpp PATH" \
  "with the fix"
like "$out" "^ok +run python +a native container of python ran true in [0-9]+ ms" \
  "it starts a real container of each image there is, as runs would"
if printf '%s' "$out" | grep -q "^ok +run cpp"; then
  ok 1 "and none of an image that is missing"
else
  ok 0 "and none of an image that is missing"
fi

run_sr doctor --json
is "$rc" "$doctor_rc" "--json exits as the table does"
limits=$(printf '%s' "$out" | python3 -c 'import json,sys
d=json.load(sys.stdin)
print([c for c in d["checks"] if c["check"]=="limits"][0]["detail"])')
iso=$(json_field "$out" fully_isolated)
case $limits in
  *"memory: cgroup"*"cpu: cgroup"*"pids: cgroup"*)
    is "$doctor_rc $iso" "0 true" "every limit has a cgroup: fully isolated, exit 0" ;;
  *)
    is "$doctor_rc $iso" "1 false" "a limit without a cgroup ($limits): exit 1"
    like "$(printf '%s' "$out" | grep -A0 '"fix"' | head -5)" "Delegate=yes|cgroup controllers|sandbox-runner-[a-z0-9_-]+/cgroup.procs" \
      "and the fix says how to get one" ;;
esac
join=$(printf '%s' "$out" | python3 -c 'import json,sys
d=json.load(sys.stdin)
print("".join(c["status"] + " " + c["detail"] for c in d["checks"] if c["check"]=="cgroup join"))')
case $limits in
  *cgroup1*)
    like "$join" "^(ok|warning) cgroup v1: a run (joined its cgroups in|waited) [0-9.]+ ms" \
      "on cgroup v1 it measures how long joining a cgroup takes" ;;
  *)
    is "$join" "" "not on cgroup v2, where a run starts in its cgroup" ;;
esac
# The doctor's cgroup goes with it.
run_sr run --json --rootfs "$SANDBOX_IMAGE_STORE/images/$(ls "$SANDBOX_IMAGE_STORE/images" | grep -v lock | head -1)/rootfs" -- true
is "$(json_field "$out" limits.memory)" "$(printf '%s' "$limits" | sed -n 's/^memory: \([a-z0-9]*\),.*/\1/p')" \
  "doctor reports the mechanism a run then uses for memory"

# The recipe doctor gives an unprivileged user on a v1 host without
# systemd, followed: that user's runs get cgroups.
u=${SR_TEST_USER:-sr-test}
if [ "$(id -u)" -eq 0 ] && id "$u" >/dev/null 2>&1 && [ -d /sys/fs/cgroup/memory ] &&
  [ -d /sys/fs/cgroup/pids ] && [ ! -d /run/systemd/system ]; then
  at_exit "for c in memory cpu pids; do rmdir /sys/fs/cgroup/\$c/sandbox-runner-$u-$$ 2>/dev/null; done"
  for c in memory cpu pids; do
    mkdir /sys/fs/cgroup/$c/sandbox-runner-$u-$$ && chown -R "$u" /sys/fs/cgroup/$c/sandbox-runner-$u-$$
  done
  mkdir -m 0700 "$sr_tmp/xdg-$u" && chown "$u" "$sr_tmp/xdg-$u"
  chmod 0755 "$sr_tmp"
  out=$(runuser -u "$u" -- env XDG_RUNTIME_DIR="$sr_tmp/xdg-$u" SANDBOX_IMAGE_STORE="$SANDBOX_IMAGE_STORE" \
    sh -c 'for c in memory cpu pids; do echo $$ > /sys/fs/cgroup/$c/sandbox-runner-'"$u-$$"'/cgroup.procs; done
      exec "$0" doctor' "$SR_BIN" 2>&1)
  like "$(printf '%s\n' "$out" | grep ' limits ')" "^ok +limits +memory: cgroup1, cpu: cgroup1, pids: cgroup1" \
    "the v1 recipe without systemd gives an unprivileged user cgroups of its own"
else
  skip "the v1 recipe without systemd: needs root, the test user $u and a v1 host without systemd"
fi

SANDBOX_MEMORY=lots run_sr doctor
like "$rc $out" "^2 missing +configuration +environment variable SANDBOX_MEMORY: memory: 'lots' is not a size" \
  "a broken configuration is diagnosed, exit 2"
like "$(printf '%s' "$out" | grep 'user namespaces')" "^ok " "and the host is still checked"

# A host where containers cannot be made, as under systemd's
# ProtectKernelTunables=: doctor says so instead of "fully isolated".
if [ "$(id -u)" -eq 0 ]; then
  unshare -m sh -c 'mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys &&
    exec "$0" doctor' "$SR_BIN" >"$sr_tmp/ro.out" 2>&1
  is "$?" 2 "a container that cannot be made is a finding, exit 2"
  like "$(grep '^missing  *run python' "$sr_tmp/ro.out")" \
    "a container of python could not be made: .*Read-only file system" "which says why"
else
  skip "a container that cannot be made is a finding: needs root to make /proc/sys read-only"
  skip "which says why: needs root"
fi

run_sr doctor --bogus
is "$rc" 125 "a bad argument is refused"

done_testing
