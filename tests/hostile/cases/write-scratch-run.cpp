// hostile: the compiled program rewrites itself and adds files to /scratch
// expected: /scratch is read-only in the run stage: every write is refused
// expect: status=success
// expect: stdout=/^rewrite \/scratch\/main: refused (EROFS|ETXTBSY)$/m
// expect: stdout=/^create \/scratch\/evil: refused EROFS$/m
// expect: stdout=/^create \/scratch\/main.cpp: refused (EROFS|EACCES)$/m
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
static void attempt(const char *what, const char *path, int flags) {
  int fd = open(path, flags, 0755);
  if (fd >= 0) { std::printf("%s %s: ALLOWED\n", what, path); close(fd); }
  else std::printf("%s %s: refused %s\n", what, path, errno == EROFS ? "EROFS" : errno == ETXTBSY ? "ETXTBSY" : errno == EACCES ? "EACCES" : strerror(errno));
}
int main() {
  attempt("rewrite", "/scratch/main", O_WRONLY | O_TRUNC);
  attempt("create", "/scratch/evil", O_WRONLY | O_CREAT);
  attempt("create", "/scratch/main.cpp", O_WRONLY | O_TRUNC);
}
