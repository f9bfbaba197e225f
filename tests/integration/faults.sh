#!/bin/sh
# Faults: kill -9 of the server mid-run, of an import mid-extraction and of
# runners in the middle of history writes; a full file system under the
# scratch directories, the history database and the image store.  Nothing
# may be left behind, nothing committed lost, and the server serves on.
#
# The test makes itself a child subreaper first, so that whatever a killed
# runner leaves running is reparented to it and can be counted.
. "${SR_SRCDIR}/tests/load/leaks.sh" && sr_become_subreaper "$0" "$@"
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
containers=$SANDBOX_RUNTIME_DIR/containers
scratch=$SANDBOX_RUNTIME_DIR/scratch

# mcp SCRIPT: runs `sandbox-runner serve` over stdio through the
# script's steps, one a line, and prints every message the server sends
# (one JSON line each) and finally "EXIT <status>":
#   call TOOL ARGS-JSON   a tools/call; waits for its answer
#   send TOOL ARGS-JSON   a tools/call; does not wait
#   ping                  a ping; waits for its answer
#   sh COMMAND            runs COMMAND with sh
#   hold                  keeps stdin open until the server exits
# In ARGS-JSON, "@N.KEY" stands for the KEY of the structuredContent of
# the answer with id N (the initialize is 1, the first step's call 2).
# The server's pid goes to $sr_tmp/serve.pid.
cat > "$sr_tmp/mcp.py" <<'EOF'
import json, os, re, subprocess, sys, threading
script, pidfile = sys.argv[1], sys.argv[2]
srv = subprocess.Popen([os.environ["SR_BIN"], "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
with open(pidfile, "w") as f:
    print(srv.pid, file=f)
answered, results, cond, next_id = set(), {}, threading.Condition(), [1]
def reader():
    for line in srv.stdout:
        sys.stdout.write(line.decode(errors="replace"))
        sys.stdout.flush()
        try:
            m = json.loads(line)
            i = m.get("id")
        except (ValueError, AttributeError):
            continue
        with cond:
            results[i] = (m.get("result") or {}).get("structuredContent") or {}
            answered.add(i)
            cond.notify_all()
    with cond:
        answered.add("eof")
        cond.notify_all()
t = threading.Thread(target=reader)
t.start()
def send(msg):
    try:
        srv.stdin.write((json.dumps(msg) + "\n").encode())
        srv.stdin.flush()
    except BrokenPipeError:
        pass
def request(method, params, wait):
    i = next_id[0]
    next_id[0] += 1
    send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
    if wait:
        with cond:
            cond.wait_for(lambda: i in answered or "eof" in answered, timeout=60)
request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "faults", "version": "1"}}, True)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
for step in open(script).read().splitlines():
    verb, _, rest = step.partition(" ")
    if verb in ("call", "send"):
        name, _, args = rest.partition(" ")
        args = re.sub(r'"@(\d+)\.(\w+)"',
                      lambda g: json.dumps(results.get(int(g[1]), {}).get(g[2])), args)
        request("tools/call", {"name": name, "arguments": json.loads(args)}, verb == "call")
    elif verb == "ping":
        request("ping", {}, True)
    elif verb == "sh":
        subprocess.run(["sh", "-c", rest])
    elif verb == "hold":
        with cond:
            cond.wait_for(lambda: "eof" in answered)
try:
    srv.stdin.close()
except BrokenPipeError:
    pass
t.join()
print("EXIT", srv.wait())
EOF
mcp () { python3 "$sr_tmp/mcp.py" "$1" "$sr_tmp/serve.pid"; }

# answer ID [EXPR]: of the server's messages in $out, the answer with that
# id; EXPR (python, over r = the answer, s = its structuredContent, t = the
# text of its first content block) evaluated on it.
answer () {
  printf '%s\n' "$out" | python3 -c 'import json, sys
want, expr = int(sys.argv[1]), sys.argv[2]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("id") != want:
        continue
    r = m.get("result", m)
    s = r.get("structuredContent", {})
    t = (r.get("content") or [{}])[0].get("text", "")
    v = eval(expr)
    print(json.dumps(v) if not isinstance(v, str) else v)
    break
else:
    print("no answer with id %d" % want)' "$1" "${2:-r}"
}

