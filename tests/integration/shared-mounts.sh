#!/bin/sh
# On a host whose mounts are shared (/ is, under systemd), a root runner's
# containers mount nothing that propagates back: the rootfs and the binds
# the parent clones for the container (idmapped or not) are private
# clones, so the container's /proc, /dev, /sys and binds stay in its own
# mount namespace, runs succeed, and the host's mount table is the same
# during and after them.  The test plays such a host in a mount namespace
# of its own, every mount in it shared.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
[ "$(id -u)" -eq 0 ] ||
  skip_all "the parent clones mounts for a root runner only (a rootless one binds in its own namespace)"
command -v unshare >/dev/null || skip_all "unshare (util-linux) is not installed"
require_image python
mkdir -p "$sr_tmp/bound"
echo bound > "$sr_tmp/bound/f"

# In a namespace whose mounts are all shared: the list of the mount
# points below the test's directory (the image store's rootfs, the
# runtime dir) before, while a run sleeps, and after; then each run's
# output.
cat > "$sr_tmp/host.sh" <<'EOF2'
# Ours only: other processes' mounts come and go meanwhile, and
# propagate here.
mounts () { cut -d' ' -f5 /proc/self/mountinfo | grep -F "$1/" | sort; }
grep -q ' / / .* shared:' /proc/self/mountinfo || { echo "/ is not shared"; exit 1; }
mounts "$1" > "$1/before"
"$SR_BIN" run --image python --bind "$1/bound:/b:idmap" -- sh -c 'echo started; sleep 3' \
  > "$1/sleep.out" 2>&1 &
sleeper=$!
for i in $(seq 1 100); do
  grep -q started "$1/sleep.out" && break
  sleep 0.1
done
mounts "$1" > "$1/during"
wait "$sleeper"; echo "sleep $?" >> "$1/sleep.out"
"$SR_BIN" run --image python --bind "$1/bound:/b" -- cat /b/f > "$1/plain.out" 2>&1
echo "plain $?" >> "$1/plain.out"
"$SR_BIN" run --image python --bind "$1/bound:/b:ro,idmap" -- cat /b/f > "$1/idmap.out" 2>&1
echo "idmap $?" >> "$1/idmap.out"
printf 'print(1)' | "$SR_BIN" run-code -l python - > "$1/code.out" 2>&1
echo "code $?" >> "$1/code.out"
mounts "$1" > "$1/after"
EOF2
run_cmd unshare --mount --propagation shared sh "$sr_tmp/host.sh" "$sr_tmp"
is "$rc $err" "0 " "a mount namespace whose mounts are all shared runs the test"
is "$(tr '\n' ' ' < "$sr_tmp/sleep.out")" "started sleep 0 " "a run with an idmapped rootfs and bind succeeds there"
is "$(diff "$sr_tmp/before" "$sr_tmp/during")" "" \
  "and while it runs, none of its mounts shows in the host's table"
is "$(tr '\n' ' ' < "$sr_tmp/plain.out")" "bound plain 0 " "a plain bind works there"
is "$(tr '\n' ' ' < "$sr_tmp/idmap.out")" "bound idmap 0 " "so does an idmapped one"
is "$(tr '\n' ' ' < "$sr_tmp/code.out")" "1 code 0 " "and run-code"
is "$(diff "$sr_tmp/before" "$sr_tmp/after")" "" "after them, the host's mount table is as before"
done_testing
