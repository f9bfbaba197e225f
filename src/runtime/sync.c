#include <config.h>

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/sync.h"

int
sr_msg_send (int fd, const void *buf, size_t len, const int *fds, size_t n_fds)
{
  union
  {
    char buf[CMSG_SPACE (sizeof (int) * SR_SYNC_MAX_FDS)];
    struct cmsghdr align;
  } control;
  struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
  struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
  ssize_t r;

  if (n_fds > SR_SYNC_MAX_FDS)
    {
      errno = EINVAL;
      return -1;
    }
  if (n_fds > 0)
    {
      struct cmsghdr *cm;

      memset (&control, 0, sizeof control);
      mh.msg_control = control.buf;
      mh.msg_controllen = CMSG_SPACE (sizeof (int) * n_fds);
      cm = CMSG_FIRSTHDR (&mh);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN (sizeof (int) * n_fds);
      memcpy (CMSG_DATA (cm), fds, sizeof (int) * n_fds);
    }
  do
    r = sendmsg (fd, &mh, MSG_NOSIGNAL);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return -1;
  if ((size_t) r != len)
    {
      errno = EMSGSIZE;
      return -1;
    }
  return 0;
}

ssize_t
sr_msg_recv (int fd, void *buf, size_t cap, int *fds, size_t max_fds, size_t *ret_n_fds)
{
  union
  {
    char buf[CMSG_SPACE (sizeof (int) * SR_SYNC_MAX_FDS)];
    struct cmsghdr align;
  } control;
  struct iovec iov = { .iov_base = buf, .iov_len = cap };
  struct msghdr mh = {
    .msg_iov = &iov,
    .msg_iovlen = 1,
    .msg_control = control.buf,
    .msg_controllen = sizeof control.buf,
  };
  size_t n = 0;
  ssize_t r;

  if (ret_n_fds)
    *ret_n_fds = 0;
  do
    r = recvmsg (fd, &mh, MSG_CMSG_CLOEXEC);
  while (r < 0 && errno == EINTR);
  /* A peer that died with our message unread resets the connection.  */
  if (r == 0 || (r < 0 && errno == ECONNRESET))
    return 0;
  if (r < 0)
    return -1;
  for (struct cmsghdr *cm = CMSG_FIRSTHDR (&mh); cm; cm = CMSG_NXTHDR (&mh, cm))
    {
      size_t count;

      if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
        continue;
      count = (cm->cmsg_len - CMSG_LEN (0)) / sizeof (int);
      for (size_t i = 0; i < count; i++)
        {
          int received;

          memcpy (&received, CMSG_DATA (cm) + i * sizeof (int), sizeof (int));
          if (n < max_fds)
            fds[n++] = received;
          else
            close (received);
        }
    }
  if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
    {
      for (size_t i = 0; i < n; i++)
        close (fds[i]);
      errno = EBADMSG;
      return -1;
    }
  if (ret_n_fds)
    *ret_n_fds = n;
  return r;
}

int
sr_sync_send (int fd, const struct sr_sync_msg *msg, const int *fds, size_t n_fds)
{
  return sr_msg_send (fd, msg, sizeof *msg, fds, n_fds);
}

int
sr_sync_recv (int fd, struct sr_sync_msg *msg, int *fds, size_t max_fds, size_t *ret_n_fds)
{
  size_t n = 0;
  ssize_t r = sr_msg_recv (fd, msg, sizeof *msg, fds, max_fds, &n);

  if (r == 0)
    return 1;
  if (r < 0)
    return -1;
  if ((size_t) r != sizeof *msg)
    {
      for (size_t i = 0; i < n; i++)
        close (fds[i]);
      if (ret_n_fds)
        *ret_n_fds = 0;
      errno = EBADMSG;
      return -1;
    }
  if (ret_n_fds)
    *ret_n_fds = n;
  msg->text[SR_SYNC_TEXT_MAX - 1] = '\0';
  return 0;
}
