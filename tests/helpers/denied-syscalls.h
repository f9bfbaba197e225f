/* The syscalls seccomp/default.json must deny, shared by the unit test
 * (tests/unit/test-seccomp.c) and the in-container probe
 * (tests/helpers/probe.c).  Every call carries arguments that make it fail
 * or do nothing when no filter is loaded (NULL or bad pointers, fd -1, pid
 * 0, invalid flags), so running the list unfiltered as root is harmless;
 * the one exception, vhangup, needs the caller to have no controlling tty
 * (call setsid first).  */
#ifndef SR_TEST_DENIED_SYSCALLS_H
#define SR_TEST_DENIED_SYSCALLS_H

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* An address no process maps: EFAULT where NULL would mean something.  */
#define BAD_PTR 1L

struct denied_call
{
  const char *name;
  long nr;
  long args[6];
  int expect; /* the errno the default profile gives */
};

static const struct denied_call denied_calls[] = {
  { "mount", SYS_mount, { 0 }, EPERM },
  { "umount2", SYS_umount2, { 0 }, EPERM },
  { "pivot_root", SYS_pivot_root, { 0 }, EPERM },
  { "chroot", SYS_chroot, { 0 }, EPERM },
  { "clone(CLONE_NEWNS)", SYS_clone, { CLONE_NEWNS | SIGCHLD }, EPERM },
  { "clone(CLONE_NEWUSER)", SYS_clone, { CLONE_NEWUSER | SIGCHLD }, EPERM },
  { "clone3", SYS_clone3, { 0 }, ENOSYS },
  { "setns", SYS_setns, { -1 }, EPERM },
  { "fsopen", SYS_fsopen, { 0 }, EPERM },
  { "open_tree", SYS_open_tree, { -1, 0 }, EPERM },
  { "keyctl", SYS_keyctl, { 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */ }, EPERM },
  { "add_key", SYS_add_key, { 0 }, EPERM },
  { "request_key", SYS_request_key, { 0 }, EPERM },
  { "ptrace", SYS_ptrace, { 3 /* PTRACE_PEEKUSER */, 0 }, EPERM },
  { "process_vm_readv", SYS_process_vm_readv, { 0 }, EPERM },
  { "process_vm_writev", SYS_process_vm_writev, { 0 }, EPERM },
  { "bpf", SYS_bpf, { -1 }, EPERM },
  { "perf_event_open", SYS_perf_event_open, { 0, 0, -1, -1 }, EPERM },
  { "userfaultfd", SYS_userfaultfd, { -1 }, EPERM },
  { "kexec_load", SYS_kexec_load, { 0, 0, 0, -1 }, EPERM },
  { "kexec_file_load", SYS_kexec_file_load, { -1, -1, 0, 0, -1 }, EPERM },
  { "init_module", SYS_init_module, { 0 }, EPERM },
  { "finit_module", SYS_finit_module, { -1 }, EPERM },
  { "delete_module", SYS_delete_module, { 0 }, EPERM },
  { "open_by_handle_at", SYS_open_by_handle_at, { -1, 0 }, EPERM },
  { "name_to_handle_at", SYS_name_to_handle_at, { -1, 0 }, EPERM },
  { "reboot", SYS_reboot, { 0 }, EPERM },
  { "swapon", SYS_swapon, { 0 }, EPERM },
  { "swapoff", SYS_swapoff, { 0 }, EPERM },
  { "acct", SYS_acct, { BAD_PTR }, EPERM },
  { "quotactl", SYS_quotactl, { 0 }, EPERM },
  { "settimeofday", SYS_settimeofday, { 0 }, EPERM },
  { "clock_settime", SYS_clock_settime, { 0 /* CLOCK_REALTIME */, 0 }, EPERM },
  { "adjtimex", SYS_adjtimex, { 0 }, EPERM },
#ifdef SYS_iopl
  { "iopl", SYS_iopl, { 0 }, EPERM },
  { "ioperm", SYS_ioperm, { 0 }, EPERM },
#endif
  { "syslog", SYS_syslog, { 10 /* SYSLOG_ACTION_SIZE_BUFFER */ }, EPERM },
  { "vhangup", SYS_vhangup, { 0 }, EPERM },
  { "personality(ADDR_NO_RANDOMIZE)", SYS_personality, { 0x0040000 }, EPERM },
  { "ioctl(TIOCSTI)", SYS_ioctl, { -1, 0x5412 }, EPERM },
  { "ioctl(TIOCLINUX)", SYS_ioctl, { -1, 0x541C }, EPERM },
  /* The kernel reads the request as 32 bits: the high half must not help.  */
  { "ioctl(TIOCSTI|1<<32)", SYS_ioctl, { -1, 0x100005412L }, EPERM },
  { "io_uring_setup", SYS_io_uring_setup, { 0 }, EPERM },
  { "io_uring_enter", SYS_io_uring_enter, { -1 }, EPERM },
  { "io_uring_register", SYS_io_uring_register, { -1 }, EPERM },
  /* Native AIO: every context comes out of the host-wide fs.aio-max-nr.  */
  { "io_setup", SYS_io_setup, { 0 }, EPERM },
  { "io_submit", SYS_io_submit, { 0 }, EPERM },
  { "io_getevents", SYS_io_getevents, { 0 }, EPERM },
  { "io_pgetevents", SYS_io_pgetevents, { 0 }, EPERM },
  { "io_cancel", SYS_io_cancel, { 0 }, EPERM },
  { "io_destroy", SYS_io_destroy, { 0 }, EPERM },
  { "socket(AF_VSOCK)", SYS_socket, { 40, SOCK_STREAM }, EPERM },
  { "socket(AF_VSOCK|1<<32)", SYS_socket, { 0x100000028L, SOCK_STREAM }, EPERM },
  /* Last: where it succeeds, the calls after it would run without
   * privilege and prove less.  */
  { "unshare", SYS_unshare, { CLONE_NEWUSER }, EPERM },
};

/* Makes the call and returns 0 on success or its errno.  A clone that
 * succeeds (no filter) leaves a child that exits at once and is reaped.  */
static inline int
denied_call_run (const struct denied_call *c)
{
  const long *a = c->args;
  long r = syscall (c->nr, a[0], a[1], a[2], a[3], a[4], a[5]);
  int saved = errno;

  if (c->nr == SYS_clone && r == 0)
    _exit (0);
  if (c->nr == SYS_clone && r > 0)
    waitpid ((pid_t) r, NULL, 0);
  if (c->nr == SYS_socket && r >= 0)
    close ((int) r);
  return r < 0 ? saved : 0;
}

#if defined(__x86_64__)
/* getpid through the x32 ABI (bit 30 of the syscall number) and through
 * the i386 one (int 0x80, where getpid is 20).  Each returns 0 or the
 * errno; a filter that lacks the ABI kills the caller instead.  */
static inline int
x32_getpid (void)
{
  return syscall (0x40000000 | SYS_getpid) < 0 ? errno : 0;
}

static inline int
i386_getpid (void)
{
  long r = 20;

  __asm__ volatile ("int $0x80" : "+a" (r) : : "r8", "r9", "r10", "r11", "memory");
  return r < 0 ? (int) -r : 0;
}

/* Runs fn in a child, since it may be killed; returns the wait status.  */
static inline int
run_foreign_abi (int (*fn) (void))
{
  pid_t pid = fork ();
  int status = 0;

  if (pid == 0)
    _exit (fn ());
  if (pid < 0 || waitpid (pid, &status, 0) < 0)
    return -1;
  return status;
}
#endif

#endif
