#!/bin/sh
# Load: SR_LOAD_RUNS run_code calls (default 500: python print(1), and in
# every hundred one that fails, one that times out and one that prints
# 2 MB) from SR_LOAD_CLIENTS concurrent clients (default 16) of the
# official TypeScript SDK, over stdio (a server per client, as agents
# start them) and over HTTP (one server, a session per client).  Every
# call must end as expected and be recorded, and nothing may leak: the
# servers' fds, mounts, cgroups, processes and temp dirs are counted
# before and after, and the servers' RSS is sampled every 100 ms.
. "${SR_SRCDIR}/tests/load/leaks.sh" && sr_become_subreaper "$0" "$@"
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
require_node_modules
command -v curl >/dev/null || skip_all "curl is not installed"
cp "$SR_SRCDIR"/tests/load/*.mjs "$NODE_DIR/"
runs=${SR_LOAD_RUNS:-500}
clients=${SR_LOAD_CLIENTS:-16}
# The servers' own temporary files, if they make any, are counted here.
mkdir -p "$sr_tmp/tmp"
export TMPDIR=$sr_tmp/tmp

# How much a server's RSS may grow over its RSS after its first calls.
# What a server legitimately holds at most: max_concurrent (4) runs, each
# with two streams captured up to max_output (100 KiB) and their JSON
# (escaped text, then the text block and structuredContent: about 4 copies),
# 4 x 2 x 100 KiB x 4 = 3.2 MiB; SQLite's page cache (2 MiB by default); a
# glibc malloc arena per worker thread (some 100 KiB touched each), and
# libmicrohttpd's connection buffers for 16 sessions (under 1 MiB).  So
# 16 MiB is twice that, and a leak of 32 KiB or more per call goes over it
# within 500 calls.  Smaller leaks are the sanitizer suite's to find
# (LeakSanitizer at the servers' exit, checked below).
rss_slack_kb=$((16 * 1024))

# snapshot: what runs may leave on disk and in the mount table, one
# "what: count" a line.
snapshot () {
  echo "state files: $(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null | wc -l)"
  echo "scratch dirs: $(ls "$SANDBOX_RUNTIME_DIR/scratch" 2>/dev/null | wc -l)"
  echo "image store tmp/: $(ls "$SANDBOX_IMAGE_STORE/tmp" 2>/dev/null | wc -l)"
  echo "temp files: $(ls -A "$TMPDIR" | wc -l)"
  echo "mounts: $(mounts_under "$sr_tmp")"
}

# sanitizer_reports FILE: the first lines of any sanitizer or crash report.
sanitizer_reports () {
  grep -E 'Sanitizer|runtime error:|Segmentation fault|Aborted|double free|corrupted' "$1" | head -5
}

# check_rss STATS-JSON FIELD-OF-BASELINE NAME: the highest RSS sampled of
# each server against its baseline plus the slack.
check_rss () {
  if is_asan_build; then
    skip "$3: not checked under AddressSanitizer, whose quarantine keeps up to 256 MiB of freed memory by design"
    return
  fi
  printf '%s' "$1" | python3 -c 'import json, sys
st, slack = json.load(sys.stdin), int(sys.argv[1])
base = {s["pid"]: s[sys.argv[2]]["rss_kb"] for s in st["servers"]} if sys.argv[2] != "-" else {s["pid"]: int(sys.argv[3]) for s in st["servers"]}
worst = max(s["max_rss_kb"] - base[s["pid"]] for s in st["servers"])
print("# highest RSS %d KiB, at most %d KiB over the baseline of %d KiB (bound: %d KiB over)" % (
    max(s["max_rss_kb"] for s in st["servers"]), worst, min(base.values()), slack))
sys.exit(0 if st["servers"] and all(s["max_rss_kb"] > 0 for s in st["servers"]) and worst <= slack else 1)' \
    "$rss_slack_kb" "$2" "${4:-0}" > "$sr_tmp/rss"
  ok $? "$3"
  cat "$sr_tmp/rss"
}

before=$(snapshot)

# --- stdio: one server per client ---
(cd "$NODE_DIR" && timeout 600 "$NODE" load-client.mjs stdio "$SR_BIN" "$clients" "$runs") \
  > "$sr_tmp/stdio.out" 2> "$sr_tmp/stdio.err"
is "$?" 0 "the stdio load driver ends cleanly"
relay_results < "$sr_tmp/stdio.out"
stats=$(sed -n 's/^STATS //p' "$sr_tmp/stdio.out")
pids=$(sed -n 's/^SERVER //p' "$sr_tmp/stdio.out")
is "$(echo "$pids" | grep -c .)" "$clients" "$clients stdio servers ran at once"
fds=$(printf '%s' "$stats" | python3 -c 'import json, sys
st = json.load(sys.stdin)
bad = ["pid %d: %d fds after its first call, %d after its last" % (s["pid"], s["first"]["fds"], s["last"]["fds"])
       for s in st["servers"] if s.get("first") is None or s.get("last") is None or s["first"]["fds"] != s["last"]["fds"]]
print("; ".join(bad) if st["servers"] and bad else "")' 2>&1)
is "$fds" "" "every stdio server has as many fds open after its last call as after its first"
check_rss "$stats" first "the RSS of every stdio server stays within 16 MiB of its RSS after the first call"
is "$(sanitizer_reports "$sr_tmp/stdio.err")" "" "no stdio server reported a crash or a sanitizer error"
left=""
for i in $(seq 1 150); do
  left=$(descendants)
  [ -z "$left" ] && break
  sleep 0.1
done
is "$left" "" "no process is left after the stdio servers exit"
is "$(snapshot)" "$before" "no state file, scratch dir, temp file or mount is left"
# shellcheck disable=SC2086
is "$(runner_cgroups $pids)" "" "no cgroup of the stdio servers is left"

# --- HTTP: one server, a session per client ---
start_server || echo "Bail out! the HTTP server did not start"
# A few calls first, so that what the server opens once (SQLite's WAL, the
# seccomp cache, its thread pool) is open when it is counted.
(cd "$NODE_DIR" && timeout 120 "$NODE" load-client.mjs http "$url" 2 8 "$server") \
  > "$sr_tmp/warm.out" 2> "$sr_tmp/warm.err"
relay_results < "$sr_tmp/warm.out"
# open_fds: the server's fds once no client connection is left open.
open_fds () {
  local n last=""
  for i in $(seq 1 50); do
    n=$(ls "/proc/$server/fd" | wc -l)
    [ "$n" = "$last" ] && break
    last=$n
    sleep 0.2
  done
  echo "$n"
}
fds_before=$(open_fds)
rss_before=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$server/status")
(cd "$NODE_DIR" && timeout 600 "$NODE" load-client.mjs http "$url" "$clients" "$runs" "$server") \
  > "$sr_tmp/http.out" 2> "$sr_tmp/http.err"
is "$?" 0 "the HTTP load driver ends cleanly"
relay_results < "$sr_tmp/http.out"
stats=$(sed -n 's/^STATS //p' "$sr_tmp/http.out")
check_rss "$stats" - "the HTTP server's RSS stays within 16 MiB of its RSS after the first calls" "$rss_before"
# The last connections of the load may still be closing: wait for the
# count to come back (a leaked fd never does).
fds_back () { [ "$(open_fds)" = "$fds_before" ]; }
wait_until 30 fds_back
fds_after=$(open_fds)
is "$fds_after" "$fds_before" "the HTTP server has as many fds open after the load as before it"
[ "$fds_after" = "$fds_before" ] || ls -l "/proc/$server/fd" | sed 's/^/# /'
server_pid=$server
stop_server
is "$?" 0 "SIGTERM then stops the HTTP server within 10 s, with status 0"
is "$(sanitizer_reports "$sr_tmp/serve.err")" "" "the HTTP server reported no crash nor sanitizer error"
is "$(descendants)" "" "no process is left after the HTTP server exits"
is "$(snapshot)" "$before" "no state file, scratch dir, temp file or mount is left"
is "$(runner_cgroups "$server_pid")" "" "no cgroup of the HTTP server is left"

# Every call said it was recorded: the history has them all.
rows=$(python3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("PRAGMA integrity_check").fetchone()[0], db.execute("SELECT count(*) FROM runs").fetchone()[0])' \
  "$SANDBOX_HISTORY_DB")
is "$rows" "ok $((2 * runs + 8))" "the history holds every call, and its integrity check is ok"

done_testing
