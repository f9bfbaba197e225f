/* What the pieces of a pull share (registry.c the pull, registry-http.c
 * the transfers, registry-auth.c the authentication), and nobody else.  */
#ifndef SR_IMAGE_REGISTRY_INTERNAL_H
#define SR_IMAGE_REGISTRY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

#include "common/curlbuf.h"
#include "common/error.h"
#include "image/reference.h"
#include "image/registry.h"
#include "image/store.h"

struct pull
{
  struct sr_store *s;
  const struct sr_registry_options *o;
  struct sr_image_ref ref;
  CURL *curl;
  const char *scheme;     /* of the registry: "https" or "http" */
  char *auth;             /* "Authorization: ..." for the registry host, or NULL */
  bool basic_sent;        /* auth holds the user's Basic credentials */
  char errbuf[CURL_ERROR_SIZE];
};

/* One response.  The body goes to w when the status is 200 or 206 and w
 * is set, else into body (at most max bytes).  */
struct xfer
{
  long status;
  struct sr_buf www_auth;
  char *content_type, *docker_digest, *content_range;
  struct sr_buf body;
  size_t max;
  bool too_big;
  struct sr_blob_writer *w;
  uint64_t offset;          /* bytes asked to be skipped with Range */
  uint64_t received;
  bool started;
  sr_error_t cb_err;
};

/* Sets up p->curl for the transfers of a pull.  */
int sr_registry_setup_curl_ (struct pull *p, sr_error_t *err);
/* Frees what x holds (not x->w, which its caller owns).  */
void sr_registry_xfer_done_ (struct xfer *x);
/* Scheme, host and port of url, for comparing origins; NULL when url
 * does not parse.  */
char *sr_registry_url_origin_ (const char *url);
/* What went wrong, from the registry's "errors" array or the status.  */
char *sr_registry_error_text_ (const struct xfer *x);
/* Sets err to the failed response x, prefixed by what when not NULL;
 * returns -1.  */
int sr_registry_status_error_ (const struct xfer *x, const char *what, sr_error_t *err);
/* GET url, following redirects ourselves.  auth (a whole header line) goes
 * only to auth_origin.  */
int sr_registry_http_get_ (struct pull *p, const char *url, const char *accept, const char *auth,
                           const char *auth_origin, struct xfer *x, sr_error_t *err);
/* GET a path of the registry's API, authenticating when it asks.  */
int sr_registry_get_ (struct pull *p, const char *path, const char *accept, struct xfer *x,
                      sr_error_t *err);

#endif
