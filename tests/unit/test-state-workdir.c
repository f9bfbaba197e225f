/* Work directories (src/runtime/state.c; a run's scratch directory in
 * src/sandbox/code.c is one): a reclaim removes every directory whose
 * writer is gone at once, whatever its age, and never one a live writer
 * holds, whether that writer is this process or another runner, and even
 * when the reclaim runs between the writer's mkdtemp and its flock.
 *
 * Nothing here measures the machine: the other runner reports over a
 * pipe, the window between mkdtemp and flock is entered on purpose (this
 * test is linked with -Wl,--wrap=flock, see tests/unit/local.mk), and the
 * race against a reclaimer in another process is counted in directories
 * and in the reclaimer's whole passes, not in seconds.  A writer that gives
 * up under contention (EAGAIN, as state.h documents) lost nothing; a
 * helper that cannot be set up is a "Bail out!", never a lost directory.  */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "common/workdir.h"
#include "tap.h"

/* Directories the race must see a writer get and keep.  */
#define RACE_DIRS 300

/* Consecutive give-ups after which the race is not being run at all.  */
#define RACE_MAX_GIVE_UPS 1000

static char base[] = "/tmp/sr-test-workdir-XXXXXX";

static void __attribute__ ((noreturn, format (printf, 1, 2)))
bail_out (const char *fmt, ...)
{
  va_list ap;

  printf ("Bail out! ");
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
  (void) sr_rm_rf_at (AT_FDCWD, base, NULL);
  exit (99);
}

/* sr_workdir_make's blocking flock goes through here: while
 * reclaims_before_lock is above 0, each one is preceded by a reclaim of
 * base, as if a reclaimer had run between the writer's mkdtemp and its
 * flock.  Every other flock (the reclaim's own, non-blocking) passes.  */
int __real_flock (int fd, int operation);
int __wrap_flock (int fd, int operation);

static int reclaims_before_lock, removed_before_lock;

int
__wrap_flock (int fd, int operation)
{
  if (operation == LOCK_EX && reclaims_before_lock > 0)
    {
      reclaims_before_lock--;
      removed_before_lock += sr_workdir_reclaim (base, "code-");
    }
  return __real_flock (fd, operation);
}

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
exists (const char *dir, const char *name)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/%s", dir, name);
  struct stat sb;

  return lstat (path, &sb) == 0;
}

