#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "mcp/resource-uri.h"
#include "tap.h"

/* path makes want, and want parses back to the same id and path.  */
static void
round_trip (const char *label, const char *id, const char *path, const char *want)
{
  _cleanup_free_ char *uri = sr_mcp_file_uri (id, path), *got_id = NULL, *got_path = NULL;
  sr_error_t err = NULL;

  is_str (uri, want, label);
  ok (sr_mcp_file_uri_parse (uri, &got_id, &got_path, &err) == 0, "%s: parses", label);
  is_str (got_id, id, "the session id comes back");
  is_str (got_path, path, "the path comes back");
  sr_error_free (&err);
}

static void
refused (const char *uri)
{
  char *id = NULL, *path = NULL;
  sr_error_t err = NULL;

  ok (sr_mcp_file_uri_parse (uri, &id, &path, &err) < 0 && id == NULL && path == NULL
        && strcmp (sr_error_code (err), "invalid_uri") == 0,
      "refused as invalid_uri: %s", uri);
  sr_error_free (&err);
}

int
main (void)
{
  round_trip ("a plain name", "0123abcd", "chart.png",
              "sandbox://sessions/0123abcd/files/chart.png");
  round_trip ("directories keep their slashes", "s1", "out/plots/a-b_c~d.svg",
              "sandbox://sessions/s1/files/out/plots/a-b_c~d.svg");
  round_trip ("spaces, reserved characters and UTF-8 are escaped", "s1", "my file?#%[1].txt",
              "sandbox://sessions/s1/files/my%20file%3F%23%25%5B1%5D.txt");
  round_trip ("bytes that are not UTF-8", "s1", "bad\xff.txt",
              "sandbox://sessions/s1/files/bad%FF.txt");
  round_trip ("non-ASCII", "s1", "caf\xc3\xa9.csv", "sandbox://sessions/s1/files/caf%C3%A9.csv");
  round_trip ("a path that is itself files/...", "s1", "files/x",
              "sandbox://sessions/s1/files/files/x");
  {
    _cleanup_free_ char *uri = sr_mcp_file_uri ("a/b", "x");

    is_str (uri, "sandbox://sessions/a%2Fb/files/x", "a slash in a session id is escaped");
  }

  {
    _cleanup_free_ char *id = NULL, *path = NULL;

    ok (sr_mcp_file_uri_parse ("sandbox://sessions/s1/files/a%2fb%41", &id, &path, NULL) == 0
          && strcmp (path, "a/bA") == 0,
        "lower-case escapes decode, an escaped slash in the path is a slash");
  }
  {
    _cleanup_free_ char *p = sr_mcp_uri_path ("out dir/a%b\xff~.csv");

    is_str (p, "out%20dir/a%25b%FF~.csv", "a URL path keeps its slashes and unreserved characters");
  }
  refused ("file:///etc/passwd");
  refused ("sandbox://sessions/s1/other/x");
  refused ("sandbox://sessions//files/x");
  refused ("sandbox://sessions/s1/files/");
  refused ("sandbox://sessions/s1/files/a%00b");
  refused ("sandbox://sessions/s1/files/a%zz");
  refused ("sandbox://sessions/s1/files/a%4");
  refused ("sandbox://sessions/a/b/files/x");
  refused ("sandbox://sessions/a%2Fb/files/x");
  return done_testing ();
}
