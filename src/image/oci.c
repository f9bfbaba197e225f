#include "config.h"

#include "image/oci.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "common/json.h"
#include "common/util.h"

enum sr_oci_kind
sr_oci_kind_of (const char *media_type)
{
  if (media_type == NULL)
    return SR_OCI_UNKNOWN;
  if (strcmp (media_type, SR_MT_OCI_INDEX) == 0 || strcmp (media_type, SR_MT_DOCKER_LIST) == 0)
    return SR_OCI_INDEX;
  if (strcmp (media_type, SR_MT_OCI_MANIFEST) == 0
      || strcmp (media_type, SR_MT_DOCKER_MANIFEST) == 0)
    return SR_OCI_MANIFEST;
  return SR_OCI_UNKNOWN;
}

bool
sr_oci_layer_type_ok (const char *media_type)
{
  static const char *const ok[] = {
    "application/vnd.oci.image.layer.v1.tar",
    "application/vnd.oci.image.layer.v1.tar+gzip",
    "application/vnd.oci.image.layer.v1.tar+zstd",
    "application/vnd.oci.image.layer.nondistributable.v1.tar",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip",
    "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd",
    "application/vnd.docker.image.rootfs.diff.tar",
    "application/vnd.docker.image.rootfs.diff.tar.gzip",
    "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip",
  };

  if (media_type == NULL)
    return false;
  for (size_t i = 0; i < SR_ARRAY_SIZE (ok); i++)
    if (strcmp (media_type, ok[i]) == 0)
      return true;
  return false;
}

static cJSON *
parse_object (const char *json, size_t len, const char *what, sr_error_t *err)
{
  cJSON *root = cJSON_ParseWithLength (json, len);

  if (root == NULL)
    {
      sr_error_set (err, 0, "%s: not valid JSON", what);
      return NULL;
    }
  if (!cJSON_IsObject (root))
    {
      cJSON_Delete (root);
      sr_error_set (err, 0, "%s: not a JSON object", what);
      return NULL;
    }
  return root;
}

/* A string member, copied; NULL when absent.  A member of another type
 * is an error.  */
static int
opt_string (const cJSON *o, const char *key, const char *what, char **ret, sr_error_t *err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);

  *ret = NULL;
  if (v == NULL || cJSON_IsNull (v))
    return 0;
  if (!cJSON_IsString (v))
    return sr_error_set (err, 0, "%s: %s is not a string", what, key);
  *ret = sr_xstrdup (v->valuestring);
  return 0;
}

static int
opt_strv (const cJSON *o, const char *key, const char *what, char ***ret, sr_error_t *err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key), *e;
  char **strv = NULL;

  *ret = NULL;
  if (v == NULL || cJSON_IsNull (v))
    return 0;
  if (!cJSON_IsArray (v))
    return sr_error_set (err, 0, "%s: %s is not an array", what, key);
  strv = sr_xcalloc (1, sizeof *strv);
  cJSON_ArrayForEach (e, v)
    {
      if (!cJSON_IsString (e))
        {
          sr_strv_free (strv);
          return sr_error_set (err, 0, "%s: %s holds a value that is not a string", what, key);
        }
      sr_strv_push (&strv, e->valuestring);
    }
  *ret = strv;
  return 0;
}

static void
descriptor_done (struct sr_descriptor *d)
{
  free (d->media_type);
  free (d->os);
  free (d->architecture);
  free (d->variant);
  free (d->ref_name);
  memset (d, 0, sizeof *d);
}

static int
parse_descriptor (const cJSON *o, const char *what, struct sr_descriptor *d, sr_error_t *err)
{
  const cJSON *digest, *size, *platform, *annotations;

  memset (d, 0, sizeof *d);
  if (!cJSON_IsObject (o))
    return sr_error_set (err, 0, "%s: not an object", what);
  if (opt_string (o, "mediaType", what, &d->media_type, err) < 0)
    return -1;
  digest = cJSON_GetObjectItemCaseSensitive (o, "digest");
  if (!cJSON_IsString (digest))
    return sr_error_set (err, 0, "%s: no digest", what);
  if (!sr_digest_valid (digest->valuestring))
    return sr_error_set (err, 0, "%s: digest '%s' is not sha256: and 64 hex digits", what,
                         digest->valuestring);
  memcpy (d->digest, digest->valuestring, SR_DIGEST_LEN + 1);
  size = cJSON_GetObjectItemCaseSensitive (o, "size");
  if (!cJSON_IsNumber (size) || size->valuedouble < 0 || size->valuedouble > 9.0e15)
    return sr_error_set (err, 0, "%s: size is missing or not a byte count", what);
  d->size = (uint64_t) size->valuedouble;

  platform = cJSON_GetObjectItemCaseSensitive (o, "platform");
  if (cJSON_IsObject (platform))
    {
      if (opt_string (platform, "os", what, &d->os, err) < 0
          || opt_string (platform, "architecture", what, &d->architecture, err) < 0
          || opt_string (platform, "variant", what, &d->variant, err) < 0)
        return -1;
    }
  annotations = cJSON_GetObjectItemCaseSensitive (o, "annotations");
  if (cJSON_IsObject (annotations))
    if (opt_string (annotations, "org.opencontainers.image.ref.name", what, &d->ref_name, err)
        < 0)
      return -1;
  return 0;
}

