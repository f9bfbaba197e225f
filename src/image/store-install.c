#include "config.h"

/* Installing an image in the store: its layers applied into a fresh
 * rootfs, renamed into place.  Apart from the rest of the store because
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

static int
extract_layers (struct sr_store *s, const struct sr_oci_manifest *m, int rootfd,
                sr_error_t *err)
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

      sr_store_report_ (s, SR_PROGRESS_EXTRACT, ep.digest, ep.layer, ep.n_layers, 0, ep.total);
      if (sr_layer_apply (rootfd, path, &o, &stats, err) < 0)
        {
          /* Not the layer's fault: say which file system to make room on.  */
          if (err && *err && ((*err)->errnum == ENOSPC || (*err)->errnum == EDQUOT))
            return sr_error_wrap (err, "layer %zu of %zu (%s): the file system of the image "
                                  "store %s is full", i + 1, m->n_layers, ep.digest, s->dir);
          return sr_error_wrap (err, "layer %zu of %zu (%s)", i + 1, m->n_layers, ep.digest);
        }
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
      if (extract_layers (s, &m, rootfd, err) < 0
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
  sr_oci_manifest_done (&m);
  return r;
}

