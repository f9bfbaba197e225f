/* The user setting: who the commands of run_code and sessions are inside
 * a container, and the one place its text is read.
 *
 * Syntax: root, USER or USER:GROUP, where USER is a name or a uid and
 * GROUP a name or a gid; ids are below SR_ROOT_MAP_COUNT, names are
 * [A-Za-z0-9_.][A-Za-z0-9_.-]* of at most 32 characters ("root" is uid 0).
 * Names are looked up in the image's /etc/passwd and /etc/group, never
 * the host's: each is opened below the image's root with openat2
 * RESOLVE_IN_ROOT (a symlink there resolves inside the image) and read
 * up to SR_IMAGE_USER_MAX_FILE bytes.  A uid without a group takes the
 * primary gid of the image's passwd entry for it when there is one, else
 * gid = uid.  */
#ifndef SR_IMAGE_USER_H
#define SR_IMAGE_USER_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/error.h"

#define SR_IMAGE_USER_MAX_FILE (1u << 20)

/* Whether text is a well-formed user setting; an error (invalid_config)
 * that names it when not.  A name is fine here: only an image says
 * whether it exists.  */
int sr_image_user_check (const char *text, sr_error_t *err);

/* Whether text has no name in it (root counts as an id): its ids are
 * known without an image, though the gid may still come from one.  */
bool sr_image_user_numeric (const char *text);

/* The ids of text in the image whose root is the directory rootfd
 * (image names it in errors).  rootfd -1: no image is known, and a name
 * is an error.  A name the image lacks is an error (invalid_config,
 * ENOENT) naming the user and the image; so is a passwd or group file
 * that is not a regular file or exceeds the bound.  */
int sr_image_user_resolve (const char *text, int rootfd, const char *image, uid_t *ret_uid,
                           gid_t *ret_gid, sr_error_t *err);

/* sr_image_user_resolve for the image whose root is the path rootfs.  */
int sr_image_user_resolve_path (const char *text, const char *rootfs, const char *image,
                                uid_t *ret_uid, gid_t *ret_gid, sr_error_t *err);

#endif
