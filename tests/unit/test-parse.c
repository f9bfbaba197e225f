#include <config.h>

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "common/util.h"
#include "tap.h"

static void
size_ok (const char *s, uint64_t want)
{
  uint64_t v = 0;

  ok (sr_parse_size (s, &v) == 0 && v == want, "size '%s' is %llu", s, (unsigned long long) want);
}

static void
size_bad (const char *s)
{
  uint64_t v;

  ok (sr_parse_size (s, &v) < 0, "size '%s' is rejected", s);
}

static void
seconds_ok (const char *s, uint64_t want_ms)
{
  uint64_t v = 0;

  ok (sr_parse_seconds (s, &v) == 0 && v == want_ms, "seconds '%s' is %llu ms", s,
      (unsigned long long) want_ms);
}

/* Two ids are hex of the asked length, ended, and (2^-128 aside) differ.  */
static void
random_hex_is_fresh_hex (void)
{
  char a[33], b[33];
  bool hex = true;

  memset (a, 'x', sizeof a);
  ok (sr_random_hex (a, 16, NULL) == 0 && sr_random_hex (b, 16, NULL) == 0,
      "random ids are made");
  for (size_t i = 0; i < 32; i++)
    hex = hex && strchr ("0123456789abcdef", a[i]) != NULL && a[i] != '\0';
  ok (hex && a[32] == '\0', "a random id is 32 lowercase hex digits and a NUL");
  ok (strcmp (a, b) != 0, "two random ids differ");
}

int
main (void)
{
  size_ok ("512", 512);
  size_ok ("64k", 64 << 10);
  size_ok ("256M", 256 << 20);
  size_ok ("256MiB", 256 << 20);
  size_ok ("1G", 1ULL << 30);
  size_ok ("0", 0);
  size_bad ("");
  size_bad ("-1");
  size_bad ("12X");
  size_bad ("M");
  size_bad ("99999999999999999999");
  size_bad ("18446744073709551615G");
  seconds_ok ("10", 10000);
  seconds_ok ("2.5", 2500);
  seconds_ok ("0.001", 1);
  {
    uint64_t v;

    ok (sr_parse_seconds ("-1", &v) < 0, "negative seconds are rejected");
    ok (sr_parse_seconds ("1s", &v) < 0, "a unit suffix is rejected");
    ok (sr_parse_seconds ("nan", &v) < 0, "nan is rejected");
    ok (sr_parse_seconds ("inf", &v) < 0, "inf is rejected");
  }
  random_hex_is_fresh_hex ();
  return done_testing ();
}
