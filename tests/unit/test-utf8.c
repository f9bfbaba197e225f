#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/utf8.h"
#include "common/util.h"
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

/* What sr_utf8_add_name puts on the wire for name: its text, and its
 * base64 field (NULL when absent); the whole is valid UTF-8 JSON.  */
static void
check_name (const char *label, const char *name, const char *want_text, bool want_b64)
{
  _cleanup_json_ cJSON *o = cJSON_CreateObject ();
  _cleanup_free_ char *wire = NULL, *raw = NULL, *what = sr_xasprintf ("%s: the text", label);
  const cJSON *text, *b64;
  size_t raw_len;

  sr_utf8_add_name (o, "path", name);
  wire = cJSON_PrintUnformatted (o);
  ok (sr_utf8_valid (wire, strlen (wire)), "%s: the JSON is valid UTF-8", label);
  text = cJSON_GetObjectItemCaseSensitive (o, "path");
  b64 = cJSON_GetObjectItemCaseSensitive (o, "path_base64");
  is_str (cJSON_GetStringValue (text), want_text, what);
  ok ((b64 != NULL) == want_b64, "%s: %s base64", label, want_b64 ? "a" : "no");
  if (b64)
    ok (sr_base64_decode (b64->valuestring, strlen (b64->valuestring), &raw, &raw_len) == 0
        && raw_len == strlen (name) && memcmp (raw, name, raw_len) == 0,
        "%s: the base64 gives the name's bytes back", label);
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

  ok (sr_utf8_valid ("h\xc3\xa9", 3), "valid: UTF-8");
  ok (!sr_utf8_valid ("bad\xff", 4), "valid: not a stray byte");
  ok (!sr_utf8_valid ("a\0b", 3), "valid: not a NUL");
  ok (!sr_utf8_valid ("\xe2\x82", 2), "valid: not a truncated sequence");
  check_name ("a valid name", "out/h\xc3\xa9.txt", "out/h\xc3\xa9.txt", false);
  check_name ("a valid name keeps its backslash", "a\\b", "a\\b", false);
  check_name ("an invalid byte", "bad\xff.txt", "bad\\xff.txt", true);
  check_name ("an invalid name doubles its backslashes", "a\\x41\xfe",
              "a\\\\x41\\xfe", true);
  {
    _cleanup_json_ cJSON *o = cJSON_CreateObject ();

    sr_utf8_add_text (o, "message", "open bad\xff.txt: no");
    is_str (cJSON_GetStringValue (cJSON_GetObjectItemCaseSensitive (o, "message")),
            "open bad\xef\xbf\xbd.txt: no", "a message quoting a bad name is sanitized");
  }
  check_name ("a truncated sequence, byte by byte", "\xe2\x82z\xc3\xa9",
              "\\xe2\\x82z\xc3\xa9", true);
  return done_testing ();
}