enum sr_oci_kind
sr_oci_sniff (const char *json, size_t len)
{
  _cleanup_json_ cJSON *root = cJSON_ParseWithLength (json, len);
  const cJSON *mt;

  if (!cJSON_IsObject (root))
    return SR_OCI_UNKNOWN;
  mt = cJSON_GetObjectItemCaseSensitive (root, "mediaType");
  if (cJSON_IsString (mt) && sr_oci_kind_of (mt->valuestring) != SR_OCI_UNKNOWN)
    return sr_oci_kind_of (mt->valuestring);
  /* The mediaType member is optional in OCI documents.  */
  if (cJSON_IsArray (cJSON_GetObjectItemCaseSensitive (root, "manifests")))
    return SR_OCI_INDEX;
  if (cJSON_IsObject (cJSON_GetObjectItemCaseSensitive (root, "config"))
      && cJSON_IsArray (cJSON_GetObjectItemCaseSensitive (root, "layers")))
    return SR_OCI_MANIFEST;
  return SR_OCI_UNKNOWN;
}

static int
check_schema_version (const cJSON *root, const char *what, sr_error_t *err)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (root, "schemaVersion");

  if (!cJSON_IsNumber (v) || v->valuedouble != 2)
    return sr_error_set (err, 0, "%s: schemaVersion is not 2 (schema 1 manifests are not supported)",
                         what);
  return 0;
}

int
sr_oci_parse_index (const char *json, size_t len, struct sr_oci_index *ret, sr_error_t *err)
{
  _cleanup_json_ cJSON *root = parse_object (json, len, "image index", err);
  const cJSON *manifests, *e;
  struct sr_oci_index idx = { 0 };
  size_t i = 0;

  if (root == NULL)
    return -1;
  if (check_schema_version (root, "image index", err) < 0)
    return -1;
  manifests = cJSON_GetObjectItemCaseSensitive (root, "manifests");
  if (!cJSON_IsArray (manifests))
    return sr_error_set (err, 0, "image index: no manifests array");
  idx.n_manifests = (size_t) cJSON_GetArraySize (manifests);
  idx.manifests = sr_xcalloc (idx.n_manifests + 1, sizeof *idx.manifests);
  cJSON_ArrayForEach (e, manifests)
    {
      char what[64];

      snprintf (what, sizeof what, "image index: manifests[%zu]", i);
      if (parse_descriptor (e, what, &idx.manifests[i++], err) < 0)
        {
          sr_oci_index_done (&idx);
          return -1;
        }
    }
  *ret = idx;
  return 0;
}

int
sr_oci_parse_manifest (const char *json, size_t len, struct sr_oci_manifest *ret,
                       sr_error_t *err)
{
  _cleanup_json_ cJSON *root = parse_object (json, len, "manifest", err);
  const cJSON *config, *layers, *e;
  struct sr_oci_manifest m = { 0 };
  size_t i = 0;

  if (root == NULL)
    return -1;
  if (check_schema_version (root, "manifest", err) < 0)
    return -1;
  if (opt_string (root, "mediaType", "manifest", &m.media_type, err) < 0)
    return -1;
  if (m.media_type && sr_oci_kind_of (m.media_type) != SR_OCI_MANIFEST)
    {
      sr_error_set (err, 0, "manifest: media type %s is not an image manifest", m.media_type);
      goto fail;
    }
  config = cJSON_GetObjectItemCaseSensitive (root, "config");
  if (config == NULL)
    {
      sr_error_set (err, 0, "manifest: no config");
      goto fail;
    }
  if (parse_descriptor (config, "manifest: config", &m.config, err) < 0)
    goto fail;
  layers = cJSON_GetObjectItemCaseSensitive (root, "layers");
  if (!cJSON_IsArray (layers))
    {
      sr_error_set (err, 0, "manifest: no layers array");
      goto fail;
    }
  m.n_layers = (size_t) cJSON_GetArraySize (layers);
  m.layers = sr_xcalloc (m.n_layers + 1, sizeof *m.layers);
  cJSON_ArrayForEach (e, layers)
    {
      char what[64];

      snprintf (what, sizeof what, "manifest: layers[%zu]", i);
      if (parse_descriptor (e, what, &m.layers[i++], err) < 0)
        goto fail;
      if (!sr_oci_layer_type_ok (m.layers[i - 1].media_type))
        {
          sr_error_set (err, 0, "%s: media type %s is not a layer type we can apply", what,
                        m.layers[i - 1].media_type ? m.layers[i - 1].media_type : "(none)");
          goto fail;
        }
    }
  *ret = m;
  return 0;

fail:
  sr_oci_manifest_done (&m);
  return -1;
}

