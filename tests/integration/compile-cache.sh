#!/bin/sh
# run-code's compile stage at full speed: a repeated snippet answered from
# the compile cache (the runner's own, size-bounded, checked on each
# read), and the compile stage's own CPU limit (compile_cpus).
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run
require_image cpp
cache=$SANDBOX_RUNTIME_DIR/compile-cache

hello='#include <iostream>
int main() { std::cout << "hello cache" << std::endl; }'
entries () { find "$cache" -maxdepth 1 -type f ! -name 'tmp.*' 2>/dev/null | wc -l; }

code cpp "$hello"
is "$(field status) $(field stdout)" "success hello cache" "a C++ snippet compiles and runs"
is "$(field compile_cached)" false "the first time it compiles (compile_cached false)"
is "$(entries)" 1 "and its build is kept in the cache"
first_ms=$(field compile_ms)
code cpp "$hello"
is "$(field status) $(field stdout)" "success hello cache" "the same snippet again runs the same"
is "$(field compile_cached)" true "answered from the cache (compile_cached true)"
second_ms=$(field compile_ms)
ok "$([ "${second_ms%.*}" -lt "${first_ms%.*}" ] && echo 0 || echo 1)" \
  "and the cache takes less than the compile (${second_ms} ms against ${first_ms} ms)"
is "$(stat -c '%a %u' "$cache")" "700 $(id -u)" \
  "the cache is the user's own, mode 0700 in the user's runtime dir"
is "$(find "$cache" -maxdepth 1 -type f ! -perm 600 | wc -l)" 0 "its entries are mode 0600"

code cpp '#include <iostream>
int main() { std::cout << "changed" << std::endl; }'
is "$(field compile_cached) $(field stdout)" "false changed" "a changed source misses"

SANDBOX_LANGUAGE_CPP_COMPILE="g++ -std=c++17 -O1 -o /scratch/main /scratch/main.cpp" code cpp "$hello"
is "$(field compile_cached) $(field stdout)" "false hello cache" "a changed compiler flag misses"

echo data > "$sr_tmp/extra.txt"
code cpp "$hello" --file "extra.txt=$sr_tmp/extra.txt"
is "$(field compile_cached) $(field stdout)" "false hello cache" "another file beside the code misses"

# A file given under the name the compiler writes: the build replaces it,
# from the cache as from the compiler.
code cpp "$hello" --file "main=$sr_tmp/extra.txt"
code cpp "$hello" --file "main=$sr_tmp/extra.txt"
is "$(field status) $(field compile_cached) $(field stdout)" "success true hello cache" \
  "a file the compile overwrote comes from the cache as the compiler left it"

before=$(entries)
code cpp 'int main() { return nope; }'
is "$(field status)" compile_error "a snippet that does not compile is a compile_error"
code cpp 'int main() { return nope; }'
is "$(field status) $(field compile_cached)" "compile_error false" "again: compile errors are not cached"
is "$(entries)" "$before" "and nothing was stored for it"

# One byte of the hello entry flipped: the check refuses it, the run compiles.
code cpp "$hello"
entry=$(ls -t "$cache" | grep -v '^tmp\.' | head -1)
printf 'X' | dd of="$cache/$entry" bs=1 seek=40 conv=notrunc 2>/dev/null
code cpp "$hello"
is "$(field status) $(field compile_cached) $(field stdout)" "success false hello cache" \
  "a corrupt entry is detected and the snippet recompiled"
code cpp "$hello"
is "$(field compile_cached) $(field stdout)" "true hello cache" "and the fresh entry answers next time"

# A cache directory nobody but the user may own: refused, the run compiles.
chmod 0777 "$cache"
code cpp "$hello"
is "$(field status) $(field compile_cached) $(field stdout)" "success false hello cache" \
  "a cache directory others can write is not used, and the run still works"
chmod 0700 "$cache"
rm -rf "$cache"
: > "$cache"
code cpp "$hello"
is "$(field status) $(field stdout)" "success hello cache" "a cache that cannot be made never fails a run"
rm -f "$cache"

# The size bound: room for about two and a half hello binaries (an
# entry's size depends on the image's linker, so it is measured first).
code cpp '#include <cstdio>
int main() { std::puts("run 0"); }'
one=$(find "$cache" -maxdepth 1 -type f ! -name 'tmp.*' -printf '%s\n' | head -1)
bound=$((one * 5 / 2))
rm -rf "$cache"
for i in 1 2 3 4; do
  SANDBOX_COMPILE_CACHE_SIZE=$bound code cpp "#include <cstdio>
