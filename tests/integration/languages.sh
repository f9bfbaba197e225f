#!/bin/sh
# Every language of the built-in table beyond python and cpp (run-code.sh
# has those) on its real Debian image: hello world; a runtime error
# (status error, the runtime's exit code, its message on stderr); for the
# compiled ones a compile error (status compile_error, the compiler's
# message); an endless loop (timeout, nothing left behind); a memory
# balloon (oom, or under the data rlimit of a host without cgroups, an
# error); stdin, args and a second file (compiled too where the compiler
# needs it named: c, go, java); and run_code of each through the official MCP client over stdio
# (tests/mcp/languages-client.mjs), on the same store, since importing
# the images is most of this test's time.  A language whose image is not
# built is skipped, unless tools/run-tests.sh built it for this run (named
# in $SR_IMAGES).
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
export SANDBOX_IMAGE_STORE=$sr_tmp/store

scratch=$SANDBOX_RUNTIME_DIR/scratch

# check LANG HELLO ERROR EXIT STDERR_RE LOOP BALLOON [COMPILE_ERROR MESSAGE_RE]
check () {
  local lang=$1 hello=$2 error=$3 exit=$4 stderr_re=$5 loop=$6 balloon=$7
  local n=10
  [ $# -lt 9 ] || n=13
  want_image "$lang" "$n" || return 0
  imported="$imported $lang"

  code "$lang" "$hello"
  is "$(field status) $rc" "success 0" "$lang: hello world succeeds"
  is "$(field stdout)" "hello $lang" "$lang: and prints to stdout"

  code "$lang" "$error"
  is "$(field status)" error "$lang: a runtime error is status error"
  is "$(field exit_code)" "$exit" "$lang: with the runtime's exit code"
  like "$(field stderr)" "$stderr_re" "$lang: and its message on stderr"

  if [ $# -ge 9 ]; then
    code "$lang" "$8"
    is "$(field status) $rc" "compile_error 123" "$lang: a compile error is status compile_error"
    # tsc writes its diagnostics to stdout, the others to stderr.
    like "$(field stdout) $(field stderr)" "$9" "$lang: with the compiler's message"
    like "$(field compile_ms)" '^[0-9]+' "$lang: the result times the compile stage"
  fi

  code "$lang" "$loop" --timeout 1
  is "$(field status) $rc" "timeout 124" "$lang: an endless loop times out"
  [ -z "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null)" ]
  ok $? "$lang: no container is left after the timeout"
  [ -z "$(ls "$scratch" 2>/dev/null)" ]
  ok $? "$lang: nor a scratch directory"

  code "$lang" "$balloon"
  case $(field limits.memory) in
    cgroup*) is "$(field status)" oom "$lang: a memory balloon is status oom" ;;
    *) is "$(field status)" error "$lang: a memory balloon fails under the data rlimit (no cgroup here)" ;;
  esac
  like "$(field memory_limit_bytes)" '^268435456$' "$lang: under the default 256 MiB"
}


# inputs LANG MAIN MAIN_CODE OTHER OTHER_CODE: MAIN, reading a line of
# stdin and calling twice() of OTHER, beside it, prints "LINE|ARGS|42".
inputs () {
  local lang=$1 d=$sr_tmp/in/$1
  case " $imported " in
    *" $lang "*) ;;
    *) skip "$lang: image $lang is not built in $image_cache (rootfs/build-all.sh $lang)"; return 0 ;;
  esac
  mkdir -p "$d"
  printf '%s\n' "$3" > "$d/$2"
  printf '%s\n' "$5" > "$d/$4"
  printf 'hello from stdin\nnot this\n' > "$d/stdin"
  "$SR_BIN" run-code --json -l "$lang" --stdin "$d/stdin" --arg "a b" --arg c "$d/$2" "$d/$4" \
    > "$sr_tmp/out" 2>"$sr_tmp/err" </dev/null
  out=$(cat "$sr_tmp/out")
  is "$(field status) $(field stdout)" "success hello from stdin|a b,c|42" \
    "$lang: reads stdin, gets its args and calls a second file"
}

imported=""
check c \
  '#include <stdio.h>
int main(void) { puts("hello c"); return 0; }' \
  '#include <stdio.h>
int main(void) { fprintf(stderr, "boom\n"); return 3; }' 3 '^boom$' \
  'int main(void) { for (;;) {} }' \
  '#include <stdlib.h>
#include <string.h>
int main(void) { for (;;) { char *p = malloc(1 << 20); if (!p) return 1; memset(p, 1, 1 << 20); } }' \
  'int main(void) { return undeclared; }' "main\.c:1:.*undeclared"

check javascript \
  'console.log("hello javascript")' \
  'throw new Error("boom")' 1 'Error: boom' \
  'for (;;) {}' \
  'const a = []; for (;;) a.push(new Array(1 << 20).fill(1));'

check typescript \
  'const s: string = "hello typescript"; console.log(s);' \
  'const f = (m: string): never => { throw new Error(m); }; f("boom");' 1 'Error: boom' \
  'for (;;) {}' \
  'const a: number[][] = []; for (;;) a.push(new Array(1 << 20).fill(1));' \
  'const n: number = "text"; process.exit(n);' \
  "main\.ts\(1,7\): error TS2322: Type 'string' is not assignable to type 'number'"

