/* Work directories: a reclaim removes every unlocked one at once, whatever
 * its age, and never one a live writer holds, even when the reclaim runs
 * between the writer's mkdtemp and its flock (src/runtime/state.c).  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "common/workdir.h"
#include "tap.h"

static int
put (const char *path)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  if (fd < 0)
    return -1;
  close (fd);
  return 0;
}

static bool
exists (const char *base, const char *name)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/%s", base, name);
  struct stat sb;

  return lstat (path, &sb) == 0;
}

/* What a writer that holds fd must see: the lock is its own and the path
 * still names the directory.  */
static bool
held_and_named (int fd, const char *path)
{
  struct stat held, named;
  int other = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  bool locked;

  if (other < 0)
    return false;
  locked = flock (other, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
  close (other);
  return locked && fstat (fd, &held) == 0 && held.st_nlink > 0 && lstat (path, &named) == 0
         && held.st_ino == named.st_ino && held.st_dev == named.st_dev;
}

int
main (void)
{
  char base[] = "/tmp/sr-test-workdir-XXXXXX";
  _cleanup_free_ char *tmpl = NULL, *dead = NULL, *other = NULL, *link = NULL;
  sr_error_t err = NULL;
  int fd = -1, made = 0, lost = 0;
  pid_t reclaimer;

  if (mkdtemp (base) == NULL)
    return 1;

  tmpl = sr_xasprintf ("%s/code-XXXXXX", base);
  ok (sr_workdir_make (tmpl, &fd, &err) == 0, "sr_workdir_make makes a directory");
  ok (strncmp (tmpl, base, strlen (base)) == 0 && strstr (tmpl, "XXXXXX") == NULL,
      "and fills in the template (%s)", tmpl);
  ok (held_and_named (fd, tmpl), "its descriptor holds the directory's lock");

  /* A dead writer's: made a moment ago, no lock.  */
  dead = sr_xasprintf ("%s/code-dead", base);
  other = sr_xasprintf ("%s/other-dead", base);
  link = sr_xasprintf ("%s/code-link", base);
  if (mkdir (dead, 0700) < 0 || mkdir (other, 0700) < 0 || symlink (other, link) < 0)
    return 1;
  {
    _cleanup_free_ char *inside = sr_xasprintf ("%s/main.py", dead);

    if (put (inside) < 0)
      return 1;
  }
  is_int (sr_workdir_reclaim (base, "code-"), 1, "a reclaim removes one directory");
  ok (!exists (base, "code-dead"), "the unlocked one, made this very second, files and all");
  ok (held_and_named (fd, tmpl), "not the one a live writer holds");
  ok (exists (base, "other-dead"), "nor one without the prefix");
  ok (exists (base, "code-link") && exists (base, "other-dead"),
      "and it does not follow a symlink with the prefix");
  close (fd);
  is_int (sr_workdir_reclaim (base, "code-"), 1, "once its writer lets go, the reclaim removes it");
  ok (!exists (base, strrchr (tmpl, '/') + 1), "it is gone");

  /* The race: a reclaimer that never stops, against a writer making
   * directories; every one the writer gets must be its own and stay.  */
  reclaimer = fork ();
  if (reclaimer < 0)
    return 1;
  if (reclaimer == 0)
    {
      for (;;)
        sr_workdir_reclaim (base, "code-");
    }
  {
    struct timespec start, now;

    clock_gettime (CLOCK_MONOTONIC, &start);
    do
      {
        _cleanup_free_ char *t = sr_xasprintf ("%s/code-XXXXXX", base);
        _cleanup_free_ char *f = NULL;

        if (sr_workdir_make (t, &fd, &err) < 0)
          {
            printf ("# sr_workdir_make: %s\n", err->msg);
            lost++;
            break;
          }
        made++;
        /* Long enough for the reclaimer to have tried it.  */
        f = sr_xasprintf ("%s/main.py", t);
        if (!held_and_named (fd, t) || put (f) < 0)
          lost++;
        usleep (200);
        if (!held_and_named (fd, t) || !exists (t, "main.py"))
          lost++;
        close (fd);
        clock_gettime (CLOCK_MONOTONIC, &now);
      }
    while (now.tv_sec - start.tv_sec < 2);
  }
  kill (reclaimer, SIGKILL);
  waitpid (reclaimer, NULL, 0);
  printf ("# %d directories made against a reclaimer running all along\n", made);
  ok (made > 100, "a writer makes directories while a reclaimer runs");
  is_int (lost, 0, "and none it got was removed under it");

  sr_workdir_reclaim (base, "code-");
  (void) sr_rm_rf_at (AT_FDCWD, base, NULL);
  sr_error_free (&err);
  return done_testing ();
}
