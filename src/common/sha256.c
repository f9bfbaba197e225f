/* SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104).  */
#include "config.h"

#include "common/sha256.h"

#include <stdint.h>
#include <string.h>

#include "common/util.h"

struct sr_sha256
{
  uint32_t h[8];
  uint64_t bytes;
  unsigned char block[64];
  size_t used;
};

static const uint32_t k[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t
ror (uint32_t x, unsigned n)
{
  return (x >> n) | (x << (32 - n));
}

static void
compress (struct sr_sha256 *s, const unsigned char *p)
{
  uint32_t w[64], a, b, c, d, e, f, g, h;

  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t) p[4 * i] << 24 | (uint32_t) p[4 * i + 1] << 16
           | (uint32_t) p[4 * i + 2] << 8 | (uint32_t) p[4 * i + 3];
  for (int i = 16; i < 64; i++)
    {
      uint32_t s0 = ror (w[i - 15], 7) ^ ror (w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = ror (w[i - 2], 17) ^ ror (w[i - 2], 19) ^ (w[i - 2] >> 10);

      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
  a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3];
  e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
  for (int i = 0; i < 64; i++)
    {
      uint32_t t1 = h + (ror (e, 6) ^ ror (e, 11) ^ ror (e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
      uint32_t t2 = (ror (a, 2) ^ ror (a, 13) ^ ror (a, 22)) + ((a & b) ^ (a & c) ^ (b & c));

      h = g, g = f, f = e, e = d + t1;
      d = c, c = b, b = a, a = t1 + t2;
    }
  s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d;
  s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

struct sr_sha256 *
sr_sha256_new (void)
{
  static const uint32_t init[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
  struct sr_sha256 *s = sr_xcalloc (1, sizeof *s);

  memcpy (s->h, init, sizeof init);
  return s;
}

void
sr_sha256_update (struct sr_sha256 *s, const void *buf, size_t len)
{
  const unsigned char *p = buf;

  s->bytes += len;
  if (s->used)
    {
      size_t n = 64 - s->used < len ? 64 - s->used : len;

      memcpy (s->block + s->used, p, n);
      s->used += n;
      p += n;
      len -= n;
      if (s->used < 64)
        return;
      compress (s, s->block);
      s->used = 0;
    }
  for (; len >= 64; p += 64, len -= 64)
    compress (s, p);
  memcpy (s->block, p, len);
  s->used = len;
}

void
sr_sha256_final (struct sr_sha256 *s, unsigned char out[SR_SHA256_LEN])
{
  uint64_t bits = s->bytes * 8;

  s->block[s->used++] = 0x80;
  if (s->used > 56)
    {
      memset (s->block + s->used, 0, 64 - s->used);
      compress (s, s->block);
      s->used = 0;
    }
  memset (s->block + s->used, 0, 56 - s->used);
  for (int i = 0; i < 8; i++)
    s->block[56 + i] = (unsigned char) (bits >> (56 - 8 * i));
  compress (s, s->block);
  for (int i = 0; i < SR_SHA256_LEN; i++)
    out[i] = (unsigned char) (s->h[i / 4] >> (24 - 8 * (i % 4)));
  explicit_bzero (s, sizeof *s);
  sr_sha256_free (s);
}

void
sr_sha256_free (struct sr_sha256 *s)
{
  free (s);
}

/* SHA-256 of the key block xor-ed with pad, then of msg: a half of HMAC.  */
static void
keyed_hash (const unsigned char block[64], unsigned char pad, const void *msg, size_t len,
            unsigned char out[SR_SHA256_LEN])
{
  unsigned char padded[64];
  struct sr_sha256 *h = sr_sha256_new ();

  for (size_t i = 0; i < sizeof padded; i++)
    padded[i] = block[i] ^ pad;
  sr_sha256_update (h, padded, sizeof padded);
  sr_sha256_update (h, msg, len);
  sr_sha256_final (h, out);
  explicit_bzero (padded, sizeof padded);
}

void
sr_hmac_sha256 (const void *key, size_t key_len, const void *msg, size_t len,
                unsigned char out[SR_SHA256_LEN])
{
  unsigned char block[64] = { 0 }, inner[SR_SHA256_LEN];

  /* A key longer than a block is hashed first (RFC 2104, 2).  */
  if (key_len > sizeof block)
    {
      struct sr_sha256 *h = sr_sha256_new ();

      sr_sha256_update (h, key, key_len);
      sr_sha256_final (h, block);
    }
  else
    memcpy (block, key, key_len);
  keyed_hash (block, 0x36, msg, len, inner);
  keyed_hash (block, 0x5c, inner, sizeof inner, out);
  explicit_bzero (block, sizeof block);
}
