#!/bin/sh
# The exit statuses and messages of the command line: every --help of
# every command and subcommand (found in the help texts, which the
# dispatchers draw from their tables) exits 0 on stdout; each status the
# man page's EXIT STATUS names, command by command; one truncation notice
# in plain run-code output; no message that quotes a stale errno.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export XDG_RUNTIME_DIR=$sr_tmp/run XDG_CONFIG_HOME=$sr_tmp/config
mkdir -p "$XDG_RUNTIME_DIR" "$XDG_CONFIG_HOME/sandbox-runner"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run/sandbox-runner
export SANDBOX_IMAGE_STORE=$sr_tmp/store

# --- --help ---
# subcommands HELP-TEXT: the names a dispatcher's help lists, one a line
# indented by two spaces ("  run        run a command ..."), when its
# usage takes a COMMAND.
subcommands () {
  printf '%s\n' "$1" | grep -q 'COMMAND' || return 0
  printf '%s\n' "$1" | sed -n 's/^  \([a-z][a-z-]*\)\( .*\)\{0,1\}$/\1/p'
}
help_ok () {
  # help_ok WORDS...: WORDS --help exits 0, with the usage on stdout alone.
  checked="$checked [$*]"
  run_sr "$@" --help
  [ "$rc" = 0 ] && [ -n "$out" ] && [ -z "$err" ] || bad="$bad [$* --help: $rc ${err%%
*}]"
}
run_sr --help
top=$out
commands=$(subcommands "$top")
like "$(echo $commands)" "^run run-code .*session$" "the commands are found in sandbox-runner --help"
bad="" checked=""
for cmd in $commands; do
  help_ok "$cmd"
  for sub in $(subcommands "$out"); do
    help_ok "$cmd" "$sub"
  done
done
help_ok config show
is "$bad" "" "every --help of every command and subcommand exits 0 on stdout"
# A broken configuration is a warning for --help, which shows the defaults.
echo "bogus = 1" > "$XDG_CONFIG_HOME/sandbox-runner/sandbox-runner.conf"
broken=""
for cmd in $commands; do
  run_sr "$cmd" --help
  [ "$rc" = 0 ] && [ -n "$out" ] || broken="$broken [$cmd --help: $rc ${err%%
*}]"
done
rm "$XDG_CONFIG_HOME/sandbox-runner/sandbox-runner.conf"
is "$broken" "" "every command's --help exits 0 on stdout with a broken configuration"
like "$checked" "\\[image list\\].*\\[image prune\\].*\\[session run\\].*\\[session file-search\\]" \
  "the subcommands of image and session are among them"

# --- exit statuses: the man page's EXIT STATUS, command by command ---
require_busybox_rootfs
run_sr run --rootfs "$ROOTFS" -- sh -c 'exit 3'
is "$rc" 3 "run: the command's status"
# Killed from outside, by `kill`, which exits 0 for it.
"$SR_BIN" run --rootfs "$ROOTFS" -- sleep 30 >/dev/null 2>&1 &
runner=$!
at_exit "kill -KILL $runner 2>/dev/null"
# ps lists the container while it is set up; a kill then is a failed
# set-up (125).  It runs once sleep does: its init, or the init's child.
running () {
  local pid p
  pid=$("$SR_BIN" ps 2>/dev/null | awk '/sleep 30/ { print $3 }')
  [ -n "$pid" ] || return 1
  for p in "$pid" $(cat "/proc/$pid/task/$pid/children" 2>/dev/null); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = sleep ] && return 0
  done
  return 1
}
wait_until 10 running
name=$("$SR_BIN" ps | awk '/sleep 30/ { print $1 }')
run_sr kill "$name"
is "$rc" 0 "kill: 0 on success"
wait "$runner"
is "$?" 137 "run: 128+N when signal N killed it"
run_sr run --timeout 0.5 --rootfs "$ROOTFS" -- sleep 30
is "$rc" 124 "run: 124 on a timeout"
run_sr run --rootfs "$sr_tmp/nosuch" -- true
is "$rc" 125 "run: 125 when the container cannot be set up"
run_sr run --frobnicate
is "$rc" 125 "run: 125 for wrong arguments"
run_sr run --rootfs "$ROOTFS" -- /etc/passwd
is "$rc" 126 "run: 126 when the command cannot be executed"
run_sr run --rootfs "$ROOTFS" -- nosuchcommand
is "$rc" 127 "run: 127 when the command is not found"

run_sr kill nosuchcontainer
like "$rc $err" "^125 .*no container named 'nosuchcontainer'" "kill: 125 for a name that is not running"
run_sr kill
is "$rc" 125 "kill: 125 without a name"
for cmd in ps sessions "config show" "image list" history; do
  run_sr $cmd
  is "$rc" 0 "$cmd: 0 on success"
  run_sr $cmd --frobnicate
  is "$rc" 125 "$cmd: 125 on failure"