mounts_before=$(mounts_under "$sr_tmp")

# --- kill -9 of the server in the middle of a run ---
cat > "$sr_tmp/midrun" <<EOF
send run_code {"language": "python", "code": "import time\ntime.sleep(25)", "timeout_seconds": 30}
hold
EOF
mcp "$sr_tmp/midrun" > "$sr_tmp/midrun.out" 2>"$sr_tmp/midrun.err" &
client=$!
for i in $(seq 1 300); do
  [ -n "$(ls "$containers" 2>/dev/null)" ] && [ -n "$(ls "$scratch" 2>/dev/null)" ] && break
  sleep 0.1
done
victim=$(cat "$sr_tmp/serve.pid")
name=$(ls "$containers" 2>/dev/null | sed -n 's/\.json$//p' | head -1)
like "$name" "^sr-$victim-[0-9]+$" "a run_code is running in the server (container $name)"
descendants > "$sr_tmp/procs"
grep -q ' python3 /scratch/main.py' "$sr_tmp/procs"
ok $? "its python process runs below the server"
cgroups_made=$(runner_cgroups "$victim" | wc -l)
echo "# the run has $cgroups_made cgroup(s): $(runner_cgroups "$victim" | tr '\n' ' ')"
kill -9 "$victim"
wait "$client"
like "$(tail -1 "$sr_tmp/midrun.out")" "^EXIT -9$" "the server is killed with SIGKILL mid-run"
gone=1
for i in $(seq 1 150); do
  [ -z "$(descendants)" ] && { gone=0; break; }
  sleep 0.1
done
ok $gone "the container's processes die with the server"
descendants > "$sr_tmp/left"
sed 's/^/# left: /' "$sr_tmp/left"

# The next start of the server, and nothing else: no run, so what it
# reclaims it reclaims because it started.
printf 'ping\n' > "$sr_tmp/ping"
out=$(mcp "$sr_tmp/ping" 2>"$sr_tmp/restart.err")
is "$(answer 2)" '{}' "the next server start answers"
left=$(ls "$containers" 2>/dev/null)
is "$left" "" "after the next start no state file is left in $containers"
run_sr ps --json
is "$out" "[]" "and ps lists no container"
left=$(runner_cgroups "$victim" | tr '\n' ' ')
is "$left" "" "no cgroup of the killed server is left (memory, pids, cpu)"
left=$(ls "$scratch" 2>/dev/null)
is "$left" "" "no scratch directory is left in $scratch"
is "$(descendants)" "" "no process of the container is left"
is "$(mounts_under "$sr_tmp")" "$mounts_before" "no mount is left"
if [ "$cgroups_made" -eq 0 ]; then
  echo "# no writable v1/v2 cgroup for this user: the run was limited by rlimits"
fi

# --- kill -9 of a run-code command in the middle of its run ---
# It owns its container as a server does: the next run-code, and nothing
# else, reclaims what it left.
printf 'import time\ntime.sleep(25)\n' > "$sr_tmp/nap.py"
"$SR_BIN" run-code -l python "$sr_tmp/nap.py" >/dev/null 2>&1 &
victim=$!
# (The brackets keep grep from finding its own command line in the list.)
cli_running () {
  ls "$containers" 2>/dev/null | grep -q "^sr-$victim-" && descendants | grep -q ' [p]ython3 /scratch/main.py'
}
wait_until 30 cli_running
ok $? "a run-code is running (its container has a state entry)"
cli_cgroups=$(runner_cgroups "$victim" | tr '\n' ' ')
kill -9 "$victim"
wait "$victim" 2>/dev/null
cli_gone () { ! descendants | grep -q ' [p]ython3 /scratch/main.py'; }
wait_until 15 cli_gone
ok $? "its container dies with it"
is "$(ls "$containers" | grep -c "^sr-$victim-")" 1 "it leaves its state entry"
printf 'print("next")\n' > "$sr_tmp/next.py"
run_sr run-code -l python "$sr_tmp/next.py"
is "$rc $out" "0 next" "the next run-code runs"
is "$(ls "$containers" | grep -c "^sr-$victim-")" 0 "and reclaims the killed one's state entry"
is "$(runner_cgroups "$victim" | tr '\n' ' ')" "" "and its cgroups (it had: ${cli_cgroups:-none})"
is "$(ls "$scratch" 2>/dev/null)" "" "and its scratch directory"

