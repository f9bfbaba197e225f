/* The container's network: a new namespace whose only interface, lo, is
 * brought up over rtnetlink, so 127.0.0.1 works inside and nothing else is
 * reachable.  */
#ifndef SR_NETLINK_H
#define SR_NETLINK_H

/* Sets lo up in the caller's network namespace.  Runs in the container
 * child: it allocates nothing (the message is built on the stack).
 * Returns 0, or -1 with errno set.  */
int sr_netlink_loopback_up (void);

#endif
