/* seccomp profiles: parsing errors carry the JSON path, and the compiled
 * default profile, loaded for real in a child, denies what it must and
 * still lets ordinary programs run.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/seccomp.h"
#include "tap.h"
#include "../helpers/denied-syscalls.h"

/* What a filtered child found, one record per check, sent up a pipe so
 * the parent alone numbers the TAP lines.  */
struct report
{
  bool pass;
  char what[120];
};

static int report_fd = -1;

static void __attribute__ ((format (printf, 2, 3)))
report (bool pass, const char *fmt, ...)
{
  struct report r = { .pass = pass };
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (r.what, sizeof r.what, fmt, ap);
  va_end (ap);
  if (write (report_fd, &r, sizeof r) != (ssize_t) sizeof r)
    _exit (3);
}

static const char *
errno_name (int e)
{
  const char *name = e ? strerrorname_np (e) : "0";

  return name ? name : "?";
}

/* Forks a child that loads f, if any (after no_new_privs, as the
 * container's init does), and runs body; turns its reports into TAP
 * lines.  */
static void
run_filtered (const char *label, const struct sr_seccomp_filter *f, void (*body) (void))
{
  struct report r;
  int fds[2], status;
  pid_t pid;

  if (pipe2 (fds, O_CLOEXEC) < 0 || (pid = fork ()) < 0)
    {
      ok (false, "%s: fork: %s", label, strerror (errno));
      return;
    }
  if (pid == 0)
    {
      close (fds[0]);
      report_fd = fds[1];
      /* vhangup must find no controlling tty, filter or not.  */
      setsid ();
      if (f && (prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || sr_seccomp_filter_install (f) < 0))
        {
          report (false, "install the filter: %s", strerror (errno));
          _exit (1);
        }
      body ();
      /* _exit: LeakSanitizer's exit-time check would need ptrace.  */
      _exit (0);
    }
  close (fds[1]);
  while (read (fds[0], &r, sizeof r) == (ssize_t) sizeof r)
    ok (r.pass, "%s: %s", label, r.what);
  close (fds[0]);
  waitpid (pid, &status, 0);
  ok (WIFEXITED (status) && WEXITSTATUS (status) == 0, "%s: the child exits 0 (status %#x)",
      label, status);
}

static void
check_errno (const char *what, long r, int expect)
{
  int got = r < 0 ? errno : 0;

  report (got == expect, "%s gives %s (got %s)", what, errno_name (expect), errno_name (got));
}

static void
check_allowed (const char *what, long r)
{
  int got = r < 0 ? errno : 0;

  report (got != EPERM, "%s is allowed (got %s)", what, errno_name (got));
}

static int
wait_child (pid_t pid)
{
  int status = -1;

  if (pid < 0 || waitpid (pid, &status, 0) < 0)
    return -1;
  return status;
}

static void *
thread_main (void *arg)
{
  return arg;
}

static bool
status_has (const char *line)
{
  char buf[4096];
  int fd = open ("/proc/self/status", O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);

  if (fd >= 0)
    close (fd);
  if (n <= 0)
    return false;
  buf[n] = '\0';
  return strstr (buf, line) != NULL;
}

/* Without the filter, root gets other errors from the same calls: so the
 * filtered results below are the filter's doing.  */
static void
baseline_body (void)
{
  for (size_t i = 0; i < SR_ARRAY_SIZE (denied_calls); i++)
    {
      int got = denied_call_run (&denied_calls[i]);

      report (got != denied_calls[i].expect, "%s gives %s unfiltered", denied_calls[i].name,
              errno_name (got));
    }
}

