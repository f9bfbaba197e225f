#!/bin/sh
# A compiled language's run stage gets its container made while the
# compile stage runs (a container's set-up costs as much as a hello world
# takes to run), and runs exactly as in one made after: stdout, stderr,
# the exit code, stdin and args, /scratch read-only, the timeout and its
# CPU-seconds backstop, after a compile or the compile cache's answer; a
# compile error is reported as before, and nothing is left.  The compile
# stage's teardown and the code directory's unmount happen while the run
# stage runs.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run
require_image cpp
state=$SANDBOX_RUNTIME_DIR/containers

# About a second of constexpr evaluation, to look at the containers.
slow='constexpr long f() { long s = 0; for (long j = 0; j < 4; j++) for (long i = 0; i < 200000; i++) s += i % 7; return s; }
static_assert(f() > 0);
#include <cstdio>
int main() { std::puts("slow compiled"); }'
printf '%s\n' "$slow" > "$sr_tmp/slow.cpp"

# ahead_run ARGS...: run-code --json ARGS on the slow snippet, its result
# in $out; $max gets the most state entries seen at once while it ran.
ahead_run () {
  rm -f "$sr_tmp/done"
  (SANDBOX_COMPILE_CACHE_SIZE=0 "$SR_BIN" run-code --json "$@" -l cpp "$sr_tmp/slow.cpp" \
     >"$sr_tmp/out" 2>&1; touch "$sr_tmp/done") &
  max=0
  while ! [ -e "$sr_tmp/done" ]; do
    n=$(ls "$state" 2>/dev/null | grep -c '\.json$')
    [ "$n" -gt "$max" ] && max=$n
    sleep 0.02
  done
  wait
  out=$(cat "$sr_tmp/out")
}

ahead_run
is "$(field status) $(field stdout)" "success slow compiled" "a slow compile runs"
is "$max" 2 "the run stage's container is there while the compile stage runs"
is "$(ls "$state" | wc -l)" 0 "and neither is left"

# While the run stage runs, the compile stage's container is gone and the
# code directory's tmpfs is off its host path (the run stage's container
# holds it): neither teardown waits for the run's end, nor delays it.
sleeper='#include <cstdio>
#include <unistd.h>
int main() { usleep(1500000); std::puts(access("/scratch/main", X_OK) == 0 ? "still there" : "gone"); }'
printf '%s\n' "$sleeper" > "$sr_tmp/sleeper.cpp"
rm -f "$sr_tmp/done"
(SANDBOX_COMPILE_CACHE_SIZE=0 "$SR_BIN" run-code --json -l cpp "$sr_tmp/sleeper.cpp" \
   >"$sr_tmp/out" 2>&1; touch "$sr_tmp/done") &
last=""
while ! [ -e "$sr_tmp/done" ]; do
  n=$(ls "$state" 2>/dev/null | grep -c '\.json$')
  m=$(grep -c " $SANDBOX_RUNTIME_DIR/scratch/code-" /proc/self/mountinfo)
  # The last look with one container: the run stage's, near its end.
  [ "$n" -eq 1 ] && last="$n $m"
  sleep 0.02
done
wait
out=$(cat "$sr_tmp/out")
is "$(field stdout)" "still there" "the run stage sees the compiled program"
is "$last" "1 0" \
  "while it runs, one container is left and the code directory is off the host's path"

ahead_run --timeout 7
is "$(field status) $(field stdout) $max" "success slow compiled 2" \
  "with the run's own timeout too (run-code's --timeout is its runner's)"

# The container made ahead has the run stage's CPU-seconds backstop, the
# timeout's, as one made after the compile has.
cpu='#include <sys/resource.h>
#include <cstdio>
int main() { rlimit r; getrlimit(RLIMIT_CPU, &r); std::printf("%llu\n", (unsigned long long) r.rlim_cur); }'
code cpp "$cpu"
is "$(field stdout)" 11 "the run stage's RLIMIT_CPU follows the default timeout (10 s)"
code cpp "$cpu" --timeout 7
is "$(field stdout)" 8 "and a --timeout of 7 s"

hello='#include <iostream>
#include <string>
int main(int argc, char **argv) {
  std::string line; std::getline(std::cin, line);
  std::cout << "hello " << line << " " << argc << " " << argv[1] << std::endl;
  std::cerr << "to stderr" << std::endl;
  return 4;
}'
printf 'stdin line\n' > "$sr_tmp/in"
cached=false
for t in "" "--timeout 9"; do
  code cpp "$hello" --stdin "$sr_tmp/in" --arg one $t
  is "$rc $(field status) $(field exit_code)" "4 error 4" "exit code and status${t:+ ($t)}"
  is "$(field stdout)" "hello stdin line 2 one" "stdin and args reach the program${t:+ ($t)}"
  is "$(field stderr)" "to stderr" "stderr apart${t:+ ($t)}"
  is "$(field compile_cached)" $cached "compile_cached $cached${t:+ ($t)}"
  cached=true
done

code cpp '#include <cstdio>
int main() { std::FILE *f = std::fopen("/scratch/main", "w"); std::puts(f ? "writable" : "read-only"); }'
is "$(field stdout)" read-only "the run stage's /scratch is read-only"

code cpp 'int main() { return undeclared; }'
is "$rc $(field status)" "123 compile_error" "a compile error is compile_error, exit 123"
like "$(field stderr)" "main.cpp:1:.*undeclared.*was not declared" "with the compiler's message"
is "$(ls "$state" | wc -l) $(ls "$SANDBOX_RUNTIME_DIR/scratch" | wc -l)" "0 0" \
  "the container made ahead for it is gone, and the code directory"

code cpp '#include <thread>
int main() { for (;;) {} }' --timeout 1
is "$(field status)" timeout "the run stage's timeout holds"

done_testing
