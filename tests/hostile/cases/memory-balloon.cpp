// hostile: C++ new[] and memset in 16 MiB steps without end
// expected: killed at the 256 MiB memory limit: status oom (bad_alloc under rlimits)
// expect[memory=cgroup]: status=oom
// expect[memory=rlimit]: status=error
// expect[memory=rlimit]: stderr=/bad_alloc/
// expect: stdout!=/^held (2[89][0-9]|[3-9][0-9][0-9]|[0-9]{4,}) MiB/m
#include <cstdio>
#include <cstring>
#include <vector>
int main() {
  std::vector<char *> v;
  for (;;) {
    char *p = new char[16 << 20];
    std::memset(p, 1, 16 << 20);
    v.push_back(p);
    std::printf("held %zu MiB\n", v.size() * 16);
    std::fflush(stdout);
  }
}
