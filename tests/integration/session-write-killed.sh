#!/bin/sh
# A session write runs in a child charged to the session's cgroups; when
# the memory limit's OOM killer takes that child after it named its temp
# file and before it renamed it into place, the call is quota_exceeded
# and nothing of the write stays in the session: neither the file nor a
# temp file.  strace kills the writer at exactly that point (SIGKILL on
# its renameat2, which only a session write makes), as the OOM killer
# would.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
export SANDBOX_SESSION_IMAGE=python SANDBOX_WARM_CONTAINERS=0
require_image python
require_session_client
command -v strace >/dev/null || skip_all "strace is not installed"

start_session_server

head -c 1000000 /dev/urandom > "$sr_tmp/blob"
# Without a memory cgroup the server writes itself: no child to kill.
why=""
[ -n "$(session_memory)" ] || why="the session has no memory cgroup here: no charged writer"
if [ -z "$why" ]; then
  strace -f -qq -p "$server" -e trace=renameat2 -e inject=renameat2:signal=SIGKILL \
    -o "$sr_tmp/strace.out" &
  tracer=$!
  at_exit "kill $tracer 2>/dev/null"
  traced () { ! grep -q '^TracerPid:[[:space:]]*0$' "/proc/$server/status"; }
  wait_until 10 traced || { kill "$tracer"; why="strace cannot attach to the server here"; }
fi
if [ -z "$why" ]; then
  s upload -s "$sid" "$sr_tmp/blob" killed.bin
  like "$rc $err" "^125 .*quota_exceeded: the write was killed" \
    "a write killed between naming its temp file and renaming it: quota_exceeded"
  kill "$tracer"
  wait "$tracer" 2>/dev/null
  grep -q 'renameat2([0-9]*, "\.sr-tmp-[0-9a-f]*", [0-9]*, "killed\.bin"' "$sr_tmp/strace.out" &&
    grep -q '+++ killed by SIGKILL +++' "$sr_tmp/strace.out"
  ok $? "the writer was killed at its renameat2 of the named temp file"
  runs "$sid" 'import os; print(sorted(os.listdir("/mnt/data")))'
  is "$rc $out" "0 []" "nothing of the write is left in the session: no file, no temp file"
else
  skip "a killed write is quota_exceeded: $why"
  skip "the writer killed at its renameat2: $why"
  skip "nothing of the write is left: $why"
fi

s upload -s "$sid" "$sr_tmp/blob" next.bin
is "$rc $err" "0 " "the next write goes through"
s close -s "$sid"
stop_server
ok $? "the server stops"

done_testing
