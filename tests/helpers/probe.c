/* A static probe that integration tests bind into a busybox rootfs and run
 * inside the container, to see its policy from within.  Only glibc and raw
 * syscalls.  Every line it prints is "SUBJECT RESULT", where RESULT is
 * "ok", "errno=ENAME" or "killed SIGNAME":
 *
 *   probe syscalls        one line per denied syscall: "mount errno=EPERM"
 *   probe status          "Seccomp: 2", "NoNewPrivs: 1", "CapEff: 0000000000000000" and
 *                         CapPrm, CapBnd, CapInh, CapAmb the same way, in the order
 *                         /proc/self/status has them
 *   probe tiocsti         "tiocsti fd=0 errno=EPERM" for fds 0-2, then
 *                         "tiocsti /dev/tty errno=..." (or "tiocsti open-/dev/tty errno=ENXIO")
 *   probe x32, probe i386 "x32 killed SIGSYS", "i386 killed SIGSYS" (or ok / errno=);
 *                         x86_64 only
 *   probe listen-connect  "loopback ok" (or "loopback STEP errno=E..."), then
 *                         "connect 10.0.2.2:80 errno=ENETUNREACH" and the same for 1.1.1.1:53
 *   probe ctty            "ctty open errno=ENXIO" (or "ctty open ok"), "ctty leader=yes" (or no)
 *   probe forks           forks sleeping children until fork fails (at most 1000):
 *                         "forks 15 errno=EAGAIN" (or "forks 1000 ok"), then reaps them
 *   probe hoard           takes what the kernel counts per user until it runs out:
 *                         "inotify 16 errno=EMFILE", "mqueues 1 errno=EMFILE",
 *                         "timers 256 errno=EAGAIN" (or "... ok" at its own cap), then
 *                         prints "held" and holds them HOARD_SECONDS
 *   probe per-user        one of each of those, and an AIO context, as a process of the
 *                         host would: "inotify_init1 ok", "mq_open ok", "timer_create ok",
 *                         "io_setup ok" (or errno=)
 *
 * Exit status 0 when the probing itself worked (whatever it found), 1 when
 * it could not probe, 2 on a usage error.  */
#include <config.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "denied-syscalls.h"

#define CONNECT_TIMEOUT_MS 2000

static const char *
errno_name (int errnum)
{
  const char *name = strerrorname_np (errnum);

  return name ? name : "?";
}

static void
result (const char *subject, int errnum)
{
  if (errnum == 0)
    printf ("%s ok\n", subject);
  else
    printf ("%s errno=%s\n", subject, errno_name (errnum));
}

static int
probe_syscalls (void)
{
  /* vhangup must not hang up a terminal if the filter lets it through.  */
  setsid ();
  for (size_t i = 0; i < sizeof denied_calls / sizeof denied_calls[0]; i++)
    {
      /* Flush first: a clone that gets through forks a copy of stdout.  */
      fflush (stdout);
      result (denied_calls[i].name, denied_call_run (&denied_calls[i]));
    }
  return 0;
}

static int
probe_status (void)
{
  static const char *const keys[] = {
    "Seccomp", "NoNewPrivs", "CapEff", "CapPrm", "CapBnd", "CapInh", "CapAmb",
  };
  char line[256];
  FILE *f = fopen ("/proc/self/status", "re");

  if (f == NULL)
    {
      result ("open-/proc/self/status", errno);
      return 1;
    }
  while (fgets (line, sizeof line, f))
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
      {
        size_t n = strlen (keys[i]);
        const char *value = line + n + 1;

        if (strncmp (line, keys[i], n) != 0 || line[n] != ':')
          continue;
        value += strspn (value, " \t");
        printf ("%s: %s", keys[i], value);
      }
  fclose (f);
  return 0;
}

static int
try_tiocsti (int fd)
{
  /* A NUL byte: if the injection gets through, it types nothing visible.  */
  char c = '\0';

  return ioctl (fd, TIOCSTI, &c) < 0 ? errno : 0;
}

