#!/bin/sh
# The Docker Engine client against a real dockerd: the same results as the
# native runtime (streams, exit codes, timeout, cancel, oom, truncation),
# the same policy seen from inside (network none, read-only root, no caps,
# a non-root user, our seccomp profile), sessions, no container left
# behind, and clear errors for a daemon that is not there and an image
# that is missing.  tests/docker/start-dockerd.sh starts Debian's dockerd
# when none runs (and this test stops it again); where it cannot, the
# whole test is skipped with its reason.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_busybox_rootfs
driver=$SR_BUILDDIR/tests/helpers/docker-driver
require_dockerd

# Every container of this test carries this label, so that what is left
# can be counted, and removed at the end whatever happened.
tag=docker-sh-$$
at_exit "docker ps -aq --filter label=org.sandbox-runner.test=$tag | xargs -r docker rm -f >/dev/null 2>&1"
left_behind () { docker ps -aq --filter "label=org.sandbox-runner.test=$tag" | wc -l; }

export DOCKER_IMAGE=sandbox-runner-test/busybox:$$
dockerd_ctl import "$DOCKER_IMAGE" "$ROOTFS" 2>"$sr_tmp/import.err" ||
  { cat "$sr_tmp/import.err"; echo "Bail out! docker import of the busybox rootfs failed"; exit 1; }
at_exit "docker rmi -f '$DOCKER_IMAGE' >/dev/null 2>&1"

# A sanitizer build reports on stderr (and the driver's stderr is
# otherwise empty): every report is counted, and fails the last check.
sanitizer_reports=0
drv () {
  run_cmd "$driver" --label "org.sandbox-runner.test=$tag" "$@"
  if printf '%s' "$err" | grep -Eq 'Sanitizer|runtime error'; then
    sanitizer_reports=$((sanitizer_reports + 1))
    printf '%s\n' "$err" | head -20 | sed 's/^/# /'
  fi
}
# dr ARGS... CMD: one run; $out is the driver's line, $o and $e the streams.
dr () {
  drv --out "$sr_tmp/o" --err "$sr_tmp/e" "$@"
  o=$(cat "$sr_tmp/o" 2>/dev/null) e=$(cat "$sr_tmp/e" 2>/dev/null)
}
field () { echo "$out" | cut -d' ' -f"$1"; }

drv ping
like "$out" "^ok 1\.[0-9]+$" "the client pings the daemon and agrees on an API version"

# --- results, as native gives them ---
dr run 'echo to-out; echo to-err >&2; exit 3'
is "$(field 1) $(field 2) $(field 3)" "error 3 0" "a non-zero exit is status error with its code"
is "$o|$e" "to-out|to-err" "stdout and stderr come back apart (the stream is demultiplexed)"
dr run 'printf "%s" "$HOME $PWD"'
is "$(field 1)|$o" "success|/work /work" "exit 0 is success; HOME and the working directory are /work"
dr run 'exec nosuchcommand'
is "$rc $(field 1) $(field 2)" "0 error 127" "a command the shell cannot find exits 127"

t0=$(date +%s%N)
dr --timeout 1000 run 'echo started; sleep 30'
t1=$(date +%s%N)
is "$(field 1) $(field 3)" "timeout 9" "a timeout is status timeout, killed by SIGKILL"
ok $([ $(( (t1 - t0) / 1000000 )) -lt 8000 ] && echo 0 || echo 1) \
  "the timeout is ours: 1 s asked, $(( (t1 - t0) / 1000000 )) ms in all, not 30 s"
is "$o" "started" "what was written before the timeout is kept"
is "$(left_behind)" 0 "the timed-out container is removed"

dr --cancel-after 700 run 'sleep 30'
is "$(field 1)" "cancelled" "a readable cancel fd cancels the run"

dr --memory $((64 << 20)) run 'dd if=/dev/zero of=/dev/null bs=200M count=1'
is "$(field 1)" "oom" "a command over its memory limit is status oom (State.OOMKilled)"
dr --memory $((64 << 20)) run 'dd if=/dev/zero of=/dev/null bs=8M count=1'
is "$(field 1)" "success" "the same command under its limit succeeds"

