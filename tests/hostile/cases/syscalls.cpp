// hostile: C++ raw syscalls: ptrace, mount, unshare, setns, keyctl, bpf, perf_event_open, io_uring, open_by_handle_at, kexec, modules, reboot, swapon, clock_settime, iopl
// expected: every one is denied
// expect: status=success
// expect: stdout!=/ALLOWED/
// expect: stdout=/^checked 17 calls$/m
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <sys/syscall.h>
#include <unistd.h>
static int n;
static void denied(const char *what, long r) {
  n++;
  if (r == -1) std::printf("%s: denied %s\n", what, strerrorname_np(errno));
  else std::printf("%s: ALLOWED (%ld)\n", what, r);
}
int main() {
  static char buf[256];
  struct timespec ts = {0, 0};
  denied("ptrace", syscall(SYS_ptrace, 16, getppid(), 0, 0));
  denied("mount", syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, 0));
  denied("umount2", syscall(SYS_umount2, "/proc", 2));
  denied("unshare", syscall(SYS_unshare, 0x10000000));
  denied("setns", syscall(SYS_setns, 0, 0));
  denied("keyctl", syscall(SYS_keyctl, 1, "hostile"));
  denied("bpf", syscall(SYS_bpf, 0, buf, 128));
  denied("perf_event_open", syscall(SYS_perf_event_open, buf, 0, -1, -1, 0));
  denied("io_uring_setup", syscall(SYS_io_uring_setup, 8, buf));
  denied("open_by_handle_at", syscall(SYS_open_by_handle_at, -100, buf, 0));
  denied("kexec_load", syscall(SYS_kexec_load, 0, 0, 0, 0));
  denied("init_module", syscall(SYS_init_module, buf, 16, ""));
  denied("delete_module", syscall(SYS_delete_module, "ext4", 0));
  denied("reboot", syscall(SYS_reboot, 0xfee1dead, 672274793, 0x4321fedc, 0));
  denied("swapon", syscall(SYS_swapon, "/work/swap", 0));
  denied("clock_settime", syscall(SYS_clock_settime, CLOCK_REALTIME, &ts));
  denied("iopl", syscall(SYS_iopl, 3));
  std::printf("checked %d calls\n", n);
}
