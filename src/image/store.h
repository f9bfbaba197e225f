/* The image store: content-addressed blobs, each layer extracted once,
 * and one rootfs per image, under one directory (config image_store:
 * /var/lib/sandbox-runner as root, $XDG_DATA_HOME/sandbox-runner rootless).
 *
 *   blobs/sha256/<hex>        verified blobs (manifests, configs, layers)
 *   layers/<hex>/             layer <hex> extracted alone, once whatever the
 *                             number of images that use it (store-install.c)
 *   images/<id>/rootfs        the layers applied in order, their regular
 *                             files hard links to the layers' (images that
 *                             share a layer share its data); images
 *                             installed before the layer cache hold their
 *                             own; <id> is the config digest hex
 *   images/<id>/image.json    what `image inspect` shows
 *   images/<id>.lock          held shared by every run of the image
 *   names.json                name -> id
 *   tmp/                      downloads and extractions in progress
 *   store.lock                held for every change of names and images
 *
 * A blob lands under its digest only after its bytes hashed to it; an
 * image directory appears only by rename of a complete extraction, so a
 * crash leaves nothing that looks complete, and the next open of the store
 * removes what crashed writers left in tmp/.
 *
 * Other stores can be read behind one's own (image_stores_readonly, by
 * default root's store for every other user, as podman's additional image
 * stores): lookups, use and list search the caller's store first, then
 * each read-only store in order; a run of an image there takes a shared
 * lock on its lock file opened for reading, and every change to such a
 * store is refused (errnum EROFS, code store_read_only).  */
#ifndef SR_IMAGE_STORE_H
#define SR_IMAGE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/error.h"
#include "image/digest.h"

struct sr_store;

/* Progress of a long step, for the CLI to draw.  */
enum sr_progress_stage
{
  SR_PROGRESS_FETCH,    /* a blob is being copied or downloaded */
  SR_PROGRESS_EXTRACT,  /* a layer is being applied */
  SR_PROGRESS_DONE,     /* the step ended (current == total) */
};
struct sr_progress
{
  enum sr_progress_stage stage;
  const char *digest;     /* the blob */
  size_t layer, n_layers; /* 1-based; 0 when not a layer */
  uint64_t current, total; /* bytes; total 0 when unknown */
};
typedef void (*sr_progress_fn) (const struct sr_progress *p, void *userdata);

/* Opens the caller's store dir and removes what crashed writers left in
 * its tmp/.  With create it is made when missing; without (a caller that
 * only reads the store: lookups, list, rm) a store (or parent) that is
 * missing is not made but an error, errnum ENOENT, so that a mistyped
 * image_store is not created by a command that then fails.  Behind it
 * come the read-only stores of readonly, a colon-separated list of
 * absolute paths (NULL or empty: none; dir itself and missing ones are
 * skipped; one owned by a user other than root and the caller, or
 * writable by group or others, is refused).  Without create a missing dir is no error when a
 * read-only store opened: *ret is then the first read-only store, which
 * reads but refuses every change.  */
int sr_store_open_all (const char *dir, const char *readonly, bool create, struct sr_store **ret,
                       sr_error_t *err);
/* Closes s and the read-only stores behind it.  */
void sr_store_close (struct sr_store *s);
const char *sr_store_dir (const struct sr_store *s);

void sr_store_set_progress (struct sr_store *s, sr_progress_fn fn, void *userdata);
/* Called with each warning of an extraction (an entry neutralised or
 * skipped); NULL drops them.  */
void sr_store_set_warn (struct sr_store *s, void (*fn) (const char *msg, void *userdata),
                        void *userdata);
/* Caps on what installing one image may write (the settings
 * max_image_size, in bytes of file data, and max_image_entries; 0: no
 * cap), enforced while its layers are extracted.  A store opens with the
 * built-in defaults.  */
void sr_store_set_caps (struct sr_store *s, uint64_t max_size, uint64_t max_entries);
void sr_store_get_caps (const struct sr_store *s, uint64_t *ret_max_size,
                        uint64_t *ret_max_entries);

/* --- blobs --- */
bool sr_store_has_blob (struct sr_store *s, const char *digest);
/* The path of a stored blob (which may not exist).  */
char *sr_store_blob_path (struct sr_store *s, const char *digest);
/* Reads a stored blob of at most max bytes into a NUL-terminated buffer.  */
int sr_store_read_blob (struct sr_store *s, const char *digest, size_t max, char **ret,
                        size_t *ret_len, sr_error_t *err);

