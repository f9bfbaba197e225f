#include "config.h"

#include "image/import.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/json.h"
#include "common/defaults.h"
#include "common/util.h"
#include "common/workdir.h"
#include "image/layer.h"
#include "image/oci.h"

#define MAX_INDEX_DEPTH 4

/* Where the image's files are: a directory, open as srcfd; every name in
 * it is resolved inside it.  */
struct source
{
  const char *path; /* for messages */
  int fd;
};

static int
open_in (const struct source *src, const char *name, sr_error_t *err)
{
  int fd = sr_openat2 (src->fd, name, O_RDONLY,
                       RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);

  if (fd < 0)
    return sr_error_set (err, errno, "%s: %s", src->path, name);
  return fd;
}

static int
read_in (const struct source *src, const char *name, char **ret, size_t *ret_len,
         sr_error_t *err)
{
  _cleanup_close_ int fd = open_in (src, name, err);
  _cleanup_free_ char *buf = NULL;
  size_t len = 0, cap = 0;

  if (fd < 0)
    return -1;
  for (;;)
    {
      ssize_t n;

      if (len + 4096 + 1 > cap)
        {
          cap = cap ? 2 * cap : 16384;
          if (cap > SR_MAX_IMAGE_DOCUMENT + 1)
            return sr_error_set (err, EFBIG, "%s: %s is larger than a document may be",
                                 src->path, name);
          buf = sr_xrealloc (buf, cap);
        }
      n = read (fd, buf + len, cap - len - 1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return sr_error_set (err, errno, "read %s: %s", src->path, name);
      if (n == 0)
        break;
      len += (size_t) n;
    }
  buf[len] = '\0';
  *ret = TAKE_PTR (buf);
  *ret_len = len;
  return 0;
}

static char *
blob_name (const char *digest)
{
  return sr_xasprintf ("blobs/sha256/%s", digest + 7);
}

/* Copies the blob of descriptor d from the layout into the store.  */
static int
copy_blob (struct sr_store *s, const struct source *src, const char *digest, uint64_t size,
           sr_error_t *err)
{
  _cleanup_free_ char *name = blob_name (digest);
  _cleanup_close_ int fd = -1;

  if (sr_store_has_blob (s, digest))
    return 0;
  fd = open_in (src, name, err);
  if (fd < 0)
    return -1;
  return sr_store_put_blob_fd (s, fd, digest, size, err);
}

/* Both readers bring every blob of the image into the store and give the
 * digest of its manifest and the name or tag the archive carries.  */
static int
import_oci (struct sr_store *s, const struct source *src, char ret_manifest[SR_DIGEST_LEN + 1],
            char **ret_ref_name, sr_error_t *err)
{
  _cleanup_free_ char *text = NULL;
  struct sr_descriptor chosen = { 0 };
  size_t len;
  int r = -1;

  if (read_in (src, "index.json", &text, &len, err) < 0)
    return -1;
  for (int depth = 0;; depth++)
    {
      struct sr_oci_index idx = { 0 };
      const struct sr_descriptor *d;

      if (depth == MAX_INDEX_DEPTH)
        return sr_error_set (err, 0, "%s: indexes nested deeper than %d", src->path,
                             MAX_INDEX_DEPTH);
      if (sr_oci_parse_index (text, len, &idx, err) < 0)
        return sr_error_wrap (err, "%s", src->path);
      d = sr_oci_index_select (&idx, err);
      if (d == NULL)
        {
          sr_oci_index_done (&idx);
          return sr_error_wrap (err, "%s", src->path);
        }
      memcpy (chosen.digest, d->digest, sizeof chosen.digest);
      chosen.size = d->size;
      if (depth == 0 && d->ref_name && *ret_ref_name == NULL)
        *ret_ref_name = sr_xstrdup (d->ref_name);
      sr_oci_index_done (&idx);

      free (text);
      text = NULL;
      {
        _cleanup_free_ char *bn = blob_name (chosen.digest);

        if (read_in (src, bn, &text, &len, err) < 0)
          return -1;
      }
      if (len != chosen.size)
        return sr_error_set (err, 0, "%s: blob %s: %zu bytes where the index says %llu",
                             src->path, chosen.digest, len, (unsigned long long) chosen.size);
      if (sr_store_put_blob_buf (s, text, len, chosen.digest, err) < 0)
        return sr_error_wrap (err, "%s", src->path);
      if (sr_oci_sniff (text, len) != SR_OCI_INDEX)
        break;
    }

  {
    struct sr_oci_manifest m = { 0 };

    if (sr_oci_parse_manifest (text, len, &m, err) < 0)
      return sr_error_wrap (err, "%s: manifest %s", src->path, chosen.digest);
    if (copy_blob (s, src, m.config.digest, m.config.size, err) < 0)
      goto out;
    for (size_t i = 0; i < m.n_layers; i++)
      if (copy_blob (s, src, m.layers[i].digest, m.layers[i].size, err) < 0)
        goto out;
    memcpy (ret_manifest, chosen.digest, SR_DIGEST_LEN + 1);
    r = 0;
  out:
    sr_oci_manifest_done (&m);
  }
  return r;
}

/* The sha256 of a file of the archive.  */
static int
hash_in (const struct source *src, const char *name, char out[SR_DIGEST_LEN + 1],
         uint64_t *ret_size, sr_error_t *err)
{
  _cleanup_close_ int fd = open_in (src, name, err);
  struct sr_sha256 *h;
  char buf[1 << 16];
  uint64_t size = 0;
  ssize_t n;

  if (fd < 0)
    return -1;
  h = sr_sha256_new ();
  while ((n = read (fd, buf, sizeof buf)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          sr_sha256_free (h);
          return sr_error_set (err, errno, "read %s: %s", src->path, name);
        }
      sr_sha256_update (h, buf, (size_t) n);
      size += (uint64_t) n;
    }
  sr_sha256_finish (h, out);
  *ret_size = size;
  return 0;
}

/* The digest a docker archive file name promises: blobs/sha256/HEX or
 * HEX.json; NULL for legacy names that promise nothing.  */
static const char *
promised_hex (const char *name)
{
  const char *base = strrchr (name, '/');
  size_t n;

  base = base ? base + 1 : name;
  n = strlen (base);
  if (n == SR_DIGEST_HEX_LEN || (n == SR_DIGEST_HEX_LEN + 5 && strcmp (base + 64, ".json") == 0))
    {
      for (size_t i = 0; i < SR_DIGEST_HEX_LEN; i++)
        if (!((base[i] >= '0' && base[i] <= '9') || (base[i] >= 'a' && base[i] <= 'f')))
          return NULL;
      return base;
    }
  return NULL;
}

static int
import_docker (struct sr_store *s, const struct source *src,
               char manifest_digest[SR_DIGEST_LEN + 1], char **ret_tag, sr_error_t *err)
{
  _cleanup_free_ char *text = NULL, *config_text = NULL, *manifest_text = NULL;
  _cleanup_json_ cJSON *root = NULL, *manifest = NULL;
  const cJSON *entry, *config, *layers, *tags, *layer, *diff_ids = NULL;
  char config_digest[SR_DIGEST_LEN + 1];
  cJSON *mlayers;
  size_t len, config_len, i = 0;
  uint64_t size;

  if (read_in (src, "manifest.json", &text, &len, err) < 0)
    return -1;
  root = cJSON_ParseWithLength (text, len);
  if (!cJSON_IsArray (root) || cJSON_GetArraySize (root) == 0)
    return sr_error_set (err, 0, "%s: manifest.json is not a non-empty array", src->path);
  entry = cJSON_GetArrayItem (root, 0);
  config = cJSON_GetObjectItemCaseSensitive (entry, "Config");
  layers = cJSON_GetObjectItemCaseSensitive (entry, "Layers");
  tags = cJSON_GetObjectItemCaseSensitive (entry, "RepoTags");
  if (!cJSON_IsString (config) || !cJSON_IsArray (layers))
    return sr_error_set (err, 0, "%s: manifest.json: an entry without Config or Layers",
                         src->path);
  if (cJSON_IsArray (tags) && cJSON_IsString (cJSON_GetArrayItem (tags, 0)))
    *ret_tag = sr_xstrdup (cJSON_GetArrayItem (tags, 0)->valuestring);

  if (read_in (src, config->valuestring, &config_text, &config_len, err) < 0)
    return -1;
  sr_sha256_buf (config_text, config_len, config_digest);
  if (promised_hex (config->valuestring)
      && strncmp (promised_hex (config->valuestring), config_digest + 7, SR_DIGEST_HEX_LEN) != 0)
    return sr_error_set (err, 0, "%s: %s: digest mismatch: the content hashes to %s", src->path,
                         config->valuestring, config_digest);
  {
    _cleanup_json_ cJSON *c = cJSON_ParseWithLength (config_text, config_len);
    const cJSON *rootfs = cJSON_GetObjectItemCaseSensitive (c, "rootfs");

    diff_ids = cJSON_Duplicate (cJSON_GetObjectItemCaseSensitive (rootfs, "diff_ids"), 1);
  }
  if (!cJSON_IsArray (diff_ids) || cJSON_GetArraySize (diff_ids) != cJSON_GetArraySize (layers))
    {
      cJSON_Delete ((cJSON *) diff_ids);
      return sr_error_set (err, 0, "%s: the config's rootfs.diff_ids do not match the %d layers",
                           src->path, cJSON_GetArraySize (layers));
    }
  if (sr_store_put_blob_buf (s, config_text, config_len, config_digest, err) < 0)
    {
      cJSON_Delete ((cJSON *) diff_ids);
      return -1;
    }

  /* A Docker v2 schema 2 manifest for what the archive holds.  */
  manifest = cJSON_CreateObject ();
  cJSON_AddNumberToObject (manifest, "schemaVersion", 2);
  cJSON_AddStringToObject (manifest, "mediaType", SR_MT_DOCKER_MANIFEST);
  {
    cJSON *c = cJSON_AddObjectToObject (manifest, "config");

    cJSON_AddStringToObject (c, "mediaType", SR_MT_DOCKER_CONFIG);
    cJSON_AddStringToObject (c, "digest", config_digest);
    cJSON_AddNumberToObject (c, "size", (double) config_len);
  }
  mlayers = cJSON_AddArrayToObject (manifest, "layers");
  cJSON_ArrayForEach (layer, layers)
    {
      char digest[SR_DIGEST_LEN + 1];
      const cJSON *diff_id = cJSON_GetArrayItem (diff_ids, (int) i++);
      const char *promised;
      _cleanup_close_ int fd = -1;
      cJSON *d;

      if (!cJSON_IsString (layer))
        {
          cJSON_Delete ((cJSON *) diff_ids);
          return sr_error_set (err, 0, "%s: manifest.json: a layer that is not a file name",
                               src->path);
        }
      if (hash_in (src, layer->valuestring, digest, &size, err) < 0)
        {
          cJSON_Delete ((cJSON *) diff_ids);
          return -1;
        }
      promised = promised_hex (layer->valuestring);
      /* Docker archives hold layers uncompressed: each must hash to its
       * diff_id, or to the digest its name carries.  */
      if ((promised && strncmp (promised, digest + 7, SR_DIGEST_HEX_LEN) != 0)
          || (!promised
              && (!cJSON_IsString (diff_id) || strcmp (diff_id->valuestring, digest) != 0)))
        {
          sr_error_set (err, 0, "%s: layer %s: digest mismatch: the content hashes to %s",
                        src->path, layer->valuestring, digest);
          cJSON_Delete ((cJSON *) diff_ids);
          return -1;
        }
      fd = open_in (src, layer->valuestring, err);
      if (fd < 0 || sr_store_put_blob_fd (s, fd, digest, size, err) < 0)
        {
          cJSON_Delete ((cJSON *) diff_ids);
          return -1;
        }
      d = cJSON_CreateObject ();
      cJSON_AddStringToObject (d, "mediaType", "application/vnd.docker.image.rootfs.diff.tar");
      cJSON_AddStringToObject (d, "digest", digest);
      cJSON_AddNumberToObject (d, "size", (double) size);
      cJSON_AddItemToArray (mlayers, d);
    }
  cJSON_Delete ((cJSON *) diff_ids);

  manifest_text = cJSON_PrintUnformatted (manifest);
  sr_sha256_buf (manifest_text, strlen (manifest_text), manifest_digest);
  return sr_store_put_blob_buf (s, manifest_text, strlen (manifest_text), manifest_digest, err);
}

/* A tar of a layout or archive is unpacked into the store's tmp/ first,
 * with the same safe extraction as layers.  */
static int
unpack (struct sr_store *s, const char *path, char **ret_dir, int *ret_lock, sr_error_t *err)
{
  _cleanup_free_ char *dir = sr_xasprintf ("%s/tmp/x-import-XXXXXX", sr_store_dir (s));
  struct sr_layer_budget budget = { 0 };
  struct sr_layer_options o = { .chown = false, .budget = &budget };
  struct sr_layer_stats stats;
  _cleanup_close_ int fd = -1;

  /* The archive holds the image's layers (compressed or not), so the
   * image's caps bound it too.  */
  sr_store_get_caps (s, &budget.max_bytes, &budget.max_entries);

  if (sr_workdir_make (dir, &fd, err) < 0)
    return -1;
  if (sr_layer_apply (fd, path, &o, &stats, err) < 0)
    {
      (void) sr_rm_rf_at (AT_FDCWD, dir, NULL);
      return sr_error_wrap (err, "unpack %s", path);
    }
  *ret_dir = TAKE_PTR (dir);
  *ret_lock = TAKE_FD (fd);
  return 0;
}

/* python-a53f56668a98/ -> python-a53f56668a98; img.tar.gz -> img.  */
static char *
base_name (const char *path)
{
  _cleanup_free_ char *copy = sr_xstrdup (path);
  char *b = basename (copy), *dot;
  size_t n = strlen (b);

  while (n > 1 && b[n - 1] == '/')
    b[--n] = '\0';
  for (const char *ext = ".gz\0.zst\0.xz\0.tgz\0.tar\0"; *ext; ext += strlen (ext) + 1)
    if ((dot = strrchr (b, '.')) && strcmp (dot, ext) == 0)
      *dot = '\0';
  return sr_xstrdup (b);
}

int
sr_image_import (struct sr_store *s, const char *path, const char *name, char **ret_id,
                 char **ret_name, sr_error_t *err)
{
  _cleanup_free_ char *unpacked = NULL, *carried = NULL, *chosen = NULL;
  _cleanup_close_ int lockfd = -1, dirfd = -1;
  struct source src = { .path = path, .fd = -1 };
  char manifest[SR_DIGEST_LEN + 1];
  struct stat sb;
  int r = -1;

  if (stat (path, &sb) < 0)
    return sr_error_set (err, errno, "import %s", path);
  if (S_ISREG (sb.st_mode))
    {
      if (unpack (s, path, &unpacked, &lockfd, err) < 0)
        return -1;
      dirfd = open (unpacked, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
  else if (S_ISDIR (sb.st_mode))
    dirfd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  else
    return sr_error_set (err, 0, "import %s: neither a directory nor an archive", path);
  if (dirfd < 0)
    {
      sr_error_set (err, errno, "import %s", path);
      goto out;
    }
  src.fd = dirfd;

  if (faccessat (dirfd, "index.json", F_OK, 0) == 0)
    {
      if (import_oci (s, &src, manifest, &carried, err) < 0)
        goto out;
      /* The ref.name of an OCI layout is mostly a tag ("latest"): the
       * image takes the file's name, with the tag unless it is latest.  */
      if (name)
        chosen = sr_xstrdup (name);
      else if (carried && strchr (carried, '/'))
        chosen = TAKE_PTR (carried);
      else
        {
          _cleanup_free_ char *b = base_name (path);

          chosen = carried && strcmp (carried, "latest") != 0 ? sr_xasprintf ("%s:%s", b, carried)
                                                               : TAKE_PTR (b);
        }
    }
  else if (faccessat (dirfd, "manifest.json", F_OK, 0) == 0)
    {
      if (import_docker (s, &src, manifest, &carried, err) < 0)
        goto out;
      chosen = name ? sr_xstrdup (name) : carried ? TAKE_PTR (carried) : base_name (path);
    }
  else
    {
      sr_error_set (err, 0,
                    "import %s: neither an OCI image layout (no index.json) nor a docker-save "
                    "archive (no manifest.json)",
                    path);
      goto out;
    }
  r = sr_store_install (s, manifest, chosen, path, ret_id, err);
  if (r < 0)
    sr_error_wrap (err, "import %s", path);
  if (r == 0 && ret_name)
    *ret_name = TAKE_PTR (chosen);

out:
  if (unpacked)
    (void) sr_rm_rf_at (AT_FDCWD, unpacked, NULL);
  return r;
}
