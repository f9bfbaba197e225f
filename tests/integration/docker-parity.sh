#!/bin/sh
# run-code on the Docker backend gives what the native backend gives: the
# same cases through `run-code --json --backend native` and `--backend
# docker` agree on status, exit code and output (python: streams, exit
# code, error, timeout, oom, truncation, non-UTF-8 output, the user
# setting's names and ids, looked up in the image; cpp: success
# and compile_error; every other language of the table: stdin and args, a
# runtime error, a compile error); so do sessions through `serve`, the cases of
# tests/docker/session-cases.py (files across runs, upload and read back,
# artifacts with MIME, the file tools, path escapes, quota, oom, timeout,
# close).  Both run the same cached OCI images: the native
# store imports them, and dockerd gets them under the Docker backend's
# default names (python:3.12-slim, gcc:14) unless it has those already.
# A missing image and an unreachable daemon are clear errors.  Where
# dockerd cannot run (a rootless suite), the whole test is skipped.
. "${SR_SRCDIR}/tests/integration/lib.sh"
require_image python cpp
require_dockerd
docker_image_from_cache python python:3.12-slim
docker_image_from_cache cpp gcc:14

# Every field but the timings and native-only measures, one per line.
summary () {
  printf '%s' "$1" | python3 -c '
import json, sys
r = json.load(sys.stdin)
for k in ("status", "exit_code", "signal", "stdout", "stderr", "stdout_truncated",
          "stderr_truncated", "stdout_bytes", "stderr_bytes", "stdout_encoding",
          "stderr_encoding", "error", "failure"):
    if k in r:
        print(k, json.dumps(r[k]))'
}

# parity NAME LANGUAGE CODE [ARGS...]: runs CODE on both backends and
# compares them; $native holds the native summary for further checks.
parity () {
  local name=$1 lang=$2 code=$3 docker
  shift 3
  printf '%s' "$code" >"$sr_tmp/code"
  run_sr run-code --json --backend native -l "$lang" "$@" "$sr_tmp/code"
  native=$(summary "$out") native_rc=$rc
  run_sr run-code --json --backend docker -l "$lang" "$@" "$sr_tmp/code"
  docker=$(summary "$out")
  if [ "$native" = "$docker" ] && [ "$native_rc" = "$rc" ]; then
    ok 0 "$name: the same result on both backends"
  else
    ok 1 "$name: the same result on both backends"
    printf '%s\n' "native (exit $native_rc):" "$native" "docker (exit $rc):" "$docker" "$err" |
      sed 's/^/# /'
  fi
}

parity "python stdout" python 'print("hello")'
like "$native" 'stdout "hello\\n"' "python stdout: the program's output is there"
parity "python stderr" python 'import sys; print("oops", file=sys.stderr)'
parity "python exit code 3" python 'import sys; print("out"); sys.exit(3)'
like "$native" 'exit_code 3' "python exit code 3: the code is kept"
parity "python exception" python 'raise ValueError("boom")'
like "$native" 'status "error"' "python exception: status error"
parity "python timeout" python 'while True: pass' --timeout 1
like "$native" 'status "timeout"' "python timeout: status timeout"
# The user setting: a name is the image's on both backends (dockerd looks
# it up in the image itself), and ids stay UID:GID.  Docker runs the
# cache's own python image under a tag of its build: python:3.12-slim may
# be a real pull or an older import, without the user.
pytag=sandbox-runner-test/python:$(basename "$(readlink -f "${SR_IMAGE_CACHE:-/var/cache/sandbox-runner/images}/python")")
docker_image_from_cache python "$pytag"
export SANDBOX_DOCKER_IMAGE_PYTHON=$pytag
who='import os; print(os.getuid(), os.getgid())'
parity "python user sandbox" python "$who" --user sandbox
like "$native" 'stdout "1000 1000\\n"' "python user sandbox: the image's sandbox"
parity "python user sandbox:users" python "$who" --user sandbox:users
like "$native" 'stdout "1000 100\\n"' "python user sandbox:users: the image's group"
parity "python user 4321" python "$who" --user 4321
like "$native" 'stdout "4321 4321\\n"' "python user 4321: an id the image lacks, its gid its own"
# A runner in a mount namespace of its own (a service unit's), where
# dockerd does not see the runner's mounts: the code dir it binds is the
# one the code was written to.
printf 'print(open("/scratch/main.py").read().count("print"))' >"$sr_tmp/code"
if [ "$(id -u)" -eq 0 ]; then
  run_cmd unshare --mount --propagation private "$SR_BIN" run-code --backend docker -l python "$sr_tmp/code"
  is "$rc $out $err" "0 2 " "docker: a runner in a mount namespace of its own runs its code"