static int
probe_tiocsti (void)
{
  char subject[32];
  int fd;

  for (int i = 0; i <= 2; i++)
    {
      snprintf (subject, sizeof subject, "tiocsti fd=%d", i);
      result (subject, try_tiocsti (i));
    }
  fd = open ("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    {
      result ("tiocsti open-/dev/tty", errno);
      return 0;
    }
  result ("tiocsti /dev/tty", try_tiocsti (fd));
  close (fd);
  return 0;
}

#if defined(__x86_64__)
static int
probe_foreign_abi (const char *name, int (*fn) (void))
{
  int status = run_foreign_abi (fn);

  if (status == -1)
    {
      result (name, errno);
      return 1;
    }
  if (WIFSIGNALED (status))
    printf ("%s killed SIG%s\n", name, sigabbrev_np (WTERMSIG (status)));
  else
    result (name, WEXITSTATUS (status));
  return 0;
}
#endif

/* A listener and a client on 127.0.0.1 exchange one byte; returns the
 * step that failed (errno set), or NULL.  */
static const char *
loopback (int fds[3])
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl (INADDR_LOOPBACK) };
  socklen_t len = sizeof addr;
  char byte = 'x';

  if ((fds[0] = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
    return "socket";
  if (bind (fds[0], (struct sockaddr *) &addr, sizeof addr) < 0)
    return "bind";
  if (listen (fds[0], 1) < 0 || getsockname (fds[0], (struct sockaddr *) &addr, &len) < 0)
    return "listen";
  if ((fds[1] = socket (AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0
      || connect (fds[1], (struct sockaddr *) &addr, sizeof addr) < 0)
    return "connect";
  if ((fds[2] = accept4 (fds[0], NULL, NULL, SOCK_CLOEXEC)) < 0)
    return "accept";
  if (send (fds[1], &byte, 1, 0) != 1)
    return "send";
  byte = '\0';
  if (recv (fds[2], &byte, 1, 0) != 1 || byte != 'x')
    {
      errno = errno ? errno : EPROTO;
      return "recv";
    }
  return NULL;
}

static void
probe_loopback (void)
{
  int fds[3] = { -1, -1, -1 };
  const char *step = loopback (fds);

  if (step)
    printf ("loopback %s errno=%s\n", step, errno_name (errno));
  else
    printf ("loopback ok\n");
  for (int i = 0; i < 3; i++)
    if (fds[i] >= 0)
      close (fds[i]);
}

/* Non-blocking, so a route that exists but drops packets reports
 * ETIMEDOUT after a while instead of hanging the test.  */
static void
probe_connect (const char *ip, int port)
{
  struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons ((uint16_t) port) };
  struct pollfd pfd = { .events = POLLOUT };
  socklen_t len = sizeof (int);
  char subject[64];
  int err = 0;

  snprintf (subject, sizeof subject, "connect %s:%d", ip, port);
  inet_pton (AF_INET, ip, &addr.sin_addr);
  pfd.fd = socket (AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (pfd.fd < 0)
    {
      result (subject, errno);
      return;
    }
  if (connect (pfd.fd, (struct sockaddr *) &addr, sizeof addr) < 0)
    err = errno;
  if (err == EINPROGRESS)
    {
      int r = poll (&pfd, 1, CONNECT_TIMEOUT_MS);

      if (r == 0)
        err = ETIMEDOUT;
      else if (r < 0 || getsockopt (pfd.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    }
  result (subject, err);
  close (pfd.fd);
}

static int
probe_listen_connect (void)
{
  probe_loopback ();
  probe_connect ("10.0.2.2", 80);
  probe_connect ("1.1.1.1", 53);
  return 0;
}

static int
probe_ctty (void)
{
  int fd = open ("/dev/tty", O_RDWR | O_CLOEXEC);

  result ("ctty open", fd < 0 ? errno : 0);
  if (fd >= 0)
    close (fd);
  printf ("ctty leader=%s\n", getsid (0) == getpid () ? "yes" : "no");
  return 0;
}

#define MAX_FORKS 1000

/* A fork bomb with a count: how many processes the pids limit lets live.  */
static int
probe_forks (void)
{
  static pid_t children[MAX_FORKS];
  char subject[32];
  int n = 0, errnum = 0;

  while (n < MAX_FORKS)
    {
      pid_t pid = fork ();
      if (pid < 0)
        {
          errnum = errno;
          break;
        }
      if (pid == 0)
        {
          pause ();
          _exit (0);
        }
      children[n++] = pid;
    }
  snprintf (subject, sizeof subject, "forks %d", n);
  result (subject, errnum);
  for (int i = 0; i < n; i++)
    kill (children[i], SIGKILL);
  for (int i = 0; i < n; i++)
    waitpid (children[i], NULL, 0);
  return 0;
}

#define HOARD_SECONDS 4

/* One POSIX message queue of the default size; name_id keeps names apart.  */
static int
open_mqueue (long name_id)
{
  char name[64];
  mqd_t q;

  snprintf (name, sizeof name, "/probe-%ld-%ld", (long) getpid (), name_id);
  q = mq_open (name, O_RDWR | O_CREAT | O_EXCL, 0600, NULL);
  if (q == (mqd_t) -1)
    return -1;
  mq_unlink (name);
  return q;
}

/* A POSIX timer: the kernel keeps one pending signal for it.  */
static int
create_timer (timer_t *id)
{
  return (int) syscall (SYS_timer_create, CLOCK_MONOTONIC, NULL, id);
}

/* Counts what it takes of one resource until take fails or max.  */
static void
hoard (const char *what, int max, int (*take) (long))
{
  char subject[48];
  int n = 0, errnum = 0;

  while (n < max)
    {
      if (take (n) < 0)
        {
          errnum = errno;
          break;
        }
      n++;
    }
  snprintf (subject, sizeof subject, "%s %d", what, n);
  result (subject, errnum);
}

static int
take_inotify (long n)
{
  (void) n;
  return inotify_init1 (IN_CLOEXEC);
}

static int
take_timer (long n)
{
  timer_t id;

  (void) n;
  return create_timer (&id);
}

static int
probe_hoard (void)
{
  hoard ("inotify", 900, take_inotify);
  hoard ("mqueues", 64, open_mqueue);
  hoard ("timers", 1000000, take_timer);
  printf ("held\n");
  fflush (stdout);
  sleep (HOARD_SECONDS);
  return 0;
}

static int
probe_per_user (void)
{
  aio_context_t ctx = 0;
  timer_t timer;
  int fd;

  fd = inotify_init1 (IN_CLOEXEC);
  result ("inotify_init1", fd < 0 ? errno : 0);
  fd = open_mqueue (-1);
  result ("mq_open", fd < 0 ? errno : 0);
  result ("timer_create", create_timer (&timer) < 0 ? errno : 0);
  result ("io_setup", syscall (SYS_io_setup, 1, &ctx) < 0 ? errno : 0);
  return 0;
}

int
main (int argc, char **argv)
{
  const char *cmd = argc == 2 ? argv[1] : "";
  int r;

  if (strcmp (cmd, "syscalls") == 0)
    r = probe_syscalls ();
  else if (strcmp (cmd, "status") == 0)
    r = probe_status ();
  else if (strcmp (cmd, "tiocsti") == 0)
    r = probe_tiocsti ();
#if defined(__x86_64__)
  else if (strcmp (cmd, "x32") == 0)
    r = probe_foreign_abi ("x32", x32_getpid);
  else if (strcmp (cmd, "i386") == 0)
    r = probe_foreign_abi ("i386", i386_getpid);
#endif
  else if (strcmp (cmd, "listen-connect") == 0)
    r = probe_listen_connect ();
  else if (strcmp (cmd, "ctty") == 0)
    r = probe_ctty ();
  else if (strcmp (cmd, "forks") == 0)
    r = probe_forks ();
  else if (strcmp (cmd, "hoard") == 0)
    r = probe_hoard ();
  else if (strcmp (cmd, "per-user") == 0)
    r = probe_per_user ();
  else
    {
      fprintf (stderr, "usage: probe syscalls|status|tiocsti|x32|i386|listen-connect|ctty|forks|\n"
               "       hoard|per-user\n");
      return 2;
    }
  fflush (stdout);
  return r;
}
