/* Importing an image from files: an OCI image layout (a directory, or a
 * tar of one, as skopeo, umoci, buildah and rootfs/build-image.sh write
 * it) or a `docker save` archive (directory or tar, legacy and OCI-style).
 * Every blob is verified against its digest (for legacy docker archives,
 * each layer against the config's diff_ids) before it enters the store.  */
#ifndef SR_IMAGE_IMPORT_H
#define SR_IMAGE_IMPORT_H

#include "common/error.h"
#include "image/store.h"

/* Imports path into the store under name (NULL: the name the archive
 * carries, else the file's base name).  *ret_id and *ret_name get what was
 * installed.  */
int sr_image_import (struct sr_store *s, const char *path, const char *name, char **ret_id,
                     char **ret_name, sr_error_t *err);

#endif
