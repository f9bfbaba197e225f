/* Image references.
 *
 * A reference is [HOST[:PORT]/]REPOSITORY[:TAG][@DIGEST]; no host means
 * Docker Hub (registry-1.docker.io, "library/" for one-word repositories),
 * no tag means "latest".  */
#ifndef SR_IMAGE_REFERENCE_H
#define SR_IMAGE_REFERENCE_H

#include "common/error.h"

struct sr_image_ref
{
  char *host;        /* "registry-1.docker.io", "127.0.0.1:5000" */
  char *repository;  /* "library/python" */
  char *tag;         /* NULL when only a digest was given */
  char *digest;      /* NULL unless @sha256:... was given */
};
/* Parses s into *ret, which the caller frees with sr_image_ref_done.  */
int sr_image_ref_parse (const char *s, struct sr_image_ref *ret, sr_error_t *err);
/* Frees what r holds and zeroes it.  */
void sr_image_ref_done (struct sr_image_ref *r);
/* The canonical name an image pulled by r gets in the store:
 * HOST/REPOSITORY:TAG (Docker Hub images keep their short form, python:3.12). */
char *sr_image_ref_name (const struct sr_image_ref *r);

#endif
