/* Resource limits through cgroups: v2 where the controllers are on the
 * unified hierarchy, v1 per controller where they are not (hybrid hosts).
 *
 * The runner's own cgroups are found once from /proc/self/cgroup and
 * /proc/self/mountinfo; every container cgroup is a direct child of them.  */
#define _GNU_SOURCE
#include "runtime/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

/* The controllers we limit, in the order of enum controller.  */
enum controller
{
  CTL_MEMORY,
  CTL_CPU,
  CTL_PIDS,
  CTL_COUNT,
};

static const char *const controller_names[CTL_COUNT] = { "memory", "cpu", "pids" };

/* The v2 leaf the runner moves itself into when its own cgroup must hand
 * controllers down ("no internal processes").  */
#define RUNNER_LEAF "sr-runner"

/* Time given to a cgroup to empty after SIGKILL before rmdir gives up.  */
#define DRAIN_TIMEOUT_NS (2ull * 1000 * 1000 * 1000)

/* The same for the cgroup of a dead runner: every start reclaims, so a
 * cgroup that will not go must not cost each of them long; its state
 * entry stays for the next start to try again.  */
#define RECLAIM_TIMEOUT_NS (500ull * 1000 * 1000)

struct hierarchies
{
  char *v2_base;                 /* the runner's own v2 cgroup directory, or NULL */
  char *v1_base[CTL_COUNT];      /* the runner's own v1 cgroup per controller, or NULL */
};

struct sr_cgroup
{
  char *v2_dir;                  /* the container's v2 cgroup, or NULL */
  int v2_fd;                     /* O_DIRECTORY fd of v2_dir, or -1 */
  char *v1_dir[CTL_COUNT];       /* the container's v1 cgroup per controller, or NULL */
  int v1_fd[CTL_COUNT];          /* O_PATH fd of v1_dir[c], or -1 */
  bool v2_has[CTL_COUNT];        /* controllers enabled in v2_dir */
  atomic_uint execs;             /* exec cgroups made so far, for their names */
};

/* The cgroups of one command of a held container are named EXEC_PREFIX
 * and a number, one level below the container's.  */
#define EXEC_PREFIX "exec-"

struct sr_cgroup_exec
{
  char *dir;
  bool v2;
};

static struct hierarchies hier;
static pthread_once_t hier_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t v2_setup_lock = PTHREAD_MUTEX_INITIALIZER;

/* True when word is one of the items of list, which are separated by any
 * of the characters in seps (",": mount options, " \n": cgroup.controllers).  */
static bool
has_item (const char *list, const char *seps, const char *word)
{
  size_t n = strlen (word);

  for (const char *p = list; p && *p;)
    {
      p += strspn (p, seps);
      size_t len = strcspn (p, seps);
      if (len == n && strncmp (p, word, n) == 0)
        return true;
      p += len;
    }
  return false;
}

/* Unescapes mountinfo's octal escapes (\040 for space) in place.  */
static void
unescape_octal (char *s)
{
  char *out = s;

  for (char *in = s; *in; in++)
    {
      if (in[0] == '\\' && in[1] >= '0' && in[1] <= '7' && in[2] >= '0' && in[2] <= '7'
          && in[3] >= '0' && in[3] <= '7')
        {
          *out++ = (char) (((in[1] - '0') << 6) | ((in[2] - '0') << 3) | (in[3] - '0'));
          in += 3;
        }
      else
        *out++ = *in;
    }
  *out = '\0';
}

/* The directory of cgroup `path` in a hierarchy mounted at `mnt` whose
 * mount shows the hierarchy from `root` down, or NULL when the path is not
 * visible through that mount.  */
static char *
join_cgroup_dir (const char *mnt, const char *root, const char *path)
{
  size_t rlen = strlen (root);

  if (strcmp (root, "/") == 0)
    rlen = 0;
  else if (strncmp (path, root, rlen) != 0 || (path[rlen] != '/' && path[rlen] != '\0'))
    return NULL;
  const char *rel = path + rlen;
  if (strcmp (rel, "/") == 0)
    rel = "";
  return sr_xasprintf ("%s%s", mnt, rel);
}

/* The runner's cgroup path in the v2 hierarchy ("0::/a/b") and in the v1
 * hierarchy of each controller, from /proc/self/cgroup.  */
struct self_paths
{
  char *v2;
  char *v1[CTL_COUNT];
};

static void
read_self_paths (struct self_paths *sp)
{
  _cleanup_free_ char *buf = NULL;

  if (sr_read_file ("/proc/self/cgroup", &buf, NULL, NULL) < 0)
    return;
  for (char *save = NULL, *line = strtok_r (buf, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save))
    {
      char *ctrls = strchr (line, ':');
      char *path = ctrls ? strchr (ctrls + 1, ':') : NULL;
      if (!path)
        continue;
      *ctrls++ = '\0';
      *path++ = '\0';
      if (strcmp (line, "0") == 0 && *ctrls == '\0')
        {
          free (sp->v2);
          sp->v2 = sr_xstrdup (path);
          continue;
        }
      for (int c = 0; c < CTL_COUNT; c++)
        if (has_item (ctrls, ",", controller_names[c]))
          {
            free (sp->v1[c]);
            sp->v1[c] = sr_xstrdup (path);
          }
    }
}

