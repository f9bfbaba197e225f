/* HMAC-SHA256 against RFC 4231's vectors, and the signed download links
 * built on it: valid for their session, path and expiry, nothing else.  */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"
#include "common/util.h"
#include "mcp/download-link.h"
#include "tap.h"

static char *
hex (const unsigned char *d, size_t n)
{
  char *out = malloc (2 * n + 1);

  for (size_t i = 0; i < n; i++)
    sprintf (out + 2 * i, "%02x", d[i]);
  return out;
}

static void
check_hmac (const char *name, const void *key, size_t key_len, const char *msg,
            const char *want)
{
  unsigned char mac[SR_SHA256_LEN];
  _cleanup_free_ char *got = NULL;

  sr_hmac_sha256 (key, key_len, msg, strlen (msg), mac);
  got = hex (mac, sizeof mac);
  is_str (got, want, name);
}

/* The expires and sig of a query "?expires=T&sig=S", into t and sig.  */
static void
split_query (const char *q, char t[32], char sig[80])
{
  const char *amp = strchr (q, '&');

  snprintf (t, 32, "%.*s", (int) (amp - q - 9), q + 9);
  snprintf (sig, 80, "%s", amp + 5);
}

int
main (void)
{
  unsigned char key20[20], key131[131];
  struct sr_mcp_link_key k, other;
  _cleanup_free_ char *q = NULL;
  char t[32], sig[80], bad[80];
  int64_t now = 1700000000;

  /* RFC 4231, test cases 1, 2 and 6 (a key longer than a block).  */
  memset (key20, 0x0b, sizeof key20);
  check_hmac ("HMAC-SHA256, RFC 4231 case 1", key20, sizeof key20, "Hi There",
              "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  check_hmac ("HMAC-SHA256, RFC 4231 case 2", "Jefe", 4, "what do ya want for nothing?",
              "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  memset (key131, 0xaa, sizeof key131);
  check_hmac ("HMAC-SHA256, RFC 4231 case 6 (a key over a block)", key131, sizeof key131,
              "Test Using Larger Than Block-Size Key - Hash Key First",
              "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");

  ok (sr_mcp_link_key_init (&k, NULL) == 0 && sr_mcp_link_key_init (&other, NULL) == 0,
      "two random keys");
  ok (memcmp (k.key, other.key, sizeof k.key) != 0, "which differ");
  q = sr_mcp_link_query (&k, "s1", "out/chart.png", now + 60);
  ok (strncmp (q, "?expires=1700000060&sig=", 24) == 0 && strlen (q) == 24 + 64,
      "a link's query is ?expires=T&sig= and 64 hex digits");
  split_query (q, t, sig);
  ok (sr_mcp_link_valid (&k, "s1", "out/chart.png", t, sig, now),
      "the link is valid for its session and path before it expires");
  ok (!sr_mcp_link_valid (&k, "s1", "out/chart.png", t, sig, now + 60), "not once it expires");
  ok (!sr_mcp_link_valid (&k, "s1", "out/other.png", t, sig, now), "not for another path");
  ok (!sr_mcp_link_valid (&k, "s2", "out/chart.png", t, sig, now), "not for another session");
  ok (!sr_mcp_link_valid (&k, "s1", "out/chart.png", "1700009999", sig, now),
      "not with a later expiry than it was signed for");
  ok (!sr_mcp_link_valid (&other, "s1", "out/chart.png", t, sig, now),
      "not under another server's key");
  snprintf (bad, sizeof bad, "%s", sig);
  bad[10] = bad[10] == '0' ? '1' : '0';
  ok (!sr_mcp_link_valid (&k, "s1", "out/chart.png", t, bad, now), "not with one digit changed");
  bad[63] = '\0';
  ok (!sr_mcp_link_valid (&k, "s1", "out/chart.png", t, bad, now), "not when cut short");
  ok (!sr_mcp_link_valid (&k, "s1", "out/chart.png", NULL, sig, now)
          && !sr_mcp_link_valid (&k, "s1", "out/chart.png", t, NULL, now)
          && !sr_mcp_link_valid (&k, "s1", "out/chart.png", "12x", sig, now),
      "not without an expiry or a signature, or with an expiry that is no number");
  return done_testing ();
}
