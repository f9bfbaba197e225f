#!/bin/sh
# run-code end to end on the real Debian images: python in one stage, C++
# in two (compile with /scratch writable, run with it read-only).
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run
require_image python cpp
scratch=$SANDBOX_RUNTIME_DIR/scratch

code python 'import sys; print("hello", sys.version_info[0]); print("to stderr", file=sys.stderr)'
is "$rc" 0 "python: a snippet that succeeds exits 0"
is "$(field status)" success "python: status success"
is "$(field stdout)" "hello 3" "python: stdout captured"
is "$(field stderr)" "to stderr" "python: stderr captured"
is "$(field language)" python "python: the result names the language"

code python 'raise ValueError("boom")'
is "$(field status)" error "python: an exception is status error"
is "$(field exit_code)" 1 "python: with the interpreter's exit code"
like "$(field stderr)" "ValueError: boom" "python: and the traceback on stderr"

code python 'import os; open("/work/out.txt", "w").write("x"); print(os.getcwd())'
is "$(field stdout)" /work "python: runs in a writable /work"
code python 'import os; print(os.getuid(), os.statvfs("/scratch").f_flag & os.ST_RDONLY != 0)'
is "$(field stdout)" "1000 True" "python: runs as the user 1000, its code on a read-only mount"
code python 'open("/scratch/main.py", "a").write("#")'
# A root runner writes the code as the user (who then meets the read-only
# mount); a rootless one as itself, root inside, whose file it is not.
if [ "$(id -u)" -eq 0 ]; then
  like "$(field stderr)" "Read-only file system" "python: the code itself is read-only"
else
  like "$(field stderr)" "Permission denied: '/scratch/main.py'" "python: the code itself is the runner's, not the user's to write"
fi

code python 'while True: pass' --timeout 1
is "$(field status)" timeout "python: an endless loop times out"
is "$rc" 124 "python: exit status 124 on timeout"

code python 'x = bytearray(1 << 30)'
case $(field limits.memory) in
  cgroup*) is "$(field status)" oom "python: a memory balloon is status oom" ;;
  *) like "$(field status) $(field stderr | grep -c '^MemoryError')" "^error 1$" \
       "python: a memory balloon fails with MemoryError under the rlimit (no cgroup here)" ;;
esac

code cpp '#include <iostream>
int main() { std::cout << "hello c++" << std::endl; return 3; }'
is "$(field status)" error "cpp: a non-zero exit is status error"
is "$(field exit_code)" 3 "cpp: with the program's exit code"
is "$(field stdout)" "hello c++" "cpp: compiled and ran"
like "$(field compile_ms)" "^[0-9]+" "cpp: the result times the compile stage"

code cpp '#include <cstdio>
int main() { std::FILE *f = std::fopen("/scratch/main", "w"); std::puts(f ? "writable" : "read-only"); }'
is "$(field stdout)" read-only "cpp: the run stage sees /scratch read-only"

# Self-signals behave as on a host: the snippet is not pid 1.
code python 'import signal
signal.raise_signal(signal.SIGTERM)
print("alive")'
is "$(field signal) $(field stdout)" "15 " "python: raise(SIGTERM) reports signal SIGTERM"
code python 'import os
os.abort()'
is "$(field signal) $(field exit_code) $rc" "6 134 134" "python: abort() reports SIGABRT, 134"
code cpp '#include <cassert>
int main() { assert(1 == 2); }'
is "$(field status) $(field signal) $rc" "error 6 134" "cpp: a failed assert reports SIGABRT, 134"
like "$(field stderr)" "Assertion .1 == 2. failed" "cpp: with assert's message"

code cpp 'int main() { return undeclared; }'
is "$(field status)" compile_error "cpp: a compile failure is compile_error"
like "$(field stderr)" "main.cpp:1:.*undeclared.*was not declared" "cpp: with the compiler's message"
is "$rc" 123 "cpp: exit status 123 on a compile error (not a program's exit(1))"
# The assembler reads the compiler's output as it comes (-pipe): a
# compiler that failed leaves it nothing to add to the diagnostics.
is "$(field stderr | grep -Ec 'Assembler messages|standard input')" 0 \
  "cpp: and nothing of the assembler's"
code cpp 'int f(); int main() { return f(); }'
is "$rc $(field status)" "123 compile_error" "cpp: a link failure is a compile error too"
like "$(field stderr)" "undefined.*f\(\)" "cpp: with the linker's message"

code cpp '#include <thread>
int main() { for (;;) {} }' --timeout 1
is "$(field status)" timeout "cpp: the timeout covers the run stage"

# The cpp image's specs file in -B/usr/libexec/mold, where the language
# links through, has mold link without its fork; a plain g++ never reads it.
links=$("$SR_BIN" run --image cpp -- g++ -### -B/usr/libexec/mold -fno-use-linker-plugin \
  -o /tmp/m /tmp/m.cpp 2>&1)
like "$links" '/collect2"? "?--no-fork' "cpp: the language's link runs mold without its fork"
links=$("$SR_BIN" run --image cpp -- g++ -### -o /tmp/m /tmp/m.cpp 2>&1)
is "$(printf '%s\n' "$links" | grep -c -- '--no-fork')" 0 "cpp: a plain g++ links as before"

code cobol 'DISPLAY 1'
is "$rc" 125 "an unknown language is refused"
like "$(field error)" "unknown language 'cobol' \(supported: python, python-data, cpp, c, javascript, typescript, go, rust, java, bash, ruby\)" "naming the supported ones"
is "$(field invalid_request)" true "as an invalid request"
: > "$sr_tmp/empty"
run_sr run-code -l python "$sr_tmp/empty"
like "$err" "the code is empty" "empty code is refused"
python3 -c 'print("#" * 60000)' > "$sr_tmp/big.py"
run_sr run-code -l python "$sr_tmp/big.py"
like "$err" "the code is over the limit of 51200 bytes" "code over 50 KiB is refused"
printf 'print(1)\n' > "$sr_tmp/small.py"
run_sr run-code -l python --timeout 999 "$sr_tmp/small.py"
like "$err" "timeout 999 s is over the ceiling of 30 s" "a timeout over the ceiling is refused"
[ -z "$(ls "$scratch" 2>/dev/null)" ]; ok $? "no scratch directory is left behind"
[ -z "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null)" ]; ok $? "no container is left behind"

SANDBOX_LANGUAGE_PYTHON_IMAGE=missing run_sr run-code -l python "$sr_tmp/code"
is "$rc" 125 "a language whose image is missing is refused"
like "$err" "language python needs image 'missing', which is not in the store" \
  "saying which image and how to get it"

printf 'print(6 * 7)\n' > "$sr_tmp/a.py"
run_sr run-code -l python "$sr_tmp/a.py"
is "$out" 42 "run-code FILE prints the program's output"

done_testing