else
  skip "docker: a runner in a mount namespace of its own: unshare --mount needs root"
fi
printf '%s' "$who" >"$sr_tmp/code"
run_sr run-code --backend docker -l python --user nosuch "$sr_tmp/code"
like "$rc $err" "^125 .*nosuch" "docker: a user the image lacks fails, named"
unset SANDBOX_DOCKER_IMAGE_PYTHON
parity "python oom" python 'x = bytearray(1 << 30); print(len(x))'
like "$native" 'status "oom"' "python oom: status oom"
parity "python output truncation" python 'import sys; sys.stdout.write("x" * 300000)'
like "$native" 'stdout_truncated true' "python output truncation: the output is cut"
parity "python non-UTF-8 output" python 'import sys; sys.stdout.buffer.write(b"\xff\xfe ok\n")'
# A command is not pid 1 on either backend (an init is), so the signals
# it sends itself end it as on a host.
parity "python raise(SIGTERM)" python 'import os, signal; os.kill(os.getpid(), signal.SIGTERM); print("alive")'
like "$native" 'signal 15' "python raise(SIGTERM): killed by SIGTERM"
parity "python abort" python 'import os; os.abort()'
like "$native" 'signal 6' "python abort: SIGABRT, not SIGSEGV"
parity "cpp success" cpp '#include <cstdio>
int main () { std::puts ("compiled"); return 0; }'
like "$native" 'stdout "compiled\\n"' "cpp success: the program ran"
parity "cpp compile error" cpp 'int main () { return undeclared; }'
like "$native" 'status "compile_error"' "cpp compile error: status compile_error"
# A run's inputs: stdin (more than a pipe holds, and one the program
# never reads), args, and files beside the code, a second C++ source too.
printf 'def twice(x): return 2 * x\n' >"$sr_tmp/helper.py"
head -c 300000 /dev/zero | tr '\0' s >"$sr_tmp/stdin"
parity "python stdin, args and a module" python 'import sys, helper
data = sys.stdin.read()
print(sys.argv[1:], len(data), data[:3], helper.twice(21))' \
  --stdin "$sr_tmp/stdin" --arg 'a b' --arg '' --file helper.py="$sr_tmp/helper.py"
like "$native" "stdout \"\\[.a b., ..\\] 300000 sss 42" "python stdin, args and a module: all reach the program"
parity "python stdin never read" python 'print("done")' --stdin "$sr_tmp/stdin"
like "$native" 'stdout "done\\n"' "python stdin never read: the program ends all the same"
printf 'int add (int a, int b) { return a + b; }\n' >"$sr_tmp/add.cpp"
echo 41 >"$sr_tmp/n"
parity "cpp stdin, args and two sources" cpp '#include <iostream>
int add (int, int);
int main (int argc, char **argv) { int n; std::cin >> n; std::cout << add (n, 1) << argv[argc - 1] << "\n"; }' \
  --stdin "$sr_tmp/n" --arg x --file add.cpp="$sr_tmp/add.cpp"
like "$native" 'stdout "42x\\n"' "cpp stdin, args and two sources: compiled and ran"

