// hostile: a C++ busy loop in 8 threads
// expected: killed at the 1 s timeout: status timeout
// timeout: 1
// expect: status=timeout
// expect: max_ms=30000
#include <thread>
#include <vector>
int main() {
  std::vector<std::thread> t;
  for (int i = 0; i < 8; i++) t.emplace_back([] { for (volatile long x = 0;; x++) {} });
  for (auto &x : t) x.join();
}