# --- kill -9 of the server in the middle of two sessions ---
# Two sessions with files in their /mnt/data; in the first a persistent
# shell runs a long command, in the second a run_code sleeps.  What they
# hold on the host is counted before the kill and after the next start.
count () { n=0; for f in "$@"; do [ -e "$f" ] && n=$((n + 1)); done; echo "$n"; }
state_entries () { count "$containers"/*.json; }
scratch_dirs () { count "$scratch"/*; }
entries_before=$(state_entries)
scratch_before=$(scratch_dirs)
procs_before=$(descendants | grep -c .)
cat > "$sr_tmp/midsession" <<EOF
call create_session {"image": "python"}
call create_session {"image": "python"}
call upload_file {"session_id": "@2.session_id", "filename": "one.txt", "content_base64": "b25lCg=="}
call upload_file {"session_id": "@3.session_id", "filename": "two.txt", "content_base64": "dHdvCg=="}
call shell_new {"session_id": "@2.session_id"}
call shell_exec {"shell_id": "@6.shell_id", "command": "cat /mnt/data/one.txt; sleep 300", "wait": false}
send run_code {"session_id": "@3.session_id", "language": "python", "code": "import time\nprint(open('/mnt/data/two.txt').read())\ntime.sleep(28)", "timeout_seconds": 30}
sh touch $sr_tmp/midsession.ready
hold
EOF
rm -f "$sr_tmp/midsession.ready"
mcp "$sr_tmp/midsession" > "$sr_tmp/midsession.out" 2>"$sr_tmp/midsession.err" &
client=$!
for i in $(seq 1 600); do
  [ -e "$sr_tmp/midsession.ready" ] && descendants | grep -q 'sleep 300' \
    && descendants | grep -q ' python3 /scratch/main.py' && break
  sleep 0.1
done
victim=$(cat "$sr_tmp/serve.pid")
out=$(cat "$sr_tmp/midsession.out")
sids="$(answer 2 's.get("session_id")') $(answer 3 's.get("session_id")')"
like "$sids" '^[0-9a-f]+ [0-9a-f]+$' "two sessions are open in the server ($sids)"
is "$(answer 4 's.get("path")') $(answer 5 's.get("path")')" "/mnt/data/one.txt /mnt/data/two.txt" \
  "each with a file in its /mnt/data"
like "$(answer 6 's.get("shell_id")')" '.' "a persistent shell runs in the first"
descendants > "$sr_tmp/procs"
grep -q 'sleep 300' "$sr_tmp/procs"
ok $? "the shell's long command runs below the server"
grep -q ' python3 /scratch/main.py' "$sr_tmp/procs"
ok $? "and a run_code in the second session"
entries_made=$(($(state_entries) - entries_before))
scratch_made=$(($(scratch_dirs) - scratch_before))
procs_made=$(($(grep -c . "$sr_tmp/procs") - procs_before))
echo "# the sessions hold $entries_made state entries, $scratch_made scratch dirs," \
  "$procs_made processes, cgroups: $(runner_cgroups "$victim" | tr '\n' ' ')"
# A session's code is in a tmpfs of its container, not in a scratch dir
# (the server's warm containers may hold some of those).
[ "$entries_made" -ge 2 ] && [ "$procs_made" -ge 4 ]
ok $? "each session has a state entry, and processes run"
# On a v1 host the memory, cpu and pids hierarchies each hold a cgroup of
# each session; cgroup_dirs lists the hierarchies that exist here.
for c in memory cpu pids; do
  d=$(cgroup_dirs | grep "/cgroup/\(.*,\)\?$c\(,.*\)\?\(/\|$\)" | head -1)
  if [ -z "$d" ]; then
    skip "a $c cgroup of each session: no v1 $c hierarchy of this test's cgroup here"
    continue
  fi
  if [ "$cgroups_made" -eq 0 ]; then
    skip "a $c cgroup of each session: no writable cgroup for this user (runs use rlimits)"
    continue
  fi
  n=$(count "$d/sr-$victim-"*)
  [ "$n" -ge 2 ]
  ok $? "each session has a $c cgroup ($n in $d)"
done
kill -9 "$victim"
wait "$client"
like "$(tail -1 "$sr_tmp/midsession.out")" "^EXIT -9$" "the server is killed with SIGKILL mid-session"
gone=1
for i in $(seq 1 150); do
  [ "$(descendants | grep -c .)" -le "$procs_before" ] && { gone=0; break; }
  sleep 0.1
done
ok $gone "the sessions' processes die with the server"
descendants > "$sr_tmp/left"; sed "s/^/# left: /" "$sr_tmp/left"

printf 'ping\n' > "$sr_tmp/ping"
out=$(mcp "$sr_tmp/ping" 2>"$sr_tmp/restart.err")
is "$(answer 2)" '{}' "the next server start answers"
is "$(state_entries)" "$entries_before" "after it, no state entry of the sessions is left"
is "$(runner_cgroups "$victim" | tr '\n' ' ')" "" "nor a memory, cpu or pids cgroup"
is "$(scratch_dirs)" "$scratch_before" "nor a scratch or code dir"
is "$(descendants | grep -c .)" "$procs_before" "nor a process"
is "$(mounts_under "$sr_tmp")" "$mounts_before" "nor a mount"
printf 'call list_sessions {}\n' > "$sr_tmp/ls"
out=$(mcp "$sr_tmp/ls" 2>/dev/null)
is "$(answer 2 'len(s.get("sessions", [None]))')" 0 "and the new server lists no session"

# --- kill -9 of an import in the middle of its extraction ---
cache=${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}
big=""
for b in cpp python-data python; do
  [ -f "$cache/$b/index.json" ] && { big=$cache/$b; break; }
done
istore=$sr_tmp/istore
SANDBOX_IMAGE_STORE=$istore "$SR_BIN" image import -q --name half "$big" >/dev/null 2>&1 &
victim=$!
extracting=1
for i in $(seq 1 1500); do
  if [ -n "$(ls "$istore"/tmp/x-*/rootfs/ 2>/dev/null | head -1)" ]; then extracting=0; break; fi
  sleep 0.02
