#include <config.h>

#include <errno.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/netlink.h"

/* lo is always ifindex 1 in a new network namespace.  */
#define LOOPBACK_IFINDEX 1

/* The whole request: one header and its ifinfomsg, no attributes.  */
struct link_request
{
  struct nlmsghdr nlh;
  struct ifinfomsg ifm;
};

/* The kernel's answer to the request: the ACK is an NLMSG_ERROR with
 * error 0, a refusal one with -errno; anything else is a protocol error.  */
static int
read_ack (const char *buf, int len, unsigned int seq)
{
  const struct nlmsghdr *nlh = (const struct nlmsghdr *) buf;

  for (; NLMSG_OK (nlh, len); nlh = NLMSG_NEXT (nlh, len))
    {
      const struct nlmsgerr *e = NLMSG_DATA (nlh);

      if (nlh->nlmsg_seq != seq || nlh->nlmsg_type != NLMSG_ERROR)
        continue;
      if (nlh->nlmsg_len < NLMSG_LENGTH (sizeof *e))
        break;
      if (e->error == 0)
        return 0;
      errno = -e->error;
      return -1;
    }
  errno = EPROTO;
  return -1;
}

int
sr_netlink_loopback_up (void)
{
  struct link_request req = { 0 };
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  _cleanup_close_ int fd = -1;
  /* Read as nlmsghdrs: aligned as one.  */
  char buf[8192] __attribute__ ((aligned (__alignof__ (struct nlmsghdr))));
  ssize_t n;

  fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0)
    return -1;

  req.nlh.nlmsg_len = NLMSG_LENGTH (sizeof req.ifm);
  req.nlh.nlmsg_type = RTM_NEWLINK;
  req.nlh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  req.nlh.nlmsg_seq = (unsigned int) time (NULL);
  req.ifm.ifi_family = AF_UNSPEC;
  req.ifm.ifi_index = LOOPBACK_IFINDEX;
  req.ifm.ifi_flags = IFF_UP;
  req.ifm.ifi_change = IFF_UP;

  if (sendto (fd, &req, req.nlh.nlmsg_len, 0, (struct sockaddr *) &kernel, sizeof kernel) < 0)
    return -1;
  do
    n = recv (fd, buf, sizeof buf, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -1;
  return read_ack (buf, (int) n, req.nlh.nlmsg_seq);
}
