#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "tap.h"

static void
check (const char *name, const char *in, size_t len, const char *want)
{
  size_t out_len;
  char *out = sr_utf8_sanitize (in, len, &out_len);

  is_str (out, want, name);
  ok (out_len == strlen (want), "%s: length", name);
  free (out);
}

int
main (void)
{
  check ("ascii passes through", "hello\n", 6, "hello\n");
  check ("valid multibyte passes through", "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 12,
         "h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  check ("a stray continuation byte becomes U+FFFD", "a\x80z", 3, "a\xef\xbf\xbdz");
  check ("an overlong form is rejected", "\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd");
  check ("a surrogate is rejected", "\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  check ("past U+10FFFF is rejected", "\xf4\x90\x80\x80x", 5,
         "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbdx");
  check ("a truncated sequence at the end is replaced", "ok\xe2\x82", 4, "ok\xef\xbf\xbd\xef\xbf\xbd");
  check ("NUL becomes U+FFFD", "a\0b", 3, "a\xef\xbf\xbd" "b");
  check ("empty input", "", 0, "");
  return done_testing ();
}
