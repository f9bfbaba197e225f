/* Pulling from an OCI distribution registry: the manifest, then the config
 * and layer blobs, into the store.  One CURL handle serves every request of
 * a pull.  */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "common/defaults.h"
#include "common/util.h"
#include "image/digest.h"
#include "image/oci.h"
#include "image/registry-internal.h"
#include "image/registry.h"
#include "image/store.h"

/* Of an error body, only the start is kept.  */
#define MAX_ERROR_BODY (64u << 10)

#define MANIFEST_ACCEPT                                                   \
  "Accept: " SR_MT_OCI_INDEX ", " SR_MT_OCI_MANIFEST ", " SR_MT_DOCKER_LIST \
  ", " SR_MT_DOCKER_MANIFEST

static int
fetch_manifest (struct pull *p, const char *reference, const char *want_digest,
                struct sr_buf *ret_body, char **ret_type, char ret_digest[SR_DIGEST_LEN + 1],
                sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/manifests/%s", p->ref.repository, reference);
  struct xfer x = { .max = SR_MAX_IMAGE_DOCUMENT };
  char got[SR_DIGEST_LEN + 1];
  int r = -1;

  if (sr_registry_get_ (p, path, MANIFEST_ACCEPT, &x, err) < 0)
    goto out;
  if (x.status != 200)
    {
      sr_registry_status_error_ (&x, want_digest ? want_digest : NULL, err);
      goto out;
    }
  if (x.body.len == 0)
    {
      sr_error_set (err, 0, "manifest %s: empty answer", reference);
      goto out;
    }
  sr_sha256_buf (x.body.data, x.body.len, got);
  if (want_digest && strcmp (got, want_digest) != 0)
    {
      sr_error_set (err, 0, "manifest %s: digest mismatch: the content hashes to %s",
                    want_digest, got);
      goto out;
    }
  if (x.docker_digest && strncmp (x.docker_digest, "sha256:", 7) == 0
      && strcmp (x.docker_digest, got) != 0)
    {
      sr_error_set (err, 0,
                    "manifest %s: digest mismatch: the registry says %s, the content hashes "
                    "to %s",
                    reference, x.docker_digest, got);
      goto out;
    }
  memcpy (ret_digest, got, sizeof got);
  *ret_type = TAKE_PTR (x.content_type);
  *ret_body = x.body;
  memset (&x.body, 0, sizeof x.body);
  r = 0;

out:
  sr_registry_xfer_done_ (&x);
  return r;
}

static int
fetch_blob_once (struct pull *p, const struct sr_descriptor *d, const char *path,
                 uint64_t *ret_offset, sr_error_t *err)
{
  struct xfer x = { .max = MAX_ERROR_BODY };
  uint64_t offset = 0;
  int r = -1;

  if (sr_blob_writer_begin (p->s, d->digest, d->size, &x.w, &offset, err) < 0)
    return sr_error_wrap (err, "blob %s", d->digest);
  sr_blob_writer_set_progress (x.w, 0, 0);
  *ret_offset = x.offset = offset;
  if (d->size == 0 || offset < d->size)
    {
      if (sr_registry_get_ (p, path, NULL, &x, err) < 0)
        goto out;
      if (x.status == 416 && offset > 0)
        {
          /* What we hold does not fit what the server has.  */
          if (sr_blob_writer_restart (x.w, err) < 0)
            goto out;
          x.offset = 0;
          if (sr_registry_get_ (p, path, NULL, &x, err) < 0)
            goto out;
        }
      if (x.status != 200 && x.status != 206)
        {
          _cleanup_free_ char *what = sr_xasprintf ("blob %s", d->digest);

          sr_registry_status_error_ (&x, what, err);
          goto out;
        }
    }
  r = sr_blob_writer_commit (x.w, err);

out:
  sr_blob_writer_free (x.w);
  x.w = NULL;
  sr_registry_xfer_done_ (&x);
  return r;
}

static int
fetch_blob (struct pull *p, const struct sr_descriptor *d, sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/blobs/%s", p->ref.repository, d->digest);
  sr_error_t e = NULL;
  uint64_t offset = 0;

  if (sr_store_has_blob (p->s, d->digest))
    return 0;
  if (fetch_blob_once (p, d, path, &offset, &e) == 0)
    return 0;
  /* A resumed blob that does not verify may have been spoilt by what was
   * kept of it: commit discarded that, so try once from the start.  */
  if (offset > 0 && !sr_store_has_blob (p->s, d->digest)
      && e->errnum == EBADMSG)
    {
      sr_error_free (&e);
      if (fetch_blob_once (p, d, path, &offset, &e) == 0)
        return 0;
    }
  sr_error_move (err, &e);
  return -1;
}

/* localhost, 127.0.0.0/8 (as a dotted address, not a name starting
 * "127.") or [::1], with or without a port.  */