done
ok $extracting "an import of $(basename "$(readlink -f "$big")") is extracting"
kill -9 "$victim"
wait "$victim" 2>/dev/null
SANDBOX_IMAGE_STORE=$istore run_sr image list --json
is "$rc $out" "0 []" "an import killed mid-extraction leaves no image in image list"
SANDBOX_IMAGE_STORE=$istore run_sr image inspect half
is "$rc" 125 "nor one by its name"
left=$(cd "$istore/images" && for d in *; do [ -e "$d" ] && [ ! -f "$d/image.json" ] && echo "$d"; done)
is "$left" "" "nor a directory without image.json in images/"
SANDBOX_IMAGE_STORE=$istore run_sr image list
is "$(ls -d "$istore"/tmp/x-* 2>/dev/null)" "" "its half extraction in tmp/ goes at the next open"
SANDBOX_IMAGE_STORE=$istore run_sr image import -q --name half "$big"
is "$rc" 0 "a new import then succeeds"
SANDBOX_IMAGE_STORE=$istore run_sr image list
like "$out" "^half " "and is listed"
rm -rf "$istore"

# --- kill -9 during history writes ---
# 40 runs in flight in one server (8 at a time), and 12 run-code commands;
# all killed while they record.  Every run the server said it recorded
# must still be there, and the database must open cleanly.
export SANDBOX_HISTORY_DB=$sr_tmp/kill.db
: > "$sr_tmp/many"
for i in $(seq 1 40); do
  echo "send run_code {\"language\": \"python\", \"code\": \"print($i)\"}" >> "$sr_tmp/many"
done
echo hold >> "$sr_tmp/many"
SANDBOX_MAX_CONCURRENT=8 mcp "$sr_tmp/many" > "$sr_tmp/many.out" 2>/dev/null &
client=$!
clis=""
for i in $(seq 1 12); do
  printf 'print("cli %d")\n' "$i" > "$sr_tmp/cli$i.py"
  "$SR_BIN" run-code -l python "$sr_tmp/cli$i.py" >/dev/null 2>&1 &
  clis="$clis $!"