int main() { std::puts(\"run $i\"); }"
done
is "$(field stdout)" "run 4" "runs go on under a small cache"
total=$(find "$cache" -maxdepth 1 -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
ok "$([ "$total" -le "$bound" ] && [ "$(entries)" -ge 1 ] && [ "$(entries)" -lt 4 ] && echo 0 || echo 1)" \
  "the size bound evicts: $(entries) entries, $total bytes within $bound"
SANDBOX_COMPILE_CACHE_SIZE=$bound code cpp '#include <cstdio>
int main() { std::puts("run 4"); }'
is "$(field compile_cached)" true "the most recent entry is kept"
SANDBOX_COMPILE_CACHE_SIZE=$bound code cpp '#include <cstdio>
int main() { std::puts("run 1"); }'
is "$(field compile_cached)" false "the least recently used was evicted"

SANDBOX_COMPILE_CACHE_SIZE=0 code cpp "$hello"
is "$(field compile_cached)" false "compile_cache_size 0 turns the cache off"

# The cpp image's precompiled headers (rootfs/cpp.recipe) serve the
# table's flags: g++ -H marks a precompiled header it uses with '!'.
for h in bits/stdc++.h iostream vector string algorithm; do
  SANDBOX_LANGUAGE_CPP_COMPILE="g++ -std=c++17 -O2 -H -o /scratch/main /scratch/main.cpp" \
    code cpp "#include <$h>
int main() { return nope; }"
  if printf '%s' "$(field stderr)" | grep -q '\.gch'; then
    like "$(field stderr)" "^! /usr/include/.*/$(printf '%s' "$h" | sed 's/[+.]/\\&/g')\\.gch" \
      "the cpp image's precompiled <$h> is used with the language table's flags"
  else
    skip "the cpp image has no precompiled <$h> (built before rootfs/cpp.recipe made them)"
  fi
done

# The table's compile commands link with mold where the image has it
# (rootfs/cpp.recipe, c.recipe): mold names itself in the binary's
# .comment section, which the program finds in its own file.
self_check='#include <stdio.h>
#include <string.h>
int main(void) {
  static char b[1 << 20];
  FILE *f = fopen("/proc/self/exe", "rb");
  size_t n = f ? fread(b, 1, sizeof b, f) : 0;
  for (size_t i = 0; i + 5 < n; i++)
    if (memcmp(b + i, "mold ", 5) == 0) { puts("mold"); return 0; }
  puts("not mold");
  return 0;
}'
for lang in cpp c; do
  if ! [ -f "${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}/$lang/index.json" ]; then
    skip "image $lang is not built: its linker is not checked"
    continue
  fi
  require_image "$lang"
  code "$lang" "$self_check"
  is "$(field status) $(field stdout)" "success mold" "$lang: the table's compile command links with mold"
done

# What other compilers leave is cached as well: class files, JavaScript.
for lang in java typescript; do
  case $lang in
    java) src='public class Main { public static void main(String[] a) { System.out.println("cached " + a.length); } }' ;;
    typescript) src='const n: number = 0; console.log("cached " + n);' ;;
  esac
  if ! [ -f "${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}/$lang/index.json" ]; then
    skip "image $lang is not built: its build output is not tried"
    continue
  fi
  require_image "$lang"
  code "$lang" "$src"
  code "$lang" "$src"
  is "$(field status) $(field compile_cached) $(field stdout)" "success true cached 0" \
    "$lang: the repeated snippet runs from its cached build"
done

# compile_cpus: the CPU quota of a compile stage's cgroup, read from the
# host while it runs (a compile that sleeps, then fails), through the state
# entry that names its cgroups.
cat > "$sr_tmp/burn.conf" <<'EOF'
language.burn.image = cpp
language.burn.source = main.sh
language.burn.compile = sh /scratch/main.sh
language.burn.run = true
language.nap.image = cpp
language.nap.source = main.txt
language.nap.compile = true
language.nap.run = sleep 2
EOF
printf 'sleep 2\nexit 1\n' > "$sr_tmp/burn.sh"
# stage_quota LANGUAGE LABEL [VAR=VALUE...]: "CPUS QUOTA/PERIOD" of the
# container of LANGUAGE's run-code whose command is LABEL.
stage_quota () {
  lang=$1 label=$2
  shift 2
  env SANDBOX_CONFIG="$sr_tmp/burn.conf" "$@" "$SR_BIN" run-code -l "$lang" "$sr_tmp/burn.sh" \
    >/dev/null 2>&1 &
  pid=$!
  quota=""
  for _ in $(seq 100); do
    for f in "$SANDBOX_RUNTIME_DIR"/containers/sr-*.json; do
      [ -f "$f" ] || continue
      quota=$(python3 -c 'import json, os, sys
s = json.load(open(sys.argv[1]))
for d in s.get("cgroup_dirs", []) if s.get("label") == sys.argv[2] else []:
    if os.path.exists(d + "/cpu.max"):
        q, p = open(d + "/cpu.max").read().split()
        print(s["cpus"], "%s/%s" % (q, p)); break
    if os.path.exists(d + "/cpu.cfs_quota_us"):
        print(s["cpus"], "%s/%s" % (open(d + "/cpu.cfs_quota_us").read().strip(),
                                    open(d + "/cpu.cfs_period_us").read().strip())); break' "$f" "$label" 2>/dev/null)
      [ -n "$quota" ] && break 2
    done
    sleep 0.05
  done
  wait "$pid"
  echo "$quota"
}
compile_quota () { stage_quota burn "sh /scratch/main.sh" "$@"; }
SANDBOX_CONFIG=$sr_tmp/burn.conf code burn 'exit 1'
case $(field limits.cpu) in
  cgroup*)
    n=$(nproc)
    got=$(compile_quota)
    period=${got#*/}
    is "$got" "$n $((n * period))/$period" \
      "compile_cpus (default: the runner's $n CPUs) lifts the run's 0.5 CPU quota off the compile stage's cgroup"
    got=$(compile_quota SANDBOX_COMPILE_CPUS=1.5)
    period=${got#*/}
    is "$got" "1.5 $((3 * period / 2))/$period" "compile_cpus 1.5 sets the compile stage's quota"
    got=$(compile_quota SANDBOX_LANGUAGE_BURN_COMPILE_CPUS=0.25 SANDBOX_COMPILE_CPUS=1.5)
    period=${got#*/}
    is "$got" "0.25 $((period / 4))/$period" "a language's compile_cpus wins over the setting"
    got=$(stage_quota nap "sleep 2")
    period=${got#*/}
    is "$got" "0.5 $((period / 2))/$period" "the run stage keeps the run's quota (cpus 0.5)"
    ;;
  *) skip "no CPU cgroup enforces limits here ($(field limits.cpu)): compile_cpus cannot be seen" ;;
esac

done_testing