# --- the other languages of the table, on the same images ---
# Each gets its cached image under its docker_image (the table's name;
# typescript and go have no public image, so they get one of the test's,
# set as the environment would set it).  A program that echoes a line of
# stdin and its args, a runtime error, and for the compiled ones a
# compile error, agree on both backends.
other_languages="c javascript typescript go rust java bash ruby"
docker_name () {
  case $1 in
    c) echo gcc:14 ;; javascript) echo node:20-slim ;; rust) echo rust:slim ;;
    java) echo eclipse-temurin:21 ;; bash) echo debian:trixie-slim ;; ruby) echo ruby:3.3-slim ;;
    *) echo "sandbox-runner-test/$1:parity" ;;
  esac
}
printf 'one line\nnot this\n' >"$sr_tmp/line"
# language_parity LANG ECHO ERROR [COMPILE_ERROR]
language_parity () {
  local lang=$1 var n=4
  [ $# -lt 4 ] || n=6
  want_image "$lang" "$n" || return 0
  docker_image_from_cache "$lang" "$(docker_name "$lang")"
  var=SANDBOX_DOCKER_IMAGE_$(echo "$lang" | tr a-z A-Z)
  export "$var=$(docker_name "$lang")"
  parity "$lang stdin and args" "$lang" "$2" --stdin "$sr_tmp/line" --arg "a b" --arg c
  like "$native" 'stdout "got one line a b c\\n"' "$lang stdin and args: both reach the program"
  parity "$lang runtime error" "$lang" "$3"
  like "$native" 'status "error"' "$lang runtime error: status error"
  if [ $# -ge 4 ]; then
    parity "$lang compile error" "$lang" "$4"
    like "$native" 'status "compile_error"' "$lang compile error: status compile_error"
  fi
  unset "$var"
}

language_parity c '#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) { char l[64] = ""; fgets(l, sizeof l, stdin); l[strcspn(l, "\n")] = 0;
  printf("got %s %s %s\n", l, argv[1], argv[2]); return 0; }' \
  'int main(void) { return 4; }' 'int main(void) { return missing; }'
language_parity javascript 'const l = require("fs").readFileSync(0, "utf8").split("\n")[0];
console.log(["got", l, ...process.argv.slice(2)].join(" "));' 'process.exitCode = 4; throw new Error("x");'
language_parity typescript 'import { readFileSync } from "fs";
const l: string = readFileSync(0, "utf8").split("\n")[0];
console.log(["got", l, ...process.argv.slice(2)].join(" "));' 'throw new Error("x");' \
  'const n: number = "text";'
language_parity go 'package main
import ("bufio"; "fmt"; "os"; "strings")
func main() { l, _ := bufio.NewReader(os.Stdin).ReadString(10)
	fmt.Println("got", strings.TrimSpace(l), strings.Join(os.Args[1:], " ")) }' \
  'package main
import "os"
func main() { os.Exit(4) }' 'package main
func main() { y := 2 }'
language_parity rust 'use std::io::BufRead;
fn main() { let mut l = String::new(); std::io::stdin().lock().read_line(&mut l).unwrap();
  let a: Vec<String> = std::env::args().skip(1).collect(); println!("got {} {}", l.trim_end(), a.join(" ")); }' \
  'fn main() { std::process::exit(4); }' 'fn main() { let y: u8 = "s"; }'
language_parity java 'import java.io.*;
public class Main { public static void main(String[] a) throws IOException {
  String l = new BufferedReader(new InputStreamReader(System.in)).readLine();
  System.out.println("got " + l + " " + String.join(" ", a)); } }' \
  'public class Main { public static void main(String[] a) { System.exit(4); } }' \
  'public class Main { public static void main(String[] a) { int y = "s"; } }'
language_parity bash 'read -r l; echo "got $l $*"' 'exit 4'
language_parity ruby 'puts "got #{$stdin.gets.chomp} #{ARGV.join(" ")}"' 'exit 4'

# --- sessions: the same cases through `serve` on both backends ---
# tests/docker/session-cases.py prints one line per case; the lines must
# agree but for the session id and the "info" lines, checked below.
session_cases () {
  SANDBOX_BACKEND=$1 SANDBOX_SESSION_DATA_SIZE=1M SANDBOX_RUNTIME_DIR=$sr_tmp/run-$1 \
    timeout 300 python3 "$SR_SRCDIR/tests/docker/session-cases.py" "$SR_BIN" \
    >"$sr_tmp/cases-$1" 2>"$sr_tmp/cases-$1.err"
}
session_cases native
is "$?" 0 "sessions on native: the cases ran"
session_cases docker
is "$?" 0 "sessions on docker: the cases ran"
sed -n 's/^session //p' "$sr_tmp/cases-docker" >"$sr_tmp/docker-sid"
grep -v '^session \|^info ' "$sr_tmp/cases-native" >"$sr_tmp/cases-native.cmp"
grep -v '^session \|^info ' "$sr_tmp/cases-docker" >"$sr_tmp/cases-docker.cmp"
ok "$([ -s "$sr_tmp/cases-native.cmp" ]; echo $?)" "sessions: the native cases printed results"
while IFS= read -r line; do
  name=${line%%: *}
  theirs=$(grep -F -x -- "$line" "$sr_tmp/cases-docker.cmp")
  if [ -n "$theirs" ]; then
    ok 0 "session $name: the same result on both backends"
  else
    ok 1 "session $name: the same result on both backends"
    printf '%s\n' "native: $line" "docker: $(grep -F -- "$name: " "$sr_tmp/cases-docker.cmp")" |
      sed 's/^/# /'
  fi
done <"$sr_tmp/cases-native.cmp"
is "$(wc -l <"$sr_tmp/cases-docker.cmp")" "$(wc -l <"$sr_tmp/cases-native.cmp")" \
  "sessions: docker ran every case native ran"
cat "$sr_tmp/cases-docker.err" "$sr_tmp/cases-native.err" | head -5 | sed 's/^/# stderr: /'
like "$(cat "$sr_tmp/cases-native")" 'oom in a session: {"status": "oom"}' \
  "a session's oom is status oom"
like "$(cat "$sr_tmp/cases-native")" 'info after-oom "success"' \
  "native: a run after an oom in the session is not oom"
like "$(cat "$sr_tmp/cases-docker")" 'info after-oom "success"' \
  "docker: a run after an oom in the session is not oom"
like "$(cat "$sr_tmp/cases-docker")" 'shell, Ctrl-C interrupts the command: {"exit_code": 130' \
  "docker: Ctrl-C in a shell interrupts its command"
for backend in native docker; do
  is "$(grep -c -F 'Ctrl-C at the prompt, then a command' "$sr_tmp/cases-$backend")" 5 \
    "$backend: a Ctrl-C at the prompt, then a command: five tries"
  is "$(grep -F 'Ctrl-C at the prompt, then a command' "$sr_tmp/cases-$backend" | grep -c -v -F \
    ': {"exit_code": 0, "output": "own\n", "state": "ready"}')" 0 \
    "$backend: a Ctrl-C at the prompt is neither the next command's output nor its end"
done
sid=$(cat "$sr_tmp/docker-sid")
ok "$([ -n "$sid" ] && [ -z "$(docker ps -aq --filter "label=org.sandbox-runner.session=$sid")" ]; echo $?)" \
  "docker: close_session removes the session's container"

# A server killed with a Docker session open: tests/integration/docker-reclaim.sh.

# --- clear errors ---
printf 'print(1)' >"$sr_tmp/code"
SANDBOX_DOCKER_IMAGE_PYTHON=sandbox-runner-test/absent:$$ \
  run_sr run-code --json --backend docker -l python "$sr_tmp/code"
like "$(summary "$out")" 'failure "image_missing"' "an image the daemon lacks is image_missing"
like "$out" 'docker pull sandbox-runner-test/absent' "... and the error says how to get it"
DOCKER_HOST=unix://$sr_tmp/no-daemon.sock run_sr run-code --json --backend docker -l python "$sr_tmp/code"
like "$(summary "$out")" 'failure "sandbox_error"' "an unreachable daemon is sandbox_error"
like "$out" 'no-daemon.sock' "... and the error names the endpoint"

# --- the backend from the configuration, and the light binary ---
# Only the Docker path would try this endpoint.
SANDBOX_BACKEND=docker SANDBOX_DOCKER_HOST=unix://$sr_tmp/cfg-host.sock \
  run_sr run-code --json -l python "$sr_tmp/code"
like "$out" 'cfg-host.sock' "backend = docker in the configuration runs on Docker, at docker_host"
SANDBOX_BACKEND=docker run_sr run-code --json --backend native -l python "$sr_tmp/code"
like "$(summary "$out")" 'status "success"' "--backend native overrides the configuration"

# The light binary hands a Docker run over to sandbox-runner-full and
# never loads libcurl itself for a native one (it would cost every run).
if ldd "$SR_BIN" | grep -q libasan; then
  # A sanitizer build links every library the archive names; the check is
  # about the production link.
  skip "a native run-code does not load libcurl: not checked in a sanitizer build"
else
  LD_DEBUG=libs "$SR_BIN" run-code --backend native -l python "$sr_tmp/code" \
    >/dev/null 2>"$sr_tmp/ld-native" </dev/null
  is "$(grep -c 'calling init:.*libcurl' "$sr_tmp/ld-native")" 0 \
    "a native run-code does not load libcurl"
fi
LD_DEBUG=libs "$SR_BIN" run-code --backend docker -l python "$sr_tmp/code" \
  >/dev/null 2>"$sr_tmp/ld-docker" </dev/null
ok "$([ "$(grep -c 'calling init:.*libcurl' "$sr_tmp/ld-docker")" -gt 0 ]; echo $?)" \
  "a docker run-code runs in sandbox-runner-full, which has the client"

done_testing