static void
find_hierarchies (void)
{
  struct self_paths sp = { 0 };
  _cleanup_free_ char *buf = NULL;

  read_self_paths (&sp);
  if (sr_read_file ("/proc/self/mountinfo", &buf, NULL, NULL) < 0)
    goto out;
  for (char *save = NULL, *line = strtok_r (buf, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save))
    {
      /* id parent major:minor root mountpoint options [optional...] - fstype source super */
      char *fields[5] = { 0 };
      char *p = line;
      for (int i = 0; i < 5 && p; i++)
        {
          fields[i] = strsep (&p, " ");
        }
      char *sep = p ? strstr (p, " - ") : NULL;
      if (!fields[4] || !sep)
        continue;
      char *rest = sep + 3;
      char *fstype = strsep (&rest, " ");
      strsep (&rest, " ");
      char *super = rest ? rest : "";
      char *root = fields[3], *mnt = fields[4];
      unescape_octal (root);
      unescape_octal (mnt);

      if (strcmp (fstype, "cgroup2") == 0)
        {
          if (!hier.v2_base && sp.v2)
            hier.v2_base = join_cgroup_dir (mnt, root, sp.v2);
        }
      else if (strcmp (fstype, "cgroup") == 0)
        {
          for (int c = 0; c < CTL_COUNT; c++)
            if (!hier.v1_base[c] && sp.v1[c] && has_item (super, ",", controller_names[c]))
              hier.v1_base[c] = join_cgroup_dir (mnt, root, sp.v1[c]);
        }
    }

  /* A runner that moved itself into its leaf earlier (or whose parent
   * did) creates containers beside the leaf, not inside it.  */
  if (hier.v2_base)
    {
      char *slash = strrchr (hier.v2_base, '/');
      if (slash && strcmp (slash + 1, RUNNER_LEAF) == 0)
        *slash = '\0';
    }
out:
  free (sp.v2);
  for (int c = 0; c < CTL_COUNT; c++)
    free (sp.v1[c]);
}

static const struct hierarchies *
hierarchies (void)
{
  pthread_once (&hier_once, find_hierarchies);
  return &hier;
}

/* A container name is one path component we create ourselves.  */
static int
check_name (const char *name, sr_error_t *err)
{
  if (!name || !*name || strchr (name, '/') || strcmp (name, ".") == 0
      || strcmp (name, "..") == 0)
    return sr_error_set (err, EINVAL, "invalid cgroup name \"%s\"", name ? name : "");
  return 0;
}

/* A file of the cgroup directory dir, opened relative to dfd, an fd of
 * dir, where there is one (else -1): a v1 cgroup's path is six or seven
 * components deep, which kernfs walks at each open (6.5 us here, against
 * 3 us for the one component).  */
static int
open_at (int dfd, const char *dir, const char *file, int flags)
{
  _cleanup_free_ char *path = NULL;

  if (dfd >= 0)
    return openat (dfd, file, flags | O_CLOEXEC | O_NOCTTY);
  path = sr_xasprintf ("%s/%s", dir, file);
  return open (path, flags | O_CLOEXEC | O_NOCTTY);
}

static int
write_at (int dfd, const char *dir, const char *file, const char *value, sr_error_t *err)
{
  _cleanup_close_ int fd = open_at (dfd, dir, file, O_WRONLY);

  if (fd < 0)
    return sr_error_set (err, errno, "open %s/%s", dir, file);
  if (sr_write_all (fd, value, strlen (value)) < 0)
    return sr_error_set (err, errno, "write %s/%s", dir, file);
  return 0;
}

static char *
read_at (int dfd, const char *dir, const char *file)
{
  _cleanup_close_ int fd = open_at (dfd, dir, file, O_RDONLY);
  char *buf = NULL;

  if (fd < 0 || sr_read_fd (fd, SIZE_MAX, &buf, NULL) < 0)
    return NULL;
  return buf;
}

static bool
exists_at (int dfd, const char *dir, const char *file)
{
  _cleanup_free_ char *path = NULL;

  if (dfd >= 0)
    return faccessat (dfd, file, F_OK, 0) == 0;
  path = sr_xasprintf ("%s/%s", dir, file);
  return access (path, F_OK) == 0;
}

/* The number after "key " in a flat-keyed file (memory.events), or 0.  */
static uint64_t
keyed_value (const char *buf, const char *key)
{
  size_t n = strlen (key);

  for (const char *p = buf; p && *p;)
    {
      if (strncmp (p, key, n) == 0 && p[n] == ' ')
        return strtoull (p + n + 1, NULL, 10);
      p = strchr (p, '\n');
      if (p)
        p++;
    }
  return 0;
}

