#!/bin/sh
# bench/report.py reads what bench/run.sh writes: throughput in rounds
# (the medians go to the tables and the targets), failed and missing
# rounds said so, the warm containers' memory, the notes on what each
# system enforces under the title.  Data made up here: no
# timing is measured.
. "$SR_SRCDIR/tests/integration/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is not installed"
raw=$sr_tmp/raw
mkdir -p "$raw"
tab=$(printf '\t')
# rows FILE LINE...: LINE's spaces become tabs (names have none here).
rows () {
  f=$1
  shift
  for line in "$@"; do printf '%s\n' "$line" | tr ' ' "$tab"; done >>"$raw/$f"
}
# Per round: chroot 150, 100, 160 runs/s (median 150); bwrap 80, 120, 100
# (100), its second round with a failed run; MCP stdio 60, 90, 75 (75).
rows throughput.tsv \
  "chroot 8 120 0.8 0" "bwrap 8 120 1.5 0" "mcp 8 120 2.0 0" \
  "chroot 8 120 1.2 0" "bwrap 8 120 1.0 1" "mcp 8 120 1.333333 0" \
  "chroot 8 120 0.75 0" "bwrap 8 120 1.2 0" "mcp 8 120 1.6 0" \
  "run 8 120 1.0 -1" "run 8 120 1.0 0"
sed -i "s/^mcp$tab/sandbox-runner MCP stdio$tab/" "$raw/throughput.tsv"
rows startup.tsv "chroot true 1000" "chroot true 3000" "chroot true 2000" "bwrap true 4000"
rows warm-memory.tsv "python 2 12036 10301" "python-data 2 85308 83532"
echo "bwrap runs as \`bwrap --unshare-all\`: no cgroup." >"$raw/notes.txt"

out=$(python3 "$SR_SRCDIR/bench/report.py" "$raw" "$sr_tmp/report" "a made-up run" 2>&1)
ok $? "report.py reads the raw files"
report=$(cat "$sr_tmp/report.md" 2>/dev/null)
like "$report" "## Throughput \(runs/s, median of 3 rounds" "the throughput heading counts the rounds"
like "$report" "\| chroot \| 150\.0 \|" "chroot's rate is the median of its rounds"
like "$report" "\| sandbox-runner MCP stdio \| 75\.0 \|" "so is the MCP server's"
like "$report" "\| bwrap \| 100\.0 \(1 of 360 failed\) \|" "a round's failed runs are summed over the rounds"
like "$report" "\| run \| 120\.0 \(some failed\) \(2 of 3 rounds\) \|" \
  "a round that said only that some run failed, and missing rounds, are said"
like "$report" "MISS throughput at concurrency 8: .*: 50\.00% \(target >= 66\.67%\)" \
  "the throughput target divides the medians"
like "$report" "\| chroot \| 3 \| 2\.00 \|" "a startup row gives the median of its runs"
like "$report" "## Warm containers" "the warm containers have a section"
like "$report" "\| python \| 2 \| 11\.75 \| 10\.06 \|" "with the warm python container's RSS and PSS"
like "$report" "\| python-data \| 2 \| 83\.31 \| 81\.57 \|" "and python-data's"
is "$(sed -n 3p "$sr_tmp/report.md")" "- bwrap runs as \`bwrap --unshare-all\`: no cgroup." \
  "a note on what a system enforces heads the report, under the title"
done_testing
