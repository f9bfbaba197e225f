#include "config.h"

#include "mcp/download-link.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

int
sr_mcp_link_key_init (struct sr_mcp_link_key *k, sr_error_t *err)
{
  if (sr_random_bytes (k->key, sizeof k->key, err) < 0)
    return sr_error_wrap (err, "the download links' key");
  return 0;
}

/* The signature of session, path and the text of expires, in hex.  */
static void
sign (const struct sr_mcp_link_key *k, const char *session, const char *path,
      const char *expires, char out[2 * SR_SHA256_LEN + 1])
{
  _cleanup_free_ char *msg = sr_xasprintf ("%s\n%s\n%s", session, path, expires);
  unsigned char mac[SR_SHA256_LEN];

  sr_hmac_sha256 (k->key, sizeof k->key, msg, strlen (msg), mac);
  sr_hex_encode (mac, sizeof mac, out);
}

char *
sr_mcp_link_query (const struct sr_mcp_link_key *k, const char *session, const char *path,
                   int64_t expires)
{
  _cleanup_free_ char *t = sr_xasprintf ("%" PRId64, expires);
  char sig[2 * SR_SHA256_LEN + 1];

  sign (k, session, path, t, sig);
  return sr_xasprintf ("?expires=%s&sig=%s", t, sig);
}

bool
sr_mcp_link_valid (const struct sr_mcp_link_key *k, const char *session, const char *path,
                   const char *expires, const char *sig, int64_t now)
{
  char want[2 * SR_SHA256_LEN + 1];
  volatile unsigned char d = 0;
  char *end;
  long long t;

  if (expires == NULL || sig == NULL || strlen (sig) != 2 * SR_SHA256_LEN)
    return false;
  errno = 0;
  t = strtoll (expires, &end, 10);
  if (*expires == '\0' || *end || errno || t <= now)
    return false;
  sign (k, session, path, expires, want);
  for (size_t i = 0; i < 2 * SR_SHA256_LEN; i++)
    d |= (unsigned char) (want[i] ^ sig[i]);
  return d == 0;
}