/* Moves every process of `from` into `to` (both v2 directories).  */
static int
move_procs (const char *from, const char *to, sr_error_t *err)
{
  _cleanup_free_ char *procs = read_at (-1, from, "cgroup.procs");
  _cleanup_free_ char *dest = sr_xasprintf ("%s/cgroup.procs", to);

  if (!procs)
    return sr_error_set (err, errno, "read %s/cgroup.procs", from);
  for (char *save = NULL, *pid = strtok_r (procs, "\n", &save); pid;
       pid = strtok_r (NULL, "\n", &save))
    {
      sr_error_t e = NULL;
      if (sr_write_file (dest, pid, &e) < 0 && e->errnum != ESRCH)
        {
          sr_error_move (err, &e);
          return sr_error_wrap (err, "move the runner's processes into %s", to);
        }
      sr_error_free (&e);
    }
  return 0;
}

/* Makes the controllers that `base` has available to its children
 * available to ours: writes +memory +cpu +pids to its subtree_control,
 * first moving the runner into a leaf when the kernel refuses because
 * `base` holds processes.  Sets enabled[] to what ended up enabled.  A
 * base we may not write to is not an error: its controllers stay off.  */
static int
enable_v2_controllers (const char *base, bool enabled[CTL_COUNT], sr_error_t *err)
{
  _cleanup_free_ char *available = read_at (-1, base, "cgroup.controllers");
  _cleanup_free_ char *subtree = NULL;
  int r = 0;

  if (!available)
    return 0;
  pthread_mutex_lock (&v2_setup_lock);
  subtree = read_at (-1, base, "cgroup.subtree_control");
  for (int c = 0; c < CTL_COUNT; c++)
    {
      const char *ctl = controller_names[c];
      if (!has_item (available, " \n", ctl))
        continue;
      if (subtree && has_item (subtree, " \n", ctl))
        {
          enabled[c] = true;
          continue;
        }
      _cleanup_free_ char *plus = sr_xasprintf ("+%s", ctl);
      sr_error_t e = NULL;
      if (write_at (-1, base, "cgroup.subtree_control", plus, &e) < 0 && e->errnum == EBUSY)
        {
          _cleanup_free_ char *leaf = sr_xasprintf ("%s/" RUNNER_LEAF, base);
          sr_error_free (&e);
          if (mkdir (leaf, 0755) < 0 && errno != EEXIST)
            {
              r = sr_error_set (err, errno, "mkdir %s", leaf);
              goto out;
            }
          if (move_procs (base, leaf, err) < 0)
            {
              r = -1;
              goto out;
            }
          write_at (-1, base, "cgroup.subtree_control", plus, &e);
        }
      if (!e)
        enabled[c] = true;
      else if (e->errnum != EACCES && e->errnum != EPERM && e->errnum != EROFS)
        {
          sr_error_move (err, &e);
          r = sr_error_wrap (err, "enable the %s controller in %s", ctl, base);
          goto out;
        }
      sr_error_free (&e);
    }
out:
  pthread_mutex_unlock (&v2_setup_lock);
  return r;
}

/* mkdir that tells "may not" (false, no error) from "failed" (-1).  */
static int
make_cgroup_dir (const char *path, bool *made, sr_error_t *err)
{
  *made = false;
  if (mkdir (path, 0755) == 0)
    {
      *made = true;
      return 0;
    }
  if (errno == EACCES || errno == EPERM || errno == EROFS)
    return 0;
  return sr_error_set (err, errno, "mkdir %s", path);
}

static int
write_limit (int dfd, const char *dir, const char *file, const char *value, sr_error_t *err)
{
  if (write_at (dfd, dir, file, value, err) < 0)
    return sr_error_wrap (err, "set cgroup limit %s=%s", file, value);
  return 0;
}

static uint64_t
cpu_quota_us (double cpus)
{
  double q = cpus * 100000.0;

  /* The kernel's floor for a quota is 1 ms.  */
  return q < 1000.0 ? 1000 : (uint64_t) llround (q);
}

static int
set_v2_limits (struct sr_cgroup *cg, const struct sr_cgroup_limits *l,
               struct sr_limit_report *rep, sr_error_t *err)
{
  char value[64];

