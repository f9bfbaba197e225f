#!/bin/sh
# Resource limits seen from inside, and the report of what enforced them.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs

# Which mechanism this host should use: cgroups as root (v1 here, v2 on a
# pure v2 host or in the cgroup2 guest), rlimits for an ordinary user
# without a delegated cgroup.
if [ -n "${SR_EXPECT_LIMITS:-}" ]; then
  expect=$SR_EXPECT_LIMITS
elif [ "$(id -u)" -eq 0 ]; then
  if pure_cgroup2; then
    expect=cgroup2
  else
    expect=cgroup1
  fi
else
  expect=rlimit
fi
echo "# expecting limits enforced by: $expect"

run_sr run --json --rootfs "$ROOTFS" -- true
limits=$(json_field "$out" limits)
if [ "$expect" = rlimit ]; then
  is "$limits" '{"memory": "rlimit", "cpu": "none", "pids": "rlimit"}' "the result says rlimits enforce memory and pids, and nothing the CPU share"
  run_sr run --strict-limits --rootfs "$ROOTFS" -- true
  is "$rc" 125 "--strict-limits refuses a limit nothing can enforce"
  like "$err" "the CPU limit cannot be enforced" "and says which"
  run_sr run --strict-limits --cpus 0 --rootfs "$ROOTFS" -- true
  is "$rc" 0 "--strict-limits runs when every asked limit is enforced"
else
  is "$limits" "{\"memory\": \"$expect\", \"cpu\": \"$expect\", \"pids\": \"$expect\"}" "the result says $expect enforced each limit"
  run_sr run --strict-limits --rootfs "$ROOTFS" -- true
  is "$rc" 0 "--strict-limits runs when every limit is enforced"
fi

# A memory balloon: dd's 96 MiB buffer, filled from /dev/zero.
run_sr run --json --memory 32M --rootfs "$ROOTFS" -- dd if=/dev/zero of=/dev/null bs=96M count=1
if [ "$expect" = rlimit ]; then
  is "$(json_field "$out" status)" error "past the data rlimit the allocation fails"
  like "$(json_field "$out" stderr)" "memory|Cannot allocate" "and the program says so"
else
  is "$(json_field "$out" status)" oom "a balloon past the memory limit is reported as oom"
  is "$(json_field "$out" signal)" 9 "killed by the OOM killer"
  is "$(json_field "$out" memory_limit_bytes)" 33554432 "the result carries the limit"
fi
run_sr run --json --memory 64M --rootfs "$ROOTFS" -- dd if=/dev/zero of=/dev/null bs=16M count=1
is "$(json_field "$out" status)" success "an allocation within the limit works"

# A fork bomb stops at the pids limit; the runner and host stay responsive.
start=$(date +%s%N)
run_sr run --json --pids 16 --timeout 5 --rootfs "$ROOTFS" -- probe forks
end=$(date +%s%N)
forks=$(json_field "$out" stdout | sed -n 's/^forks \([0-9]*\) .*/\1/p')
like "$(json_field "$out" stdout)" "^forks [0-9]+ errno=EAGAIN" "the fork bomb ran into the pids limit"
ok $([ "${forks:-999}" -ge 1 ] && [ "${forks:-999}" -le 15 ] && echo 0 || echo 1) \
  "and no more than 16 processes lived at once (${forks:-?} children and the probe)"
# On time: the pids limit ends it, the 5 s timeout at the latest; the
# rest is margin for container set-up on a loaded machine.
elapsed=$(( (end - start) / 1000000 ))
ok $([ "$elapsed" -lt 20000 ] && echo 0 || echo 1) "the runner returned on time (${elapsed} ms)"
run_sr run --rootfs "$ROOTFS" -- echo alive
is "$out" alive "the next container runs normally"

# CPU share: a busy loop for 2 s of wall time under half a CPU.  The
# quota is a ceiling: on a loaded machine the loop gets less, never more;
# the floor only catches a quota far too tight (0.05 for 0.5).
if [ "$expect" != rlimit ]; then
  run_sr run --json --cpus 0.5 --timeout 2 --rootfs "$ROOTFS" -- sh -c 'while :; do :; done'
  ratio=$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%.2f" % (d["cpu_ms"]/d["duration_ms"]))')
  ok $(python3 -c "print(0 if 0.1 <= $ratio <= 0.65 else 1)") "CPU time over wall time follows the 0.5 CPU quota ($ratio)"
else
  skip "no CPU quota without a cgroup (rootless, no delegation)"
fi

# Backstops that need no cgroup: CPU seconds per process, open files and
# file size.
run_sr run --timeout 2 --tmp-size 1M --rootfs "$ROOTFS" -- sh -c 'ulimit -t; ulimit -n; ulimit -f'
is "$(printf '%s' "$out" | tr '\n' ' ')" "3 1024 524288" \
  "RLIMIT_CPU follows the timeout, RLIMIT_NOFILE is 1024, RLIMIT_FSIZE the scratch size"

# What the kernel counts per user is counted in the container's user
# namespace and again for its owner on the host (root, or the rootless
# user): the container gets a small share, and the namespace's own
# /proc/sys/user limits are low.
run_sr run --rootfs "$ROOTFS" -- sh -c 'ulimit -i; ulimit -q; cd /proc/sys/user &&
  cat max_inotify_instances max_inotify_watches max_user_namespaces max_mnt_namespaces'
is "$(printf '%s' "$out" | tr '\n' ' ')" "256 131072 16 8192 0 0" \
  "RLIMIT_SIGPENDING and RLIMIT_MSGQUEUE are small, and the namespace's user limits are lowered"

# A snippet that takes every inotify instance, message queue and timer it
# can, while it holds them, leaves the same user on the host its own.
if [ -x "$SR_BUILDDIR/tests/helpers/probe" ]; then
  "$SR_BIN" run --rootfs "$ROOTFS" -- probe hoard >"$sr_tmp/hoard" 2>&1 &
  hoarder=$!
  for i in $(seq 100); do grep -q '^held' "$sr_tmp/hoard" && break; sleep 0.1; done
  host=$("$SR_BUILDDIR/tests/helpers/probe" per-user | tr '\n' ' ')
  wait $hoarder
  echo "# inside: $(tr '\n' ' ' < "$sr_tmp/hoard")"
  like "$(cat "$sr_tmp/hoard")" "^inotify [0-9]+ errno=EMFILE" "the snippet ran out of inotify instances"
  like "$host" "inotify_init1 ok" "a snippet's inotify instances do not exhaust its owner's on the host"
  like "$host" "mq_open ok" "a snippet's message queues do not exhaust its owner's on the host"
  like "$host" "timer_create ok" "a snippet's timers do not exhaust its owner's pending signals on the host"
else
  skip "no probe program"
fi

# /tmp is capped.
run_sr run --tmp-size 1M --rootfs "$ROOTFS" -- sh -c 'dd if=/dev/zero of=/tmp/big bs=1k count=2000; echo rc=$?'
like "$err" "No space left on device" "a file larger than /tmp fails with ENOSPC"
like "$out" "rc=1" "and the write fails"

done_testing
