/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), here rather than
 * from libcrypto: loading libcrypto costs every run of the CLI over a
 * millisecond, for a hash, and sandbox-runner-http links none.  The OCI
 * digests of image/digest.h and the signed download links of mcp/ use
 * them.  */
#ifndef SR_COMMON_SHA256_H
#define SR_COMMON_SHA256_H

#include <stddef.h>

#define SR_SHA256_LEN 32

struct sr_sha256;
struct sr_sha256 *sr_sha256_new (void);
void sr_sha256_update (struct sr_sha256 *h, const void *buf, size_t len);
/* Writes the digest and frees h.  */
void sr_sha256_final (struct sr_sha256 *h, unsigned char out[SR_SHA256_LEN]);
void sr_sha256_free (struct sr_sha256 *h);

/* HMAC-SHA256 of msg under key.  */
void sr_hmac_sha256 (const void *key, size_t key_len, const void *msg, size_t len,
                     unsigned char out[SR_SHA256_LEN]);

#endif