check go \
  'package main
import "fmt"
func main() { fmt.Println("hello go") }' \
  'package main
func main() { panic("boom") }' 2 'panic: boom' \
  'package main
func main() { for {} }' \
  'package main
func main() {
	var a [][]byte
	for {
		b := make([]byte, 1<<20)
		for i := range b { b[i] = 1 }
		a = append(a, b)
	}
}' \
  'package main
func main() { x := 1 }' "main\.go:2:15: declared and not used: x"

check rust \
  'fn main() { println!("hello rust"); }' \
  'fn main() { panic!("boom"); }' 101 "panicked at /scratch/main\.rs:1:" \
  'fn main() { loop { std::hint::spin_loop(); } }' \
  'fn main() { let mut v: Vec<Vec<u8>> = Vec::new(); loop { v.push(vec![1u8; 1 << 20]); } }' \
  'fn main() { let x: i32 = "text"; }' "error\[E0308\]: mismatched types"

check java \
  'public class Main { public static void main(String[] args) { System.out.println("hello java"); } }' \
  'public class Main { public static void main(String[] args) { throw new IllegalStateException("boom"); } }' \
  1 'Exception in thread "main" java.lang.IllegalStateException: boom' \
  'public class Main { public static void main(String[] args) { for (;;) {} } }' \
  'import java.util.*;
public class Main { public static void main(String[] args) {
  List<byte[]> a = new ArrayList<>();
  for (;;) { byte[] b = new byte[1 << 20]; Arrays.fill(b, (byte) 1); a.add(b); } } }' \
  'public class Main { public static void main(String[] args) { int x = "text"; } }' \
  "Main\.java:1: error: incompatible types: String cannot be converted to int"

check bash \
  'echo "hello bash"' \
  'echo boom >&2; exit 3' 3 '^boom$' \
  'while :; do :; done' \
  'x=a; while :; do x=$x$x; done'

check ruby \
  'puts "hello ruby"' \
  'raise "boom"' 1 'boom \(RuntimeError\)' \
  'loop {}' \
  'a = []; loop { a << "x" * (1 << 20) }'

inputs c main.c '#include <stdio.h>
#include <string.h>
int twice(int);
int main(int argc, char **argv) {
  char line[64] = "";
  if (argc != 3 || !fgets(line, sizeof line, stdin)) return 1;
  line[strcspn(line, "\n")] = 0;
  printf("%s|%s,%s|%d\n", line, argv[1], argv[2], twice(21));
}' util.c 'int twice(int x) { return 2 * x; }'

inputs javascript main.js 'const { twice } = require("./util.js");
const line = require("fs").readFileSync(0, "utf8").split("\n")[0];
console.log(`${line}|${process.argv.slice(2).join(",")}|${twice(21)}`);' \
  util.js 'exports.twice = (x) => 2 * x;'

inputs typescript main.ts 'import { readFileSync } from "fs";
import { twice } from "./util";
const line: string = readFileSync(0, "utf8").split("\n")[0];
console.log(`${line}|${process.argv.slice(2).join(",")}|${twice(21)}`);' \
  util.ts 'export function twice(x: number): number { return 2 * x; }'

inputs go main.go 'package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	line, _ := bufio.NewReader(os.Stdin).ReadString(10)
	fmt.Printf("%s|%s|%d\n", strings.TrimSpace(line), strings.Join(os.Args[1:], ","), twice(21))
}' util.go 'package main

func twice(x int) int { return 2 * x }'

inputs rust main.rs 'mod util;
use std::io::BufRead;
fn main() {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).unwrap();
    let args: Vec<String> = std::env::args().skip(1).collect();
    println!("{}|{}|{}", line.trim_end(), args.join(","), util::twice(21));
}' util.rs 'pub fn twice(x: i32) -> i32 { 2 * x }'

inputs java Main.java 'import java.io.*;
public class Main {
  public static void main(String[] args) throws IOException {
    String line = new BufferedReader(new InputStreamReader(System.in)).readLine();
    System.out.println(line + "|" + String.join(",", args) + "|" + Util.twice(21));
  }
}' Util.java 'public class Util { static int twice(int x) { return 2 * x; } }'

inputs bash main.sh '. "$(dirname "$0")/util.sh"
read -r line
(IFS=,; echo "$line|$*|$(twice 21)")' util.sh 'twice () { echo $((2 * $1)); }'

inputs ruby main.rb 'require_relative "util"
line = $stdin.gets.to_s.chomp
puts "#{line}|#{ARGV.join(",")}|#{twice(21)}"' util.rb 'def twice(x)
  2 * x
end'

if [ -z "$imported" ]; then
  skip "no language image to run through MCP"
elif find_node_modules; then
  export SR_LANGUAGES="$imported"
  run_mcp_client languages-client.mjs
  [ -z "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null)" ]
  ok $? "no container is left after the server exits"
else
  skip "$node_missing"
fi
done_testing
