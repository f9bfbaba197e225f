#!/bin/sh
# The README's second command: the whole test suite, as CI runs it.
#
#   1. root:       -Werror build, make check as root, then make distcheck
#   2. rootless:   the same suite as an unprivileged user with subuid ranges
#   3. sanitizers: an ASan+UBSan build, make check as root
#
# Every TAP result of every suite is counted; the last line is
# "N passed, N failed, N skipped".  Logs go to $SR_CI_DIR.
set -u

src=$(cd "$(dirname "$0")/.." && pwd)
ci=${SR_CI_DIR:-/var/tmp/sandbox-runner-ci}
jobs=$(nproc 2>/dev/null || echo 2)
test_user=${SR_TEST_USER:-sr-test}
failed_steps=""
n_failed_steps=0

if [ "$(id -u)" -ne 0 ]; then
  echo "tools/run-tests.sh: run as root (it installs packages and creates a test user)" >&2
  exit 2
fi

SR_EXTRA_PACKAGES="${SR_EXTRA_PACKAGES:-} $(cat "$src"/tests/*/packages.txt 2>/dev/null | tr '\n' ' ')" \
  "$src/tools/deps.sh" build runtime images tests bench || exit 1

# The cgroup v2 tests boot a QEMU guest when this host has no v2
# controllers; the guest script lives beside the project checkout.
vm=${SR_CGROUP2_VM:-$src/../shared/cgroup2-vm/run-in-cgroup2-vm.sh}
if [ -x "$vm" ]; then
  vm=$(cd "$(dirname "$vm")" && pwd)/$(basename "$vm")
  command -v qemu-system-x86_64 >/dev/null || "$vm" --setup || exit 1
  export SR_CGROUP2_VM="$vm"
fi

# The unprivileged user of the rootless suite and of the delegation tests.
if ! id "$test_user" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/sh "$test_user"
fi
uid=$(id -u "$test_user")
grep -q "^$test_user:" /etc/subuid 2>/dev/null ||
  usermod --add-subuids "$((uid * 65536))-$((uid * 65536 + 65535))" "$test_user"
grep -q "^$test_user:" /etc/subgid 2>/dev/null ||
  usermod --add-subgids "$((uid * 65536))-$((uid * 65536 + 65535))" "$test_user"

rm -rf "$ci"
mkdir -p "$ci"
chmod 755 "$ci"

step () {
  # step NAME LOG CMD...: runs CMD with its output in LOG, notes failure
  name=$1 log=$2
  shift 2
  echo "== $name (log: $log)"
  if ! "$@" >"$log" 2>&1; then
    failed_steps="$failed_steps; $name"
    n_failed_steps=$((n_failed_steps + 1))
    echo "   $name failed; the end of its log:"
    tail -n 30 "$log" | sed 's/^/   | /'
  fi
}

# A VPATH build of $1 in $2 with configure flags $3..., then make check.
build_and_check () {
  srcdir=$1 builddir=$2
  shift 2
  mkdir -p "$builddir" && cd "$builddir" &&
    "$srcdir/configure" "$@" &&
    make -j"$jobs" &&
    make -j"$jobs" check
}

cd "$src" && autoreconf -fi >"$ci/autoreconf.log" 2>&1 || { cat "$ci/autoreconf.log"; exit 1; }

# Every image of rootfs/, built once from Debian packages and cached
# outside the checkout; the language tests of every suite import them from
# there, and fail (not skip) for an image named in SR_IMAGES that is
# missing.  What each costs in time and store is measured in the README
# (Languages).
export SR_IMAGE_CACHE=${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}
SR_IMAGES=${SR_IMAGES:-$(cd "$src/rootfs" && ls ./*.recipe | sed 's|^\./||; s|\.recipe$||' | tr '\n' ' ')}
export SR_IMAGES
step "images: build the images" "$ci/images.log" "$src/rootfs/build-all.sh"
# The official MCP client, conformance suite and Node.js 22, from npm.
export SR_NODE_CACHE=${SR_NODE_CACHE:-/var/cache/sandbox-runner/node}
step "npm: the MCP test clients" "$ci/npm.log" "$src/tools/mcp-deps.sh"

# The fuzzers fuzz in the root suite and replay their seeds elsewhere.
export SR_FUZZ_SECONDS=${SR_FUZZ_SECONDS:-20}

# 1. root
step "root: build and check" "$ci/root.log" \
  build_and_check "$src" "$ci/root" --enable-werror
export SR_FUZZ_SECONDS=0
step "root: distcheck" "$ci/distcheck.log" \
  sh -c "cd '$ci/root' && make -j$jobs distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror"

# 2. rootless: the test user, with its own copy of the tree
mkdir -p "$ci/rootless/src"
tar -C "$src" --exclude=./build --exclude=./.git -cf - . | tar -C "$ci/rootless/src" -xf -
chown -R "$test_user:" "$ci/rootless"
step "rootless: build and check" "$ci/rootless.log" \
  runuser -u "$test_user" -- env HOME="$ci/rootless" TMPDIR="$ci/rootless" \
  SR_IMAGE_CACHE="$SR_IMAGE_CACHE" SR_IMAGES="$SR_IMAGES" SR_NODE_CACHE="$SR_NODE_CACHE" \
  SR_FUZZ_SECONDS="$SR_FUZZ_SECONDS" sh -c \
  "cd '$ci/rootless' && \
   mkdir -p build && cd build && ../src/configure --enable-werror && \
   make -j$jobs && make -j$jobs check"

# 3. sanitizers
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
step "sanitizers: build and check" "$ci/sanitizers.log" \
  build_and_check "$src" "$ci/sanitizers" --enable-asan --enable-ubsan

# Count every test result of every suite.
passed=0 failed=0 skipped=0 failures=""
for suite in root rootless sanitizers; do
  p=0 f=0 s=0
  for trs in $(find "$ci/$suite" -name '*.trs' 2>/dev/null); do
    p=$((p + $(grep -c '^:test-result: \(PASS\|XFAIL\)' "$trs")))
    f=$((f + $(grep -c '^:test-result: \(FAIL\|XPASS\|ERROR\)' "$trs")))
    s=$((s + $(grep -c '^:test-result: SKIP' "$trs")))
  done
  echo "$suite: $p passed, $f failed, $s skipped"
  for trs in $(find "$ci/$suite" -name '*.trs' 2>/dev/null); do
    log=${trs%.trs}.log
    grep -q '^:test-result: \(FAIL\|XPASS\|ERROR\)' "$trs" &&
      failures="$failures$(awk '/^not ok/ { n = 6; print; next }
          n > 0 && /^#/ { n--; print; next } { n = 0 }' "$log" | head -40 |
        sed "s|^|   ${log#$ci/}: |")
"
    grep -h '# SKIP' "$log" 2>/dev/null | sed "s|^|   skipped in ${log#$ci/}: |" | head -5
  done
  passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
# The failures come last, next to the totals, so that a reader of the
# output's tail sees them rather than the long list of skips.
if [ -n "$failures" ]; then
  echo "failed tests:"
  printf '%s' "$failures"
fi
# A build or distcheck that failed counts as a failed test of its own.
if [ "$n_failed_steps" -gt 0 ]; then
  echo "failed steps:${failed_steps#;}"
fi
failed=$((failed + n_failed_steps))
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
