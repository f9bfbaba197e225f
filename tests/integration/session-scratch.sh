#!/bin/sh
# A session's /scratch (its code directory) is a tmpfs of its container,
# never a host directory: a snippet cannot fill the host's disk there
# (session_scratch_size, then ENOSPC), nor run it out of inodes
# (session_scratch_inodes), nor make a setuid file the host could run
# (nosuid, and no host path to run it from); mountinfo shows no host path
# for it; run_code still writes the code there, through the container's
# root; uploads past a session's tmpfs end in quota_exceeded.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
require_session_client
export SANDBOX_SESSION_IMAGE=python
# Small caps keep the test quick; what they prove holds for any size.
export SANDBOX_SESSION_SCRATCH_SIZE=8M SANDBOX_SESSION_SCRATCH_INODES=200
export SANDBOX_SESSION_DATA_SIZE=4M
# Warm containers hold one-shot code directories (tmpfs mounts of the
# runtime dir): none may be there for the check of mounts below.
export SANDBOX_WARM_CONTAINERS=0

start_session_server

# --- no host directory ---
runs "$sid" 'import os
line = [l for l in open("/proc/self/mountinfo") if l.split()[4] == "/scratch"][-1]
print(line.split(" - ")[1].split()[0], "nosuid" in line.split()[5], "nodev" in line.split()[5], line)'
like "$rc $out" "^0 tmpfs True True " "/scratch is a tmpfs of the container, nosuid and nodev"
case "$out" in
  *"$SANDBOX_RUNTIME_DIR"* | *code-*) fail=1 ;;
  *) fail=0 ;;
esac
is "$fail" 0 "mountinfo names no host path for it"
is "$(grep -l "$SANDBOX_RUNTIME_DIR" /proc/*/mountinfo 2>/dev/null | head -1)" "" \
  "no mount of any process on the host comes from the runtime dir"
[ -z "$(ls "$SANDBOX_RUNTIME_DIR/scratch" 2>/dev/null)" ]
ok $? "the session has no code directory on the host"
runs "$sid" 'print(open("/scratch/main.py").read().count("MARK" + "ER"))  # MARKER'
is "$rc $out" "0 1" "run_code still writes the code in /scratch (through the container's root)"

# --- size ---
before=$(du -sk "$SANDBOX_RUNTIME_DIR" | cut -f1)
runs "$sid" 'import errno, os
n = 0
try:
    with open("/scratch/fill", "wb") as f:
        while n < 64 << 20:
            f.write(b"x" * (1 << 20)); f.flush(); n += 1 << 20
    print("wrote", n >> 20, "MiB")
except OSError as e:
    print(errno.errorcode[e.errno], "after", n >> 20, "MiB")
os.unlink("/scratch/fill")'
like "$rc $out" "^0 ENOSPC after [0-9] MiB" "filling /scratch past session_scratch_size ends in ENOSPC"
after=$(du -sk "$SANDBOX_RUNTIME_DIR" | cut -f1)
[ $((after - before)) -lt 1024 ]
ok $? "the host's runtime dir did not grow ($before KiB, then $after KiB)"
runs "$sid" 'print(len(open("/scratch/main.py").read()))'
is "$rc $out $err" "0 44 " "the space comes back when the file goes"

# --- inodes ---
runs "$sid" 'import errno, os
os.mkdir("/scratch/many")
n = 0
try:
    while n < 100000:
        open("/scratch/many/%d" % n, "w").close(); n += 1
    print("made", n)
except OSError as e:
    print(errno.errorcode[e.errno], "after", n)
for i in range(n):
    os.unlink("/scratch/many/%d" % i)'
like "$rc $out" "^0 ENOSPC after 1[0-9][0-9]$" "too many files in /scratch: ENOSPC at session_scratch_inodes"

# --- setuid ---
runs "$sid" 'import os, shutil, stat
shutil.copy("/bin/sh", "/scratch/suid-sh")
os.chmod("/scratch/suid-sh", 0o4755)
print(oct(os.stat("/scratch/suid-sh").st_mode & 0o7777))'
is "$rc $out $err" "0 0o4755 " "a snippet may set the mode bits of a file in /scratch"
found=$(find "$SANDBOX_RUNTIME_DIR" -xdev -perm -4000 2>/dev/null | head -1)
is "$found" "" "but no setuid file exists on the host for anyone to run"

# --- uploads count against the session: its tmpfs, and its memory ---
head -c 3000000 /dev/urandom > "$sr_tmp/blob"
mem_before=$(session_memory)
s upload -s "$sid" "$sr_tmp/blob" a.bin
is "$rc" 0 "an upload that fits is written"
mem_after=$(session_memory)
if [ -n "$mem_before" ]; then
  # Two thirds of the 3 MB: the cgroup's other pages (page cache the
  # kernel reclaims meanwhile) move by a few hundred KB either way.
  [ $((mem_after - mem_before)) -ge 2000000 ]
  ok $? "and charged to the session's memory cgroup ($mem_before, then $mem_after bytes)"
else
  skip "an upload is charged to the session's memory cgroup: the session has no memory cgroup here"
fi
s upload -s "$sid" "$sr_tmp/blob" b.bin
like "$rc $err" "^125 .*quota_exceeded" "an upload past the session's tmpfs: quota_exceeded"
head -c 1000000 /dev/zero | tr '\0' x > "$sr_tmp/text1"
s file-write -s "$sid" /scratch/big.txt "$sr_tmp/text1"
is "$rc $err" "0 " "file_write may write in /scratch, now a tmpfs of the session"
head -c 3000000 /dev/zero | tr '\0' x > "$sr_tmp/text3"
s file-write -s "$sid" /scratch/big3.txt "$sr_tmp/text3"
is "$rc $err" "0 " "and up to its size"
s file-write -s "$sid" /scratch/big3b.txt "$sr_tmp/text3"
is "$rc $err" "0 " "and up to its size"
s file-write -s "$sid" /scratch/big3c.txt "$sr_tmp/text3"
like "$rc $err" "^125 .*quota_exceeded" "file_write past /scratch's size: quota_exceeded"

s close -s "$sid"
is "$rc $err" "0 " "the session closes"
stop_server
ok $? "the server stops"
[ -z "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null)" ]
ok $? "no container state is left"

# --- an upload past the session's memory, with room in its tmpfs ---
if [ -n "$mem_before" ]; then
  SANDBOX_MEMORY=24M SANDBOX_SESSION_DATA_SIZE=64M SANDBOX_MAX_MESSAGE_SIZE=64M \
    SANDBOX_MAX_UPLOAD_SIZE=60M start_server && export SANDBOX_RUNNER_URL=$url
  s new --image python
  sid=$out
  head -c 32000000 /dev/urandom > "$sr_tmp/blob32"
  s upload -s "$sid" "$sr_tmp/blob32" big.bin
  like "$rc $err" "^125 .*quota_exceeded: .*memory limit" \
    "32 MB uploaded into a session of 24M memory: quota_exceeded, not the server's memory"
  runs "$sid" 'import os; print(os.listdir("/mnt/data"))'
  is "$rc $out" "0 []" "the session lives on, with no part of the file left"
  s close -s "$sid"
  stop_server
else
  skip "an upload past the session's memory: the session has no memory cgroup here"
fi
done_testing
