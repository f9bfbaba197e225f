/* Content digests as OCI writes them: "sha256:" and 64 lowercase hex
 * digits.  Only sha256 is accepted; anything else is an error that names
 * the digest.  */
#ifndef SR_IMAGE_DIGEST_H
#define SR_IMAGE_DIGEST_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "common/sha256.h"

#define SR_DIGEST_HEX_LEN 64
#define SR_DIGEST_LEN (sizeof "sha256:" - 1 + SR_DIGEST_HEX_LEN)

/* True when s is "sha256:" followed by exactly 64 lowercase hex digits.  */
bool sr_digest_valid (const char *s);
/* Checks s and returns its hex part, or NULL with an error naming it.  */
const char *sr_digest_hex (const char *s, sr_error_t *err);

/* Writes "sha256:<hex>" (SR_DIGEST_LEN + 1 bytes) of h (common/sha256.h)
 * and frees h.  */
void sr_sha256_finish (struct sr_sha256 *h, char out[SR_DIGEST_LEN + 1]);

/* The digest of a buffer.  */
void sr_sha256_buf (const void *buf, size_t len, char out[SR_DIGEST_LEN + 1]);

#endif
