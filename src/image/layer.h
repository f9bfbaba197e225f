/* Applying one image layer (a tar, plain or compressed) onto a rootfs
 * directory, with the OCI whiteout rules: `.wh.NAME` deletes NAME of the
 * layers below, `.wh..wh..opq` empties its directory of them.
 *
 * Hostile archives cannot reach outside the rootfs: every path is
 * resolved inside it (openat2 RESOLVE_IN_ROOT, as the container will
 * resolve it), `..` components are refused, absolute names made relative,
 * hardlinks can only name files inside, and nothing is ever followed at
 * the last component.  Device nodes and sockets are skipped (a container
 * gets its own /dev); xattrs (file capabilities among them) are not
 * applied; setuid and setgid bits are cleared unless kept; nothing is
 * writable by group or others (sr_layer_shared_mode).  */
#ifndef SR_IMAGE_LAYER_H
#define SR_IMAGE_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* What the layers of one image may write, counted across the calls that
 * share it, and checked before each write: a layer stops at the cap, not
 * after.  Bytes are file data as written (what it costs on disk): a
 * sparse file's holes are free, whatever its apparent size; a hard link
 * costs an entry and no bytes.  Entries are every entry applied (a
 * file, directory, symlink, hard link or fifo, even one that replaces or
 * repeats a name already there) and every missing parent directory made
 * for one; skipped device nodes and whiteouts are free.  What a later
 * layer removes stays counted: the caps bound the work and the peak, not
 * the result.  The caps are
 * the settings max_image_size and max_image_entries, which a refusal
 * names.  */
struct sr_layer_budget
{
  uint64_t max_bytes;   /* 0: no cap */
  uint64_t max_entries; /* 0: no cap */
  uint64_t bytes;       /* written so far */
  uint64_t entries;     /* made so far */
};

/* Counts n more bytes (or entries) against the budget: -1, used
 * unchanged, when that would pass max (0: no cap).  Exported for the unit
 * tests.  */
int sr_layer_budget_take (uint64_t *used, uint64_t max, uint64_t n);

struct sr_layer_options
{
  bool chown;        /* apply the entries' owners; false: files are the caller's */
  bool keep_setid;   /* keep setuid and setgid bits */
  /* The layer is applied without the layers below (the image store's
   * layer cache, for sr_layer_link): a hard link to a file it does not
   * hold, and an entry below a symlink that leads nowhere in it, are left
   * out, as the rootfs will have them from below.  */
  bool alone;
  void (*warn) (const char *msg, void *userdata);
  void (*progress) (uint64_t bytes_read, void *userdata); /* compressed bytes */
  void *userdata;
  struct sr_layer_budget *budget; /* NULL: no cap */
};

struct sr_layer_stats
{
  uint64_t entries;
  uint64_t whiteouts;
  uint64_t skipped;       /* device nodes, sockets */
  uint64_t setid_cleared;
  uint64_t made_relative; /* absolute names */
  uint64_t unshared;      /* sr_layer_link: files written, their twin missing or changed */
  /* alone: regular files whose twin the extraction cannot keep (a later
   * entry of the same name replaced it, or it is below a symlink into the
   * layers below), which sr_layer_link will count as unshared */
  uint64_t unlinkable;
};

/* Applies the layer at layer_path onto rootfd.  At a cap of o->budget it
 * stops before the write or the name that would pass it, and fails with
 * errnum EFBIG; what it made so far is left for the caller to remove.  */
int sr_layer_apply (int rootfd, const char *layer_path, const struct sr_layer_options *o,
                    struct sr_layer_stats *stats, sr_error_t *err);

/* sr_layer_apply, except that regular files are not written but hard
 * linked from extracted_fd, the directory the same layer was applied to
 * alone (an empty one before): the image store's layer cache, where the
 * layers that images share are extracted once.  Everything else
 * (whiteouts, directories, symlinks, hard links, the checks on names,
 * the budget's entries) is as sr_layer_apply does it, entry by entry, so
 * the result is the same; a file whose twin is missing, or differs in
 * type, size, mode, owner or mtime, is written from the layer instead and
 * counted in stats->unshared.  Linked files cost the budget no bytes:
 * the caller counts those of the layer's extraction.  */
int sr_layer_link (int rootfd, const char *layer_path, int extracted_fd,
                   const struct sr_layer_options *o, struct sr_layer_stats *stats,
                   sr_error_t *err);

/* The mode an entry of a layer gets on disk: without write for group and
 * others.  A store is shared (root's is read by every user's runs,
 * image_stores_readonly) and a rootfs is mounted read-only in every
 * container, so no entry needs them, and an image's 1777 /tmp or
 * /var/tmp would let any local user plant files in everyone's
 * containers.  */
unsigned sr_layer_shared_mode (unsigned perm);

/* Clears group and others' write on every entry under the directory
 * rootfd (not itself), as sr_layer_shared_mode says: for what an earlier
 * version extracted.  Symlinks are never followed; each directory is
 * closed to others before its entries are looked at.  */
int sr_layer_drop_shared_write (int rootfd, sr_error_t *err);

/* Creates directory path (0755) and its missing parents inside the
 * rootfs, resolving as the container will.  */
int sr_layer_mkdir_in_root (int rootfd, const char *path, sr_error_t *err);

/* The name of an entry made safe: relative, without "." or empty
 * components.  Returns 0 with "" for the root itself, -1 for a name with a
 * ".." component or one longer than PATH_MAX.  *ret_absolute says whether
 * a leading "/" was dropped.  */
int sr_layer_clean_path (const char *name, char *out, size_t out_len, bool *ret_absolute);

#endif