dr --max-output 1000 run 'yes | head -c 100000; echo small >&2'
is "$(head -c 1000 "$sr_tmp/o" | tr -d 'y\n')" "" "stdout is cut at the cap"
like "$(tail -n 1 "$sr_tmp/o")" "^\[sandbox-runner: output truncated after 1000 bytes; 99000 bytes dropped\]$" \
  "the cut output ends with native's truncation marker"
is "$e" "small" "the cap is per stream: stderr under it is whole"

# --- the policy, seen from inside ---
dr run 'ls /sys/class/net | tr "\n" " "'
is "$o" "lo " "network none: only lo"
dr run 'touch /x'
like "$e" "Read-only file system" "the root is read-only"
dr --writable-root --user 0:0 run 'touch /x && echo wrote'
is "$o" "wrote" "and writable when asked (to root), so the check above can fail"
dr run 'grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)" /proc/self/status | tr -s "\t" " " | tr "\n" " "'
is "$o" "CapInh: 0000000000000000 CapPrm: 0000000000000000 CapEff: 0000000000000000 CapBnd: 0000000000000000 CapAmb: 0000000000000000 NoNewPrivs: 1 " \
  "every capability is dropped, no_new_privs is set"
dr run 'id -u; id -g; echo x > /work/f && echo scratch-writable; echo y > /tmp/f && echo tmp-writable'
is "$(echo $o)" "65534 65534 scratch-writable tmp-writable" "the command runs as nobody, and its tmpfs mounts are writable to it"
dr run 'grep -E " /(tmp|work) " /proc/mounts | cut -d" " -f2,4 | sort | tr "\n" " "'
like "$o" "^/tmp rw,nosuid,nodev,noexec[^ ]* /work rw,nosuid,nodev[^ ]* $" "/tmp is a nosuid,nodev,noexec tmpfs, /work a nosuid,nodev one"

