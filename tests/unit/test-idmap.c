#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/idmap.h"
#include "tap.h"

static char *
fixture (const char *content)
{
  char *path = sr_xstrdup ("/tmp/sr-test-subid-XXXXXX");
  int fd = mkstemp (path);

  sr_write_all (fd, content, strlen (content));
  close (fd);
  return path;
}

int
main (void)
{
  _cleanup_free_ char *path = fixture ("# comment\n"
                                       "alice:100000:65536\n"
                                       "bob:200000:1000\n"
                                       "1234:300000:65536\n"
                                       "broken line\n"
                                       "carol:notanumber:5\n"
                                       "bob:900000:5\n");
  uint32_t start = 0, count = 0;
  sr_error_t err = NULL;

  is_int (sr_subid_lookup (path, "alice", 1000, &start, &count, &err), 1, "finds a user by name");
  is_int (start, 100000, "start of alice's range");
  is_int (count, 65536, "count of alice's range");
  is_int (sr_subid_lookup (path, "bob", 1001, &start, &count, &err), 1, "first range wins");
  is_int (start, 200000, "start of bob's first range");
  is_int (sr_subid_lookup (path, "dave", 1234, &start, &count, &err), 1, "finds a user by uid");
  is_int (start, 300000, "start of the numeric entry");
  is_int (sr_subid_lookup (path, "carol", 1500, &start, &count, &err), 0,
          "a malformed entry does not count");
  is_int (sr_subid_lookup (path, "erin", 1600, &start, &count, &err), 0, "an absent user");
  is_int (sr_subid_lookup ("/nonexistent-sr-subuid", "alice", 1000, &start, &count, &err), 0,
          "a missing file means no ranges");
  unlink (path);
  is_str (sr_idmap_mode_name (SR_IDMAP_ROOT), "root-range", "mode names");
  return done_testing ();
}
