// hostile: C++ tgkill, kill and kill(-1) aimed at the server's pid and at every pid below 100000
// expected: nothing outside the container exists to be signalled; the server answers
// expect: status=success
// expect: stdout=/^outside pids signalled: 0$/m
// check: server-answers
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <sys/syscall.h>
#include <unistd.h>
int main() {
  long server = @SERVER_PID@;
  int hit = 0;
  if (server > 64) {
    if (syscall(SYS_tgkill, server, server, SIGKILL) == 0) hit++;
    if (kill(server, SIGKILL) == 0) hit++;
  }
  // Signal 0 only tests reachability: every pid but the container's own
  // (its init, pid 1, and this program).
  for (pid_t p = 2; p < 100000; p++)
    if (p != getpid() && kill(p, 0) == 0) hit++;
  std::printf("outside pids signalled: %d\n", hit);
}
