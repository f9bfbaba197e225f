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

/* The range doctor proposes for a user without one.  */
static void
check_free_range (void)
{
  is_int (sr_subid_free_range (NULL, NULL), 131072,
          "free range: with no files, the first aligned range above 100000");
  is_int (sr_subid_free_range ("sr-test:100000:65536\n", "sr-test:100000:65536\n"), 196608,
          "free range: not useradd's 100000-165535 when another user has it");
  is_int (sr_subid_free_range ("alice:131072:65536\n", NULL), 196608,
          "free range: an exact range in use is skipped");
  is_int (sr_subid_free_range (NULL, "bob:131071:1\n"), 131072,
          "free range: an entry of the gid file that ends just before a range leaves it free");
  is_int (sr_subid_free_range (NULL, "bob:196607:1\n"), 196608,
          "free range: one on the range's last id does not");
  is_int (sr_subid_free_range ("1234:131072:1\n", "carol:196608:1\n"), 262144,
          "free range: entries of both files, by uid and by name, count");
  is_int (sr_subid_free_range ("a:100000:200000\n# comment\nbroken\nb:x:5\n", NULL), 327680,
          "free range: a long range spans several; malformed lines do not count");
  is_int (sr_subid_free_range ("big:0:4294901760\n", NULL), 0,
          "free range: none left below 2^32");
  is_int (sr_subid_free_range ("big:0:4294836224\n", NULL), 4294836224u,
          "free range: the last one, ending below uid 4294967295");
}

/* Leases of a root plan's slots, in a lock directory of the test's.  */
static void
check_lease (void)
{
  char dir[] = "/tmp/sr-test-ids-XXXXXX";
  struct sr_idmap plan = { .mode = SR_IDMAP_ROOT, .uid_base = 1000000, .uid_count = 65536,
                           .gid_base = 2000000, .gid_count = 65536, .slots = 2 };
  struct sr_idmap a = plan, b = plan, c = plan, single = plan, user = plan;
  sr_error_t err = NULL;

  if (mkdtemp (dir) == NULL)
    return;
  is_int (sr_idmap_lease (&a, dir, &err), 0, "lease: the first container gets a slot");
  is_int (a.uid_base, 1000000, "lease: the lowest, the range's first ids");
  ok (a.lease_fd >= 0 && a.slots == 1, "lease: held by an fd, and the plan is one slot now");
  is_int (sr_idmap_lease (&b, dir, &err), 0, "lease: so does the second");
  is_int (b.uid_base, 1065536, "lease: the next slot's uids");
  is_int (b.gid_base, 2065536, "lease: and gids");
  is_int (sr_idmap_lease (&c, dir, &err), -1, "lease: none is left for a third");
  is_str (err ? sr_error_code (err) : "", "ids_exhausted", "lease: code ids_exhausted");
  ok (err && strstr (err->msg, "every one of the 2 id ranges"), "lease: saying how many there are");
  sr_error_free (&err);
  close (a.lease_fd);
  c = plan;
  is_int (sr_idmap_lease (&c, dir, &err), 0, "lease: a closed lease frees its slot");
  is_int (c.uid_base, 1000000, "lease: for the next container");
  single.slots = 1;
  is_int (sr_idmap_lease (&single, dir, &err), 0, "lease: a range of one slot is not leased");
  ok (single.lease_fd == -1 && single.uid_base == 1000000, "lease: and stays as it is");
  user.mode = SR_IDMAP_SUBID;
  is_int (sr_idmap_lease (&user, dir, &err), 0, "lease: nor is a rootless plan");
  is_int (user.lease_fd, -1, "lease: which holds no fd");
  close (b.lease_fd);
  close (c.lease_fd);
  for (int slot = 0; slot < 2; slot++)
    {
      char path[64];

      snprintf (path, sizeof path, "%s/%d", dir, slot);
      unlink (path);
    }
  rmdir (dir);
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
  check_free_range ();
  check_lease ();
  return done_testing ();
}