/* Writes a blob that arrives in pieces.  begin reopens what an interrupted
 * writer of the same digest left in tmp/ and says in *ret_offset how many
 * bytes it already holds (the caller resumes from there, or calls
 * sr_blob_writer_restart to start over).  commit checks the size (when
 * expected_size is not 0) and the digest, then moves the blob into place;
 * a mismatch discards the bytes and names both digests (errnum
 * EBADMSG).  free without commit keeps the partial bytes for a later
 * resume.  set_progress makes write and commit report SR_PROGRESS_FETCH
 * (layer 0: not a layer).  */
struct sr_blob_writer;
int sr_blob_writer_begin (struct sr_store *s, const char *digest, uint64_t expected_size,
                          struct sr_blob_writer **ret, uint64_t *ret_offset, sr_error_t *err);
int sr_blob_writer_write (struct sr_blob_writer *w, const void *buf, size_t len, sr_error_t *err);
int sr_blob_writer_restart (struct sr_blob_writer *w, sr_error_t *err);
void sr_blob_writer_set_progress (struct sr_blob_writer *w, size_t layer, size_t n_layers);
int sr_blob_writer_commit (struct sr_blob_writer *w, sr_error_t *err);
void sr_blob_writer_free (struct sr_blob_writer *w);

/* Copies the blob readable from fd into the store, verifying it.  */
int sr_store_put_blob_fd (struct sr_store *s, int fd, const char *digest,
                          uint64_t expected_size, sr_error_t *err);
/* Stores a document held in memory; it must hash to digest.  */
int sr_store_put_blob_buf (struct sr_store *s, const void *buf, size_t len,
                           const char *digest, sr_error_t *err);

/* --- images --- */

/* Makes an image of a manifest whose blobs (manifest, config, layers) are
 * all in the store: extracts the layers the store does not hold yet,
 * applies them in order into a fresh rootfs, linking their files, and
 * names it (name may be NULL).  A layer's extraction found changed is
 * not linked from but written and dropped, with a warning.  *ret_id gets the image id (config digest
 * hex).  An image that is already there is only (re)named.  source is a
 * note for inspect (a path or a reference).  */
int sr_store_install (struct sr_store *s, const char *manifest_digest, const char *name,
                      const char *source, char **ret_id, sr_error_t *err);

struct sr_image_info
{
  char *id;            /* config digest hex */
  char **names;        /* NULL-terminated, may be empty */
  char *store;         /* the directory of the store it is in */
  bool readonly;       /* that store is read-only (image_stores_readonly) */
  char *manifest_digest;
  char *source;
  time_t created;      /* when it was installed */
  uint64_t size;       /* compressed layer bytes */
  size_t n_layers;
  /* from the image config */
  char **env, **entrypoint, **cmd;
  char *working_dir, *user, *architecture, *os;
  char *version;       /* its org.opencontainers.image.version label; NULL: none */
};
void sr_image_info_done (struct sr_image_info *info);

/* Every image, newest first.  */
int sr_store_list (struct sr_store *s, struct sr_image_info **ret, size_t *ret_n, sr_error_t *err);
void sr_image_info_free_array (struct sr_image_info *v, size_t n);

/* NAME, NAME:latest, a full id or an unambiguous id prefix (at least 6
 * digits) -> the image.  */
int sr_store_lookup (struct sr_store *s, const char *ref, struct sr_image_info *ret,
                     sr_error_t *err);

/* An image opened for a run: the rootfs path stays valid, and rm refuses
 * the image, until sr_image_release.  */
struct sr_image_use
{
  struct sr_image_info info;
  char *rootfs;
  int lock_fd;
};
int sr_store_use (struct sr_store *s, const char *ref, struct sr_image_use *ret, sr_error_t *err);
void sr_image_release (struct sr_image_use *use);

/* Removes a name; the image goes when no name is left (or at once with
 * force), and with it the layers no other image uses.  An image that a run is using is refused, and so is one that
 * only a read-only store has (EROFS).  */
int sr_store_remove (struct sr_store *s, const char *ref, bool force, sr_error_t *err);

/* Removes images without names, blobs and extracted layers no image
 * refers to; counts what went and the bytes freed (of blobs and partial
 * downloads).  */
int sr_store_prune (struct sr_store *s, size_t *ret_images, size_t *ret_blobs,
                    uint64_t *ret_bytes, sr_error_t *err);

#endif
