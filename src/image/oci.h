/* The OCI image documents (and their Docker v2 schema 2 twins): image
 * index / manifest list, manifest, config.  Parsing only; no I/O.  Each
 * parser checks what later steps rely on (digests well formed, sizes
 * present, media types known) and names the field that is wrong.  */
#ifndef SR_IMAGE_OCI_H
#define SR_IMAGE_OCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "image/digest.h"

#define SR_MT_OCI_INDEX     "application/vnd.oci.image.index.v1+json"
#define SR_MT_OCI_MANIFEST  "application/vnd.oci.image.manifest.v1+json"
#define SR_MT_OCI_CONFIG    "application/vnd.oci.image.config.v1+json"
#define SR_MT_DOCKER_LIST   "application/vnd.docker.distribution.manifest.list.v2+json"
#define SR_MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define SR_MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"

enum sr_oci_kind
{
  SR_OCI_UNKNOWN,
  SR_OCI_INDEX,     /* OCI index or Docker manifest list */
  SR_OCI_MANIFEST,  /* OCI or Docker v2 schema 2 manifest */
};
/* What a manifest media type (as in a descriptor, a Content-Type or a
 * document's mediaType) names.  */
enum sr_oci_kind sr_oci_kind_of (const char *media_type);
/* True for the layer media types we can apply (tar, gzip, zstd; OCI,
 * Docker and the non-distributable variants).  */
bool sr_oci_layer_type_ok (const char *media_type);

struct sr_descriptor
{
  char *media_type;
  char digest[SR_DIGEST_LEN + 1];
  uint64_t size;
  char *os, *architecture, *variant; /* platform, index entries only */
  char *ref_name;                    /* org.opencontainers.image.ref.name */
};

struct sr_oci_index
{
  struct sr_descriptor *manifests;
  size_t n_manifests;
};

struct sr_oci_manifest
{
  char *media_type;
  struct sr_descriptor config;
  struct sr_descriptor *layers;
  size_t n_layers;
};

struct sr_oci_config
{
  char *os, *architecture;
  char **env;          /* NULL-terminated, may be NULL */
  char **entrypoint;
  char **cmd;
  char *working_dir;
  char *user;
  char *version;       /* Labels' org.opencontainers.image.version; NULL: none */
  size_t n_diff_ids;
};

/* Which document a JSON text is (from mediaType, else from its shape).  */
enum sr_oci_kind sr_oci_sniff (const char *json, size_t len);

int sr_oci_parse_index (const char *json, size_t len, struct sr_oci_index *ret, sr_error_t *err);
int sr_oci_parse_manifest (const char *json, size_t len, struct sr_oci_manifest *ret,
                           sr_error_t *err);
int sr_oci_parse_config (const char *json, size_t len, struct sr_oci_config *ret, sr_error_t *err);
void sr_oci_index_done (struct sr_oci_index *idx);
void sr_oci_manifest_done (struct sr_oci_manifest *m);
void sr_oci_config_done (struct sr_oci_config *c);

/* The host's platform as OCI names it (GOARCH names: amd64, arm64, ...).  */
const char *sr_oci_host_arch (void);

/* The entry of idx for linux and the host's architecture, or NULL with an
 * error listing the platforms the index offers.  Entries without a
 * platform match only when they are the sole entry.  */
const struct sr_descriptor *sr_oci_index_select (const struct sr_oci_index *idx,
                                                 sr_error_t *err);

#endif