  if (l->memory && cg->v2_has[CTL_MEMORY])
    {
      snprintf (value, sizeof value, "%" PRIu64, l->memory);
      if (write_limit (cg->v2_fd, cg->v2_dir, "memory.max", value, err) < 0)
        return -1;
      /* Without swap accounting the file is absent: nothing to turn off.  */
      if (exists_at (cg->v2_fd, cg->v2_dir, "memory.swap.max")
          && write_limit (cg->v2_fd, cg->v2_dir, "memory.swap.max", "0", err) < 0)
        return -1;
      /* One process over the limit takes the whole snippet down with it,
       * rather than leaving a half-killed program running.  */
      write_at (cg->v2_fd, cg->v2_dir, "memory.oom.group", "1", NULL);
      rep->memory = SR_LIMIT_CGROUP2;
    }
  if (l->cpus > 0 && cg->v2_has[CTL_CPU])
    {
      snprintf (value, sizeof value, "%" PRIu64 " 100000", cpu_quota_us (l->cpus));
      if (write_limit (cg->v2_fd, cg->v2_dir, "cpu.max", value, err) < 0)
        return -1;
      rep->cpu = SR_LIMIT_CGROUP2;
    }
  if (l->pids && cg->v2_has[CTL_PIDS])
    {
      snprintf (value, sizeof value, "%" PRIu32, l->pids);
      if (write_limit (cg->v2_fd, cg->v2_dir, "pids.max", value, err) < 0)
        return -1;
      rep->pids = SR_LIMIT_CGROUP2;
    }
  return 0;
}

/* write_limit, for a file the kernel may not have (memsw without swap
 * accounting, kmem.tcp in a kernel built without it).  */
static int
write_optional_limit (int dfd, const char *dir, const char *file, const char *value,
                      sr_error_t *err)
{
  if (!exists_at (dfd, dir, file))
    return 0;
  return write_limit (dfd, dir, file, value, err);
}

static int
set_v1_limit (struct sr_cgroup *cg, enum controller c, const struct sr_cgroup_limits *l,
              sr_error_t *err)
{
  const char *dir = cg->v1_dir[c];
  int dfd = cg->v1_fd[c];
  char value[64];

  switch (c)
    {
    case CTL_MEMORY:
      snprintf (value, sizeof value, "%" PRIu64, l->memory);
      if (write_limit (dfd, dir, "memory.limit_in_bytes", value, err) < 0)
        return -1;
      if (write_optional_limit (dfd, dir, "memory.memsw.limit_in_bytes", value, err) < 0)
        return -1;
      write_at (dfd, dir, "memory.swappiness", "0", NULL);
      /* v1 charges socket buffers to a counter of their own, unlimited
       * and so not counted at all until this is set: without it a
       * snippet held 1 GiB of loopback TCP buffers under 256M.  (v2
       * charges them to memory.max.)  */
      return write_optional_limit (dfd, dir, "memory.kmem.tcp.limit_in_bytes", value, err);
    case CTL_CPU:
      if (write_limit (dfd, dir, "cpu.cfs_period_us", "100000", err) < 0)
        return -1;
      snprintf (value, sizeof value, "%" PRIu64, cpu_quota_us (l->cpus));
      return write_limit (dfd, dir, "cpu.cfs_quota_us", value, err);
    case CTL_PIDS:
      snprintf (value, sizeof value, "%" PRIu32, l->pids);
      return write_limit (dfd, dir, "pids.max", value, err);
    case CTL_COUNT:
      break;
    }
  return 0;
}

static bool
limit_requested (const struct sr_cgroup_limits *l, enum controller c)
{
  switch (c)
    {
    case CTL_MEMORY:
      return l->memory != 0;
    case CTL_CPU:
      return l->cpus > 0;
    case CTL_PIDS:
      return l->pids != 0;
    case CTL_COUNT:
      break;
    }
  return false;
}

static enum sr_limit_mechanism *
report_entry (struct sr_limit_report *rep, enum controller c)
{
  return c == CTL_MEMORY ? &rep->memory : c == CTL_CPU ? &rep->cpu : &rep->pids;
}

int
sr_cgroup_create (const struct sr_cgroup_limits *limits, const char *name,
                  struct sr_cgroup **ret, struct sr_limit_report *report, sr_error_t *err)
{
  const struct hierarchies *h = hierarchies ();
  struct sr_cgroup *cg = sr_xcalloc (1, sizeof *cg);
  bool v2_enabled[CTL_COUNT] = { false };
  bool any = false;

  cg->v2_fd = -1;
  for (int c = 0; c < CTL_COUNT; c++)
    cg->v1_fd[c] = -1;
  *ret = NULL;
  memset (report, 0, sizeof *report);
  if (check_name (name, err) < 0)
    goto fail;

