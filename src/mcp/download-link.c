#include "config.h"

#include "mcp/download-link.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/util.h"

int
sr_mcp_link_key_init (struct sr_mcp_link_key *k, sr_error_t *err)
{
  size_t got = 0;

  while (got < sizeof k->key)
    {
      ssize_t n = getrandom (k->key + got, sizeof k->key - got, 0);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return sr_error_set (err, errno, "getrandom (the download links' key)");
      got += (size_t) n;
    }
  return 0;
}

/* The signature of session, path and the text of expires, in hex.  */
static void
sign (const struct sr_mcp_link_key *k, const char *session, const char *path,
      const char *expires, char out[2 * SR_SHA256_LEN + 1])
{
  static const char hexdigits[] = "0123456789abcdef";
  _cleanup_free_ char *msg = sr_xasprintf ("%s\n%s\n%s", session, path, expires);
  unsigned char mac[SR_SHA256_LEN];

  sr_hmac_sha256 (k->key, sizeof k->key, msg, strlen (msg), mac);
  for (size_t i = 0; i < sizeof mac; i++)
    {
      out[2 * i] = hexdigits[mac[i] >> 4];
      out[2 * i + 1] = hexdigits[mac[i] & 15];
    }
  out[2 * SR_SHA256_LEN] = '\0';
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
