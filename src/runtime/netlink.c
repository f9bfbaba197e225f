#include <config.h>

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/if.h>
#include <linux/rtnetlink.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/netlink.h"

/* lo is always ifindex 1 in a new network namespace.  */
#define LOOPBACK_IFINDEX 1

int
sr_netlink_loopback_up (void)
{
  char buf[MNL_SOCKET_BUFFER_SIZE < 8192 ? MNL_SOCKET_BUFFER_SIZE : 8192];
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  _cleanup_close_ int fd = -1;
  struct nlmsghdr *nlh;
  struct ifinfomsg *ifm;
  unsigned int seq = (unsigned int) time (NULL);
  ssize_t n;
  int r;

  fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0)
    return -1;

  nlh = mnl_nlmsg_put_header (buf);
  nlh->nlmsg_type = RTM_NEWLINK;
  nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  nlh->nlmsg_seq = seq;
  ifm = mnl_nlmsg_put_extra_header (nlh, sizeof *ifm);
  ifm->ifi_family = AF_UNSPEC;
  ifm->ifi_index = LOOPBACK_IFINDEX;
  ifm->ifi_flags = IFF_UP;
  ifm->ifi_change = IFF_UP;

  if (sendto (fd, nlh, nlh->nlmsg_len, 0, (struct sockaddr *) &kernel, sizeof kernel) < 0)
    return -1;
  do
    n = recv (fd, buf, sizeof buf, 0);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return -1;
  /* The ACK is an NLMSG_ERROR with error 0; mnl_cb_run turns a non-zero one
   * into -1 with errno set.  */
  r = mnl_cb_run (buf, (size_t) n, seq, 0, NULL, NULL);
  return r < 0 ? -1 : 0;
}
