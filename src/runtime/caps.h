/* Capabilities of the container's process: all five sets emptied before
 * execve, except for an explicit keep-list (empty by default); and the
 * ids it runs as, which change in the middle of it.  */
#ifndef SR_CAPS_H
#define SR_CAPS_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/capability.h>

#include "common/error.h"

struct sr_caps_plan
{
  uint64_t keep; /* bit N set: keep capability N */
  cap_t final;   /* the E/P/I sets to install, built in the parent */
  uid_t uid;     /* the ids the process becomes (in its user namespace); */
  gid_t gid;     /* 0, 0: it stays root there */
};

/* Builds the plan in the parent (libcap allocates here, not in the child).  */
int sr_caps_plan_init (struct sr_caps_plan *plan, uint64_t keep, sr_error_t *err);
void sr_caps_plan_done (struct sr_caps_plan *plan);

/* Parses a comma-separated list such as "CAP_NET_BIND_SERVICE,chown" into a
 * mask.  */
int sr_caps_parse_list (const char *list, uint64_t *ret_mask, sr_error_t *err);

/* In the child, as root of its user namespace: drop the bounding set and
 * ambient set to the keep-list, become plan->uid and plan->gid (keeping
 * the capabilities the keep-list names), then install the final sets.
 * Allocates nothing.  Returns 0, or -1 with errno
 * set and *ret_step naming what failed.  */
int sr_caps_apply (const struct sr_caps_plan *plan, const char **ret_step);

#endif
