#!/bin/sh
# Pre-started interpreters (warm_start): run_code through the MCP server
# over stdio on a warm python container runs on an interpreter started
# ahead (the result and the log say prestarted), and behaves as a cold
# run: __name__, sys.argv, fresh globals, tracebacks naming main.py, exit
# codes and signals (its parent is pid 1, which passes a signal on),
# stdin and args, the timeout counted from the hand-over; preloads are
# honoured; a call that finds the pool empty goes cold without waiting.  python-data too when its image is here.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/history.db
# Short, so the timeout checks are quick; a warm container waits longer.
export SANDBOX_TIMEOUT=2
# Pre-started interpreters are on by default for both Pythons: the test
# sets nothing to turn them on.
require_image python
command -v python3 >/dev/null || skip_all "python3 drives the MCP server here"

timeout 600 python3 "$SR_SRCDIR/tests/helpers/warm-interp.py" "$SR_BIN" "$sr_tmp" \
  > "$sr_tmp/python.out" 2> "$sr_tmp/python.err"
is "$?" 0 "the python driver ends cleanly"
relay_results < "$sr_tmp/python.out"
head -5 "$sr_tmp/python.err" | sed 's/^/# stderr: /'

if [ -f "${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}/python-data/index.json" ]; then
  require_image python-data
  timeout 600 python3 "$SR_SRCDIR/tests/helpers/warm-interp.py" "$SR_BIN" "$sr_tmp" python-data \
    > "$sr_tmp/data.out" 2> "$sr_tmp/data.err"
  is "$?" 0 "the python-data driver ends cleanly"
  relay_results < "$sr_tmp/data.out"
  head -5 "$sr_tmp/data.err" | sed 's/^/# stderr: /'
else
  skip "python-data's preloads: its image is not built here (rootfs/build-all.sh python-data)"
fi

[ -z "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null)" ]; ok $? "no container is left"
[ -z "$(ls "$SANDBOX_RUNTIME_DIR/scratch" 2>/dev/null)" ]; ok $? "no scratch directory is left"
done_testing
