#!/bin/sh
# Builds the libFuzzer harnesses of tests/fuzz with clang and runs each
# for a bounded time, printing TAP: one result per harness, "ok" when it
# found nothing, "not ok" with the path of the input that crashed it.
#
#   tests/fuzz/run.sh [BUILDDIR]
#
# BUILDDIR is a configured build directory (its config.h is used); under
# make check it comes from SR_BUILDDIR.  The project's sources are
# compiled again, instrumented (-fsanitize=fuzzer-no-link,address,
# undefined), into BUILDDIR/tests/fuzz, which also keeps the harnesses,
# their logs, the corpora they grew and the crash inputs.
#
# Environment:
#   SR_FUZZ_SECONDS    fuzzing time of each harness (default 20); 0 runs
#                      only the seed corpus, the regression inputs
#   SR_FUZZ_HARNESSES  the harnesses to run (default: all), e.g. "oci seccomp"
#   SR_FUZZ_CC         the compiler (default clang)
#   SR_FUZZ_JOBS       parallel compiles (default nproc)
set -u

src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-${SR_BUILDDIR:-}}
seconds=${SR_FUZZ_SECONDS:-20}
cc=${SR_FUZZ_CC:-clang}
jobs=${SR_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
all="jsonrpc server tools seccomp oci layer-path layer-apply"
harnesses=${SR_FUZZ_HARNESSES:-$all}

skip_all () {
  echo "1..0 # SKIP $*"
  exit 0
}

case $seconds in
  '' | *[!0-9]*) echo "Bail out! SR_FUZZ_SECONDS must be a number of seconds, not '$seconds'"; exit 1 ;;
esac
if [ -z "$build" ] || [ ! -f "$build/config.h" ]; then
  echo "Bail out! give a configured build directory (one with config.h)"
  exit 1
fi
build=$(cd "$build" && pwd)
out=$build/tests/fuzz
mkdir -p "$out/obj" "$out/bin" || exit 1

command -v "$cc" >/dev/null 2>&1 ||
  skip_all "$cc not found (apt-get install clang libclang-rt-14-dev)"
# clang without its compiler-rt (libclang-rt-*-dev) has no libFuzzer.
printf 'int LLVMFuzzerTestOneInput (const unsigned char *d, unsigned long n) { return 0; }\n' \
  >"$out/probe.c"
"$cc" -fsanitize=fuzzer,address,undefined "$out/probe.c" -o "$out/probe" >"$out/probe.log" 2>&1 ||
  skip_all "$cc cannot link -fsanitize=fuzzer,address,undefined (install libclang-rt-14-dev): $(head -n 1 "$out/probe.log")"
rm -f "$out/probe" "$out/probe.c" "$out/probe.log"

# The libraries configure requires, read from configure.ac so that a new
# one is not listed twice.
modules=$(sed -n 's/^SR_REQUIRE_PKG(\[[A-Z0-9]*\], \[\([^] >]*\).*/\1/p' "$SR_SRCDIR/configure.ac")
pkg_cflags=$(pkg-config --cflags $modules) && pkg_libs=$(pkg-config --libs $modules) ||
  skip_all "pkg-config does not know the project's libraries (tools/deps.sh installs them)"

# The flags of Makefile.am's AM_CPPFLAGS; paths are those of a default
# prefix, which the harnesses never use.
cppflags="-I$src/src -I$build -I$src -DSR_SYSCONFDIR=\"/usr/local/etc\"
  -DSR_LOCALSTATEDIR=\"/usr/local/var\" -DSR_DATADIR=\"/usr/local/share/sandbox-runner\"
  -DSR_PKGLIBEXECDIR=\"/usr/local/libexec/sandbox-runner\"
  -DSR_SECCOMP_DEFAULT_JSON=\"$src/seccomp/default.json\"
  -DSR_WARM_PYTHON=\"$src/src/sandbox/warm-python.py\"
  -DSR_MCP_SCHEMA_DIR=\"$src/src/mcp/schemas\""
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cflags="-std=gnu11 -g -O1 -Wall -Wextra -Wno-unused-parameter $san"
export cc cppflags cflags pkg_cflags src out

# Everything of src/ but the command line, instrumented for coverage.
# An object is rebuilt when its source, any header or an embedded JSON
# file (seccomp/default.json, src/mcp/schemas, src/sandbox/warm-python.py)
# is newer.
# The list is libsandbox.a's, read from the Makefile fragments.
lib_sources=$(cat "$src"/src/*/local.mk "$src"/seccomp/local.mk | awk '
  /^libsandbox_a_SOURCES[ \t]*\+?=/ { on = 1; sub (/^[^=]*=/, "") }
  on { for (i = 1; i <= NF; i++) if ($i ~ /\.c$/) print $i; on = /\\$/ }')
[ -n "$lib_sources" ] || {
  echo "Bail out! no libsandbox_a_SOURCES in src/*/local.mk and seccomp/local.mk"
  exit 1
}
stale=""
for f in $lib_sources; do
  o=$out/obj/$(echo "$f" | tr / -).o
  if [ ! -f "$o" ] || [ "$src/$f" -nt "$o" ] || [ "$src/seccomp/default.json" -nt "$o" ] ||
    [ -n "$(find "$src/src" "$build/config.h" \( -name '*.h' -o -path '*/mcp/schemas/*.json' \
      -o -name warm-python.py \) \
      -newer "$o" 2>/dev/null | head -n 1)" ]; then
    stale="$stale $f"
  fi
