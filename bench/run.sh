#!/bin/sh
# Side by side, in one run on one rootfs: the wall time of starting a
# command with nothing (bare chroot), bubblewrap, crun, runc and
# sandbox-runner (with its default limits, and with none).  Writes a
# Markdown table of median, min and max with ratios against chroot and
# bubblewrap, and sandbox-runner's own per-step setup times, to
# bench/results/.  Run as root after building; SR_BIN picks the binary.
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

# The OCI bundle crun and runc share: read-only root, its own network
# namespace, no terminal.
oci_bundle () {
  (cd "$work/bundle" && runc spec)
  python3 - "$work/bundle/config.json" "$@" <<'PY'
import json, sys
path, args = sys.argv[1], sys.argv[2:]
c = json.load(open(path))
c["process"]["terminal"] = False
c["process"]["args"] = args
c["root"]["readonly"] = True
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
    echo "$system $workload $(( (t1 - t0) / 1000 ))" >>"$raw"
    i=$((i + 1))
  done
}

n=0
# oci_run RUNTIME: one container of the bundle, under a fresh name.
oci_run () { n=$((n + 1)); "$1" run --bundle "$work/bundle" "sr-bench-$$-$n"; }

for workload in true "sh -c :"; do
  # shellcheck disable=SC2086
  set -- $workload
  time_runs chroot "$workload" chroot "$root" "$@"
  time_runs bwrap "$workload" bwrap --unshare-all --ro-bind "$root" / --proc /proc --dev /dev \
    --tmpfs /tmp --tmpfs /work -- "$@"
  time_runs sandbox-runner "$workload" "$sr" run --rootfs "$root" -- "$@"
  time_runs "sandbox-runner (no limits)" "$workload" "$sr" run --memory 0 --cpus 0 --pids 0 \
    --rootfs "$root" -- "$@"
  if command -v runc >/dev/null; then
    oci_bundle "$@"
    time_runs runc "$workload" oci_run runc
    command -v crun >/dev/null && time_runs crun "$workload" oci_run crun
    rm -f "$work/bundle/config.json"
  fi
done

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
    left, us = line.rstrip("\n").rsplit(" ", 1)
    # "SYSTEM WORKLOAD": the workload is "true" or "sh -c :"
    for w in ("true", "sh -c :"):
        if left.endswith(" " + w):
            data.setdefault(w, {}).setdefault(left[: -len(w) - 1], []).append(int(us) / 1000)
lines = [f"# Startup wall time, {runs} runs each (ms)", ""]
for w, systems in data.items():
    base = statistics.median(systems.get("chroot", [float("nan")]))
    bw = statistics.median(systems.get("bwrap", [float("nan")]))
    lines += [f"## `{w}`", "", "| system | median | min | max | vs chroot | vs bwrap |",
              "|---|---:|---:|---:|---:|---:|"]
    for s, v in systems.items():
        m = statistics.median(v)
        lines.append(f"| {s} | {m:.2f} | {min(v):.2f} | {max(v):.2f} | {m / base:.2f}x | {m / bw:.2f}x |")
    lines.append("")
rows = [json.loads(l)["setup_ms"] for l in open(steps) if l.strip()]
lines += ["## sandbox-runner setup steps, default limits (median ms)", "", "| step | median |", "|---|---:|"]
for k in rows[0]:
    lines.append(f"| {k} | {statistics.median(r[k] for r in rows):.3f} |")
open(out, "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
echo "bench: written to $results/bench-$stamp.md"
