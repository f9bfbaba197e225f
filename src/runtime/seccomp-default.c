#include <config.h>

#include <stddef.h>

#include "common/util.h"
#include "runtime/seccomp.h"

/* The profile is data in seccomp/default.json; it is assembled into the
 * binary so a build-tree or relocated binary never runs without it.  */
SR_INCBIN (sr_default_profile, SR_SECCOMP_DEFAULT_JSON);

int
sr_seccomp_filter_default (struct sr_seccomp_filter **ret, sr_error_t *err)
{
  return sr_seccomp_filter_from_json (sr_default_profile,
                                      (size_t) (sr_default_profile_end - sr_default_profile),
                                      "built-in default profile", ret, err);
}

const char *
sr_seccomp_default_json (size_t *len)
{
  *len = (size_t) (sr_default_profile_end - sr_default_profile);
  return sr_default_profile;
}
