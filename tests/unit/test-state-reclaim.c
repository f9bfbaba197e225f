/* The reclaim of what dead runners left (src/runtime/state.c): an entry
 * keeps the full path of each cgroup of its container, a reclaim removes
 * the entry only once every one of them is gone, and a path that is not a
 * cgroup of that container (a forged or damaged entry) is refused, the
 * entry kept, nothing touched: so is any path outside /sys/fs/cgroup.
 * Entries of live runners are left alone.  No cgroup is made here: the
 * paths are plain directories or missing.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "runtime/state.h"
#include "tap.h"

static char base[] = "/tmp/sr-test-state-reclaim-XXXXXX";
static char *dir;

/* A pid whose process is gone (a child that exited and was reaped).  */
static pid_t
dead_pid (void)
{
  pid_t pid = fork ();

  if (pid == 0)
    _exit (0);
  if (pid < 0 || waitpid (pid, NULL, 0) != pid)
    {
      printf ("Bail out! fork: %s\n", strerror (errno));
      exit (99);
    }
  return pid;
}

/* Writes the entry of container `name` of runner pid (start 1: never a
 * live process's) with the cgroup paths dirs (NULL-terminated).  */
static void
put_entry (const char *name, pid_t runner, char *const *dirs)
{
  struct sr_state s = { .name = (char *) name, .kind = (char *) "run", .label = (char *) "",
                        .runner_pid = runner, .runner_start = 1,
                        .cgroup_name = (char *) (dirs ? name : ""),
                        .cgroup_dirs = (char **) dirs };

  if (sr_state_write (dir, &s, NULL) < 0)
    {
      printf ("Bail out! cannot write the entry %s\n", name);
      exit (99);
    }
}

static bool
entry_exists (const char *name)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/%s.json", dir, name);

  return access (path, F_OK) == 0;
}

/* A reclaim that is refused by the path p of the entry of container name:
 * the entry stays, p too, and the error says why.  */
static void
refused (const char *name, pid_t runner, const char *p, const char *what)
{
  char *dirs[] = { (char *) p, NULL };
  sr_error_t err = NULL;

  put_entry (name, runner, dirs);
  is_int (sr_state_reclaim (dir, &err), 0, what);
  ok (entry_exists (name) && err != NULL, "  the entry stays, with an error (%s)",
      err ? err->msg : "none");
  sr_error_free (&err);
  sr_state_remove (dir, name);
}

int
main (void)
{
  pid_t dead = dead_pid ();
  _cleanup_free_ char *name = sr_xasprintf ("sr-%ld-0", (long) dead);
  _cleanup_free_ char *gone = NULL, *plain = NULL, *dotted = NULL, *other = NULL,
                      *outside = NULL;
  struct sr_state *list;
  size_t n = 0;

  if (mkdtemp (base) == NULL)
    {
      printf ("Bail out! mkdtemp: %s\n", strerror (errno));
      return 99;
    }
  dir = sr_xasprintf ("%s/containers", base);
  gone = sr_xasprintf ("/sys/fs/cgroup/sr-test-gone.%ld/%s", (long) getpid (), name);
  outside = sr_xasprintf ("%s/gone/%s", base, name);
  plain = sr_xasprintf ("%s/plain/%s", base, name);
  dotted = sr_xasprintf ("%s/plain/../plain/%s", base, name);
  other = sr_xasprintf ("%s/plain/victim", base);

  {
    char *dirs[] = { gone, plain, NULL };

    put_entry (name, dead, dirs);
    ok (sr_state_list (dir, &list, &n, NULL) == 0 && n == 1, "an entry is listed");
    ok (n == 1 && sr_strv_length (list[0].cgroup_dirs) == 2
            && strcmp (list[0].cgroup_dirs[0], gone) == 0
            && strcmp (list[0].cgroup_dirs[1], plain) == 0,
        "with the full path of each of its cgroups");
    sr_state_list_free (list, n);
    sr_state_remove (dir, name);
  }

  {
    char *dirs[] = { gone, NULL };

    put_entry (name, dead, dirs);
    is_int (sr_state_reclaim (dir, NULL), 1,
            "a dead runner's entry whose cgroups are gone is reclaimed");
    ok (!entry_exists (name), "  its file is removed");
  }

  put_entry (name, dead, NULL);
  is_int (sr_state_reclaim (dir, NULL), 1, "so is one that had no cgroup");

  if (sr_mkdir_p (plain, NULL) < 0 || sr_mkdir_p (other, NULL) < 0)
    {
      printf ("Bail out! mkdir %s: %s\n", plain, strerror (errno));
      return 99;
    }
  refused (name, dead, plain, "a directory outside the cgroup file systems is refused");
  ok (sr_is_dir (plain), "  and left alone");
  refused (name, dead, dotted, "a path with .. in it is refused");
  refused (name, dead, outside, "a path outside /sys/fs/cgroup is refused, even one that is gone");
  refused (name, dead, other, "a path that does not end in the container's name is refused");
  {
    _cleanup_free_ char *foreign = sr_xasprintf ("sr-%ld-0", (long) getpid ());
    _cleanup_free_ char *path = sr_xasprintf ("%s/gone/%s", base, foreign);

    refused (foreign, dead, path, "a container not named after its dead runner is refused");
  }

  {
    struct sr_state s = { .name = name, .kind = (char *) "run", .label = (char *) "",
                          .runner_pid = getpid (),
                          .runner_start = sr_process_start_time (getpid ()),
                          .cgroup_name = (char *) "" };

    if (sr_state_write (dir, &s, NULL) < 0)
      return 99;
    is_int (sr_state_reclaim (dir, NULL), 0, "the entry of a live runner is not reclaimed");
    ok (entry_exists (name), "  and stays");
  }

  (void) sr_rm_rf_at (AT_FDCWD, base, NULL);
  free (dir);
  return done_testing ();
}