done
for i in $(seq 1 1500); do
  [ "$(grep -o '"history":"recorded' "$sr_tmp/many.out" | grep -c .)" -ge 12 ] && break
  sleep 0.02
done
# shellcheck disable=SC2046,SC2086
kill -9 $(cat "$sr_tmp/serve.pid") $clis 2>/dev/null
# shellcheck disable=SC2086
wait "$client" $clis 2>/dev/null
recorded=$(python3 -c 'import json, sys
for line in open(sys.argv[1]):
    try:
        s = json.loads(line)["result"]["structuredContent"]
    except (ValueError, KeyError):
        continue
    if s.get("history") == "recorded":
        print(s["run_id"])' "$sr_tmp/many.out" | sort)
n_recorded=$(echo "$recorded" | grep -c .)
in_flight=$((40 - $(grep -c '"id":[0-9]*,"result"' "$sr_tmp/many.out") + 1))
echo "# killed with $n_recorded runs recorded and about $in_flight in flight"
[ "$n_recorded" -ge 12 ] && [ "$in_flight" -gt 0 ]
ok $? "the server is killed with runs recorded and runs in flight"
python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("PRAGMA integrity_check").fetchone()[0])' "$SANDBOX_HISTORY_DB" > "$sr_tmp/check" 2>&1
is "$(cat "$sr_tmp/check")" ok "PRAGMA integrity_check is ok after the kills"
stored=$(python3 -c 'import sqlite3, sys
for (i,) in sqlite3.connect(sys.argv[1]).execute("SELECT id FROM runs"):
    print(i)' "$SANDBOX_HISTORY_DB" | sort)
printf '%s\n' "$stored" > "$sr_tmp/stored"
missing=$(echo "$recorded" | comm -23 - "$sr_tmp/stored")
is "$missing" "" "every run the server reported recorded survives"
run_sr history --json --limit 1000
is "$rc" 0 "sandbox-runner history opens the database"
is "$(printf '%s' "$out" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)))')" \
  "$(echo "$stored" | grep -c .)" "and lists every stored run"
printf 'call run_code {"language": "python", "code": "print(\\"after\\")"}\n' > "$sr_tmp/after"
out=$(mcp "$sr_tmp/after" 2>/dev/null)
is "$(answer 2 's["history"]')" recorded "a new server records into it again"
# Killed at any point of making a container, even before its init
# existed, a runner leaves a state entry naming the cgroup: that start
# reclaimed them all.
# shellcheck disable=SC2046,SC2086
is "$(runner_cgroups $(cat "$sr_tmp/serve.pid") $clis | tr '\n' ' ')" "" \
  "no cgroup of the killed server or of the killed CLIs is left after it"

# --- /work full, inside the container ---
cat > "$sr_tmp/work" <<'EOF'
call run_code {"language": "python", "code": "open('/work/big', 'wb').write(b'x' * (4 << 20))"}
call run_code {"language": "python", "code": "print('next')"}
EOF
out=$(SANDBOX_SCRATCH_SIZE=1M mcp "$sr_tmp/work" 2>/dev/null)
is "$(answer 2 's["status"]')" error "code that fills /work fails"
like "$(answer 2 's["stderr"]')" "No space left on device" "with ENOSPC, in its stderr"
is "$(answer 3 's["stdout"]')" next "the server serves the next request"

# --- a session's /mnt/data full ---
# Code fills the session's 1 MiB /mnt/data; then an upload is refused with
# quota_exceeded, code still runs in the session, and once the code frees
# the space the upload goes through.
cat > "$sr_tmp/fulldata" <<EOF
call create_session {"image": "python"}
call run_code {"session_id": "@2.session_id", "language": "python", "code": "open('/mnt/data/big', 'wb').write(b'x' * (4 << 20))"}
call upload_file {"session_id": "@2.session_id", "filename": "more.txt", "content_base64": "bW9yZQo="}
call run_code {"session_id": "@2.session_id", "language": "python", "code": "print('still')"}
call run_code {"session_id": "@2.session_id", "language": "python", "code": "import os; os.remove('/mnt/data/big')"}
call upload_file {"session_id": "@2.session_id", "filename": "more.txt", "content_base64": "bW9yZQo="}
call close_session {"session_id": "@2.session_id"}
EOF
out=$(SANDBOX_SESSION_DATA_SIZE=1M mcp "$sr_tmp/fulldata" 2>"$sr_tmp/serve.err")
is "$(answer 2 's.get("data_size")')" 1048576 "a session with a 1 MiB /mnt/data"
like "$(answer 3 's.get("stderr")')" "No space left on device" "code that fills it fails with ENOSPC"
errjson='json.loads(t).get("error", {})'
is "$(answer 4 "$errjson.get(\"code\")")" quota_exceeded "an upload into the full /mnt/data is quota_exceeded"
like "$(answer 4 "$errjson.get(\"message\")")" "full|No space left|quota" "with a message that says so"
is "$(answer 5 's.get("stdout")')" still "code still runs in the session"
is "$(answer 7 's.get("path")')" /mnt/data/more.txt "once the code frees the space, the upload succeeds"
is "$(answer 8 's.get("closed")')" true "and the session closes"

# --- a full file system: scratch, history, image store ---
if [ "$(id -u)" -ne 0 ]; then
  reason="mounting a small tmpfs needs root; the rootless suite has none to fill"
  skip "a full file system under the scratch dirs, the history and the image store: $reason"
  is "$(descendants)" "" "no process is left at the end"
  done_testing
  exit
fi

# small_fs SIZE: a tmpfs of that size on a new directory, in $full.
small_fs () {
  full=$(mktemp -d "$sr_tmp/full.XXXXXX")
  mount -t tmpfs -o "size=$1,mode=0755" sr-faults "$full" || return 1
  at_exit "umount -l '$full' 2>/dev/null"
}
# fill DIR: fills its file system to the last block; unfill DIR frees it.
fill () { dd if=/dev/zero of="$1/filler" bs=4k 2>/dev/null; sync; }
unfill () { rm -f "$1/filler"; }

# The scratch directories and the containers' state: the runtime dir.
# The second run's code is larger than what a warm container's directory
# frees when the code replaces its pre-started interpreter's bootstrap.
small_fs 4M
pad=$(printf '%032768d' 0)
cat > "$sr_tmp/full-run" <<EOF
call run_code {"language": "python", "code": "print(1)"}
sh dd if=/dev/zero of=$full/filler bs=4k 2>/dev/null
call run_code {"language": "python", "code": "print(2)  # $pad"}
ping
call list_supported_languages {}
sh rm -f $full/filler
call run_code {"language": "python", "code": "print(3)"}
EOF
# No warm container: one made before the disk filled would serve the run
# without writing there (a root runner's code directory is a tmpfs of its
# own; the state entry was written ahead).
out=$(SANDBOX_WARM_CONTAINERS=0 SANDBOX_RUNTIME_DIR=$full/run mcp "$sr_tmp/full-run" 2>"$sr_tmp/serve.err")
is "$(answer 2 's["stdout"]')" 1 "a run with the runtime dir on a small tmpfs"
is "$(answer 3 'r.get("isError")')" true "with that file system full, run_code is an error"
like "$(answer 3 't')" "No space left on device" "which names the problem"
# The code directory when it is on it (an ordinary user's), else the
# container's state entry.
on_full="$full/run/(scratch/code-[^ ]*|containers)"
like "$(answer 3 't')" "$on_full[^ ]*: the file system of $on_full is full" \
  "and names the full file system, by the directory on it"
is "$(answer 4)" '{}' "the server answers a ping"
is "$(answer 5 'len(s["languages"]) > 0')" true "and lists its languages"
is "$(answer 6 's["stdout"]')" 3 "once there is room again, it runs code"
is "$(ls "$full/run/scratch")$(ls "$full/run/containers")" "" "and no scratch dir nor state file is left"

# The history database, on a file system that fills while the server runs.
small_fs 1M
cat > "$sr_tmp/full-db" <<EOF
call run_code {"language": "python", "code": "print(1)"}
sh dd if=/dev/zero of=$full/filler bs=4k 2>/dev/null
call run_code {"language": "python", "code": "print(2)"}
call get_execution_history {"limit": 1}
sh rm -f $full/filler
call run_code {"language": "python", "code": "print(3)"}
EOF
out=$(SANDBOX_HISTORY_DB=$full/h.db mcp "$sr_tmp/full-db" 2>"$sr_tmp/serve.err")
is "$(answer 2 's["history"]')" recorded "a run recorded in a history on a small tmpfs"
is "$(answer 3 's["stdout"]')" 2 "with that file system full, code still runs"
like "$(answer 3 's["history"]')" "^unavailable: .*$full/h.db.*(full|No space left)" \
  "and the result says the history is full, naming the database"
printf '%s\n' "$out" | grep -q '"method":"notifications/message".*"level":"warning".*could not record a run: .*h\.db'
ok $? "and the server sends a warning that the history could not record it"
is "$(answer 4 'r.get("isError") is not True')" true "get_execution_history still answers"
is "$(answer 5 's["history"]')" recorded "once there is room again, runs are recorded"

# A history database created on a file system that is full already.
fill "$full"
printf 'call run_code {"language": "python", "code": "print(1)"}\n' > "$sr_tmp/fresh-db"
out=$(SANDBOX_HISTORY_DB=$full/new.db mcp "$sr_tmp/fresh-db" 2>"$sr_tmp/serve.err")
like "$(answer 2 's["stdout"] + s["history"]')" "^1
unavailable: .*new.db.*(full|No space left)" "a new database on a full disk: the run runs, the history says why it cannot"
unfill "$full"

# The image store: room for a busybox image and the python image's blobs
# but not for its root file system, so that the import fails as it
# extracts; then a server runs code from the store filled to the brim.
small_fs 64M
require_busybox_rootfs
tar -C "$ROOTFS" -cf "$sr_tmp/bb.tar" .
python3 "$SR_SRCDIR/tests/helpers/oci-fixture.py" layout "$sr_tmp/bb" --plain "$sr_tmp/bb.tar"
export SANDBOX_LANGUAGE_SH_IMAGE=bb SANDBOX_LANGUAGE_SH_SOURCE=main.sh SANDBOX_LANGUAGE_SH_RUN="/bin/sh /scratch/main.sh"
SANDBOX_IMAGE_STORE=$full/store run_sr image import -q --name bb "$sr_tmp/bb"
is "$rc" 0 "a busybox image fits in a small store"
cat > "$sr_tmp/full-store" <<EOF
call run_code {"language": "sh", "code": "echo one"}
sh SANDBOX_IMAGE_STORE=$full/store "$SR_BIN" image import -q --name python "$cache/python" >$sr_tmp/imp.out 2>$sr_tmp/imp.err; echo \$? > $sr_tmp/imp.rc
sh dd if=/dev/zero of=$full/filler bs=4k 2>/dev/null
call run_code {"language": "sh", "code": "echo two"}
EOF
out=$(SANDBOX_IMAGE_STORE=$full/store mcp "$sr_tmp/full-store" 2>"$sr_tmp/serve.err")
is "$(answer 2 's["stdout"]')" one "a server runs code from it"
is "$(answer 3 's["stdout"]')" two "and serves the next request, the store full to the last block"
is "$(cat "$sr_tmp/imp.rc")" 125 "an import into the full store fails"
like "$(cat "$sr_tmp/imp.err")" "No space left on device" "naming the problem"
like "$(cat "$sr_tmp/imp.err")" "the file system of the image store $full/store is full" \
  "and the file system that is full"
sed 's/^/# import: /' "$sr_tmp/imp.err"
SANDBOX_IMAGE_STORE=$full/store run_sr image list --json
is "$(printf '%s' "$out" | python3 -c 'import json, sys; print(" ".join(n for i in json.load(sys.stdin) for n in i["names"]))')" \
  bb "image list shows the image that was there, and no half image"
is "$(ls -d "$full/store/tmp"/x-* 2>/dev/null)" "" "the failed import leaves nothing in tmp/"
unfill "$full"

is "$(descendants)" "" "no process is left at the end"
done_testing
