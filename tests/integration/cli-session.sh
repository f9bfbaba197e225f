#!/bin/sh
# sandbox-runner session: the CLI client of a running serve --transport
# http, against a real server on a free loopback port.  Every subcommand
# (new, list, run, upload, download, ls, close, shell-*, file-*), the
# server's refusals as "session: CODE: MESSAGE", a server that is not
# running, and bearer tokens.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
require_session_client
# Sessions made without an image (upload, shell-new) use this one.
export SANDBOX_SESSION_IMAGE=python
containers=$SANDBOX_RUNTIME_DIR/containers

# The client finds the server by SANDBOX_RUNNER_URL.
start_session_server () {
  start_server "$@" && export SANDBOX_RUNNER_URL=$url
}

# s ARGS...: sandbox-runner session ARGS, stdin from /dev/null; $out,
# $err, $rc.  s_in FILE ARGS...: the same with stdin from FILE.
s () { run_sr session "$@"; }
s_in () {
  local input=$1
  shift
  "$SR_BIN" session "$@" <"$input" >"$sr_tmp/out" 2>"$sr_tmp/err"
  rc=$?
  out=$(cat "$sr_tmp/out")
  err=$(cat "$sr_tmp/err")
}

# --- help, without a server ---
s --help
like "$rc $out" "^0 Usage: sandbox-runner session" "session --help prints the usage"
usage=$out
missing=""
for cmd in new list run upload download ls close shell-new shell-exec shell-read shell-write \
  shell-ls shell-rm file-read file-write file-patch file-search; do
  printf '%s\n' "$usage" | grep -q "^  $cmd " || missing="$missing $cmd"
  run_sr session "$cmd" --help
  [ "$rc" = 0 ] && printf '%s' "$out" | grep -q "^Usage: sandbox-runner session $cmd" ||
    missing="$missing $cmd--help"
done
is "$missing" "" "session --help lists every subcommand, and each has its --help"
s frobnicate
like "$rc $err" "^125 sandbox-runner: session: unknown command 'frobnicate'" "an unknown subcommand is refused with 125"

# --- a server that is not running ---
dead=$(free_port)
start=$(date +%s)
s --server "http://127.0.0.1:$dead/mcp" new
like "$rc $err" "^125 sandbox-runner: session: cannot reach the server at http://127.0.0.1:$dead/mcp" \
  "no server listening: a clear error and 125"
[ $(($(date +%s) - start)) -le 5 ]; ok $? "at once (within 5 s)"
SANDBOX_RUNNER_URL=http://127.0.0.1:$dead/mcp run_sr session list
like "$rc $err" "^125 .*cannot reach the server at http://127.0.0.1:$dead/mcp" "SANDBOX_RUNNER_URL names the server"

start_session_server
ok $? "serve --transport http listens"

# --- new, list, run ---
s new --image python
sid=$out
like "$rc $sid" '^0 [0-9a-zA-Z_-]{8,}$' "new prints the new session's id"
s list
like "$out" "$sid +python " "list shows it with its image"

printf 'import sys\nprint("out line")\nprint("err line", file=sys.stderr)\nopen("/mnt/data/state.txt", "w").write("kept")\nsys.exit(3)\n' \
  > "$sr_tmp/a.py"
s run -s "$sid" -l python "$sr_tmp/a.py"
is "$rc" 3 "run exits with the run's exit code"
is "$out" "out line" "run prints the run's stdout on stdout"
is "$err" "err line" "and its stderr on stderr"
printf 'print(open("/mnt/data/state.txt").read())\n' > "$sr_tmp/b.py"
s_in "$sr_tmp/b.py" run --session "$sid" --language python
is "$rc $out" "0 kept" "run reads code from stdin, in the same session: its files persist"
s_in "$sr_tmp/b.py" run --json -s "$sid" -l python
is "$(json_field "$out" exit_code) $(json_field "$out" stdout)" "0 kept" "run --json prints the structured result"
like "$out" "\"session_id\":\"$sid\"" "which names the session"
echo 'print(6 * 7)' > "$sr_tmp/c.py"
s run -l python "$sr_tmp/c.py"
is "$rc $out" "0 42" "run without --session is a one-shot run"
echo 'import time; time.sleep(30)' > "$sr_tmp/slow.py"
s run -s "$sid" -l python --timeout 1 "$sr_tmp/slow.py"
like "$rc $err" "^124 .*timed out" "a run that times out exits 124"
printf 'import re\nst = open("/proc/1/status").read()\nprint(" ".join(re.findall(r"^(?:CapEff|NoNewPrivs|Seccomp):\\s*(\\S+)", st, re.M)))\n' \
  > "$sr_tmp/init.py"
