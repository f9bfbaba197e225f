// hostile: a C++ daemon: double fork, setsid, SIGTERM ignored, parent exits at once
// expected: the run ends with the parent, and the daemon is gone
// expect: status=success
// expect: stdout=/^parent exits$/m
// expect: max_ms=30000
// check: no-token-process
#include <csignal>
#include <cstdio>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
int main() {
  if (fork() == 0) {
    setsid();
    if (fork() == 0) {
      signal(SIGTERM, SIG_IGN);
      signal(SIGHUP, SIG_IGN);
      prctl(PR_SET_NAME, "@TOKEN@", 0, 0, 0);
      for (;;) pause();
    }
    _exit(0);
  }
  wait(nullptr);
  usleep(200000);
  std::puts("parent exits");
}
