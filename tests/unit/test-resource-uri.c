/* The URIs of session files as MCP resources: what the builder makes of
 * names that need escaping (and of bytes that are not UTF-8), that the
 * parser gives every one of them back, and the URIs it refuses.  */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "mcp/resource-uri.h"
#include "tests/unit/tap.h"

static void
round_trip (const char *path, const char *want_uri)
{
  _cleanup_free_ char *uri = sr_mcp_resource_uri ("abc123", path);
  char *id = NULL, *back = NULL;

  is_str (uri, want_uri, want_uri);
  ok (sr_mcp_resource_uri_parse (uri, &id, &back) == 0 && strcmp (id, "abc123") == 0
      && strcmp (back, path) == 0, "%s parses back to its session and path", want_uri);
  free (id);
  free (back);
}

static void
refused (const char *uri, const char *why)
{
  char *id = NULL, *path = NULL;

  ok (sr_mcp_resource_uri_parse (uri, &id, &path) < 0 && id == NULL && path == NULL,
      "refused: %s", why);
}

int
main (void)
{
  char *id = NULL, *path = NULL;

  round_trip ("chart.png", "sandbox://sessions/abc123/files/chart.png");
  round_trip ("out dir/a b.csv", "sandbox://sessions/abc123/files/out%20dir/a%20b.csv");
  round_trip ("x-y_z.~1/Q", "sandbox://sessions/abc123/files/x-y_z.~1/Q");
  round_trip ("a?b#c%d", "sandbox://sessions/abc123/files/a%3Fb%23c%25d");
  round_trip ("bad\xff.txt", "sandbox://sessions/abc123/files/bad%FF.txt");
  round_trip ("caf\xc3\xa9", "sandbox://sessions/abc123/files/caf%C3%A9");

  ok (sr_mcp_resource_uri_parse ("sandbox://sessions/s/files/a%2e%2E", &id, &path) == 0
      && strcmp (path, "a..") == 0, "lowercase and uppercase escapes decode alike");
  free (id);
  free (path);
  /* Left for the file functions, which refuse it themselves.  */
  ok (sr_mcp_resource_uri_parse ("sandbox://sessions/s/files/../x", &id, &path) == 0
      && strcmp (path, "../x") == 0, "a .. segment is handed on to the path checks");
  free (id);
  free (path);

  refused ("file:///etc/passwd", "another scheme");
  refused ("sandbox://sessions//files/x", "an empty session id");
  refused ("sandbox://sessions/s/files/", "an empty path");
  refused ("sandbox://sessions/s", "no files part");
  refused ("sandbox://sessions/s/x/files/y", "a session id with a /");
  refused ("sandbox://sessions/s%2Fx/files/y", "a session id with an escaped /");
  refused ("sandbox://sessions/s/files/a%2Fb", "an escaped / in the path");
  refused ("sandbox://sessions/s/files/a%00b", "an escaped NUL");
  refused ("sandbox://sessions/s/files/a%4", "a truncated escape");
  refused ("sandbox://sessions/s/files/a%zz", "an escape that is not hex");
  refused ("sandbox://sessions/s/files/a%", "a lone %");
  return done_testing ();
}
