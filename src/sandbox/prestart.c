#include "config.h"

#include "sandbox/prestart.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"

/* The bootstrap is data in warm-python.py, assembled into the binary as
 * seccomp/default.json is (runtime/seccomp-default.c).  */
SR_INCBIN (sr_warm_python, SR_WARM_PYTHON);

char *
sr_prestart_program (const struct sr_language *l, size_t *ret_len)
{
  _cleanup_free_ char *names = NULL;
  char *program;
  const char *p = l->preload;

  if (strcmp (l->warm_start, SR_WARM_START_PYTHON) != 0)
    return NULL;
  /* The preloads as a python tuple; config.c took only module names.  */
  names = sr_xstrdup ("");
  for (size_t n; p += strspn (p, ", "), (n = strcspn (p, ", ")) > 0; p += n)
    {
      char *more = sr_xasprintf ("%s\"%.*s\", ", names, (int) n, p);

      free (names);
      names = more;
    }
  program = sr_xasprintf ("PRELOAD = (%s)\n%.*s", names,
                          (int) (sr_warm_python_end - sr_warm_python), sr_warm_python);
  *ret_len = strlen (program);
  return program;
}

int
sr_prestart_wait_ready (int sock, uint64_t timeout_ms, sr_error_t *err)
{
  struct pollfd pfd = { .fd = sock, .events = POLLIN };
  uint64_t deadline = sr_now_ns () + timeout_ms * 1000000ull;
  char c;

  for (;;)
    {
      uint64_t now = sr_now_ns ();
      int r;

      if (now >= deadline)
        return sr_error_set_plain (err, "prestart_failed", ETIMEDOUT,
                                   "the interpreter was not ready in %llu ms",
                                   (unsigned long long) timeout_ms);
      r = poll (&pfd, 1, (int) ((deadline - now) / 1000000ull) + 1);
      if (r < 0 && errno == EINTR)
        continue;
      if (r < 0)
        return sr_error_set (err, errno, "wait for the interpreter");
      if (r > 0)
        break;
    }
  if (recv (sock, &c, 1, MSG_DONTWAIT) != 1 || c != 'R')
    return sr_error_set_plain (err, "prestart_failed", EPIPE,
                               "the interpreter ended before it was ready");
  return 0;
}

bool
sr_prestart_waiting (int sock)
{
  struct pollfd pfd = { .fd = sock, .events = POLLIN };

  /* It sends nothing after ready: anything now is its end.  */
  return poll (&pfd, 1, 0) == 0;
}

int
sr_prestart_hand_over (int sock, char *const *args, size_t n_args, int stdin_fd, int end_fd,
                       sr_error_t *err)
{
  _cleanup_close_ int null_fd = -1;
  _cleanup_free_ char *buf = NULL;
  size_t len = 1;
  union
  {
    char buf[CMSG_SPACE (2 * sizeof (int))];
    struct cmsghdr align;
  } control;
  struct iovec iov;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                        .msg_controllen = sizeof control.buf };
  struct cmsghdr *cm;

  if (stdin_fd < 0)
    {
      stdin_fd = null_fd = open ("/dev/null", O_RDONLY | O_CLOEXEC);
      if (null_fd < 0)
        return sr_error_set (err, errno, "open /dev/null");
    }
  for (size_t i = 0; i < n_args; i++)
    len += strlen (args[i]) + 1;
  buf = sr_xmalloc (len);
  buf[0] = 'A';
  len = 1;
  for (size_t i = 0; i < n_args; i++)
    {
      size_t n = strlen (args[i]) + 1;

      memcpy (buf + len, args[i], n);
      len += n;
    }
  iov = (struct iovec){ .iov_base = buf, .iov_len = len };
  memset (&control, 0, sizeof control);
  cm = CMSG_FIRSTHDR (&msg);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (2 * sizeof (int));
  memcpy (CMSG_DATA (cm), &stdin_fd, sizeof (int));
  memcpy (CMSG_DATA (cm) + sizeof (int), &end_fd, sizeof (int));
  if (sendmsg (sock, &msg, MSG_NOSIGNAL) != (ssize_t) len)
    return sr_error_set (err, errno ? errno : EIO, "hand the run to the interpreter");
  return 0;
}
