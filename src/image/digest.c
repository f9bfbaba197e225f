#include "config.h"

#include "image/digest.h"

#include <stdint.h>
#include <string.h>

#include "common/util.h"

bool
sr_digest_valid (const char *s)
{
  if (s == NULL || strncmp (s, "sha256:", 7) != 0)
    return false;
  s += 7;
  for (size_t i = 0; i < SR_DIGEST_HEX_LEN; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return s[SR_DIGEST_HEX_LEN] == '\0';
}

const char *
sr_digest_hex (const char *s, sr_error_t *err)
{
  if (!sr_digest_valid (s))
    {
      sr_error_set (err, 0, "'%s' is not a sha256 digest (sha256: and 64 hex digits)",
                    s ? s : "(null)");
      return NULL;
    }
  return s + 7;
}

void
sr_sha256_finish (struct sr_sha256 *s, char out[SR_DIGEST_LEN + 1])
{
  unsigned char raw[SR_SHA256_LEN];

  sr_sha256_final (s, raw);
  memcpy (out, "sha256:", 7);
  sr_hex_encode (raw, sizeof raw, out + 7);
}

void
sr_sha256_buf (const void *buf, size_t len, char out[SR_DIGEST_LEN + 1])
{
  struct sr_sha256 *h = sr_sha256_new ();

  sr_sha256_update (h, buf, len);
  sr_sha256_finish (h, out);
}
