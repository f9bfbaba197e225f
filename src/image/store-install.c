#include "config.h"

/* Installing an image in the store: its layers extracted into the layer
 * cache (once per layer) and linked from there into a fresh rootfs,
 * renamed into place.  Apart from the rest of the store because
 * it is the one part that needs libarchive, which the commands that only
 * read the store (run --image, run-code) must not pay to load.  */
#include "image/store.h"
#include "image/store-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/json.h"
#include "common/util.h"
#include "common/workdir.h"
#include "image/layer.h"
#include "image/oci.h"

/* The mount points the runtime needs, made in every rootfs.  */
static const char *const runtime_dirs[] = { "proc", "sys", "dev", "tmp", "work", "scratch",
                                             "mnt/data" };

struct extract_progress
{
  struct sr_store *s;
  const char *digest;
  size_t layer, n_layers;
  uint64_t total;
};

static void
layer_progress (uint64_t bytes, void *userdata)
{
  struct extract_progress *ep = userdata;

  sr_store_report_ (ep->s, SR_PROGRESS_EXTRACT, ep->digest, ep->layer, ep->n_layers, bytes, ep->total);
}

static void
layer_warn (const char *msg, void *userdata)
{
  struct extract_progress *ep = userdata;

  if (ep->s->warn)
    ep->s->warn (msg, ep->s->warn_data);
}

/* The layer cache, in which each layer is extracted once whatever the
 * number of images that use it (store.h):
 *
 *   layers/<hex>/tree        layer <hex> applied alone to an empty directory
 *   layers/<hex>/layer.json  {"bytes": N}: the file data it wrote, counted
 *                            against the caps of every image that uses it
 *   layers/<hex>.lock        held shared by each install that links from it
 *
 * An image's rootfs is its layers applied in order with their regular
 * files hard-linked from the trees (sr_layer_link): one directory, as
 * before, whose file data the images share.  A tree appears only by
 * rename of a complete extraction, under the store lock; rm and prune
 * remove the trees no image refers to and no install holds.  */
struct cached_layer
{
  int lockfd, treefd;
  bool fresh;          /* extracted by this install */
  uint64_t unlinkable; /* files its tree cannot hold: more unshared is damage */
};

static void
cached_layer_close (struct cached_layer *c)
{
  if (c->treefd >= 0)
    close (c->treefd);
  if (c->lockfd >= 0)
    close (c->lockfd);
  c->treefd = c->lockfd = -1;
}

/* What layer.json says: the bytes the extraction wrote and the files
 * its tree cannot hold (struct sr_layer_stats.unlinkable).  */
static int
read_layer_json (struct sr_store *s, const char *hex, uint64_t *ret_bytes,
                 uint64_t *ret_unlinkable, sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/layers/%s/layer.json", s->dir, hex);
  _cleanup_free_ char *text = NULL;
  _cleanup_json_ cJSON *o = NULL;
  const cJSON *bytes, *unlinkable;

  if (sr_read_file (path, &text, NULL, err) < 0)
    return -1;
  o = cJSON_Parse (text);
  bytes = cJSON_GetObjectItemCaseSensitive (o, "bytes");
  unlinkable = cJSON_GetObjectItemCaseSensitive (o, "unlinkable");
  if (!cJSON_IsNumber (bytes) || bytes->valuedouble < 0 || !cJSON_IsNumber (unlinkable)
      || unlinkable->valuedouble < 0)
    return sr_error_set (err, 0, "%s: damaged", path);
  *ret_bytes = (uint64_t) bytes->valuedouble;
  *ret_unlinkable = (uint64_t) unlinkable->valuedouble;
  return 0;
}

