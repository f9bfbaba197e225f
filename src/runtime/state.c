#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/statedir.h"
#include "common/util.h"
#include "runtime/state.h"

void
sr_state_done (struct sr_state *s)
{
  free (s->name);
  free (s->kind);
  free (s->label);
  free (s->cgroup_name);
  sr_strv_free (s->cgroup_dirs);
  memset (s, 0, sizeof *s);
}

bool
sr_state_process_alive (pid_t pid, uint64_t start)
{
  return pid > 0 && start != 0 && sr_process_start_time (pid) == start;
}

bool
sr_state_running (const struct sr_state *s)
{
  return sr_state_process_alive (s->runner_pid, s->runner_start)
         && sr_state_process_alive (s->init_pid, s->init_start);
}

static char *
entry_path (const char *dir, const char *name)
{
  return sr_xasprintf ("%s/%s.json", dir, name);
}

/* A failed write of an entry: when its file system is full, say so and
 * which one, since the runner's state dir is not where a user looks.  */
static int
write_failed (sr_error_t *err, int errnum, const char *what, const char *path, const char *dir)
{
  if (errnum == ENOSPC || errnum == EDQUOT)
    return sr_error_set (err, errnum, "%s %s: the file system of %s is full", what, path, dir);
  return sr_error_set (err, errnum, "%s %s", what, path);
}

/* Puts the written tmp where path is, atomically.  A second write of an
 * entry (the same run's, with its init) exchanges the two files and
 * removes the old one rather than renaming over it: on ext4, a rename
 * over a file starts the writeback of the new one (auto_da_alloc), and
 * the unlink at the end of the run then waits for that I/O, 2-4 ms on
 * this disk, on every run where the runtime dir is not a tmpfs.  */
static int
put_in_place (const char *tmp, const char *path, sr_error_t *err)
{
  if (renameat2 (AT_FDCWD, tmp, AT_FDCWD, path, RENAME_EXCHANGE) == 0)
    {
      unlink (tmp);
      return 0;
    }
  /* ENOENT: the first write; EINVAL or ENOSYS: a file system or a kernel
   * that cannot exchange.  */
  if ((errno == ENOENT || errno == EINVAL || errno == ENOSYS) && rename (tmp, path) == 0)
    return 0;
  sr_error_set (err, errno, "rename %s", tmp);
  unlink (tmp);
  return -1;
}

int
sr_state_write (const char *dir, const struct sr_state *s, sr_error_t *err)
{
  _cleanup_free_ char *path = entry_path (dir, s->name), *tmp = NULL, *text = NULL;
  _cleanup_close_ int dfd = -1, fd = -1;
  cJSON *o, *l;

  dfd = sr_statedir_open (dir, "runtime_dir", 0, err);
  if (dfd < 0)
    return -1;
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "name", s->name);
  cJSON_AddStringToObject (o, "kind", s->kind ? s->kind : "run");
  cJSON_AddStringToObject (o, "label", s->label ? s->label : "");
  cJSON_AddNumberToObject (o, "runner_pid", s->runner_pid);
  cJSON_AddNumberToObject (o, "runner_start", (double) s->runner_start);
  cJSON_AddNumberToObject (o, "init_pid", s->init_pid);
  cJSON_AddNumberToObject (o, "init_start", (double) s->init_start);
  cJSON_AddNumberToObject (o, "created", (double) s->created);
  cJSON_AddNumberToObject (o, "memory", (double) s->memory);
  cJSON_AddNumberToObject (o, "cpus", s->cpus);
  cJSON_AddNumberToObject (o, "pids", s->pids);
  l = cJSON_AddObjectToObject (o, "limits");
  cJSON_AddStringToObject (l, "memory", sr_limit_mechanism_name (s->limits.memory));
  cJSON_AddStringToObject (l, "cpu", sr_limit_mechanism_name (s->limits.cpu));
  cJSON_AddStringToObject (l, "pids", sr_limit_mechanism_name (s->limits.pids));
  cJSON_AddStringToObject (o, "cgroup", s->cgroup_name ? s->cgroup_name : "");
  l = cJSON_AddArrayToObject (o, "cgroup_dirs");
  for (size_t i = 0; s->cgroup_dirs && s->cgroup_dirs[i]; i++)
    cJSON_AddItemToArray (l, cJSON_CreateString (s->cgroup_dirs[i]));
  text = cJSON_PrintUnformatted (o);
  cJSON_Delete (o);

  /* Written whole and renamed, so a reader never sees half an entry.  */
  tmp = sr_xasprintf ("%s.tmp", path);
  fd = open (tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return write_failed (err, errno, "create", tmp, dir);
  if (sr_write_all (fd, text, strlen (text)) < 0)
    {
      write_failed (err, errno, "write", tmp, dir);
      unlink (tmp);
      return -1;
    }
  return put_in_place (tmp, path, err);
}

