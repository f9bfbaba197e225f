/* A state entry written a second time (a run's, once its init exists;
 * src/runtime/state.c) takes the place of the first by an exchange, not
 * by a rename over it: on ext4 a rename over a file starts writing the
 * new one to disk at once, and the unlink at the end of the run then
 * waits for that I/O.  Readers still see one whole entry or the other,
 * and no temporary file is left.  rename is wrapped (tests/unit/local.mk)
 * to count the renames over a name.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/state.h"
#include "tap.h"

int __real_rename (const char *from, const char *to);
int __wrap_rename (const char *from, const char *to);

static int renames;

int
__wrap_rename (const char *from, const char *to)
{
  renames++;
  return __real_rename (from, to);
}

/* Whether the exchange works where dir is (not on every file system).  */
static bool
can_exchange (const char *dir)
{
  _cleanup_free_ char *a = sr_xasprintf ("%s/probe-a", dir), *b = sr_xasprintf ("%s/probe-b", dir);
  bool r;

  close (open (a, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  close (open (b, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
  r = renameat2 (AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0;
  unlink (a);
  unlink (b);
  return r;
}

int
main (void)
{
  char dir[] = "/tmp/sr-test-state-rewrite-XXXXXX";
  _cleanup_free_ char *tmp = NULL;
  struct sr_state s = { .name = (char *) "sr-1-0", .kind = (char *) "run",
                        .label = (char *) "python", .cgroup_name = (char *) "" };
  struct sr_state *list = NULL;
  sr_error_t err = NULL;
  size_t n = 0;

  if (mkdtemp (dir) == NULL)
    {
      printf ("Bail out! mkdtemp: %s\n", strerror (errno));
      return 99;
    }
  tmp = sr_xasprintf ("%s/%s.json.tmp", dir, s.name);

  ok (sr_state_write (dir, &s, &err) == 0, "a new entry is written");
  is_int (renames, 1, "by a rename to its name");
  ok (access (tmp, F_OK) < 0, "no temporary file is left");

  s.init_pid = 4242;
  s.init_start = 77;
  renames = 0;
  ok (sr_state_write (dir, &s, &err) == 0, "the entry is written again");
  if (can_exchange (dir))
    is_int (renames, 0, "by an exchange, not a rename over the first");
  else
    ok (true, "# SKIP the file system of %s cannot exchange two files", dir);
  ok (access (tmp, F_OK) < 0, "the first entry is gone: no temporary file is left");
  ok (sr_state_list (dir, &list, &n, &err) == 0 && n == 1, "one entry is listed");
  ok (n == 1 && list[0].init_pid == 4242 && list[0].init_start == 77, "and it is the second");
  sr_state_list_free (list, n);

  ok (sr_state_remove (dir, s.name) == 0 && rmdir (dir) == 0, "removed, nothing is left");
  sr_error_free (&err);
  return done_testing ();
}