done
run_sr config frobnicate
is "$rc" 125 "config: 125 for an unknown subcommand"
run_sr image inspect nosuch:image
is "$rc" 125 "image inspect: 125 for an image that is not there"
run_sr image rm nosuch:image
is "$rc" 125 "image rm: 125 for an image that is not there"
run_sr image frobnicate
is "$rc" 125 "image: 125 for an unknown subcommand"
run_sr serve --frobnicate
is "$rc" 125 "serve: 125 for wrong arguments"
run_sr doctor --frobnicate
is "$rc" 125 "doctor: 125 for wrong arguments"
run_sr frobnicate
is "$rc" 125 "an unknown command: 125"

# --- stale errno: each message says what failed, not an earlier call's errno ---
echo "not a directory" > "$sr_tmp/file"
run_sr run --rootfs "$sr_tmp/file" -- true
like "$rc $err" "^125 .*rootfs $sr_tmp/file: Not a directory$" "--rootfs FILE: Not a directory"
unlike_err () {
  # unlike_err PATTERN NAME
  if printf '%s' "$err" | grep -q -- "$1"; then ok 1 "$2"; printf '#   got: %s\n' "$err"; else ok 0 "$2"; fi
}
unlike_err "File exists" "--rootfs FILE: no stale 'File exists'"
run_sr image import --name junk "$sr_tmp/file"
like "$rc $err" "^125 .*Unrecognized archive format$" "importing a non-archive: libarchive's own message"
unlike_err "multibyte" "importing a non-archive: no 'Invalid or incomplete multibyte'"
tar cf "$sr_tmp/whole.tar" -C "$ROOTFS" bin/busybox
head -c 20000 "$sr_tmp/whole.tar" > "$sr_tmp/cut.tar"
run_sr image import --name junk "$sr_tmp/cut.tar"
like "$rc $err" "^125 .*Truncated" "importing a truncated archive: libarchive's own message"
unlike_err "Unknown error" "importing a truncated archive: no 'Unknown error -1'"

# --- run-code and session run on the python image, with a language whose
# compile stage fails ---
cache=${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}
if [ -f "$cache/python/index.json" ] &&
  "$SR_BIN" image import --quiet --name python "$cache/python" >/dev/null 2>&1; then
  cat > "$XDG_CONFIG_HOME/sandbox-runner/sandbox-runner.conf" <<'EOF'
language.broken.image = "python"
language.broken.source = "main.py"
language.broken.compile = "false"
language.broken.run = "python3 /scratch/main.py"
EOF
  code () {
    # code LANG CODE [ARGS...]: run-code with CODE on stdin
    lang=$1
    printf '%s\n' "$2" > "$sr_tmp/code"
    shift 2
    "$SR_BIN" run-code -l "$lang" "$@" <"$sr_tmp/code" >"$sr_tmp/out" 2>"$sr_tmp/err"
    rc=$?
    out=$(cat "$sr_tmp/out")
    err=$(cat "$sr_tmp/err")
  }
  code python 'import sys; sys.exit(3)'
  is "$rc" 3 "run-code: the program's status"
  code python 'while True: pass' --timeout 1
  is "$rc" 124 "run-code: 124 on a timeout"
  code cobol 'print(1)'
  is "$rc" 125 "run-code: 125 for an invalid request"
  code broken 'print(1)'
  like "$rc $err" "^123 .*compile error" "run-code: 123 on a compile error"
  code broken 'print(1)' --json
  is "$rc $(json_field "$out" status)" "123 compile_error" "run-code --json: 123, status compile_error"
  code python 'import sys; sys.exit(1)' --json
  is "$rc $(json_field "$out" status)" "1 error" "run-code: a program's exit(1) is not a compile error"

  SANDBOX_MAX_OUTPUT=1000 code python 'import sys; sys.stdout.write("x" * 5000)'
  is "$(printf '%s\n' "$out" | grep -c 'output truncated')" 1 "run-code: one truncation notice"
  like "$out" "truncated after 1000 bytes; 4000 bytes dropped" "run-code: with the right counts"
  is "$(printf '%s' "$out" | head -c 1000)" "$(printf 'x%.0s' $(seq 1000))" \
    "run-code: the kept output comes first"

  if "$SR_BIN" session --help >/dev/null 2>&1 && command -v curl >/dev/null &&
    start_server; then
    export SANDBOX_RUNNER_URL=$url
    printf 'print(1)\n' > "$sr_tmp/c.py"
    run_sr session run -l broken "$sr_tmp/c.py"
    like "$rc $err" "^123 .*compile error" "session run: 123 on a compile error"
    printf 'import sys; sys.stdout.write("x" * 5000)\n' > "$sr_tmp/big.py"
    stop_server
    SANDBOX_MAX_OUTPUT=1000 start_server
    export SANDBOX_RUNNER_URL=$url
    run_sr session run -l python "$sr_tmp/big.py"
    is "$(printf '%s\n' "$out" | grep -c 'truncated')" 1 "session run: one truncation notice"
    run_sr session run -l cobol "$sr_tmp/c.py"
    is "$rc" 125 "session run: 125 when the server refuses"
    stop_server
    run_sr session list
    is "$rc" 125 "session: 125 when the server cannot be reached"
  else
    skip "session: no HTTP client or server in this build"
  fi
else
  skip "run-code: the python image is not built in $cache"
fi

done_testing
