#!/bin/sh
# The CLI paths are valgrind leak-clean: every main command, its help, and
# a few error paths, run under memcheck with full leak checking, end with
# no memory error and no definitely or indirectly lost block.  Each case
# is run without valgrind first, and must exit the same way under it.
#
# Commands that start a container (run, run-code) need pidfd_open, clone3
# and seccomp, which valgrind may not implement: they are tried once, and
# skipped with the reason when this valgrind cannot run them.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run

command -v valgrind >/dev/null 2>&1 ||
  skip_all "valgrind is not installed (tools/deps.sh installs it)"
if grep -q -e __asan_init -e __ubsan_handle -e __tsan_init -e __msan_init "$SR_BIN" 2>/dev/null; then
  skip_all "$SR_BIN is a sanitizer build: valgrind cannot run it"
fi
echo "# $(valgrind --version)"
require_image python cpp

# vg NAME EXPECTED-STATUS ARGS...: runs sandbox-runner ARGS under
# memcheck (stdin from $sr_tmp/stdin) and checks its status and that
# memcheck found nothing.  The log is in $sr_tmp/vg.log.  With
# vg_children=yes memcheck follows the exec into sandbox-runner-full of
# the commands the light binary hands over (image import, serve).
: > "$sr_tmp/stdin"
vg () {
  local name=$1 want=$2 errors
  shift 2
  valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect \
    --show-leak-kinds=definite,indirect --error-exitcode=99 --trace-children="${vg_children:-no}" \
    --log-file="$sr_tmp/vg.log" "$SR_BIN" "$@" <"$sr_tmp/stdin" >"$sr_tmp/out" 2>"$sr_tmp/err"
  rc=$?
  errors=$(grep -c -e 'definitely lost' -e 'indirectly lost' -e 'Invalid ' \
    -e 'uninitialised' -e 'Mismatched free' "$sr_tmp/vg.log")
  [ "$want" = any ] && [ "$rc" -ne 99 ] && want=$rc
  if [ "$rc" = "$want" ] && [ "$errors" -eq 0 ]; then
    ok 0 "$name: exit $want, valgrind-clean"
  else
    ok 1 "$name: exit $want, valgrind-clean"
    echo "#   exit $rc (want $want), $errors memcheck report(s)"
    head -60 "$sr_tmp/vg.log" | sed 's/^/#   /'
    head -5 "$sr_tmp/err" | sed 's/^/#   stderr: /'
  fi
}

# vg_any NAME ARGS...: vg, whatever the command's status.
vg_any () {
  local name=$1
  shift
  vg "$name" any "$@"
}

# status ARGS...: the exit status of sandbox-runner ARGS without valgrind.
status () { "$SR_BIN" "$@" <"$sr_tmp/stdin" >/dev/null 2>&1; echo $?; }

# case NAME ARGS...: vg with the status the command has without valgrind.
case_ () {
  local name=$1 want
  shift
  want=$(status "$@")
  vg "$name" "$want" "$@"
}

# --- help, version, configuration, diagnostics ---
case_ "--help" --help
case_ "--version" --version
case_ "run --help" run --help
case_ "run-code --help" run-code --help
case_ "an unknown command" no-such-command
case_ "config show" config show
case_ "config show --json" config show --json
case_ "config without its subcommand" config
# What doctor finds depends on the syscalls valgrind implements (openat2,
# pidfd_open...): under it, its status may differ, its memory may not.
vg_any "doctor" doctor
vg_any "doctor --json" doctor --json
case_ "ps --json" ps --json
case_ "sessions" sessions
case_ "kill of an unknown container" kill sr-0-0

# --- images ---
case_ "image list" image list
case_ "image list --json" image list --json
case_ "image inspect python" image inspect python
case_ "image inspect of an unknown image" image inspect no-such-image
case_ "image rm of an unknown image" image rm no-such-image

# Handed over to sandbox-runner-full.
require_busybox_rootfs
tar -C "$ROOTFS" -cf "$sr_tmp/bb.tar" .
python3 "$SR_SRCDIR/tests/helpers/oci-fixture.py" layout "$sr_tmp/bb" --plain "$sr_tmp/bb.tar"
vg_children=yes
# Imports change the store: run once, under valgrind only.  They read
# layouts with openat2 (RESOLVE_BENEATH), which valgrind may not have:
# tried first on a store of its own.
SANDBOX_IMAGE_STORE=$sr_tmp/probe-store valgrind -q --trace-children=yes \
  --log-file="$sr_tmp/probe.log" "$SR_BIN" image import -q --name bb "$sr_tmp/bb" \
  >/dev/null 2>"$sr_tmp/probe.err"