static int
write_layer_json (int dirfd, uint64_t bytes, uint64_t unlinkable, sr_error_t *err)
{
  _cleanup_close_ int fd = openat (dirfd, "layer.json",
                                   O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  _cleanup_free_ char *text = sr_xasprintf ("{\"bytes\": %llu, \"unlinkable\": %llu}\n",
                                            (unsigned long long) bytes,
                                            (unsigned long long) unlinkable);

  if (fd < 0 || sr_write_all (fd, text, strlen (text)) < 0 || fdatasync (fd) < 0)
    return sr_error_set (err, errno, "write layer.json");
  return 0;
}

static int
open_tree (struct sr_store *s, const char *hex)
{
  _cleanup_free_ char *rel = sr_xasprintf ("layers/%s/tree", hex);

  return openat (s->dirfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* Extracts layer i of m alone into a work directory and renames it into
 * the cache (unless another install was quicker); c->treefd gets the
 * tree.  Runs without the store lock; c->lockfd keeps rm and prune off.  */
static int
extract_tree (struct sr_store *s, const struct sr_oci_manifest *m, size_t i,
              struct sr_layer_budget *budget, struct cached_layer *c, sr_error_t *err)
{
  const char *digest = m->layers[i].digest, *hex = digest + 7;
  _cleanup_free_ char *blob = sr_store_blob_path (s, digest);
  _cleanup_free_ char *tmp = sr_xasprintf ("%s/tmp/" EXTRACT_PREFIX "layer-%.12s-XXXXXX", s->dir,
                                           hex);
  _cleanup_free_ char *dest = sr_xasprintf ("%s/layers/%s", s->dir, hex);
  _cleanup_close_ int tmpfd = -1, lockfd = -1;
  struct extract_progress ep = {
    .s = s, .digest = digest, .layer = i + 1, .n_layers = m->n_layers, .total = m->layers[i].size,
  };
  /* The layer's entries are counted here against the cap, and again as
   * the rootfs links them; its bytes only here.  */
  struct sr_layer_budget lb = { .max_bytes = budget->max_bytes, .bytes = budget->bytes,
                                .max_entries = budget->max_entries };
  struct sr_layer_options o = {
    .chown = geteuid () == 0, .alone = true, .warn = layer_warn, .progress = layer_progress,
    .userdata = &ep, .budget = &lb,
  };
  struct sr_layer_stats stats;
  int r = -1;

  if (sr_workdir_make (tmp, &tmpfd, err) < 0)
    return -1;
  if (fchmod (tmpfd, 0700) < 0 || mkdirat (tmpfd, "tree", 0755) < 0
      || (c->treefd = openat (tmpfd, "tree", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
    {
      sr_error_set (err, errno, "prepare %s", tmp);
      goto out;
    }
  sr_store_report_ (s, SR_PROGRESS_EXTRACT, digest, ep.layer, ep.n_layers, 0, ep.total);
  if (sr_layer_apply (c->treefd, blob, &o, &stats, err) < 0
      || write_layer_json (tmpfd, lb.bytes - budget->bytes, stats.unlinkable, err) < 0)
    goto out;
  budget->bytes = lb.bytes;
  c->unlinkable = stats.unlinkable;
  (void) fchmod (c->treefd, 0755);

  lockfd = sr_store_lock_ (s, err);
  if (lockfd < 0)
    goto out;
  if (renameat (AT_FDCWD, tmp, AT_FDCWD, dest) == 0)
    c->fresh = true;
  else if (errno == EEXIST || errno == ENOTEMPTY)
    {
      /* Another install was quicker: its tree is the one kept.  */
      close (c->treefd);
      c->treefd = open_tree (s, hex);
      if (c->treefd < 0)
        {
          sr_error_set (err, errno, "open %s/tree", dest);
          goto out;
        }
    }
  else
    {
      sr_error_set (err, errno, "rename %s to %s", tmp, dest);
      goto out;
    }
  r = 0;

out:
  if (access (tmp, F_OK) == 0)
    (void) sr_rm_rf_at (AT_FDCWD, tmp, NULL);
  return r;
}

/* Layer i of m's tree in the cache, extracted first when missing, with
 * its lock held shared; its bytes are taken from budget.  */
static int
open_cached_layer (struct sr_store *s, const struct sr_oci_manifest *m, size_t i,
                   struct sr_layer_budget *budget, struct cached_layer *c, sr_error_t *err)
{
  const char *digest = m->layers[i].digest, *hex = digest + 7;
  _cleanup_free_ char *lock = sr_xasprintf ("layers/%s.lock", hex);
  _cleanup_close_ int storelock = sr_store_lock_ (s, err);
  uint64_t bytes = 0;

  if (storelock < 0)
    return -1;
  c->lockfd = openat (s->dirfd, lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (c->lockfd < 0)
    return sr_error_set (err, errno, "%s/%s", s->dir, lock);
  /* rm and prune only try the lock: this never waits.  */
  while (flock (c->lockfd, LOCK_SH) < 0)
    if (errno != EINTR)
      return sr_error_set (err, errno, "lock %s/%s", s->dir, lock);
  c->treefd = open_tree (s, hex);
  if (c->treefd < 0)
    {
      close (TAKE_FD (storelock));
      return extract_tree (s, m, i, budget, c, err);
    }
  if (read_layer_json (s, hex, &bytes, &c->unlinkable, err) < 0)
    return -1;
  if (sr_layer_budget_take (&budget->bytes, budget->max_bytes, bytes) < 0)
    return sr_error_set_plain (err, NULL, EFBIG,
                               "the image passes max_image_size (%llu bytes of file data); raise "
                               "that setting to allow it",
                               (unsigned long long) budget->max_bytes);
  return 0;
}

/* A tree that no longer matches its layer (changed or damaged in place)
 * is moved out of the cache, unless another install replaced it already:
 * the next install extracts it anew.  The images linked from it share
 * whatever changed.  */
static void
discard_tree (struct sr_store *s, const char *digest, int treefd, uint64_t unshared)
{
  _cleanup_free_ char *rel = sr_xasprintf ("layers/%s", digest + 7);
  _cleanup_free_ char *tree = sr_xasprintf ("layers/%s/tree", digest + 7);
  _cleanup_free_ char *tmp = sr_xasprintf ("tmp/" EXTRACT_PREFIX "rm-layer-%s", digest + 7);
  _cleanup_close_ int lockfd = sr_store_lock_ (s, NULL);
  struct stat ours, there;

  if (s->warn)
    {
      _cleanup_free_ char *msg = sr_xasprintf (
          "layer %s: %llu file(s) of its extraction in the store (%s/%s) missing or changed; "
          "they were written from the layer, and the extraction is dropped (images installed "
          "from it may share the damage: remove and import them again)",
          digest, (unsigned long long) unshared, s->dir, rel);
      s->warn (msg, s->warn_data);
    }
  if (lockfd < 0 || fstat (treefd, &ours) < 0
      || fstatat (s->dirfd, tree, &there, AT_SYMLINK_NOFOLLOW) < 0 || ours.st_ino != there.st_ino
      || ours.st_dev != there.st_dev)
    return;
  (void) sr_rm_rf_at (s->dirfd, tmp, NULL);
  if (renameat (s->dirfd, rel, s->dirfd, tmp) == 0)
    (void) sr_rm_rf_at (s->dirfd, tmp, NULL);
}

/* Applies m's layers into the rootfs rootfd, linking their files from
 * the cache; layers[] gets the cache entries, held until the image is in
 * place.  */
static int
extract_layers (struct sr_store *s, const struct sr_oci_manifest *m, int rootfd,
                struct cached_layer *layers, sr_error_t *err)
{
  /* The caps are the image's: one budget across its layers.  */
  struct sr_layer_budget budget = { .max_bytes = s->max_image_size,
                                    .max_entries = s->max_image_entries };

  for (size_t i = 0; i < m->n_layers; i++)
    {
      _cleanup_free_ char *path = sr_store_blob_path (s, m->layers[i].digest);
      struct extract_progress ep = {
        .s = s, .digest = m->layers[i].digest, .layer = i + 1, .n_layers = m->n_layers,
        .total = m->layers[i].size,
      };
      struct sr_layer_options o = {
        .chown = geteuid () == 0, .warn = layer_warn, .progress = layer_progress,
        .userdata = &ep, .budget = &budget,
      };
      struct sr_layer_stats stats;

      int r = open_cached_layer (s, m, i, &budget, &layers[i], err);

      if (r == 0)
        {
          sr_store_report_ (s, SR_PROGRESS_EXTRACT, ep.digest, ep.layer, ep.n_layers, 0,
                            ep.total);
          r = sr_layer_link (rootfd, path, layers[i].treefd, &o, &stats, err);
        }
      if (r < 0)
        {
          /* Not the layer's fault: say which file system to make room on.  */
          if (err && *err && ((*err)->errnum == ENOSPC || (*err)->errnum == EDQUOT))
            return sr_error_wrap (err, "layer %zu of %zu (%s): the file system of the image "
                                  "store %s is full", i + 1, m->n_layers, ep.digest, s->dir);
          return sr_error_wrap (err, "layer %zu of %zu (%s)", i + 1, m->n_layers, ep.digest);
        }
      /* A fresh tree is what the layer makes of it.  */
      if (!layers[i].fresh && stats.unshared > layers[i].unlinkable)
        discard_tree (s, ep.digest, layers[i].treefd, stats.unshared - layers[i].unlinkable);
      if (stats.skipped && s->warn)
        {
          _cleanup_free_ char *msg = sr_xasprintf (
              "layer %zu: skipped %llu device nodes or sockets", i + 1,
              (unsigned long long) stats.skipped);
          s->warn (msg, s->warn_data);
        }
      sr_store_report_ (s, SR_PROGRESS_DONE, ep.digest, ep.layer, ep.n_layers, ep.total, ep.total);
    }
  for (size_t i = 0; i < SR_ARRAY_SIZE (runtime_dirs); i++)
    if (sr_layer_mkdir_in_root (rootfd, runtime_dirs[i], err) < 0)
      return sr_error_wrap (err, "the runtime's mount point /%s", runtime_dirs[i]);
  return 0;
}

static int
write_image_json (int dirfd, const struct sr_oci_manifest *m, const char *id,
                  const char *manifest_digest, const char *source, sr_error_t *err)
{
  _cleanup_json_ cJSON *o = cJSON_CreateObject ();
  _cleanup_free_ char *text = NULL;
  _cleanup_close_ int fd = -1;
  cJSON *layers = cJSON_AddArrayToObject (o, "layers");
  uint64_t size = 0;

  cJSON_AddStringToObject (o, "id", id);
  cJSON_AddStringToObject (o, "manifest", manifest_digest);
  cJSON_AddStringToObject (o, "config", m->config.digest);
  cJSON_AddStringToObject (o, "source", source ? source : "");
  cJSON_AddNumberToObject (o, "created", (double) time (NULL));
  for (size_t i = 0; i < m->n_layers; i++)
    {
      cJSON_AddItemToArray (layers, cJSON_CreateString (m->layers[i].digest));
      size += m->layers[i].size;
    }
  cJSON_AddNumberToObject (o, "size", (double) size);
  text = cJSON_Print (o);
  fd = openat (dirfd, "image.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 || sr_write_all (fd, text, strlen (text)) < 0 || fdatasync (fd) < 0)
    return sr_error_set (err, errno, "write image.json");
  return 0;
}

int
sr_store_install (struct sr_store *s, const char *manifest_digest, const char *name,
                  const char *source, char **ret_id, sr_error_t *err)
{
  _cleanup_free_ char *text = NULL, *tmp = NULL, *dest = NULL;
  _cleanup_close_ int lockfd = -1, tmpfd = -1, rootfd = -1;
  struct sr_oci_manifest m = { 0 };
  struct cached_layer *layers = NULL;
  char id[SR_DIGEST_HEX_LEN + 1];
  size_t len;
  int r = -1;

  if (name && (*name == '\0' || strlen (name) > 255))
    return sr_error_set (err, 0, "image name '%s': empty or longer than 255 bytes", name);
  if (sr_store_read_blob (s, manifest_digest, SR_MAX_IMAGE_DOCUMENT, &text, &len, err) < 0)
    return -1;
  if (sr_oci_parse_manifest (text, len, &m, err) < 0)
    return sr_error_wrap (err, "manifest %s", manifest_digest);
  if (!sr_store_has_blob (s, m.config.digest))
    {
      sr_error_set (err, 0, "image config %s is not in the store", m.config.digest);
      goto out;
    }
  for (size_t i = 0; i < m.n_layers; i++)
    if (!sr_store_has_blob (s, m.layers[i].digest))
      {
        sr_error_set (err, 0, "layer %s is not in the store", m.layers[i].digest);
        goto out;
      }
  memcpy (id, m.config.digest + 7, sizeof id);
  layers = sr_xcalloc (m.n_layers + 1, sizeof *layers);
  for (size_t i = 0; i < m.n_layers; i++)
    layers[i].lockfd = layers[i].treefd = -1;

  lockfd = sr_store_lock_ (s, err);
  if (lockfd < 0)
    goto out;
  if (!sr_store_image_exists_ (s, id))
    {
      /* Extraction runs without the store lock, in a directory of its own
       * that its lock marks as alive.  */
      close (TAKE_FD (lockfd));
      tmp = sr_xasprintf ("%s/tmp/" EXTRACT_PREFIX "%.12s-XXXXXX", s->dir, id);
      if (sr_workdir_make (tmp, &tmpfd, err) < 0)
        goto out;
      if (fchmod (tmpfd, 0755) < 0 || mkdirat (tmpfd, "rootfs", 0755) < 0)
        {
          sr_error_set (err, errno, "prepare %s", tmp);
          goto out;
        }
      rootfd = openat (tmpfd, "rootfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (rootfd < 0)
        {
          sr_error_set (err, errno, "open %s/rootfs", tmp);
          goto out;
        }
      if (extract_layers (s, &m, rootfd, layers, err) < 0
          || write_image_json (tmpfd, &m, id, manifest_digest, source, err) < 0)
        goto out;
      (void) fchmod (rootfd, 0755);

      lockfd = sr_store_lock_ (s, err);
      if (lockfd < 0)
        goto out;
      dest = sr_xasprintf ("%s/images/%s", s->dir, id);
      /* Someone else may have installed the same image meanwhile.  */
      if (!sr_store_image_exists_ (s, id) && rename (tmp, dest) < 0)
        {
          sr_error_set (err, errno, "rename %s to %s", tmp, dest);
          goto out;
        }
      /* Readers of this store as a read-only one (other users) cannot
       * make the lock file that a run holds shared: it comes with the
       * image.  */
      {
        _cleanup_free_ char *lock = sr_xasprintf ("images/%s.lock", id);
        int fd = openat (s->dirfd, lock, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

        if (fd >= 0)
          close (fd);
      }
    }
  if (sr_store_set_name_ (s, name, id, err) < 0)
    goto out;
  if (ret_id)
    *ret_id = sr_xstrdup (id);
  r = 0;

out:
  if (tmp && access (tmp, F_OK) == 0)
    (void) sr_rm_rf_at (AT_FDCWD, tmp, NULL);
  for (size_t i = 0; layers && i < m.n_layers; i++)
    cached_layer_close (&layers[i]);
  free (layers);
  sr_oci_manifest_done (&m);
  return r;
}

