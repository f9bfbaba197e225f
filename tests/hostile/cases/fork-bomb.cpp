// hostile: a C++ fork bomb: for (;;) fork();
// expected: the pids limit holds it, the timeout ends it, no process survives
// timeout: 2
// expect: status=timeout
// expect: max_ms=15000
// check: no-token-process
// check: server-answers
#include <sys/prctl.h>
#include <unistd.h>
int main() {
  prctl(PR_SET_NAME, "@TOKEN@", 0, 0, 0);
  for (;;) fork();
}
