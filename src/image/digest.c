#include "config.h"

#include "image/digest.h"

#include <openssl/evp.h>
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

struct sr_sha256
{
  EVP_MD_CTX *ctx;
};

struct sr_sha256 *
sr_sha256_new (void)
{
  struct sr_sha256 *h = sr_xcalloc (1, sizeof *h);

  h->ctx = EVP_MD_CTX_new ();
  if (h->ctx == NULL || EVP_DigestInit_ex (h->ctx, EVP_sha256 (), NULL) != 1)
    sr_oom ();
  return h;
}

void
sr_sha256_update (struct sr_sha256 *h, const void *buf, size_t len)
{
  if (EVP_DigestUpdate (h->ctx, buf, len) != 1)
    sr_oom ();
}

void
sr_sha256_finish (struct sr_sha256 *h, char out[SR_DIGEST_LEN + 1])
{
  static const char hexdigits[] = "0123456789abcdef";
  unsigned char md[32];
  unsigned int n = 0;

  if (EVP_DigestFinal_ex (h->ctx, md, &n) != 1 || n != sizeof md)
    sr_oom ();
  memcpy (out, "sha256:", 7);
  for (size_t i = 0; i < sizeof md; i++)
    {
      out[7 + 2 * i] = hexdigits[md[i] >> 4];
      out[7 + 2 * i + 1] = hexdigits[md[i] & 15];
    }
  out[SR_DIGEST_LEN] = '\0';
  sr_sha256_free (h);
}

void
sr_sha256_free (struct sr_sha256 *h)
{
  if (h == NULL)
    return;
  EVP_MD_CTX_free (h->ctx);
  free (h);
}

void
sr_sha256_buf (const void *buf, size_t len, char out[SR_DIGEST_LEN + 1])
{
  struct sr_sha256 *h = sr_sha256_new ();

  sr_sha256_update (h, buf, len);
  sr_sha256_finish (h, out);
}
