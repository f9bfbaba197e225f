/* The registry of the backends this binary has (sandbox/backend.h).  */
#include "config.h"

#include "sandbox/backend.h"

#include <errno.h>

/* Filled by main before any thread starts; read only afterwards.  */
static const struct sr_backend *registered[SR_BACKEND_KIND_MAX];

/* Where a kind this binary lacks is found, for the error.  */
static const char *const missing_hint[SR_BACKEND_KIND_MAX] = {
  [SR_BACKEND_DOCKER] = "this binary has no Docker client; run it through sandbox-runner-full",
};

void
sr_backend_register (const struct sr_backend *be)
{
  registered[be->kind] = be;
}

const struct sr_backend *
sr_backend_find (enum sr_backend_kind kind)
{
  return kind < SR_BACKEND_KIND_MAX ? registered[kind] : NULL;
}

const struct sr_backend *
sr_backend_get (const struct sr_config *cfg, sr_error_t *err)
{
  const struct sr_backend *be = sr_backend_find (cfg->backend_kind);
  const char *hint;

  if (be)
    return be;
  hint = cfg->backend_kind < SR_BACKEND_KIND_MAX ? missing_hint[cfg->backend_kind] : NULL;
  sr_error_set (err, 0, "backend %s: %s", sr_backend_kind_name (cfg->backend_kind),
                hint ? hint : "this binary does not have it");
  return NULL;
}