s run -s "$sid" -l python "$sr_tmp/init.py"
is "$rc $out" "0 0000000000000000 1 2" \
  "the session's holding init has no capability, no_new_privs and the seccomp filter"
s run -s "$sid" -l cobol "$sr_tmp/c.py"
like "$rc $err" "^125 sandbox-runner: session: [a-z_]+: .*cobol" "an unknown language: the server's refusal, 125"

# --- upload, ls, download ---
head -c 300000 /dev/urandom > "$sr_tmp/blob.bin"
s upload -s "$sid" "$sr_tmp/blob.bin"
like "$rc $out" "^0 .*blob.bin$" "upload prints the path it wrote"
s upload -s "$sid" "$sr_tmp/blob.bin"
like "$rc $err" "^125 sandbox-runner: session: file_exists: " "uploading over a file: file_exists, 125"
s upload -s "$sid" --overwrite "$sr_tmp/blob.bin" in/renamed.bin
like "$rc $out" "^0 .*in/renamed.bin$" "upload --overwrite with a NAME in a subdirectory"
s ls -s "$sid"
like "$out" " 300000 .* blob.bin" "ls lists the upload with its size"
like "$out" "state.txt" "and the file the run wrote"
s ls --json -s "$sid"
like "$(json_field "$out" session_id)" "^$sid$" "ls --json prints the structured result"

s download -s "$sid" -o "$sr_tmp/back.bin" blob.bin
is "$rc" 0 "download -o FILE succeeds"
cmp -s "$sr_tmp/blob.bin" "$sr_tmp/back.bin"; ok $? "and the downloaded bytes are the uploaded ones"
(cd "$sr_tmp" && mkdir -p dl && cd dl && "$SR_BIN" session download -s "$sid" in/renamed.bin) 2>"$sr_tmp/err"
cmp -s "$sr_tmp/blob.bin" "$sr_tmp/dl/renamed.bin"; ok $? "download without -o writes the file's name in the current directory"
s download -s "$sid" -o - state.txt
is "$rc $out" "0 kept" "download -o - writes to stdout"
s download -s "$sid" -o "$sr_tmp/none" missing.txt
like "$rc $err" "^125 sandbox-runner: session: not_found: " "a missing file: not_found, 125"
[ ! -e "$sr_tmp/none" ] && [ -z "$(ls "$sr_tmp"/none.* 2>/dev/null)" ]; ok $? "and no local file is left"
s download -s "$sid" -o "$sr_tmp/none" ../../etc/passwd
like "$rc $err" "^125 sandbox-runner: session: " "a path escaping /mnt/data is refused"

# --- file tools ---
printf 'alpha\nbeta\ngamma\n' > "$sr_tmp/t.txt"
s_in "$sr_tmp/t.txt" file-write -s "$sid" notes/t.txt
like "$rc $out" "^0 .*notes/t.txt$" "file-write writes stdin to the file"
s file-read -s "$sid" notes/t.txt
like "$out" "^ +1	alpha" "file-read prints numbered lines"
s file-read -s "$sid" --offset 2 --limit 1 notes/t.txt
like "$out" "^ +2	beta$" "file-read --offset --limit"
s file-patch -s "$sid" --old beta --new BETA notes/t.txt
is "$rc $out" "0 1" "file-patch --old --new prints the replacements"
s file-patch -s "$sid" --old nothere --new x notes/t.txt
like "$rc $err" "^125 sandbox-runner: session: [a-z_]+: " "file-patch of text that is not there: refused"
printf -- '--- a/t.txt\n+++ b/t.txt\n@@ -1,3 +1,3 @@\n alpha\n BETA\n-gamma\n+GAMMA\n' > "$sr_tmp/p.diff"
s file-patch -s "$sid" --diff "$sr_tmp/p.diff" notes/t.txt
is "$rc" 0 "file-patch --diff applies a unified diff"
s file-read -s "$sid" notes/t.txt
like "$out" "BETA.*" "file-read sees the edits"
s file-search -s "$sid" 'GAM+A'
like "$rc $out" "^0 .*t.txt:3:GAMMA" "file-search prints PATH:LINE:TEXT"
s file-search -s "$sid" --glob '*.py' GAMMA
is "$rc $out" "0 " "file-search --glob restricts the files"
s file-patch -s "$sid" notes/t.txt
like "$rc $err" "^125 .*--old TEXT and --new TEXT, or --diff" "file-patch without an edit is refused locally"