cat >"$sr_tmp/no-mkdir.json" <<'EOF'
{"defaultAction": "SCMP_ACT_ALLOW",
 "syscalls": [{"names": ["mkdir", "mkdirat"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1}]}
EOF
dr --seccomp "$sr_tmp/no-mkdir.json" run 'mkdir /tmp/d'
like "$e" "Operation not permitted" "a seccomp profile given as JSON text is applied"
dr run 'mkdir /tmp/d && echo made'
is "$o" "made" "without it the same mkdir works"
if [ -x "$ROOTFS/bin/probe" ]; then
  dr --seccomp "$SR_SRCDIR/seccomp/default.json" run 'probe syscalls | grep -E "^(io_uring_setup|ptrace) " | tr "\n" " "'
  is "$o" "ptrace errno=EPERM io_uring_setup errno=EPERM " "our default profile loads in Docker and denies what it denies natively"
  dr run 'probe syscalls | grep -E "^io_uring_setup " '
  ok $([ "$o" != "io_uring_setup errno=EPERM" ] && echo 0 || echo 1) "Docker's own profile differs there ($o), so the check above can fail"
else
  skip "the static probe was not built"
  skip "the static probe was not built"
fi

# --- sessions ---
drv session \
  'echo persisted > /work/f; echo written' \
  'cat /work/f' \
  'echo $$; hostname; id -u' \
  'exit 7' \
  'timeout:sleep 30 & sleep 30' \
  'ps -o args | grep -c "^sleep 30"; true' \
  'sleep 31 & echo started' \
  'ps -o args | grep -c "^sleep 31"; true' \
  'touch /bin/x 2>&1'
printf '%s\n' "$out" >"$sr_tmp/session.out"
line () { sed -n "$(( $1 + 1 ))p" "$sr_tmp/session.out"; }
is "$rc" 0 "the driver ran every session command"
like "$(line 0)" "^container [0-9a-f]{64}$" "a session holds one container"
is "$(line 1)" "success 0 written|" "a first command writes a file"
is "$(line 2)" "success 0 persisted|" "the next command sees it"
like "$(line 3)" "^success 0 [0-9]+\|sandbox\|65534\|$" "commands share the hostname and the non-root user"
pid=$(line 3 | cut -d' ' -f3 | cut -d'|' -f1)
ok $([ "${pid:-1}" -gt 1 ] && echo 0 || echo 1) "a command is not pid 1 ($pid): the init holds the container"
is "$(line 4)" "error 7 " "exit codes come back"
is "$(line 5)" "timeout 137 " "a command's timeout kills it"
is "$(line 6)" "success 0 0|" "and its background job, while the session lives on"
is "$(line 7)" "success 0 started|" "a command that leaves a job behind ends"
is "$(line 8)" "success 0 0|" "and the job dies with it"
like "$(line 9)" "Read-only file system" "the session's root is read-only"
is "$(left_behind)" 0 "destroying the session removes its container"

# --- a held container's lifecycle (engine-manage.c) ---
mkdir -p "$sr_tmp/keep" && chmod 777 "$sr_tmp/keep"
drv --memory 268435456 --pids 64 --bind "$sr_tmp/keep:/keep" session \
  'echo kept > /keep/f; echo in-tmpfs > /work/g; echo to-out >/proc/1/fd/1; echo to-err >/proc/1/fd/2; echo ran' \
  '@inspect' '@stats' '@logs:10:1024' '@logs:10:3' \
  'echo last >/proc/1/fd/1; echo later' '@logs:1:1024' \
  '@stop' '@inspect' 'true' '@stop' '@start' \
  'cat /keep/f; cat /work/g 2>&1 | grep -c "No such"' \
  '@restart' 'echo after'
printf '%s\n' "$out" >"$sr_tmp/life.out"
lline () { sed -n "$(( $1 + 1 ))p" "$sr_tmp/life.out"; }
is "$rc" 0 "the driver ran every lifecycle line"
is "$(lline 1)" "success 0 ran|" "a command writes to the init's stdout and stderr"
like "$(lline 2)" "^inspect running 1 $DOCKER_IMAGE id 268435456 [0-9]+ 64 created$" \
  "inspect: state, image, id, memory and pids limits, created"
like "$(lline 3)" "^stats memory 268435456 [1-9][0-9]* 64$" "stats: memory in use, its limit, pids"
is "$(lline 4)" "logs out=to-out| err=to-err|" "logs: the multiplexed streams come apart"
is "$(lline 5)" "logs out=to- err=to- truncated" "logs: each stream is cut at max, and says so"
# Written well after to-err: the daemon copies the two streams apart, so
# lines written at once may be logged in either order.
is "$(lline 7)" "logs out=last| err=" "logs: tail counts the last lines"
is "$(lline 8)" "stop ok stopped" "stop stops it"
like "$(lline 9)" "^inspect exited 0 " "inspect says exited"
like "$(lline 10)" "^failed " "an exec in a stopped container fails"
is "$(lline 11)" "stop ok stopped" "stopping a stopped container succeeds"
is "$(lline 12)" "start ok running" "start runs it again"
is "$(lline 13)" "success 0 kept|1|" "a bind keeps its files across stop, a tmpfs starts empty"
is "$(lline 14)" "restart ok running" "restart"
is "$(lline 15)" "success 0 after|" "commands run after restart"
is "$(left_behind)" 0 "destroying it removes the container"

# --- orphans ---
"$driver" --label "org.sandbox-runner.test=$tag" hold >"$sr_tmp/hold1" 2>&1 &
live=$!
"$driver" --label "org.sandbox-runner.test=$tag" hold >"$sr_tmp/hold2" 2>&1 &
dead=$!
for i in $(seq 100); do
  grep -q container "$sr_tmp/hold1" && grep -q container "$sr_tmp/hold2" && break
  sleep 0.1
done
kill -9 "$dead"
wait "$dead" 2>/dev/null
dead_id=$(cut -d' ' -f2 "$sr_tmp/hold2")
live_id=$(cut -d' ' -f2 "$sr_tmp/hold1")
is "$(left_behind)" 2 "a runner killed with SIGKILL leaves its container behind"
drv reap
like "$out" "^removed [1-9][0-9]*$" "reap_orphans removes what dead runners left"
is "$(docker ps -aq --no-trunc --filter "label=org.sandbox-runner.test=$tag")" "$live_id" \
  "the dead runner's container went ($dead_id), the live one's stayed"
kill "$live"
wait "$live" 2>/dev/null
drv reap
is "$(left_behind)" 0 "no container of this test is left behind"

# --- errors ---
t0=$(date +%s%N)
DOCKER_HOST=unix://$sr_tmp/no-such.sock run_cmd "$driver" ping
t1=$(date +%s%N)
like "$out" "^failed open: the Docker daemon is not running: .*no-such.sock does not exist" \
  "a daemon that is not running is named as such"
ok $([ $(( (t1 - t0) / 1000000 )) -lt 1000 ] && echo 0 || echo 1) "at once ($(( (t1 - t0) / 1000000 )) ms)"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$sr_tmp/stale.sock"
DOCKER_HOST=unix://$sr_tmp/stale.sock run_cmd "$driver" ping
like "$out" "nothing listens on .*stale.sock" "a stale socket says that nothing listens"
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); time.sleep(20)' "$sr_tmp/mute.sock" &
mute=$!
at_exit "kill $mute 2>/dev/null"
for i in $(seq 50); do [ -S "$sr_tmp/mute.sock" ] && break; sleep 0.1; done
t0=$(date +%s%N)
DOCKER_HOST=unix://$sr_tmp/mute.sock run_cmd "$driver" ping
t1=$(date +%s%N)
like "$out" "did not answer within 3000 ms" "a daemon that never answers is an error, not a hang"
ok $([ $(( (t1 - t0) / 1000000 )) -lt 6000 ] && echo 0 || echo 1) "after the ping timeout ($(( (t1 - t0) / 1000000 )) ms)"
kill "$mute" 2>/dev/null

