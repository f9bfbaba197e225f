// hostile: C++ raw sockets: SOCK_RAW and AF_PACKET, then a spoofed packet to 1.1.1.1
// expected: the sockets are refused and nothing leaves
// expect: status=success
// expect: stdout!=/ALLOWED|SENT/
// expect: stdout=/^raw: refused EPERM$/m
// expect: stdout=/^packet: refused EPERM$/m
#include <arpa/inet.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
static int attempt(const char *what, int d, int t, int p) {
  int fd = socket(d, t, p);
  if (fd < 0) std::printf("%s: refused %s\n", what, strerrorname_np(errno));
  else std::printf("%s: ALLOWED\n", what);
  return fd;
}
int main() {
  int fd = attempt("raw", AF_INET, SOCK_RAW, IPPROTO_RAW);
  attempt("packet", 17, SOCK_RAW, htons(3));
  if (fd >= 0) {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, "1.1.1.1", &a.sin_addr);
    char pkt[64] = {0x45};
    if (sendto(fd, pkt, sizeof pkt, 0, (sockaddr *)&a, sizeof a) > 0) std::puts("spoofed packet SENT");
  }
}
