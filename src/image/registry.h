/* Pulling images from an OCI distribution registry (Docker Hub, a local
 * registry, any registry speaking the distribution API) into the store.
 *
 * References are parsed as image/reference.h says (included here for the
 * callers).  Anonymous Bearer tokens are fetched as the registry's
 * WWW-Authenticate asks; username/password are sent as Basic credentials
 * to the registry or its token service.  Indexes and Docker
 * manifest lists resolve to linux on the host's architecture.  Every blob
 * is verified by digest; blobs already in the store are not fetched again
 * and an interrupted download resumes with a Range request.  */
#ifndef SR_IMAGE_REGISTRY_H
#define SR_IMAGE_REGISTRY_H

#include <stdbool.h>

#include "common/error.h"
#include "image/reference.h"
#include "image/store.h"

struct sr_registry_options
{
  const char *username;   /* NULL: anonymous */
  const char *password;
  /* Plain HTTP: always allowed for localhost and 127.0.0.0/8, otherwise
   * only when this is set.  */
  bool plain_http;
  const char *ca_file;    /* NULL: the system's CA bundle */
};

/* Pulls ref into the store and names it; *ret_id gets the image id.  */
int sr_registry_pull (struct sr_store *s, const char *ref, const struct sr_registry_options *o,
                      char **ret_id, sr_error_t *err);

#endif