# --- persistent shells ---
s shell-new -s "$sid"
shell=$out
like "$rc $shell" '^0 [0-9a-zA-Z_-]{4,}$' "shell-new prints the shell's id"
s shell-exec -S "$shell" cd /tmp '&&' export GREETING=hello
is "$rc" 0 "shell-exec runs a command line"
s shell-exec --shell "$shell" 'echo "$GREETING from $(pwd)"'
is "$rc $out" "0 hello from /tmp" "the shell keeps its cwd and environment"
s shell-exec -S "$shell" '(exit 7)'
is "$rc" 7 "shell-exec exits with the command's status"
printf 'echo one\necho two\n' > "$sr_tmp/cmds"
s_in "$sr_tmp/cmds" shell-exec -S "$shell" -
is "$(printf '%s' "$out" | tr '\n' ' ')" "one two" "shell-exec - reads the command line from stdin"
s shell-exec -S "$shell" --no-wait 'read line; echo "got $line"'
is "$rc" 0 "shell-exec --no-wait returns at once"
s shell-write -S "$shell" 'typed\n'
is "$rc" 0 "shell-write types into the shell"
got=""
for i in $(seq 1 300); do
  s shell-read -S "$shell"
  got="$got$out"
  case $got in *"got typed"*) break ;; esac
  sleep 0.1
done
like "$got" "got typed" "shell-read returns what the command printed"
s shell-exec -S "$shell" --no-wait 'sleep 60'
s shell-write -S "$shell" '\x03'
is "$rc" 0 "shell-write \\x03 sends Ctrl-C"
s shell-exec -S "$shell" --timeout 20 'echo after'
is "$rc $out" "0 after" "the interrupted command is gone: the shell runs the next one"
s shell-exec -S "$shell" --timeout 1 'sleep 30'
is "$rc" 124 "shell-exec interrupted at --timeout exits 124"
s shell-ls
like "$out" "$shell +$sid " "shell-ls lists the shell and its session"
s shell-rm -S "$shell"
is "$rc" 0 "shell-rm removes it"
s shell-exec -S "$shell" true
like "$rc $err" "^125 sandbox-runner: session: [a-z_]+: " "a removed shell's id is refused"

# implicit sessions: upload and shell-new without --session
s upload "$sr_tmp/t.txt"
like "$rc $err" "^0 sandbox-runner: session: created session [0-9a-zA-Z_-]+" "upload without --session creates one and says which"
implicit=${err##* }
s close -s "$implicit"
is "$rc" 0 "close closes it"

# --- errors of arguments ---
s ls
like "$rc $err" "^125 sandbox-runner: session: ls: --session is required" "ls without --session is refused"
s new --shell x
like "$rc $err" "^125 .*does not apply" "an option of another subcommand is refused"
s file-read -s "$sid" --offset 0 x
like "$rc $err" "^125 .*invalid --offset .*at least 1" "a bad --offset is refused locally"

# --- close ---
s close -s "$sid"
is "$rc $out" "0 " "close ends the session"
s ls -s "$sid"
like "$rc $err" "^125 sandbox-runner: session: session_not_found: " "a closed session is session_not_found"
s close -s "$sid"
like "$rc $err" "^125 sandbox-runner: session: session_not_found: " "closing it again too"

stop_server
ok $? "the server stops cleanly"
[ -z "$(ls "$containers" 2>/dev/null)" ]; ok $? "no container is left"

# --- bearer tokens, on an address that is not loopback ---
printf '# the test token\n  tok-%s  \n' "$$" > "$sr_tmp/tokens"
printf 'wrong\n' > "$sr_tmp/wrong"
listen_host=0.0.0.0
start_session_server --token-file "$sr_tmp/tokens"
ok $? "serve listens on 0.0.0.0 with --token-file"
listen_host=""
s new --image python
like "$rc $err" "^125 sandbox-runner: session: .*Unauthorized.*--token-file" "without a token: refused, with a hint at --token-file"
s --token-file "$sr_tmp/wrong" new --image python
like "$rc $err" "^125 .*Unauthorized" "a wrong token: refused"
s --token-file "$sr_tmp/tokens" new --image python
sid=$out
like "$rc $sid" '^0 [0-9a-zA-Z_-]{8,}$' "the right token (first of the file, trimmed) is accepted"
echo data > "$sr_tmp/d.txt"
s upload --token-file "$sr_tmp/tokens" -s "$sid" "$sr_tmp/d.txt"
s download --token-file "$sr_tmp/tokens" -s "$sid" -o - d.txt
is "$rc $out" "0 data" "download sends the token too"
s download -s "$sid" -o - d.txt
like "$rc $err" "^125 .*Unauthorized" "a download without it is refused"
s --token-file "$sr_tmp/missing" list
like "$rc $err" "^125 sandbox-runner: session: --token-file: .*missing" "a missing token file is a clear error"
s --token-file "$sr_tmp/tokens" close -s "$sid"
stop_server
ok $? "the server with tokens stops cleanly"

done_testing
