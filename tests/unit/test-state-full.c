/* A state entry that cannot be written because its file system is full
 * fails with ENOSPC and a message that says which file system is full
 * (src/runtime/state.c), and leaves no half-written entry.  Needs root,
 * for a small tmpfs in a mount namespace of its own.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/state.h"
#include "tap.h"

/* Fills the file system of dir to its last block.  */
static void
fill (const char *dir)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/filler", dir);
  char block[4096] = { 0 };
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  if (fd < 0)
    return;
  while (write (fd, block, sizeof block) > 0)
    ;
  close (fd);
}

int
main (void)
{
  char base[] = "/tmp/sr-test-state-full-XXXXXX";
  _cleanup_free_ char *dir = NULL, *entry = NULL, *tmp = NULL;
  struct sr_state s = { .name = (char *) "sr-1-0", .kind = (char *) "run",
                        .label = (char *) "python", .cgroup_name = (char *) "" };
  sr_error_t err = NULL;
  struct sr_state *list;
  size_t n = 99;

  if (geteuid () != 0)
    {
      skip_all ("mounting a small tmpfs needs root");
      return 0;
    }
  if (unshare (CLONE_NEWNS) < 0 || mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    {
      printf ("1..0 # SKIP no mount namespace: %s\n", strerror (errno));
      return 0;
    }
  if (mkdtemp (base) == NULL || mount ("sr-test", base, "tmpfs", 0, "size=64k") < 0)
    {
      printf ("1..0 # SKIP cannot mount a tmpfs: %s\n", strerror (errno));
      return 0;
    }
  dir = sr_xasprintf ("%s/containers", base);
  ok (sr_state_write (dir, &s, &err) == 0, "an entry is written on a small tmpfs");
  ok (sr_state_remove (dir, s.name) == 0, "and removed");

  fill (base);
  ok (sr_state_write (dir, &s, &err) < 0, "with the file system full, writing one fails");
  is_int (err ? err->errnum : 0, ENOSPC, "with ENOSPC");
  ok (err && strstr (err->msg, "the file system of ") && strstr (err->msg, dir)
          && strstr (err->msg, " is full"),
      "and a message that names the full file system (%s)", err ? err->msg : "");
  entry = sr_xasprintf ("%s/%s.json", dir, s.name);
  tmp = sr_xasprintf ("%s.tmp", entry);
  ok (access (entry, F_OK) < 0 && access (tmp, F_OK) < 0, "no entry nor temporary file is left");
  ok (sr_state_list (dir, &list, &n, NULL) == 0 && n == 0, "the list is empty");
  sr_state_list_free (list, n);
  sr_error_free (&err);

  {
    _cleanup_free_ char *filler = sr_xasprintf ("%s/filler", base);

    unlink (filler);
  }
  ok (sr_state_write (dir, &s, &err) == 0, "once there is room again, it is written");

  (void) umount2 (base, MNT_DETACH);
  (void) rmdir (base);
  return done_testing ();
}
