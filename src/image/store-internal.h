/* What store.c shares with store-install.c, and nobody else.  */
#ifndef SR_IMAGE_STORE_INTERNAL_H
#define SR_IMAGE_STORE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "image/store.h"

#define EXTRACT_PREFIX "x-"

struct sr_store
{
  char *dir;
  int dirfd;
  sr_progress_fn progress;
  void *progress_data;
  void (*warn) (const char *msg, void *userdata);
  void *warn_data;
  uint64_t max_image_size, max_image_entries;
  /* Another's store (image_stores_readonly), opened to read images from:
   * nothing is ever written to it, and no lock file made in it.  */
  bool readonly;
  /* The next store lookups, use and list search: the read-only stores,
   * in the order configured, after the caller's own.  */
  struct sr_store *next;
};

void sr_store_report_ (struct sr_store *s, enum sr_progress_stage stage, const char *digest,
                       size_t layer, size_t n_layers, uint64_t current, uint64_t total);
/* 0 for a store of the caller's own; for a read-only store, an error
 * (errnum EROFS) that says so and where images go instead.  */
int sr_store_writable_ (struct sr_store *s, sr_error_t *err);
/* The store's lock, held by the returned fd.  */
int sr_store_lock_ (struct sr_store *s, sr_error_t *err);
bool sr_store_image_exists_ (struct sr_store *s, const char *id);
/* Names id; name may be NULL (nothing to do).  Store lock held.  */
int sr_store_set_name_ (struct sr_store *s, const char *name, const char *id, sr_error_t *err);

#endif