int
sr_state_remove (const char *dir, const char *name)
{
  _cleanup_free_ char *path = entry_path (dir, name);

  return unlink (path) < 0 && errno != ENOENT ? -1 : 0;
}

static enum sr_limit_mechanism
mechanism_from_name (const char *name)
{
  for (int m = SR_LIMIT_NONE; m <= SR_LIMIT_RLIMIT; m++)
    if (name && strcmp (sr_limit_mechanism_name ((enum sr_limit_mechanism) m), name) == 0)
      return (enum sr_limit_mechanism) m;
  return SR_LIMIT_NONE;
}

static char *
get_string (const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);

  return sr_xstrdup (cJSON_IsString (v) ? v->valuestring : "");
}

static double
get_number (const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);

  return cJSON_IsNumber (v) ? v->valuedouble : 0;
}

/* The largest entry read: a few hundred bytes and the command line.  */
#define ENTRY_MAX (1024 * 1024)

/* Reads entry `file` of the state dir open as dfd: only a regular file of
 * ours, since whoever wrote it chooses the process a reclaim kills.  */
static int
read_entry (int dfd, const char *file, struct sr_state *s)
{
  _cleanup_free_ char *text = NULL;
  _cleanup_close_ int fd = -1;
  const cJSON *l;
  struct stat st;
  cJSON *o;

  fd = openat (dfd, file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ())
    return -1;
  if (sr_read_fd (fd, ENTRY_MAX, &text, NULL) < 0)
    return -1;
  o = cJSON_Parse (text);
  if (o == NULL)
    return -1;
  s->name = get_string (o, "name");
  s->kind = get_string (o, "kind");
  s->label = get_string (o, "label");
  s->cgroup_name = get_string (o, "cgroup");
  s->runner_pid = (pid_t) get_number (o, "runner_pid");
  s->runner_start = (uint64_t) get_number (o, "runner_start");
  s->init_pid = (pid_t) get_number (o, "init_pid");
  s->init_start = (uint64_t) get_number (o, "init_start");
  s->created = (int64_t) get_number (o, "created");
  s->memory = (uint64_t) get_number (o, "memory");
  s->cpus = get_number (o, "cpus");
  s->pids = (uint32_t) get_number (o, "pids");
  cJSON_ArrayForEach (l, cJSON_GetObjectItemCaseSensitive (o, "cgroup_dirs"))
    if (cJSON_IsString (l))
      sr_strv_push (&s->cgroup_dirs, l->valuestring);
  l = cJSON_GetObjectItemCaseSensitive (o, "limits");
  if (l)
    {
      _cleanup_free_ char *mem = get_string (l, "memory"), *cpu = get_string (l, "cpu"),
                          *pids = get_string (l, "pids");

      s->limits.memory = mechanism_from_name (mem);
      s->limits.cpu = mechanism_from_name (cpu);
      s->limits.pids = mechanism_from_name (pids);
    }
  cJSON_Delete (o);
  return s->name[0] ? 0 : -1;
}

/* The state dir, checked as sr_statedir_open does; 0 without error when
 * it does not exist.  */
static int
open_existing (const char *dir, sr_error_t *err)
{
  sr_error_t local = NULL;
  int fd = sr_statedir_open (dir, "runtime_dir", SR_STATEDIR_NO_CREATE, &local);

  if (fd >= 0)
    return fd;
  if (local->errnum == ENOENT)
    {
      sr_error_free (&local);
      return -2;
    }
  sr_error_move (err, &local);
  return -1;
}

int
sr_state_list (const char *dir, struct sr_state **ret, size_t *ret_n, sr_error_t *err)
{
  struct sr_state *list = NULL;
  size_t n = 0;
  struct dirent *de;
  DIR *d;
  int dfd;

  *ret = NULL;
  *ret_n = 0;
  dfd = open_existing (dir, err);
  if (dfd < 0)
    return dfd == -2 ? 0 : -1;
  d = fdopendir (dfd);
  if (d == NULL)
    {
      sr_error_set (err, errno, "open %s", dir);
      close (dfd);
      return -1;
    }
  while ((de = readdir (d)) != NULL)
    {
      size_t len = strlen (de->d_name);
      struct sr_state s = { 0 };

      if (len < 6 || strcmp (de->d_name + len - 5, ".json") != 0)
        continue;
      if (read_entry (dirfd (d), de->d_name, &s) < 0)
        {
          sr_state_done (&s);
          continue;
        }
      list = sr_xrealloc (list, (n + 1) * sizeof *list);
      list[n++] = s;
    }
  closedir (d);
  *ret = list;
  *ret_n = n;
  return 0;
}

