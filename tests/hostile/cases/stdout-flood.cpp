// hostile: C++ writes 1 GiB to stdout with write(2)
// expected: truncated at 100 KiB with the rest drained and counted, in seconds; the server's memory stays small
// timeout: 20
// expect: status=success
// expect: stdout_truncated=true
// expect: stdout=/output truncated after 102400 bytes; 1073639424 bytes dropped/
// expect: max_ms=40000
// check: server-memory-bounded
#include <unistd.h>
#include <vector>
int main() {
  std::vector<char> b(1 << 20, 'y');
  for (int i = 0; i < 1024; i++)
    for (size_t off = 0; off < b.size();) {
      ssize_t n = write(1, b.data() + off, b.size() - off);
      if (n <= 0) return 1;
      off += n;
    }
}
