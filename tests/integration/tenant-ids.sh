#!/bin/sh
# As root, every live container is a host uid range of its own (a slot
# leased from runtime/idmap.h's pool), so what the kernel counts per host
# user is counted per sandbox: one sandbox that takes all of
# fs.pipe-user-pages-soft leaves another's pipes their full size, and a
# slot comes back once its container is gone, even after a SIGKILL of its
# runner.  A rootless runner's containers are its own uid, as every
# other process of the user: nothing to check there.
. "${SR_SRCDIR}/tests/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "only a root runner leases a host uid range per container"
require_busybox_rootfs
use_private_dirs
ids=$SANDBOX_RUNTIME_DIR/ids

# host_uid: the first host uid of the container's root, from its uid_map.
host_uid () {
  "$SR_BIN" run --rootfs "$ROOTFS" -- cat /proc/self/uid_map | awk '{ print $2 }'
}

# The first container says who it is through a directory of the test's,
# then stays.
mkdir -m 777 "$sr_tmp/share"
"$SR_BIN" run --rootfs "$ROOTFS" --bind "$sr_tmp/share:/mnt/data" -- \
  sh -c 'awk "{ print \$2 }" /proc/self/uid_map > /mnt/data/uid; sleep 30' >"$sr_tmp/a.out" 2>&1 &
holder=$!
at_exit "kill -KILL $holder 2>/dev/null"
wait_until 10 test -s "$sr_tmp/share/uid" || echo "# the first container did not start: $(cat "$sr_tmp/a.out")"
first=$(cat "$sr_tmp/share/uid")
second=$(host_uid)
like "$first" '^[0-9]+$' "a container's root is a host uid"
ok "$([ -n "$second" ] && [ "$first" != "$second" ]; echo $?)" \
  "two live containers are different host uids ($first, $second)"

# The lease lives as long as the container: its init keeps a copy.
init=$(python3 -c 'import glob, json, sys
for f in glob.glob(sys.argv[1] + "/containers/*.json"):
    print(json.load(open(f))["init_pid"])' "$SANDBOX_RUNTIME_DIR" | head -1)
ls -l "/proc/$init/fd" 2>/dev/null | grep -q " $ids/0\$"
ok $? "the container's init holds its id lease too (pid $init)"

kill -KILL "$holder"
wait "$holder" 2>/dev/null
# The init dies with its runner, a moment later.
init_gone () { ! kill -0 "$init" 2>/dev/null; }
wait_until 10 init_gone
is "$(host_uid)" "$first" "the slot of a runner killed with SIGKILL is free again"
is "$(ls "$ids" | sort -n | tr '\n' ' ')" "0 1 " \
  "the lock files are no more than the containers that lived at once"

# Pipe buffers are counted per host user (fs.pipe-user-pages-soft pages,
# then 2 pages a pipe).  One sandbox fills the count with pipes of 1 MiB;
# another's new pipe still has the default 64 KiB.
require_image python
soft=$(cat /proc/sys/fs/pipe-user-pages-soft)
if [ "$soft" -eq 0 ] || [ "$soft" -gt 65536 ]; then
  skip "a sandbox's pipes do not shrink another's: fs.pipe-user-pages-soft is $soft here"
else
  cat >"$sr_tmp/share/fill.py" <<'EOF'
import fcntl, os, sys, time
held = []
pages = 0
while pages < int(sys.argv[1]) + 256:
    r, w = os.pipe()
    try:
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 1 << 20)
    except OSError:
        break
    held.append((r, w))
    pages += 256
with open("/mnt/data/filled", "w") as f:
    f.write("filled %d pipes of 1 MiB\n" % len(held))
time.sleep(20)
EOF
  cat >"$sr_tmp/probe.py" <<'EOF'
import fcntl, os
r, w = os.pipe()
print(fcntl.fcntl(w, fcntl.F_GETPIPE_SZ))
EOF
  "$SR_BIN" run --image python --timeout 25 --bind "$sr_tmp/share:/mnt/data" -- \
    python3 /mnt/data/fill.py "$soft" >"$sr_tmp/fill.out" 2>&1 &
  filler=$!
  at_exit "kill -TERM $filler 2>/dev/null"
  wait_until 20 test -s "$sr_tmp/share/filled" || echo "# the filler: $(cat "$sr_tmp/fill.out")"
  like "$(cat "$sr_tmp/share/filled" 2>/dev/null)" '^filled [0-9]+ pipes' \
    "one sandbox holds fs.pipe-user-pages-soft of pipe buffers"
  run_sr run-code -l python "$sr_tmp/probe.py"
  is "$out" 65536 "another sandbox's new pipe still has 64 KiB"
  kill -TERM "$filler" 2>/dev/null
  wait "$filler" 2>/dev/null
fi

done_testing
