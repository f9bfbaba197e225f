#include <config.h>

#include <string.h>

#include "common/util.h"
#include "runtime/mounts.h"
#include "tap.h"

static void
bind_ok (const char *spec, const char *src, const char *dst, bool ro, bool idmap)
{
  struct sr_bind b = { 0 };
  sr_error_t err = NULL;

  if (!ok (sr_bind_parse (spec, &b, &err) == 0, "bind '%s' parses", spec))
    {
      printf ("#   %s\n", err->msg);
      sr_error_free (&err);
      return;
    }
  is_str (b.source, src, "source");
  is_str (b.target, dst, "target");
  ok (b.readonly == ro, "read-only flag");
  ok (b.idmap == idmap, "idmap flag");
  ok (!b.owned, "not given to the command's user");
  sr_bind_done (&b);
}

static void
bind_bad (const char *spec, const char *want_in_msg)
{
  struct sr_bind b = { 0 };
  sr_error_t err = NULL;

  if (ok (sr_bind_parse (spec, &b, &err) < 0, "bind '%s' is rejected", spec))
    {
      ok (strstr (err->msg, want_in_msg) != NULL, "message names the problem: %s", err->msg);
      sr_error_free (&err);
    }
  else
    sr_bind_done (&b);
}

int
main (void)
{
  bind_ok ("/tmp:/data", "/tmp", "/data", false, false);
  bind_ok ("/tmp:/data:ro", "/tmp", "/data", true, false);
  bind_ok ("/tmp:/data:rw", "/tmp", "/data", false, false);
  bind_ok ("/tmp:/data:idmap", "/tmp", "/data", false, true);
  bind_ok ("/tmp:/data:ro,idmap", "/tmp", "/data", true, true);
  bind_ok ("/tmp:/data:idmap:ro", "/tmp", "/data", true, true);
  bind_bad ("/tmp:/data:ro,idmapped", "an option is ro, rw or idmap, not 'idmapped'");
  bind_bad ("/tmp", "expected SRC:DST");
  bind_bad (":/data", "expected SRC:DST");
  bind_bad ("/tmp:", "expected SRC:DST");
  bind_bad ("/tmp:data", "absolute");
  bind_bad ("/tmp:/data:rx", "ro");
  bind_bad ("/nonexistent-sr-test:/data", "/nonexistent-sr-test");
  bind_bad ("/tmp:/../etc", "..");
  return done_testing ();
}
