#!/bin/sh
# The hostile-snippet suite (tests/hostile): every case goes through one
# `sandbox-runner serve` over stdio with the official MCP client, as an
# agent would send it, and must end in its expected contained outcome;
# then the host must be unchanged.  Last, the same driver run against a
# deliberately weakened sandbox must notice: the suite can fail.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/history.db
require_image python cpp
require_node_modules
cp "$SR_SRCDIR/tests/hostile/run.mjs" "$NODE_DIR/hostile.mjs"
cases=$SR_SRCDIR/tests/hostile/cases

# The driver prints TAP of its own; number it into this script's plan.
relay_tap () {
  local line rest
  while IFS= read -r line; do
    case $line in
      "ok "*" # SKIP "*) rest=${line#ok * - }; skip "${rest%% # SKIP *}: ${rest#* # SKIP }" ;;
      "ok "*) ok 0 "${line#ok * - }" ;;
      "not ok "*) ok 1 "${line#not ok * - }" ;;
      "#"*) echo "$line" ;;
      "Bail out!"*) echo "$line"; exit 1 ;;
    esac
  done
}

(cd "$NODE_DIR" && timeout 150 nice "$NODE" hostile.mjs --bin "$SR_BIN" --cases "$cases") \
  > "$sr_tmp/hostile.out" 2>"$sr_tmp/hostile.err"
rc=$?
relay_tap < "$sr_tmp/hostile.out"
sed 's/^/# stderr: /' "$sr_tmp/hostile.err" | head -10
is "$rc" 0 "the hostile suite ends with every case contained and the host unchanged"

# The same cases with seccomp off, 200 pids and a 128 MiB /tmp: each of
# these must now be reported as not contained.
weak="fill-tmp.py fork-count.py io-uring.py keyctl.py native-aio.py ptrace.py tiocsti.py unshare.py"
(cd "$NODE_DIR" && SANDBOX_SECCOMP_PROFILE=unconfined SANDBOX_PIDS=200 SANDBOX_TMP_SIZE=128M \
  timeout 60 nice "$NODE" hostile.mjs --bin "$SR_BIN" --cases "$cases" --only "$(echo $weak | tr ' ' ,)") \
  > "$sr_tmp/weak.out" 2>&1
for c in $weak; do
  grep -q "^not ok [0-9]* - $c:" "$sr_tmp/weak.out"
  ok $? "with the sandbox weakened, $c is reported as not contained"
done

done_testing