done
if [ -n "$stale" ]; then
  # shellcheck disable=SC2016,SC2086
  printf '%s\n' $stale | xargs -P "$jobs" -I{} sh -c '
    o=$out/obj/$(echo "{}" | tr / -).o
    # shellcheck disable=SC2086
    $cc $cflags -fsanitize=fuzzer-no-link $cppflags $pkg_cflags -c "$src/{}" -o "$o.tmp" &&
      mv "$o.tmp" "$o"' >"$out/build-lib.log" 2>&1
  rm -f "$out/libsr-fuzz.a"
fi
if [ ! -f "$out/libsr-fuzz.a" ]; then
  # shellcheck disable=SC2046
  ar rcs "$out/libsr-fuzz.a" $(for f in $lib_sources; do echo "$out/obj/$(echo "$f" | tr / -).o"; done) \
    >>"$out/build-lib.log" 2>&1 || {
    echo "Bail out! the instrumented sources did not build; the end of $out/build-lib.log:"
    tail -n 20 "$out/build-lib.log" | sed 's/^/# /'
    exit 1
  }
fi

# Harness by harness: its link flags, its libFuzzer options.
link_flags () {
  case $1 in
    server | tools) echo "-Wl,--wrap=sr_code_run" ;;
  esac
}
fuzz_flags () {
  case $1 in
    layer-path) echo "-max_len=8192" ;;    # names past PATH_MAX
    seccomp) echo "-max_len=16384" ;;      # the default profile is 11 kB
    layer-apply) echo "-max_len=2048" ;;
  esac
}

# Whether bubblewrap can lay the host read-only under layer-apply.
sandbox_ok () {
  command -v bwrap >/dev/null 2>&1 &&
    bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /dev/shm true >/dev/null 2>&1
}

n=0
for h in $harnesses; do n=$((n + 1)); done
echo "1..$n"
i=0
failed=0
for h in $harnesses; do
  i=$((i + 1))
  bin=$out/bin/fuzz-$h
  log=$out/$h.log
  seeds=$src/tests/fuzz/corpus/$h
  if [ ! -f "$src/tests/fuzz/fuzz-$h.c" ]; then
    echo "not ok $i - $h: no tests/fuzz/fuzz-$h.c"
    failed=$((failed + 1))
    continue
  fi
  # shellcheck disable=SC2086
  if ! $cc $cflags -fsanitize=fuzzer $cppflags $pkg_cflags "$src/tests/fuzz/fuzz-$h.c" \
    "$out/libsr-fuzz.a" $(link_flags "$h") $pkg_libs -lm -lpthread -o "$bin" >"$log" 2>&1; then
    echo "not ok $i - $h: the harness did not build; the end of $log:"
    tail -n 10 "$log" | sed 's/^/# /'
    failed=$((failed + 1))
    continue
  fi
  # New inputs go to the first directory, a writable one in the build
  # tree; the seeds of the source tree are only read.
  mkdir -p "$out/corpus/$h" "$out/crashes/$h"
  wrap=""
  if [ "$h" = layer-apply ]; then
    if ! sandbox_ok; then
      echo "ok $i - $h # SKIP bubblewrap cannot lay the host read-only here, and this harness writes files"
      continue
    fi
    wrap="bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /dev/shm --bind $out $out --die-with-parent"
  fi
  if [ "$seconds" -eq 0 ]; then
    run="-runs=0"
  else
    run="-max_total_time=$seconds"
  fi
  # shellcheck disable=SC2086
  if nice $wrap "$bin" $run -timeout=10 -print_final_stats=1 $(fuzz_flags "$h") \
    -artifact_prefix="$out/crashes/$h/" "$out/corpus/$h" "$seeds" >>"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    echo "ok $i - $h: no crash in ${runs:-?} inputs (${seconds} s)"
  else
    crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    echo "not ok $i - $h: crashed on ${crash:-an input (see $log)}"
    grep -m 3 -E '^(==[0-9]+==ERROR|SUMMARY|fuzz_check failed|.*runtime error)' "$log" | sed 's/^/# /'
    echo "# reproduce: $bin ${crash:-INPUT}; log: $log"
    failed=$((failed + 1))
  fi
done
[ "$failed" -eq 0 ]