int
sr_oci_parse_config (const char *json, size_t len, struct sr_oci_config *ret, sr_error_t *err)
{
  _cleanup_json_ cJSON *root = parse_object (json, len, "image config", err);
  const cJSON *config, *labels, *rootfs, *diff_ids;
  struct sr_oci_config c = { 0 };

  if (root == NULL)
    return -1;
  if (opt_string (root, "os", "image config", &c.os, err) < 0
      || opt_string (root, "architecture", "image config", &c.architecture, err) < 0)
    goto fail;
  config = cJSON_GetObjectItemCaseSensitive (root, "config");
  if (cJSON_IsObject (config))
    {
      if (opt_strv (config, "Env", "image config", &c.env, err) < 0
          || opt_strv (config, "Entrypoint", "image config", &c.entrypoint, err) < 0
          || opt_strv (config, "Cmd", "image config", &c.cmd, err) < 0
          || opt_string (config, "WorkingDir", "image config", &c.working_dir, err) < 0
          || opt_string (config, "User", "image config", &c.user, err) < 0)
        goto fail;
      labels = cJSON_GetObjectItemCaseSensitive (config, "Labels");
      if (cJSON_IsObject (labels)
          && opt_string (labels, "org.opencontainers.image.version", "image config label",
                         &c.version, err) < 0)
        goto fail;
    }
  rootfs = cJSON_GetObjectItemCaseSensitive (root, "rootfs");
  diff_ids = cJSON_IsObject (rootfs) ? cJSON_GetObjectItemCaseSensitive (rootfs, "diff_ids")
                                     : NULL;
  if (cJSON_IsArray (diff_ids))
    c.n_diff_ids = (size_t) cJSON_GetArraySize (diff_ids);
  *ret = c;
  return 0;

fail:
  sr_oci_config_done (&c);
  return -1;
}

void
sr_oci_index_done (struct sr_oci_index *idx)
{
  for (size_t i = 0; idx->manifests && i < idx->n_manifests; i++)
    descriptor_done (&idx->manifests[i]);
  free (idx->manifests);
  memset (idx, 0, sizeof *idx);
}

void
sr_oci_manifest_done (struct sr_oci_manifest *m)
{
  free (m->media_type);
  descriptor_done (&m->config);
  for (size_t i = 0; m->layers && i < m->n_layers; i++)
    descriptor_done (&m->layers[i]);
  free (m->layers);
  memset (m, 0, sizeof *m);
}

void
sr_oci_config_done (struct sr_oci_config *c)
{
  free (c->os);
  free (c->architecture);
  sr_strv_free (c->env);
  sr_strv_free (c->entrypoint);
  sr_strv_free (c->cmd);
  free (c->version);
  free (c->working_dir);
  free (c->user);
  memset (c, 0, sizeof *c);
}

const char *
sr_oci_host_arch (void)
{
  static const struct
  {
    const char *machine, *oci;
  } names[] = {
    { "x86_64", "amd64" },   { "aarch64", "arm64" }, { "armv7l", "arm" },
    { "i686", "386" },       { "i386", "386" },      { "ppc64le", "ppc64le" },
    { "s390x", "s390x" },    { "riscv64", "riscv64" },
  };
  static char machine[sizeof ((struct utsname *) 0)->machine];
  struct utsname u;

  if (uname (&u) < 0)
    return "unknown";
  for (size_t i = 0; i < SR_ARRAY_SIZE (names); i++)
    if (strcmp (u.machine, names[i].machine) == 0)
      return names[i].oci;
  memcpy (machine, u.machine, sizeof machine);
  return machine;
}

const struct sr_descriptor *
sr_oci_index_select (const struct sr_oci_index *idx, sr_error_t *err)
{
  const char *arch = sr_oci_host_arch ();
  char offered[512];
  size_t len = 0;

  for (size_t i = 0; i < idx->n_manifests; i++)
    {
      const struct sr_descriptor *d = &idx->manifests[i];

      if (d->media_type && sr_oci_kind_of (d->media_type) != SR_OCI_MANIFEST)
        continue;
      if (d->os && d->architecture && strcmp (d->os, "linux") == 0
          && strcmp (d->architecture, arch) == 0)
        return d;
    }
  if (idx->n_manifests == 1 && idx->manifests[0].os == NULL)
    return &idx->manifests[0];

  offered[0] = '\0';
  for (size_t i = 0; i < idx->n_manifests && len + 1 < sizeof offered; i++)
    {
      const struct sr_descriptor *d = &idx->manifests[i];

      len += (size_t) snprintf (offered + len, sizeof offered - len, "%s%s/%s", len ? ", " : "",
                                d->os ? d->os : "?", d->architecture ? d->architecture : "?");
    }
  sr_error_set (err, 0, "no image for linux/%s in the index (it offers: %s)", arch,
                idx->n_manifests ? offered : "nothing");
  return NULL;
}