static void
default_profile_body (void)
{
  int devnull = open ("/dev/null", O_RDWR | O_CLOEXEC), wrong_errno = 0;
  unsigned long wrong = 0;
  void *p;
  pid_t pid;
  pthread_t thread;

  report (status_has ("\nSeccomp:\t2\n"), "/proc/self/status shows Seccomp 2");
  for (size_t i = 0; i < SR_ARRAY_SIZE (denied_calls); i++)
    {
      int got = denied_call_run (&denied_calls[i]);

      report (got == denied_calls[i].expect, "%s gives %s (got %s)", denied_calls[i].name,
              errno_name (denied_calls[i].expect), errno_name (got));
    }

  report (getpid () > 1, "getpid works");
  p = mmap (NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  report (p != MAP_FAILED && mprotect (p, 4096, PROT_READ) == 0 && munmap (p, 4096) == 0,
          "mmap, mprotect and munmap work");
  pid = fork ();
  if (pid == 0)
    _exit (7);
  report (wait_child (pid) == 7 << 8, "fork works");
  pid = fork ();
  if (pid == 0)
    {
      execl ("/bin/true", "true", (char *) NULL);
      _exit (127);
    }
  report (wait_child (pid) == 0, "execve /bin/true works");
  report (pthread_create (&thread, NULL, thread_main, NULL) == 0 && pthread_join (thread, NULL) == 0,
          "pthread_create works (clone3 gives ENOSYS, glibc falls back to clone)");

  check_allowed ("socket(AF_INET)", socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  check_allowed ("socket(AF_UNIX)", socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  check_allowed ("socket(AF_INET6)", socket (AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  check_errno ("socket(AF_PACKET)", socket (AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0), EPERM);
  check_allowed ("personality(0xffffffff)", syscall (SYS_personality, 0xffffffffUL));
  check_allowed ("personality(PER_LINUX32) with high bits",
                 syscall (SYS_personality, 0xffffffff00000008UL));
  check_allowed ("personality(PER_LINUX)", syscall (SYS_personality, 0UL));

  /* Every tty request around the two denied ones reaches /dev/null's
   * driver (ENOTTY, or 0 for the generic ones).  */
  for (unsigned long cmd = 0x5400; cmd < 0x5430; cmd++)
    {
      long r = syscall (SYS_ioctl, devnull, cmd, 0UL);
      int got = r < 0 ? errno : 0;
      bool denied = cmd == 0x5412 || cmd == 0x541C;

      if ((got == EPERM) != denied && wrong == 0)
        {
          wrong = cmd;
          wrong_errno = got;
        }
    }
  report (wrong == 0, "ioctl 0x5400-0x542f: only TIOCSTI and TIOCLINUX are denied (first wrong: %#lx %s)",
          wrong, errno_name (wrong_errno));
  check_errno ("ioctl(TIOCLINUX|0xffffffff<<32)", syscall (SYS_ioctl, devnull, 0xffffffff0000541CUL, 0UL), EPERM);
  check_allowed ("ioctl(sign-extended 0x80045430)", syscall (SYS_ioctl, devnull, 0xffffffff80045430UL, 0UL));
  check_allowed ("ioctl(TCGETS)", syscall (SYS_ioctl, devnull, 0x5401UL, 0UL));
}

#if defined(__x86_64__)
static void
describe_status (char *buf, size_t len, int status)
{
  if (status != -1 && WIFSIGNALED (status))
    snprintf (buf, len, "killed by SIG%s", sigabbrev_np (WTERMSIG (status)));
  else if (status != -1 && WIFEXITED (status))
    snprintf (buf, len, "%s", WEXITSTATUS (status) ? errno_name (WEXITSTATUS (status)) : "ok");
  else
    snprintf (buf, len, "wait status %#x", status);
}

static void
foreign_abi_body (void)
{
  char x32[64], i386[64];
  int s;

  /* libseccomp's x86_64 filter sends bit-30 syscalls to the bad-arch
   * action, so x32 dies even on a kernel built with x32 support.  */
  s = run_foreign_abi (x32_getpid);
  describe_status (x32, sizeof x32, s);
  report (s != -1 && WIFSIGNALED (s) && WTERMSIG (s) == SIGSYS, "x32 getpid: %s", x32);
  s = run_foreign_abi (i386_getpid);
  describe_status (i386, sizeof i386, s);
  report (s != -1 && WIFSIGNALED (s) && WTERMSIG (s) == SIGSYS, "i386 int 0x80 getpid: %s", i386);
}
#endif

static void
test_default_profile (void)
{
  _cleanup_free_ char *path = NULL;
  struct sr_seccomp_filter *f = NULL;
  sr_error_t err = NULL;
  const char *srcdir = getenv ("SR_SRCDIR");

  path = sr_xasprintf ("%s/seccomp/default.json", srcdir ? srcdir : ".");
  if (!ok (sr_seccomp_filter_from_file (path, &f, &err) == 0, "compile %s", path))
    {
      printf ("# %s\n", err->msg);
      sr_error_free (&err);
      return;
    }
  if (geteuid () == 0)
    run_filtered ("no filter", NULL, baseline_body);
  else
    printf ("# not root: the unfiltered baseline would give EPERM too; skipped\n");
  run_filtered ("default profile", f, default_profile_body);
#if defined(__x86_64__)
  {
    int s = run_foreign_abi (i386_getpid);

    /* Without ia32 emulation int 0x80 faults before seccomp sees it.  */
    if (s != -1 && WIFEXITED (s) && WEXITSTATUS (s) == 0)
      run_filtered ("default profile", f, foreign_abi_body);
    else
      printf ("# i386 int 0x80 does not work on this kernel even unfiltered; foreign ABI checks skipped\n");
  }
#endif
  sr_seccomp_filter_free (f);
}

/* Docker's extensions: archMap, includes/excludes by caps, arches and
 * minKernel.  Each rule makes one getter fail with its own errno, so the
 * child can tell which rules were kept.  */
static const char docker_shape[] =
  "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"],\n"
  " \"archMap\": [{\"architecture\": \"SCMP_ARCH_X86_64\", \"subArchitectures\": [\"SCMP_ARCH_X86\"]},\n"
  "             {\"architecture\": \"SCMP_ARCH_AARCH64\", \"subArchitectures\": null}],\n"
  " \"syscalls\": [\n"
  "  {\"names\": [\"getpid\"], \"action\": \"SCMP_ACT_ALLOW\", \"comment\": \"same as the default\"},\n"
  "  {\"names\": [\"socketcall\"], \"action\": \"SCMP_ACT_ERRNO\", \"comment\": \"i386 only\"},\n"
  "  {\"names\": [\"getpgrp\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 11, \"includes\": {\"caps\": [\"CAP_SYS_ADMIN\"]}},\n"
  "  {\"names\": [\"getppid\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 12, \"includes\": {\"arches\": [\"amd64\", \"arm64\"]}},\n"
  "  {\"names\": [\"getuid\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 13, \"includes\": {\"arches\": [\"s390x\"]}},\n"
  "  {\"names\": [\"getgid\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 14, \"excludes\": {\"arches\": [\"amd64\", \"arm64\"]}},\n"
  "  {\"names\": [\"geteuid\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 15, \"includes\": {\"minKernel\": \"999.0\"}},\n"
  "  {\"names\": [\"getegid\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 16, \"includes\": {\"minKernel\": \"3.10\"}},\n"
  "  {\"names\": [\"getsid\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 17, \"excludes\": {\"caps\": [\"CAP_SYS_ADMIN\"]}}\n"
  " ]}\n";

static void
docker_shape_body (void)
{
  check_allowed ("includes.caps drops the rule: getpgrp", syscall (SYS_getpgrp));
  check_errno ("includes.arches with the native arch keeps it: getppid", syscall (SYS_getppid), 12);
  check_allowed ("includes.arches without it drops it: getuid", syscall (SYS_getuid));
  check_allowed ("excludes.arches with it drops it: getgid", syscall (SYS_getgid));
  check_allowed ("includes.minKernel 999.0 drops it: geteuid", syscall (SYS_geteuid));
  check_errno ("includes.minKernel 3.10 keeps it: getegid", syscall (SYS_getegid), 16);
  check_errno ("excludes.caps keeps it: getsid", syscall (SYS_getsid, 0), 17);
#if defined(__x86_64__)
  {
    int s = run_foreign_abi (i386_getpid);

    report (s != -1 && WIFEXITED (s) && WEXITSTATUS (s) == 0,
            "archMap adds SCMP_ARCH_X86: i386 getpid is not killed (status %#x)", s);
  }
#endif
}

static void
test_docker_shape (void)
{
  struct sr_seccomp_filter *f = NULL;
  sr_error_t err = NULL;

  if (!ok (sr_seccomp_filter_from_json (docker_shape, strlen (docker_shape), "docker-shape", &f, &err) == 0,
           "compile a profile in Docker's shape"))
    {
      printf ("# %s\n", err->msg);
      sr_error_free (&err);
      return;
    }
  run_filtered ("docker shape", f, docker_shape_body);
  sr_seccomp_filter_free (f);
}

#define RULE(body) "{\"defaultAction\": \"SCMP_ACT_ERRNO\", \"syscalls\": [" body "]}"

static const struct
{
  const char *name;
  const char *json;
  const char *message;
} malformed[] = {
  { "bad JSON", "{\n  \"defaultAction\": \"SCMP_ACT_ERRNO\",\n  \"syscalls\": [\n    {\"names\": [\"read\"],, }\n  ]\n}\n",
    "not valid JSON near line 4" },
  { "trailing data", "{\"defaultAction\": \"SCMP_ACT_ALLOW\"}\n\nxyz", "not valid JSON near line 3" },
  { "empty input", "", "not valid JSON near line 1" },
  { "not an object", "[]", "expected a JSON object" },
  { "missing defaultAction", "{}", "defaultAction: missing" },
  { "defaultAction not a string", "{\"defaultAction\": 1}", "defaultAction: expected a string" },
  { "unknown action", "{\"defaultAction\": \"SCMP_ACT_FOO\"}", "defaultAction: unknown action 'SCMP_ACT_FOO'" },
  { "unknown top-level field", "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscall\": []}", "unknown field 'syscall'" },
  { "unknown architecture", "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"architectures\": [\"SCMP_ARCH_FOO\"]}",
    "architectures[0]: unknown architecture 'SCMP_ARCH_FOO'" },
  { "unknown flag", "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"flags\": [\"SECCOMP_FILTER_FLAG_FOO\"]}",
    "flags[0]: unknown flag 'SECCOMP_FILTER_FLAG_FOO'" },
  { "syscalls not an array", "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"syscalls\": {}}", "syscalls: expected an array" },
  { "unknown syscall name",
    RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\"}, {\"names\": [\"write\"], \"action\": \"SCMP_ACT_ALLOW\"},"
          "{\"names\": [\"close\"], \"action\": \"SCMP_ACT_ALLOW\"}, {\"names\": [\"foo\"], \"action\": \"SCMP_ACT_ALLOW\"}"),
    "syscalls[3].names[0]: unknown syscall 'foo'" },
  { "names not an array", RULE ("{\"names\": \"read\", \"action\": \"SCMP_ACT_ALLOW\"}"),
    "syscalls[0].names: expected an array of strings" },
  { "names empty", RULE ("{\"names\": [], \"action\": \"SCMP_ACT_ALLOW\"}"),
    "syscalls[0].names: expected a non-empty array of syscall names" },
  { "name not a string", RULE ("{\"names\": [\"read\", 3], \"action\": \"SCMP_ACT_ALLOW\"}"),
    "syscalls[0].names[1]: expected a string" },
  { "rule without action", RULE ("{\"names\": [\"read\"]}"), "syscalls[0].action: missing" },
  { "unknown rule field", RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"arg\": []}"),
    "syscalls[0]: unknown field 'arg'" },
  { "errnoRet out of range", RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ERRNO\", \"errnoRet\": 5000}"),
    "syscalls[0].errnoRet: expected an integer from 0 to 4095" },
  { "errnoRet on allow", RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"errnoRet\": 1}"),
    "syscalls[0].errnoRet: not used by SCMP_ACT_ALLOW" },
  { "notify", RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_NOTIFY\"}"),
    "syscalls[0].action: SCMP_ACT_NOTIFY is not supported: there is no seccomp agent" },
  { "bad arg op",
    RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0, \"value\": 1, \"op\": \"SCMP_CMP_FOO\"}]}"),
    "syscalls[0].args[0].op: unknown operator 'SCMP_CMP_FOO'" },
  { "arg index out of range",
    RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 6, \"value\": 1, \"op\": \"SCMP_CMP_EQ\"}]}"),
    "syscalls[0].args[0].index: expected an integer from 0 to 5" },
  { "arg value not an integer",
    RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0, \"value\": 1.5, \"op\": \"SCMP_CMP_EQ\"}]}"),
    "syscalls[0].args[0].value: expected an integer from 0 to 9007199254740992" },
  { "arg value negative",
    RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0, \"value\": -1, \"op\": \"SCMP_CMP_EQ\"}]}"),
    "syscalls[0].args[0].value: expected an integer from 0 to 9007199254740992" },
  { "arg without op", RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 0, \"value\": 1}]}"),
    "syscalls[0].args[0].op: missing" },
  { "two comparisons on one argument",
    RULE ("{\"names\": [\"ioctl\"], \"action\": \"SCMP_ACT_ALLOW\", \"args\": [{\"index\": 1, \"value\": 1, \"op\": \"SCMP_CMP_GT\"},"
          "{\"index\": 1, \"value\": 9, \"op\": \"SCMP_CMP_LT\"}]}"),
    "syscalls[0].args[1]: argument 1 is already compared in this rule; write one rule per comparison" },
  { "bad minKernel",
    RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"includes\": {\"minKernel\": \"four\"}}"),
    "syscalls[0].includes.minKernel: expected a kernel version such as \"4.8\"" },
  { "unknown includes field",
    RULE ("{\"names\": [\"read\"], \"action\": \"SCMP_ACT_ALLOW\", \"excludes\": {\"arch\": [\"amd64\"]}}"),
    "syscalls[0].excludes: unknown field 'arch'" },
  { "bad archMap", "{\"defaultAction\": \"SCMP_ACT_ALLOW\", \"archMap\": [{\"architecture\": \"x86_64\"}]}",
    "archMap[0].architecture: unknown architecture 'x86_64'" },
};

static void
test_malformed (void)
{
  for (size_t i = 0; i < SR_ARRAY_SIZE (malformed); i++)
    {
      _cleanup_free_ char *want = sr_xasprintf ("seccomp profile /x.json: %s", malformed[i].message);
      struct sr_seccomp_filter *f = NULL;
      sr_error_t err = NULL;
      int r = sr_seccomp_filter_from_json (malformed[i].json, strlen (malformed[i].json), "/x.json", &f, &err);

      ok (r < 0 && f == NULL, "%s is rejected", malformed[i].name);
      is_str (err ? err->msg : NULL, want, malformed[i].name);
      sr_error_free (&err);
      sr_seccomp_filter_free (f);
    }
}

static void
test_missing_file (void)
{
  struct sr_seccomp_filter *f = NULL;
  sr_error_t err = NULL;

  ok (sr_seccomp_filter_from_file ("/nonexistent/x.json", &f, &err) < 0, "a missing profile is an error");
  is_str (err ? err->msg : NULL, "seccomp profile: open /nonexistent/x.json: No such file or directory",
          "the message names the file");
  sr_error_free (&err);
}

int
main (void)
{
  test_malformed ();
  test_missing_file ();
  test_docker_shape ();
  test_default_profile ();
  return done_testing ();
}