if grep -q 'Function not implemented' "$sr_tmp/probe.err"; then
  skip "image import and rm under valgrind: $(valgrind --version) lacks a syscall they need ($(grep -o 'unhandled amd64-linux syscall: [0-9]*' "$sr_tmp/probe.log" | head -1))"
else
  vg "image import of a layout" 0 image import -q --name bb "$sr_tmp/bb"
  vg "image rm" 0 image rm bb
fi
case_ "image import of a missing path" image import -q --name bb2 "$sr_tmp/no-such-layout"
cat > "$sr_tmp/stdin" <<'EOF'
{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"vg","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_supported_languages","arguments":{}}}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get_execution_history","arguments":{"limit":2}}}
{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}
{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"audit_query","arguments":{"since":60,"tool":"list_supported_languages"}}}
not json
EOF
case_ "serve over stdio: initialize, tools/list, calls, a bad line, EOF" serve
: > "$sr_tmp/stdin"
vg_children=no

# --- history, over a database with runs in it ---
printf 'print(1)\n' > "$sr_tmp/one.py"
"$SR_BIN" run-code -l python "$sr_tmp/one.py" >/dev/null 2>&1
printf 'raise SystemExit(3)\n' > "$sr_tmp/three.py"
"$SR_BIN" run-code -l python "$sr_tmp/three.py" >/dev/null 2>&1
case_ "history" history
case_ "history --json" history --json
case_ "history --limit 1" history --limit 1
case_ "history with a bad --limit" history --limit nope
case_ "audit" audit
case_ "audit --json with filters" audit --json --tool list_supported_languages --since 3600
case_ "audit with a bad --since" audit --since nope
hist_db=$SANDBOX_HISTORY_DB
export SANDBOX_HISTORY_DB=$sr_tmp/none/h.db
case_ "history of a database that does not exist" history
export SANDBOX_HISTORY_DB=$sr_tmp
case_ "history of a database that cannot be opened" history
printf 'not a database%.0s' $(seq 1 100) > "$sr_tmp/bad.db"
export SANDBOX_HISTORY_DB=$sr_tmp/bad.db
case_ "history of a file that is not a database" history
export SANDBOX_HISTORY_DB=$hist_db
case_ "run-code of an unknown language" run-code -l cobol "$sr_tmp/one.py"
case_ "run-code with a bad --timeout" run-code -l python --timeout nope "$sr_tmp/one.py"

# --- what starts a container ---
printf 'print("hi")\n' > "$sr_tmp/ok.py"
valgrind -q --log-file="$sr_tmp/probe.log" "$SR_BIN" run-code -l python "$sr_tmp/ok.py" \
  >/dev/null 2>"$sr_tmp/probe.err"
unhandled=$(sed -n 's/.*unhandled amd64-linux syscall: \([0-9]*\).*/\1/p' "$sr_tmp/probe.log" \
  "$sr_tmp/probe.err" | sort -u | tr '\n' ' ')
if [ -n "$unhandled" ] || grep -q 'Function not implemented' "$sr_tmp/probe.err"; then
  reason="this valgrind ($(valgrind --version)) does not implement syscalls the container needs: ${unhandled:-see its log}($(head -1 "$sr_tmp/probe.err"))"
  for c in "run" "run-code python success" "run-code python error" "run-code python timeout" \
    "run-code cpp success" "run-code cpp compile_error" "run-code cpp error"; do
    skip "$c under valgrind: $reason"
  done
  done_testing
  exit
fi

case_ "run" run --image python --json -- python3 -c 'print(1)'
for st in success:'print(1)' error:'raise SystemExit(2)' timeout:'import time; time.sleep(9)'; do
  printf '%s\n' "${st#*:}" > "$sr_tmp/p.py"
  case_ "run-code python ${st%%:*}" run-code -l python --json --timeout 2 "$sr_tmp/p.py"
done
for st in success:'int main() { return 0; }' compile_error:'int main() { return x; }' \
  error:'int main() { return 3; }'; do
  printf '%s\n' "${st#*:}" > "$sr_tmp/p.cpp"
  case_ "run-code cpp ${st%%:*}" run-code -l cpp --json "$sr_tmp/p.cpp"
done
done_testing
