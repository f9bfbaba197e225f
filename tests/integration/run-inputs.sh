#!/bin/sh
# run-code's inputs through the CLI on the real images: the program's
# stdin (never the compiler's), its arguments, and files beside the code
# (a Python module, a package in a directory, a second C++ source that is
# compiled too); bad inputs refused with their codes; nothing left in the
# scratch directory.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run
require_image python cpp
scratch=$SANDBOX_RUNTIME_DIR/scratch
d=$sr_tmp/in
mkdir -p "$d"

json () {
  # json ARGS...: run-code --json ARGS, the result in $out, $err and $rc
  "$SR_BIN" run-code --json "$@" >"$sr_tmp/out" 2>"$sr_tmp/err" </dev/null
  rc=$?
  out=$(cat "$sr_tmp/out")
  err=$(cat "$sr_tmp/err")
}
field () { json_field "$out" "$1"; }

# --- Python: stdin, args, a module and a package beside the code ---
cat > "$d/main.py" <<'PY'
import sys, helper
from pkg import util
print("args", sys.argv[1:])
print("stdin", repr(sys.stdin.read()))
print(helper.twice(21), util.NAME)
PY
echo 'def twice(x): return 2 * x' > "$d/helper.py"
echo 'NAME = "util"' > "$d/util.py"
printf 'line one\nline two\n' > "$d/stdin.txt"
json -l python --stdin "$d/stdin.txt" --arg 'a b' --arg '' --arg -c \
  --file pkg/util.py="$d/util.py" --file pkg/__init__.py=/dev/null "$d/main.py" "$d/helper.py"
is "$(field status)" success "python: a run with stdin, args and files succeeds"
is "$(field stdout)" "args ['a b', '', '-c']
stdin 'line one\\nline two\\n'
42 util" "python: reads its stdin, gets its args as given, imports a module and a package beside it"

printf 'from stdin\n' | "$SR_BIN" run-code -l python --stdin - "$d/main.py" "$d/helper.py" \
  --file pkg/util.py="$d/util.py" --file pkg/__init__.py=/dev/null >"$sr_tmp/out" 2>"$sr_tmp/err"
like "$(cat "$sr_tmp/out")" "stdin 'from stdin\\\\n'" "python: --stdin - reads the runner's stdin"
printf 'print(1)\n' | "$SR_BIN" run-code -l python --stdin - >"$sr_tmp/out" 2>"$sr_tmp/err"
is "$?" 125 "--stdin - with the code on stdin too is refused"
like "$(cat "$sr_tmp/err")" "cannot both come from stdin" "saying why"

printf 'import sys; print(repr(sys.stdin.read()), sys.argv[1:])\n' > "$d/plain.py"
json -l python "$d/plain.py"
is "$(field stdout)" "'' []" "python: without them, stdin is empty and there are no args"

# --- C++: stdin, args, a second source compiled too, a header beside ---
cat > "$d/main.cpp" <<'CPP'
#include <iostream>
#include <string>
#include "add.h"
int main(int argc, char **argv) {
  std::string line;
  std::getline(std::cin, line);
  std::cout << "line=" << line << " sum=" << add(2, 3);
  for (int i = 1; i < argc; i++) std::cout << " [" << argv[i] << "]";
  std::cout << "\n";
}
CPP
echo 'int add(int a, int b);' > "$d/add.h"
printf '#include "add.h"\nint add(int a, int b) { return a + b; }\n' > "$d/add.cpp"
printf 'some input\n' > "$d/cin.txt"
json -l cpp --stdin "$d/cin.txt" --arg x --arg 'y z' "$d/main.cpp" "$d/add.cpp" "$d/add.h"
is "$(field status)" success "cpp: two sources and a header compile and run"
is "$(field stdout)" "line=some input sum=5 [x] [y z]" "cpp: reads its stdin and gets its args"
json -l cpp "$d/main.cpp" "$d/add.h"
is "$(field status)" compile_error "cpp: without the second source, the link fails (it is compiled only when given)"
like "$(field stderr)" "undefined (reference to|symbol:) .*add" "cpp: with the linker's message"

# --- the compile stage never reads the stdin ---
cat > "$sr_tmp/lang.conf" <<EOF2
language.probe.image = "python"
language.probe.source = "main.py"
language.probe.compile = "python3 /scratch/compile.py"
language.probe.run = "python3 /scratch/main.py"
EOF2
printf 'import sys\nopen("/scratch/compiler-stdin", "w").write(repr(sys.stdin.read()))\n' > "$d/compile.py"
printf 'import sys\nprint(open("/scratch/compiler-stdin").read(), repr(sys.stdin.read()))\n' > "$d/probe.py"
SANDBOX_CONFIG=$sr_tmp/lang.conf json -l probe --stdin "$d/stdin.txt" "$d/probe.py" "$d/compile.py"
is "$(field stdout)" "'' 'line one\\nline two\\n'" "the compile stage reads an empty stdin; the run stage the stdin given"

# --- bad inputs: refused before anything runs, each with its reason ---
refused () {
  # refused WHAT PATTERN ARGS...: run-code ARGS is refused (125) saying PATTERN
  what=$1 pattern=$2
  shift 2
  json -l python "$@"
  like "$rc $(field invalid_request) $(field error)" "^125 true .*$pattern" "$what"
}
refused "a file name with .. is refused" "'\.\./x': '\.', '\.\.' and empty components" \
  --file ../x="$d/helper.py" "$d/plain.py"
refused "an absolute file name is refused" "is absolute" --file /etc/x="$d/helper.py" "$d/plain.py"
refused "a file named as the entry point is refused" "clashes with the code's own file main.py" \
  --file main.py="$d/helper.py" "$d/plain.py"
refused "a file under another file's name is refused" "file names 'helper.py/x' and 'helper.py' clash" \
  --file helper.py/x="$d/util.py" "$d/plain.py" "$d/helper.py"
refused "more than 256 args are refused" "257 arguments given, over the limit of 256" \
  $(seq 257 | sed 's/^/--arg=/') "$d/plain.py"
head -c 70000 /dev/zero | tr '\0' a > "$d/long"
refused "args over 64 KiB are refused" "the arguments take 70001 bytes, over the limit of 65536" \
  --arg "$(cat "$d/long")" "$d/plain.py"
export SANDBOX_MAX_STDIN_SIZE=10 SANDBOX_MAX_CODE_FILE_SIZE=20 SANDBOX_MAX_CODE_FILES_SIZE=20
refused "a stdin over max_stdin_size is refused" \
  "stdin is over the limit of 10 bytes \(max_stdin_size\)" --stdin "$d/stdin.txt" "$d/plain.py"
refused "a file over max_code_file_size is refused" \
  "file helper.py is over the limit of 20 bytes \(max_code_file_size\)" "$d/plain.py" "$d/helper.py"
refused "files over max_code_files_size together are refused" \
  "the files take 28 bytes, over the limit of 20 \(max_code_files_size\)" \
  "$d/plain.py" "$d/util.py" --file b.py="$d/util.py"
unset SANDBOX_MAX_STDIN_SIZE SANDBOX_MAX_CODE_FILE_SIZE SANDBOX_MAX_CODE_FILES_SIZE
"$SR_BIN" run-code -l python --file noequals "$d/plain.py" >/dev/null 2>"$sr_tmp/err"
like "$? $(cat "$sr_tmp/err")" "^125 .*invalid --file 'noequals': expected NAME=PATH" "--file without NAME= is refused"

is "$(ls -A "$scratch" 2>/dev/null)" "" "no scratch directory is left behind"
done_testing
