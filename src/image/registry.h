/* Pulling images from an OCI distribution registry (Docker Hub, a local
 * registry, any registry speaking the distribution API) into the store.
 *
 * A reference is [HOST[:PORT]/]REPOSITORY[:TAG][@DIGEST]; no host means
 * Docker Hub (registry-1.docker.io, "library/" for one-word repositories),
 * no tag means "latest".  Anonymous Bearer tokens are fetched as the
 * registry's WWW-Authenticate asks; username/password are sent as Basic
 * credentials to the registry or its token service.  Indexes and Docker
 * manifest lists resolve to linux on the host's architecture.  Every blob
 * is verified by digest; blobs already in the store are not fetched again
 * and an interrupted download resumes with a Range request.  */
#ifndef SR_IMAGE_REGISTRY_H
#define SR_IMAGE_REGISTRY_H

#include <stdbool.h>

#include "common/error.h"
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

struct sr_image_ref
{
  char *host;        /* "registry-1.docker.io", "127.0.0.1:5000" */
  char *repository;  /* "library/python" */
  char *tag;         /* NULL when only a digest was given */
  char *digest;      /* NULL unless @sha256:... was given */
};
int sr_image_ref_parse (const char *s, struct sr_image_ref *ret, sr_error_t *err);
void sr_image_ref_done (struct sr_image_ref *r);
/* The canonical name an image pulled by r gets in the store:
 * HOST/REPOSITORY:TAG (Docker Hub images keep their short form, python:3.12). */
char *sr_image_ref_name (const struct sr_image_ref *r);

/* Pulls ref into the store and names it; *ret_id gets the image id.  */
int sr_registry_pull (struct sr_store *s, const char *ref, const struct sr_registry_options *o,
                      char **ret_id, sr_error_t *err);

#endif