void
sr_state_list_free (struct sr_state *list, size_t n)
{
  for (size_t i = 0; i < n; i++)
    sr_state_done (&list[i]);
  free (list);
}

/* Signals the init only if it is still the process the entry names:
 * through a pidfd opened and then checked, so the pid cannot be recycled
 * between check and kill.  */
static int
kill_init (const struct sr_state *s)
{
  int pidfd, r = 0;

  /* An entry written before its container's init existed.  */
  if (s->init_pid <= 0)
    return 0;
  pidfd = (int) syscall (SYS_pidfd_open, s->init_pid, 0);
  if (pidfd < 0)
    return errno == ESRCH ? 0 : -1;
  if (sr_state_process_alive (s->init_pid, s->init_start))
    r = (int) syscall (SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
  close (pidfd);
  return r;
}

int
sr_state_kill (const char *dir, const char *name, sr_error_t *err)
{
  _cleanup_free_ char *file = NULL;
  _cleanup_close_ int dfd = -1;
  struct sr_state s = { 0 };
  int r = 0;

  for (const char *p = name; *p; p++)
    if (*p == '/')
      return sr_error_set (err, EINVAL, "invalid container name '%s'", name);
  dfd = open_existing (dir, err);
  if (dfd == -1)
    return -1;
  file = sr_xasprintf ("%s.json", name);
  if (dfd < 0 || read_entry (dfd, file, &s) < 0)
    {
      sr_state_done (&s);
      return sr_error_set (err, ENOENT, "no container named '%s' (see 'sandbox-runner ps')",
                           name);
    }
  if (!sr_state_process_alive (s.init_pid, s.init_start))
    r = sr_error_set (err, ESRCH, "container '%s' is not running", name);
  else if (kill_init (&s) < 0)
    r = sr_error_set (err, errno, "kill container '%s'", name);
  sr_state_done (&s);
  return r;
}

/* Kills what is left of the container of a dead runner's entry and
 * removes its cgroups; 0 when nothing of it is left.  */
static int
reclaim_entry (const struct sr_state *s, sr_error_t *err)
{
  _cleanup_free_ char *prefix = sr_xasprintf ("sr-%ld-", (long) s->runner_pid);
  _cleanup_strv_ char **planned = NULL;
  char *const *dirs = s->cgroup_dirs;

  /* The names a runner gives its containers: an entry naming anything
   * else was not written by one.  */
  if (strncmp (s->name, prefix, strlen (prefix)) != 0
      || (s->cgroup_name[0] && strcmp (s->cgroup_name, s->name) != 0))
    return sr_error_set (err, EINVAL, "state entry %s: not a container of runner %ld", s->name,
                         (long) s->runner_pid);
  if (kill_init (s) < 0)
    return sr_error_set (err, errno, "kill the init of %s", s->name);
  if (s->cgroup_name[0] == '\0')
    return 0;
  /* An entry from before the paths were recorded: its cgroups are where
   * they were made, below the runner's cgroups, which ours may be.  */
  if (dirs == NULL)
    dirs = planned = sr_cgroup_planned_dirs (s->cgroup_name);
  return sr_cgroup_reclaim (s->cgroup_name, dirs, err);
}

int
sr_state_reclaim (const char *dir, sr_error_t *err)
{
  struct sr_state *list;
  size_t n;
  int reclaimed = 0;

  if (sr_state_list (dir, &list, &n, err) < 0)
    return -1;
  for (size_t i = 0; i < n; i++)
    {
      const struct sr_state *s = &list[i];
      sr_error_t e = NULL;

      if (sr_state_process_alive (s->runner_pid, s->runner_start))
        continue;
      if (reclaim_entry (s, &e) < 0)
        {
          sr_error_move (err && !*err ? err : NULL, &e);
          continue;
        }
      sr_state_remove (dir, s->name);
      reclaimed++;
    }
  sr_state_list_free (list, n);
  return reclaimed;
}
