// hostile: C++ opens until EMFILE, then dup2s to fd 1000000 and raises RLIMIT_NOFILE
// expected: EMFILE at 1024, dup2 past the limit fails, the limit cannot be raised
// expect: status=success
// expect: stdout=/^opened 1024 fds, then EMFILE$/m
// expect: stdout=/^dup2 to 1000000: EBADF$/m
// expect: stdout=/^setrlimit 1048576: EPERM$/m
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
int main() {
  int n = 3;
  while (open("/dev/null", O_RDONLY) >= 0) n++;
  std::printf("opened %d fds, then %s\n", n, strerrorname_np(errno));
  std::printf("dup2 to 1000000: %s\n", dup2(0, 1000000) < 0 ? strerrorname_np(errno) : "ALLOWED");
  struct rlimit rl = {1048576, 1048576};
  std::printf("setrlimit 1048576: %s\n", setrlimit(RLIMIT_NOFILE, &rl) < 0 ? strerrorname_np(errno) : "ALLOWED");
}