static bool
loopback_host (const char *host)
{
  size_t n = strcspn (host, ":");

  if (strncmp (host, "[::1]", 5) == 0)
    return host[5] == '\0' || host[5] == ':';
  if (n == 9 && strncmp (host, "localhost", 9) == 0)
    return true;
  if (strncmp (host, "127.", 4) != 0)
    return false;
  for (size_t i = 4; i < n; i++)
    if (!isdigit ((unsigned char) host[i]) && host[i] != '.')
      return false;
  return true;
}

static int
pull (struct pull *p, const char *ref, char **ret_id, sr_error_t *err)
{
  _cleanup_free_ char *type = NULL, *name = NULL;
  struct sr_buf body = { 0 };
  struct sr_oci_manifest m = { 0 };
  char digest[SR_DIGEST_LEN + 1];
  enum sr_oci_kind kind;
  int r = -1;

  if (sr_image_ref_parse (ref, &p->ref, err) < 0)
    return -1;
  p->scheme = (p->o && p->o->plain_http) || loopback_host (p->ref.host) ? "http" : "https";
  if (sr_registry_setup_curl_ (p, err) < 0)
    return -1;

  if (fetch_manifest (p, p->ref.digest ? p->ref.digest : p->ref.tag, p->ref.digest, &body,
                      &type, digest, err) < 0)
    goto out;
  kind = sr_oci_kind_of (type);
  if (kind == SR_OCI_UNKNOWN)
    kind = sr_oci_sniff (body.data, body.len);
  if (kind == SR_OCI_INDEX)
    {
      struct sr_oci_index idx = { 0 };
      const struct sr_descriptor *d;
      char want[SR_DIGEST_LEN + 1];
      uint64_t want_size;

      if (sr_oci_parse_index (body.data, body.len, &idx, err) < 0)
        {
          sr_error_wrap (err, "index %s", digest);
          goto out;
        }
      d = sr_oci_index_select (&idx, err);
      if (d == NULL)
        {
          sr_oci_index_done (&idx);
          goto out;
        }
      memcpy (want, d->digest, sizeof want);
      want_size = d->size;
      sr_oci_index_done (&idx);
      sr_buf_done (&body);
      free (type);
      type = NULL;
      if (fetch_manifest (p, want, want, &body, &type, digest, err) < 0)
        goto out;
      if (want_size && body.len != want_size)
        {
          sr_error_set (err, 0, "manifest %s: %zu bytes where the index says %llu", want,
                        body.len, (unsigned long long) want_size);
          goto out;
        }
      kind = sr_oci_kind_of (type);
      if (kind == SR_OCI_UNKNOWN)
        kind = sr_oci_sniff (body.data, body.len);
    }
  if (kind != SR_OCI_MANIFEST)
    {
      if (type && strstr (type, "manifest.v1"))
        sr_error_set (err, 0, "manifest %s is Docker schema 1, which is not supported", digest);
      else
        sr_error_set (err, 0, "manifest %s: not an image manifest (%s)", digest,
                      type ? type : "no media type");
      goto out;
    }
  if (sr_oci_parse_manifest (body.data, body.len, &m, err) < 0)
    {
      sr_error_wrap (err, "manifest %s", digest);
      goto out;
    }
  for (size_t i = 0; i < m.n_layers; i++)
    if (!sr_oci_layer_type_ok (m.layers[i].media_type))
      {
        sr_error_set (err, 0, "layer %s: unsupported media type %s", m.layers[i].digest,
                      m.layers[i].media_type ? m.layers[i].media_type : "(none)");
        goto out;
      }

  if (fetch_blob (p, &m.config, err) < 0)
    goto out;
  for (size_t i = 0; i < m.n_layers; i++)
    if (fetch_blob (p, &m.layers[i], err) < 0)
      goto out;
  /* The manifest goes in last: a store holding it holds all it names.  */
  if (sr_store_put_blob_buf (p->s, body.data, body.len, digest, err) < 0)
    goto out;
  name = sr_image_ref_name (&p->ref);
  r = sr_store_install (p->s, digest, name, ref, ret_id, err);

out:
  sr_oci_manifest_done (&m);
  sr_buf_done (&body);
  return r;
}

int
sr_registry_pull (struct sr_store *s, const char *ref, const struct sr_registry_options *o,
                  char **ret_id, sr_error_t *err)
{
  struct pull p = { .s = s, .o = o };
  int r;

  if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return sr_error_set (err, 0, "pull %s: cannot initialise libcurl", ref);
  r = pull (&p, ref, ret_id, err);
  if (r < 0)
    sr_error_wrap (err, "pull %s", ref);
  if (p.curl)
    curl_easy_cleanup (p.curl);
  free (p.auth);
  sr_image_ref_done (&p.ref);
  curl_global_cleanup ();
  return r;
}