/* True when someone holds the lock of the directory at path.  */
static bool
locked_by_someone (const char *path)
{
  int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  bool locked;

  if (fd < 0)
    return false;
  locked = flock (fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
  close (fd);
  return locked;
}

/* What a writer that holds fd must see: the lock is held and the path
 * still names the directory.  */
static bool
held_and_named (int fd, const char *path)
{
  struct stat held, named;

  return locked_by_someone (path) && fstat (fd, &held) == 0 && held.st_nlink > 0
         && lstat (path, &named) == 0 && held.st_ino == named.st_ino
         && held.st_dev == named.st_dev;
}

/* The number of directories in base whose name starts with "code-".  */
static int
count_workdirs (void)
{
  DIR *d = opendir (base);
  struct dirent *de;
  struct stat sb;
  int n = 0;

  if (d == NULL)
    bail_out ("opendir %s: %s", base, strerror (errno));
  while ((de = readdir (d)) != NULL)
    if (strncmp (de->d_name, "code-", 5) == 0
        && fstatat (dirfd (d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (sb.st_mode))
      n++;
  closedir (d);
  return n;
}

/* Another runner: makes a work directory with a file in it, writes its
 * name (or "!" and why it could not) and a newline to ready_fd, then holds
 * it until hold_fd reads end of file or the runner is killed.  */
static void __attribute__ ((noreturn))
runner (int ready_fd, int hold_fd)
{
  _cleanup_free_ char *tmpl = sr_xasprintf ("%s/code-XXXXXX", base);
  _cleanup_free_ char *file = NULL;
  _cleanup_free_ char *msg = NULL;
  sr_error_t err = NULL;
  ssize_t n;
  char c;
  int fd;

  if (sr_workdir_make (tmpl, &fd, &err) < 0)
    msg = sr_xasprintf ("!sr_workdir_make: %s\n", err->msg);
  else
    {
      file = sr_xasprintf ("%s/main.py", tmpl);
      msg = put (file) < 0 ? sr_xasprintf ("!%s: %s\n", file, strerror (errno))
                           : sr_xasprintf ("%s\n", tmpl);
    }
  if (write (ready_fd, msg, strlen (msg)) != (ssize_t) strlen (msg))
    _exit (1);
  do
    n = read (hold_fd, &c, 1);
  while (n < 0 && errno == EINTR);
  _exit (0);
}

/* Starts a runner; returns its pid and its directory's name in path.  */
static pid_t
start_runner (char *path, size_t size, int *ret_hold_fd)
{
  int ready[2], hold[2];
  size_t len = 0;
  ssize_t n;
  pid_t pid;

  if (pipe2 (ready, O_CLOEXEC) < 0 || pipe2 (hold, O_CLOEXEC) < 0)
    bail_out ("pipe: %s", strerror (errno));
  pid = fork ();
  if (pid < 0)
    bail_out ("fork: %s", strerror (errno));
  if (pid == 0)
    {
      close (ready[0]);
      close (hold[1]);
      runner (ready[1], hold[0]);
    }
  close (ready[1]);
  close (hold[0]);
  while (len < size - 1 && (n = read (ready[0], path + len, size - 1 - len)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        bail_out ("read from the runner: %s", strerror (errno));
      len += n;
      if (path[len - 1] == '\n')
        break;
    }
  close (ready[0]);
  path[len] = '\0';
  if (len == 0 || path[len - 1] != '\n')
    bail_out ("the runner died before it reported its directory");
  path[len - 1] = '\0';
  if (path[0] == '!')
    bail_out ("the runner could not make its directory: %s", path + 1);
  *ret_hold_fd = hold[1];
  return pid;
}

/* The reclaimer of the race: reclaims base for ever, counting its whole
 * passes in *passes.  */
static void __attribute__ ((noreturn))
reclaimer (unsigned long *passes)
{
  for (;;)
    {
      sr_workdir_reclaim (base, "code-");
      __atomic_add_fetch (passes, 1, __ATOMIC_SEQ_CST);
    }
}

/* Waits until the reclaimer has made a whole pass that began after now.  */
static void
wait_for_a_whole_pass (pid_t pid, unsigned long *passes)
{
  unsigned long until = __atomic_load_n (passes, __ATOMIC_SEQ_CST) + 2;

  while (__atomic_load_n (passes, __ATOMIC_SEQ_CST) < until)
    {
      if (waitpid (pid, NULL, WNOHANG) != 0)
        bail_out ("the reclaimer died");
      sched_yield ();
    }
}

/* This process as the writer, and a dead writer's directory beside it.  */
static void
test_own_writer (void)
{
  _cleanup_free_ char *tmpl = sr_xasprintf ("%s/code-XXXXXX", base);
  _cleanup_free_ char *dead = sr_xasprintf ("%s/code-dead", base);
  _cleanup_free_ char *other = sr_xasprintf ("%s/other-dead", base);
  _cleanup_free_ char *link = sr_xasprintf ("%s/code-link", base);
  _cleanup_free_ char *inside = sr_xasprintf ("%s/main.py", dead);
  sr_error_t err = NULL;
  int fd = -1;

  ok (sr_workdir_make (tmpl, &fd, &err) == 0, "sr_workdir_make makes a directory");
  ok (strncmp (tmpl, base, strlen (base)) == 0 && strstr (tmpl, "XXXXXX") == NULL,
      "and fills in the template (%s)", tmpl);
  ok (held_and_named (fd, tmpl), "its descriptor holds the directory's lock");

  /* A dead writer's: made a moment ago, no lock.  */
  if (mkdir (dead, 0700) < 0 || mkdir (other, 0700) < 0 || symlink (other, link) < 0
      || put (inside) < 0)
    bail_out ("set-up of %s: %s", base, strerror (errno));
  is_int (sr_workdir_reclaim (base, "code-"), 1, "a reclaim removes one directory");
  ok (!exists (base, "code-dead"), "the unlocked one, made this very second, files and all");
  ok (held_and_named (fd, tmpl), "not the one a live writer holds");
  ok (exists (base, "other-dead"), "nor one without the prefix");
  ok (exists (base, "code-link") && exists (base, "other-dead"),
      "and it does not follow a symlink with the prefix");
  close (fd);
  is_int (sr_workdir_reclaim (base, "code-"), 1, "once its writer lets go, the reclaim removes it");
  ok (!exists (base, strrchr (tmpl, '/') + 1), "it is gone");
  sr_error_free (&err);
}

/* Another runner as the writer, alive and then dead.  */
static void
test_other_runner (void)
{
  char theirs[PATH_MAX];
  int hold_fd;
  pid_t pid = start_runner (theirs, sizeof theirs, &hold_fd);

  is_int (sr_workdir_reclaim (base, "code-"), 0,
          "a reclaim removes nothing another live runner holds");
  ok (exists (theirs, "main.py") && locked_by_someone (theirs),
      "its directory stays, files and lock and all");
  kill (pid, SIGKILL);
  if (waitpid (pid, NULL, 0) != pid)
    bail_out ("waitpid: %s", strerror (errno));
  close (hold_fd);
  is_int (sr_workdir_reclaim (base, "code-"), 1, "once that runner is dead, a reclaim removes it");
  ok (!exists (theirs, "."), "it is gone");
}

/* The window between mkdtemp and flock, entered on purpose.  */
static void
test_window (void)
{
  _cleanup_free_ char *tmpl = sr_xasprintf ("%s/code-XXXXXX", base);
  sr_error_t err = NULL;
  int fd = -1;

  reclaims_before_lock = 1;
  removed_before_lock = 0;
  ok (sr_workdir_make (tmpl, &fd, &err) == 0,
      "a writer whose first directory is reclaimed before it locks it makes another");
  is_int (removed_before_lock, 1, "(the reclaim did remove the first)");
  ok (held_and_named (fd, tmpl), "and holds the one it hands out");
  is_int (count_workdirs (), 1, "which is the only one left");
  close (fd);
  sr_workdir_reclaim (base, "code-");

  reclaims_before_lock = INT_MAX;
  removed_before_lock = 0;
  free (tmpl);
  tmpl = sr_xasprintf ("%s/code-XXXXXX", base);
  fd = -1;
  ok (sr_workdir_make (tmpl, &fd, &err) < 0 && err->errnum == EAGAIN && fd < 0,
      "a writer whose every directory is reclaimed before it locks it gives up with EAGAIN");
  ok (removed_before_lock > 1 && count_workdirs () == 0,
      "after %d tries, leaving nothing behind", removed_before_lock);
  reclaims_before_lock = 0;
  sr_error_free (&err);
}

/* The race: a reclaimer in another process that never stops, against
 * this process making directories; every one it gets must be its own and
 * stay for as long as it holds it.  */
static void
test_race (void)
{
  int made = 0, lost = 0, give_ups = 0, in_a_row = 0;
  sr_error_t err = NULL;
  unsigned long *passes;
  pid_t pid;

  passes = mmap (NULL, sizeof *passes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (passes == MAP_FAILED)
    bail_out ("mmap: %s", strerror (errno));
  *passes = 0;
  pid = fork ();
  if (pid < 0)
    bail_out ("fork: %s", strerror (errno));
  if (pid == 0)
    reclaimer (passes);
  while (made < RACE_DIRS)
    {
      _cleanup_free_ char *t = sr_xasprintf ("%s/code-XXXXXX", base);
      _cleanup_free_ char *f = NULL;
      int fd;

      if (sr_workdir_make (t, &fd, &err) < 0)
        {
          if (err->errnum != EAGAIN)
            bail_out ("sr_workdir_make: %s", err->msg);
          sr_error_free (&err);
          give_ups++;
          if (++in_a_row == RACE_MAX_GIVE_UPS)
            bail_out ("sr_workdir_make gave up %d times in a row", in_a_row);
          continue;
        }
      in_a_row = 0;
      made++;
      f = sr_xasprintf ("%s/main.py", t);
      if (!held_and_named (fd, t) || put (f) < 0)
        lost++;
      wait_for_a_whole_pass (pid, passes);
      if (!held_and_named (fd, t) || !exists (t, "main.py"))
        lost++;
      close (fd);
    }
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  printf ("# %d directories held through %lu passes of a reclaimer; "
          "the writer gave up %d time(s), as it may under contention\n",
          made, *passes, give_ups);
  is_int (lost, 0, "against a reclaimer running all along, no directory a writer got was "
                   "removed under it");
  munmap (passes, sizeof *passes);
}

int
main (void)
{
  if (mkdtemp (base) == NULL)
    {
      printf ("Bail out! mkdtemp: %s\n", strerror (errno));
      return 99;
    }
  test_own_writer ();
  test_other_runner ();
  test_window ();
  test_race ();
  sr_workdir_reclaim (base, "code-");
  (void) sr_rm_rf_at (AT_FDCWD, base, NULL);
  return done_testing ();
}