drv image sandbox-runner-test/missing:1
like "$out" "no image sandbox-runner-test/missing:1 \(run \`docker pull sandbox-runner-test/missing:1\`" \
  "a missing image names docker pull"
drv --image sandbox-runner-test/missing:1 run true
like "$out" "docker pull sandbox-runner-test/missing:1" "and so does a run on it"
drv image "$DOCKER_IMAGE"
is "$out" "present" "an image that is there is found"

# --- the python image, when rootfs/build-all.sh built it ---
cache=${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}
if [ -f "$cache/python/index.json" ]; then
  pyimage=sandbox-runner-test/python:$(basename "$(readlink -f "$cache/python")")
  docker image inspect "$pyimage" >/dev/null 2>&1 ||
    dockerd_ctl import-oci "$pyimage" "$cache/python" 2>"$sr_tmp/import.err" ||
    { cat "$sr_tmp/import.err"; echo "Bail out! docker import of $cache/python failed"; exit 1; }
  dr --image "$pyimage" run 'python3 -c "import sys; print(6 * 7); print(sys.version_info[0], file=sys.stderr)"'
  is "$(field 1) $o $e" "success 42 3" "a Python snippet runs in the imported python image"
  dr --image "$pyimage" --memory $((64 << 20)) run 'python3 -c "b = bytearray(512 << 20)"'
  is "$(field 1)" "oom" "and a Python allocation over the limit is oom"
else
  skip "image python is not built in $cache (run rootfs/build-all.sh)"
  skip "image python is not built in $cache (run rootfs/build-all.sh)"
fi
is "$(left_behind)" 0 "at the end, docker ps -a shows no container with our label"
is "$sanitizer_reports" 0 "the driver ran clean (no sanitizer report)"
done_testing
