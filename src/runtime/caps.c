#include <config.h>

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/caps.h"

int
sr_caps_plan_init (struct sr_caps_plan *plan, uint64_t keep, sr_error_t *err)
{
  cap_t caps = cap_init ();

  if (caps == NULL)
    return sr_error_set (err, errno, "cap_init");
  for (cap_value_t c = 0; c <= CAP_LAST_CAP && c < 64; c++)
    {
      if (!(keep & (1ULL << c)))
        continue;
      if (cap_set_flag (caps, CAP_EFFECTIVE, 1, &c, CAP_SET) < 0
          || cap_set_flag (caps, CAP_PERMITTED, 1, &c, CAP_SET) < 0
          || cap_set_flag (caps, CAP_INHERITABLE, 1, &c, CAP_SET) < 0)
        {
          int saved = errno;

          cap_free (caps);
          return sr_error_set (err, saved, "cap_set_flag");
        }
    }
  plan->keep = keep;
  plan->final = caps;
  plan->uid = 0;
  plan->gid = 0;
  return 0;
}

void
sr_caps_plan_done (struct sr_caps_plan *plan)
{
  if (plan->final)
    cap_free (plan->final);
  plan->final = NULL;
}

int
sr_caps_parse_list (const char *list, uint64_t *ret_mask, sr_error_t *err)
{
  _cleanup_free_ char *copy = sr_xstrdup (list);
  char *save = NULL;
  uint64_t mask = 0;

  for (char *name = strtok_r (copy, ",", &save); name; name = strtok_r (NULL, ",", &save))
    {
      cap_value_t c;

      if (cap_from_name (name, &c) < 0 || c < 0 || c > 63)
        return sr_error_set (err, 0, "unknown capability '%s'", name);
      mask |= 1ULL << c;
    }
  *ret_mask = mask;
  return 0;
}

/* Raw syscalls: the caller may be a raw clone of a threaded runner,
 * where glibc's wrappers would wait on threads it does not have.  The
 * supplementary groups were cleared on becoming root, where allowed.
 * PR_SET_KEEPCAPS keeps the permitted set across the change of uid, for
 * the keep-list's final sets; execve clears it again.  */
static int
become_user (const struct sr_caps_plan *plan, const char **ret_step)
{
  if (prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    {
      *ret_step = "keep the capabilities across the change of user";
      return -1;
    }
  if (syscall (SYS_setresgid, plan->gid, plan->gid, plan->gid) < 0)
    {
      *ret_step = "setresgid to the user's gid";
      return -1;
    }
  if (syscall (SYS_setresuid, plan->uid, plan->uid, plan->uid) < 0)
    {
      *ret_step = "setresuid to the user's uid";
      return -1;
    }
  return 0;
}

int
sr_caps_apply (const struct sr_caps_plan *plan, const char **ret_step)
{
  int last = cap_max_bits ();

  /* The bounding set goes first: dropping it needs CAP_SETPCAP, which the
   * final cap_set_proc takes away.  An empty bounding set also keeps a uid 0
   * process from regaining capabilities at execve.  */
  for (int c = 0; c < last; c++)
    {
      if (c < 64 && (plan->keep & (1ULL << c)))
        continue;
      if (prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
        {
          *ret_step = "drop the capability bounding set";
          return -1;
        }
    }
  if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    {
      *ret_step = "clear the ambient capabilities";
      return -1;
    }
  if ((plan->uid != 0 || plan->gid != 0) && become_user (plan, ret_step) < 0)
    return -1;
  if (cap_set_proc (plan->final) < 0)
    {
      *ret_step = "cap_set_proc";
      return -1;
    }
  for (int c = 0; c < last && c < 64; c++)
    {
      if (!(plan->keep & (1ULL << c)))
        continue;
      if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
        {
          *ret_step = "raise an ambient capability";
          return -1;
        }
    }
  return 0;
}