  if (h->v2_base && enable_v2_controllers (h->v2_base, v2_enabled, err) < 0)
    goto fail;
  bool want_v2 = false;
  for (int c = 0; c < CTL_COUNT; c++)
    want_v2 |= v2_enabled[c];
  if (want_v2)
    {
      _cleanup_free_ char *dir = sr_xasprintf ("%s/%s", h->v2_base, name);
      bool made;
      if (make_cgroup_dir (dir, &made, err) < 0)
        goto fail;
      if (made)
        {
          cg->v2_dir = TAKE_PTR (dir);
          memcpy (cg->v2_has, v2_enabled, sizeof cg->v2_has);
          any = true;
          cg->v2_fd = open (cg->v2_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          if (cg->v2_fd < 0)
            {
              sr_error_set (err, errno, "open %s", cg->v2_dir);
              goto fail;
            }
          if (set_v2_limits (cg, limits, report, err) < 0)
            goto fail;
        }
    }

  for (int c = 0; c < CTL_COUNT; c++)
    {
      if (cg->v2_has[c] || !h->v1_base[c] || !limit_requested (limits, c))
        continue;
      /* cpu and cpuacct may share one hierarchy with another controller
       * of ours: reuse the directory made for it.  */
      for (int o = 0; o < c; o++)
        if (cg->v1_dir[o] && h->v1_base[o] && strcmp (h->v1_base[o], h->v1_base[c]) == 0)
          cg->v1_dir[c] = sr_xstrdup (cg->v1_dir[o]);
      if (!cg->v1_dir[c])
        {
          _cleanup_free_ char *dir = sr_xasprintf ("%s/%s", h->v1_base[c], name);
          bool made;
          if (make_cgroup_dir (dir, &made, err) < 0)
            goto fail;
          if (!made)
            continue;
          cg->v1_dir[c] = TAKE_PTR (dir);
        }
      cg->v1_fd[c] = open (cg->v1_dir[c], O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (cg->v1_fd[c] < 0)
        {
          sr_error_set (err, errno, "open %s", cg->v1_dir[c]);
          goto fail;
        }
      any = true;
      if (set_v1_limit (cg, c, limits, err) < 0)
        goto fail;
      *report_entry (report, c) = SR_LIMIT_CGROUP1;
    }

  if (!any)
    {
      sr_cgroup_destroy (cg, NULL);
      return 0;
    }
  *ret = cg;
  return 0;

fail:
  sr_cgroup_destroy (cg, NULL);
  memset (report, 0, sizeof *report);
  return sr_error_wrap (err, "cgroup %s", name ? name : "");
}

int
sr_cgroup_clone_fd (const struct sr_cgroup *cg)
{
  for (int c = 0; c < CTL_COUNT; c++)
    if (cg->v1_dir[c])
      return -1;
  return cg->v2_fd;
}

/* The v2 directory and the distinct v1 ones (controllers may share a
 * hierarchy), v2 first; returns how many.  */
static size_t
distinct_dirs (const char *v2, char *const v1[CTL_COUNT], const char *dirs[CTL_COUNT + 1])
{
  size_t n = 0;

  if (v2)
    dirs[n++] = v2;
  for (int c = 0; c < CTL_COUNT; c++)
    {
      bool seen = false;
      if (!v1[c])
        continue;
      for (size_t i = 0; i < n; i++)
        seen |= strcmp (dirs[i], v1[c]) == 0;
      if (!seen)
        dirs[n++] = v1[c];
    }
  return n;
}

static size_t
cgroup_dirs (const struct sr_cgroup *cg, const char *dirs[CTL_COUNT + 1])
{
  return distinct_dirs (cg->v2_dir, cg->v1_dir, dirs);
}

/* The fd of dir, one of cg's directories as cgroup_dirs gives them.  */
static int
dir_fd (const struct sr_cgroup *cg, const char *dir)
{
  if (dir == cg->v2_dir)
    return cg->v2_fd;
  for (int c = 0; c < CTL_COUNT; c++)
    if (dir == cg->v1_dir[c])
      return cg->v1_fd[c];
  return -1;
}

int
sr_cgroup_attach (struct sr_cgroup *cg, pid_t pid, sr_error_t *err)
{
  const char *dirs[CTL_COUNT + 1];
  size_t n = cgroup_dirs (cg, dirs);
  char value[32];

  snprintf (value, sizeof value, "%d", (int) pid);
  for (size_t i = 0; i < n; i++)
    if (write_at (dir_fd (cg, dirs[i]), dirs[i], "cgroup.procs", value, err) < 0)
      return sr_error_wrap (err, "attach pid %d to cgroup %s", (int) pid, dirs[i]);
  return 0;
}

_Static_assert (CTL_COUNT <= SR_CGROUP_MAX_V1, "SR_CGROUP_MAX_V1 holds every v1 cgroup");

size_t
sr_cgroup_self_fds (const struct sr_cgroup *cg, int fds[SR_CGROUP_MAX_V1])
{
  const char *dirs[CTL_COUNT + 1];
  size_t n_dirs = cgroup_dirs (cg, dirs);
  size_t n = 0;

  if (cg->v2_dir)
    return 0;
  for (; n < n_dirs; n++)
    {
      fds[n] = open_at (dir_fd (cg, dirs[n]), dirs[n], "tasks", O_WRONLY);
      if (fds[n] < 0)
        {
          while (n > 0)
            close (fds[--n]);
          return 0;
        }
    }
  return n;
}

int
sr_cgroup_join_self (const int *fds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (write (fds[i], "0", 1) != 1)
      return -1;
  return 0;
}

static void
sleep_ms (long ms)
{
  struct timespec ts = { .tv_sec = 0, .tv_nsec = ms * 1000000L };

  nanosleep (&ts, NULL);
}

/* SIGKILLs what cgroup.procs lists until it lists nothing, so processes
 * forked while we kill are caught too.  Returns 0 once empty, -1 when
 * some survive timeout_ns.  */
static int
kill_listed (int dfd, const char *dir, uint64_t timeout_ns, sr_error_t *err)
{
  uint64_t deadline = sr_now_ns () + timeout_ns;

  for (;;)
    {
      _cleanup_free_ char *procs = read_at (dfd, dir, "cgroup.procs");
      if (!procs)
        return errno == ENOENT ? 0 : sr_error_set (err, errno, "read %s/cgroup.procs", dir);
      if (procs[0] == '\0')
        return 0;
      for (char *save = NULL, *pid = strtok_r (procs, "\n", &save); pid;
           pid = strtok_r (NULL, "\n", &save))
        {
          long p = strtol (pid, NULL, 10);
          if (p > 0)
            kill ((pid_t) p, SIGKILL);
        }
      if (sr_now_ns () > deadline)
        return sr_error_set (err, EBUSY, "processes of cgroup %s survive SIGKILL", dir);
      sleep_ms (1);
    }
}

static int
kill_dir (int dfd, const char *dir, bool v2, uint64_t timeout_ns, sr_error_t *err)
{
  if (v2)
    {
      sr_error_t e = NULL;
      if (write_at (dfd, dir, "cgroup.kill", "1", &e) == 0)
        return 0;
      /* Before Linux 5.14 there is no cgroup.kill: kill pid by pid.  */
      if (e->errnum != ENOENT)
        {
          sr_error_move (err, &e);
          return sr_error_wrap (err, "kill cgroup %s", dir);
        }
      sr_error_free (&e);
    }
  return kill_listed (dfd, dir, timeout_ns, err);
}

int
sr_cgroup_kill (struct sr_cgroup *cg, sr_error_t *err)
{
  const char *dirs[CTL_COUNT + 1];
  size_t n = cgroup_dirs (cg, dirs);
  int r = 0;

  for (size_t i = 0; i < n; i++)
    if (kill_dir (dir_fd (cg, dirs[i]), dirs[i], dirs[i] == cg->v2_dir, DRAIN_TIMEOUT_NS,
                  r < 0 ? NULL : err)
        < 0)
      r = -1;
  return r;
}

/* A file of the memory controller, by its v2 or its v1 name, or NULL.  */
static char *
read_memory_file (const struct sr_cgroup *cg, const char *v2_file, const char *v1_file)
{
  if (cg->v2_dir && cg->v2_has[CTL_MEMORY])
    return read_at (cg->v2_fd, cg->v2_dir, v2_file);
  if (cg->v1_dir[CTL_MEMORY])
    return read_at (cg->v1_fd[CTL_MEMORY], cg->v1_dir[CTL_MEMORY], v1_file);
  return NULL;
}

uint64_t
sr_cgroup_oom_kills (const struct sr_cgroup *cg)
{
  _cleanup_free_ char *buf = read_memory_file (cg, "memory.events", "memory.oom_control");

  return buf ? keyed_value (buf, "oom_kill") : 0;
}

uint64_t
sr_cgroup_memory_peak (const struct sr_cgroup *cg)
{
  _cleanup_free_ char *buf = read_memory_file (cg, "memory.peak", "memory.max_usage_in_bytes");

  return buf ? strtoull (buf, NULL, 10) : 0;
}

uint64_t
sr_cgroup_memory_room (const struct sr_cgroup *cg)
{
  _cleanup_free_ char *limit = read_memory_file (cg, "memory.max", "memory.limit_in_bytes");
  _cleanup_free_ char *usage = read_memory_file (cg, "memory.current", "memory.usage_in_bytes");
  _cleanup_free_ char *stat = read_memory_file (cg, "memory.stat", "memory.stat");
  uint64_t l, u, cache;

  /* v2 says "max" for no limit, v1 a number near 2^63.  */
  if (limit == NULL || usage == NULL || strncmp (limit, "max", 3) == 0)
    return UINT64_MAX;
  l = strtoull (limit, NULL, 10);
  u = strtoull (usage, NULL, 10);
  /* The page cache of files (the image's libraries a program read) is
   * counted in the usage but given back under pressure; tmpfs pages are
   * not on these lists.  Same keys in v1 and v2.  */
  cache = stat ? keyed_value (stat, "active_file") + keyed_value (stat, "inactive_file") : 0;
  u = u > cache ? u - cache : 0;
  return u >= l ? 0 : l - u;
}

/* Removes an emptied cgroup, waiting for the kernel to let go of exiting
 * processes.  A directory that is already gone is fine.  */
static int
remove_dir (const char *dir, uint64_t timeout_ns, sr_error_t *err)
{
  uint64_t deadline = sr_now_ns () + timeout_ns;

  while (rmdir (dir) < 0)
    {
      if (errno == ENOENT)
        return 0;
      if (errno != EBUSY || sr_now_ns () > deadline)
        return sr_error_set (err, errno, "rmdir %s", dir);
      sleep_ms (1);
    }
  return 0;
}

static int kill_and_remove (const char *dir, bool v2, uint64_t timeout_ns, sr_error_t *err);

/* Kills and removes the exec cgroups below a container's dir, which
 * would keep it from being removed: the ones of commands whose cgroup
 * could not be removed when they ended, or of a runner that died.  */
static int
remove_exec_dirs (const char *dir, bool v2, uint64_t timeout_ns, sr_error_t *err)
{
  DIR *d = opendir (dir);
  struct dirent *de;
  int r = 0;

  if (d == NULL)
    return errno == ENOENT ? 0 : sr_error_set (err, errno, "open %s", dir);
  while ((de = readdir (d)))
    {
      _cleanup_free_ char *sub = NULL;

      if (de->d_type != DT_DIR || strncmp (de->d_name, EXEC_PREFIX, strlen (EXEC_PREFIX)) != 0)
        continue;
      sub = sr_xasprintf ("%s/%s", dir, de->d_name);
      if (kill_and_remove (sub, v2, timeout_ns, r < 0 ? NULL : err) < 0)
        r = -1;
    }
  closedir (d);
  return r;
}

static int
kill_and_remove (const char *dir, bool v2, uint64_t timeout_ns, sr_error_t *err)
{
  /* The usual end of a run: the cgroup is already empty, and rmdir
   * removes it at once (it fails with EBUSY while a process or a child
   * cgroup is left), without reading the directory and cgroup.procs.  */
  if (rmdir (dir) == 0 || errno == ENOENT)
    return 0;
  if (remove_exec_dirs (dir, v2, timeout_ns, err) < 0
      || kill_dir (-1, dir, v2, timeout_ns, err) < 0)
    return -1;
  return remove_dir (dir, timeout_ns, err);
}

/* The hierarchy an exec cgroup goes in: v2 when the container has it
 * (cgroup.kill, and its limits hold below it); else v1 pids, whose
 * count and limit are hierarchical, then cpu.  Not v1 memory: a kill
 * counted in a child there may not reach the container's oom_kill.  */
static const char *
exec_parent (const struct sr_cgroup *cg, bool *v2)
{
  *v2 = cg->v2_dir != NULL;
  if (cg->v2_dir)
    return cg->v2_dir;
  if (cg->v1_dir[CTL_PIDS])
    return cg->v1_dir[CTL_PIDS];
  return cg->v1_dir[CTL_CPU];
}

int
sr_cgroup_exec_new (struct sr_cgroup *cg, pid_t pid, struct sr_cgroup_exec **ret,
                    sr_error_t *err)
{
  struct sr_cgroup_exec *x;
  const char *parent;
  char value[32];
  bool v2;

  *ret = NULL;
  parent = exec_parent (cg, &v2);
  if (parent == NULL)
    return 0;
  x = sr_xcalloc (1, sizeof *x);
  x->v2 = v2;
  x->dir = sr_xasprintf ("%s/" EXEC_PREFIX "%u", parent, atomic_fetch_add (&cg->execs, 1));
  if (mkdir (x->dir, 0755) < 0)
    {
      sr_error_set (err, errno, "mkdir %s", x->dir);
      free (x->dir);
      free (x);
      return -1;
    }
  snprintf (value, sizeof value, "%d", (int) pid);
  if (write_at (-1, x->dir, "cgroup.procs", value, err) < 0)
    {
      sr_cgroup_exec_done (x);
      return sr_error_wrap (err, "attach pid %d to cgroup %s", (int) pid, parent);
    }
  *ret = x;
  return 0;
}

int
sr_cgroup_exec_kill (struct sr_cgroup_exec *x, sr_error_t *err)
{
  return kill_dir (-1, x->dir, x->v2, DRAIN_TIMEOUT_NS, err);
}

void
sr_cgroup_exec_done (struct sr_cgroup_exec *x)
{
  if (x == NULL)
    return;
  kill_and_remove (x->dir, x->v2, DRAIN_TIMEOUT_NS, NULL);
  free (x->dir);
  free (x);
}

/* Each base/name, for the bases of ours that exist: the cgroups a
 * container named name may have.  */
char **
sr_cgroup_planned_dirs (const char *name)
{
  const struct hierarchies *h = hierarchies ();
  const char *bases[CTL_COUNT + 1];
  char **dirs = NULL;

  if (check_name (name, NULL) < 0)
    return NULL;
  size_t n = distinct_dirs (h->v2_base, h->v1_base, bases);
  for (size_t i = 0; i < n; i++)
    {
      _cleanup_free_ char *dir = sr_xasprintf ("%s/%s", bases[i], name);
      sr_strv_push (&dirs, dir);
    }
  return dirs;
}

char **
sr_cgroup_dirs (const struct sr_cgroup *cg)
{
  const char *dirs[CTL_COUNT + 1];
  char **ret = NULL;
  size_t n = cgroup_dirs (cg, dirs);

  for (size_t i = 0; i < n; i++)
    sr_strv_push (&ret, dirs[i]);
  return ret;
}

/* Where every cgroup a reclaim removes must be, after symlinks (v1
 * hosts link cpu to cpu,cpuacct there): a recorded path never leads it
 * anywhere else.  */
#define CGROUP_ROOT "/sys/fs/cgroup/"
/* The names a runner gives its containers' cgroups (state.h).  */
#define CONTAINER_PREFIX "sr-"

/* Whether dir, read from a state entry, is still a cgroup named name: 1
 * when it is (*ret_real gets its path with symlinks resolved, *v2 says
 * which version), 0 when it is gone, -1 when it is not a path of ours
 * (absolute, below CGROUP_ROOT before and after symlinks, no "." or ".."
 * in it, name last, a real directory on a cgroup file system), so a
 * forged entry cannot point the reclaim at another cgroup or out of the
 * cgroup file systems.  */
static int
recorded_cgroup (const char *dir, const char *name, char **ret_real, bool *v2,
                 sr_error_t *err)
{
  const char *last = strrchr (dir, '/');
  _cleanup_free_ char *real = NULL;
  struct statfs sf;
  struct stat st;

  if (strncmp (dir, CGROUP_ROOT, strlen (CGROUP_ROOT)) != 0 || strstr (dir, "//")
      || strstr (dir, "/./") || strstr (dir, "/../") || strcmp (last + 1, name) != 0)
    return sr_error_set (err, EINVAL, "%s is not a cgroup named %s below %s", dir, name,
                         CGROUP_ROOT);
  real = realpath (dir, NULL);
  if (real == NULL)
    return errno == ENOENT ? 0 : sr_error_set (err, errno, "resolve %s", dir);
  last = strrchr (real, '/');
  if (strncmp (real, CGROUP_ROOT, strlen (CGROUP_ROOT)) != 0 || strcmp (last + 1, name) != 0)
    return sr_error_set (err, EINVAL, "%s leads to %s, not a cgroup named %s below %s", dir,
                         real, name, CGROUP_ROOT);
  if (lstat (real, &st) < 0)
    return errno == ENOENT ? 0 : sr_error_set (err, errno, "stat %s", real);
  if (!S_ISDIR (st.st_mode) || statfs (real, &sf) < 0
      || (sf.f_type != CGROUP_SUPER_MAGIC && sf.f_type != CGROUP2_SUPER_MAGIC))
    return sr_error_set (err, EINVAL, "%s is not a cgroup directory", dir);
  *v2 = sf.f_type == CGROUP2_SUPER_MAGIC;
  *ret_real = TAKE_PTR (real);
  return 1;
}

int
sr_cgroup_reclaim (const char *name, char *const *dirs, sr_error_t *err)
{
  int r = 0;

  if (check_name (name, err) < 0)
    return -1;
  if (strncmp (name, CONTAINER_PREFIX, strlen (CONTAINER_PREFIX)) != 0)
    return sr_error_set (err, EINVAL, "cgroup %s is not a container's", name);
  for (size_t i = 0; dirs && dirs[i]; i++)
    {
      sr_error_t *e = r < 0 ? NULL : err;
      _cleanup_free_ char *real = NULL;
      bool v2 = false;
      int found = recorded_cgroup (dirs[i], name, &real, &v2, e);

      if (found < 0 || (found > 0 && kill_and_remove (real, v2, RECLAIM_TIMEOUT_NS, e) < 0))
        r = -1;
    }
  return r;
}

int
sr_cgroup_destroy (struct sr_cgroup *cg, sr_error_t *err)
{
  const char *dirs[CTL_COUNT + 1];
  int r = 0;

  if (!cg)
    return 0;
  size_t n = cgroup_dirs (cg, dirs);
  for (size_t i = 0; i < n; i++)
    if (kill_and_remove (dirs[i], dirs[i] == cg->v2_dir, DRAIN_TIMEOUT_NS, r < 0 ? NULL : err)
        < 0)
      r = -1;
  if (cg->v2_fd >= 0)
    close (cg->v2_fd);
  free (cg->v2_dir);
  for (int c = 0; c < CTL_COUNT; c++)
    {
      if (cg->v1_fd[c] >= 0)
        close (cg->v1_fd[c]);
      free (cg->v1_dir[c]);
    }
  free (cg);
  return r;
}
