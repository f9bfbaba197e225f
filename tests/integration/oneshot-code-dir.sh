#!/bin/sh
# A one-shot run's /scratch (its code directory) of a root runner is a
# tmpfs of its own (code_dir_size, nosuid, nodev), never a directory of a
# host file system: the compile stage's output cannot fill the host's disk
# nor leave a setuid file or a device node a host user could use; it is
# unmounted and removed with the run, and what a runner that died left
# is reclaimed; the compile cache still answers.  An ordinary user cannot
# mount on the host: its code directory stays in its runtime_dir.
. "${SR_SRCDIR}/tests/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip_all "only a root runner mounts a tmpfs for the code"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_WARM_CONTAINERS=0
# Small: what it proves holds for any size.
export SANDBOX_CODE_DIR_SIZE=4M
require_image python
scratch=$SANDBOX_RUNTIME_DIR/scratch

mine () { grep -c " $SANDBOX_RUNTIME_DIR" /proc/self/mountinfo; }

code python 'import os
line = [l for l in open("/proc/self/mountinfo") if l.split()[4] == "/scratch"][-1]
f = line.split()
st = os.statvfs("/scratch")
print(line.split(" - ")[1].split()[0], f[3], "nosuid" in f[5], "nodev" in f[5],
      st.f_blocks * st.f_frsize >> 20)'
like "$(field status) $(field stdout)" "^success tmpfs / True True 4$" \
  "the run's /scratch is a tmpfs of its own (its root, not a host directory), nosuid, nodev, code_dir_size"
is "$(mine)" 0 "nothing stays mounted in the runtime dir after the run"
is "$(ls "$scratch" | wc -l)" 0 "nor is its code directory left"

code python 'open("/scratch/x", "w").write("x")'
is "$(field status)" error "the run stage cannot write there"
like "$(field stderr)" "Read-only file system" "it is read-only for the run stage, as before"

# A dead runner's code directory, tmpfs and all: no runner holds its lock.
mkdir -p "$scratch/code-dead00"
mount -t tmpfs -o size=1M tmpfs "$scratch/code-dead00"
at_exit "umount -l '$scratch/code-dead00' 2>/dev/null"
touch "$scratch/code-dead00/left"
code python 'print("next")'
is "$(field stdout)" next "the next run runs"
is "$(mine)" 0 "and unmounts the tmpfs a runner that died left"
[ ! -e "$scratch/code-dead00" ]
ok $? "and removes its directory"

# A runner in another mount namespace (a service's, under ProtectSystem=)
# does not see a live run's tmpfs: it must still leave the directory
# beneath alone.
"$SR_BIN" run-code -l python - > "$sr_tmp/slow.out" 2>&1 <<'EOF2' &
import time
print("started")
time.sleep(4)
print(open("/scratch/main.py").read().count("sleep"))
EOF2
slow=$!
# Its output comes at its end: its code directory says it began.
began () { ls "$scratch" | grep -q '^code-'; }
wait_until 20 began
live=$(ls "$scratch")
run_cmd unshare --mount --propagation private sh -c \
  'umount -l "$1"/code-* && printf "print(2)" | "$SR_BIN" run-code -l python -' sh "$scratch"
is "$rc $out $err" "0 2 " "a runner in another mount namespace, which does not see the live run's tmpfs, runs"
is "$(ls "$scratch")" "$live" "and leaves the live run's code directory where it is"
wait "$slow"
is "$(tr '\n' ' ' < "$sr_tmp/slow.out")" "started 2 " "which ends as it would have"
is "$(mine) $(ls "$scratch" | wc -l)" "0 0" "and leaves nothing behind"

if import_image cpp; then
  hello='#include <iostream>
int main() { std::cout << "hello tmpfs" << std::endl; }'
  code cpp "$hello"
  is "$(field status) $(field stdout) $(field compile_cached)" "success hello tmpfs false" \
    "a C++ snippet compiles into the tmpfs and runs"
  code cpp "$hello"
  is "$(field status) $(field stdout) $(field compile_cached)" "success hello tmpfs true" \
    "the compile cache still answers the same snippet"
  # Past code_dir_size: the object file is 8 MiB.
  code cpp 'char big[8u << 20] = {1};
int main() { return big[12345]; }'
  is "$(field status)" compile_error "a compile stage whose output is past code_dir_size fails"
  # The compiler's words: ENOSPC from as, "Disk full?" from mold.
  like "$(field stderr)" "No space left on device|Disk full" "and says why: the tmpfs is full"
  is "$(mine) $(ls "$scratch" | wc -l)" "0 0" "and leaves nothing mounted nor written"
else
  skip "image cpp is not built: no compile stage to check"
fi

done_testing
