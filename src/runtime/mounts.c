#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/pack.h"
#include "common/util.h"
#include "runtime/idmap.h"
#include "runtime/mounts.h"

enum mount_kind
{
  MOUNT_BIND,       /* source: host path */
  MOUNT_FS,         /* fstype + data: proc, tmpfs, devpts ... */
  MOUNT_SYSFS,      /* sysfs, or an empty read-only tmpfs where not allowed */
  MOUNT_DEV,        /* tmpfs /dev populated with the minimal device set */
  MOUNT_MASK,       /* /dev/null over a file, an empty ro tmpfs over a dir */
  MOUNT_READONLY,   /* bind a path onto itself, read-only */
};

struct mount_op
{
  enum mount_kind kind;
  char *target;        /* relative to the rootfs, no leading '/' */
  char *source;
  const char *fstype;
  char *data;
  unsigned long flags;
  bool readonly;
  bool idmap;          /* MOUNT_BIND: attach the next of the mount fds instead */
  bool optional;       /* skip quietly when the target does not exist */
  const char *subdir;  /* MOUNT_FS: a directory to create on the new mount */
  bool owned;          /* the mount's root (or subdir) is given to owner */
  uid_t owner_uid;
  gid_t owner_gid;     /* -1: the group stays (the runner's) */
  mode_t owner_mode;   /* its mode then */
};

struct sr_mount_plan
{
  char *rootfs;
  struct mount_op *ops;
  size_t n_ops;
  /* Unpacked (sr_mount_plan_unpack): the strings are the message's.  */
  bool borrowed;
};

/* Paths masked and made read-only as runc and crun do by default.  */
static const char *const masked_paths[] = {
  "proc/acpi", "proc/asound", "proc/interrupts", "proc/kcore", "proc/keys",
  "proc/latency_stats", "proc/timer_list", "proc/timer_stats", "proc/sched_debug",
  "proc/scsi", "proc/sys/kernel/core_pattern", "sys/firmware", "sys/fs/selinux",
  "sys/devices/virtual/powercap", "sys/kernel/debug", "sys/kernel/security",
};
static const char *const readonly_paths[] = {
  "proc/bus", "proc/fs", "proc/irq", "proc/sys", "proc/sysrq-trigger",
};
static const char *const device_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };

/* Parent side.  */

static bool
has_dotdot (const char *path)
{
  for (const char *p = path; (p = strstr (p, "..")) != NULL; p += 2)
    if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
      return true;
  return false;
}

int
sr_bind_parse (const char *spec, struct sr_bind *ret, sr_error_t *err)
{
  _cleanup_free_ char *copy = sr_xstrdup (spec);
  char *source = copy, *target, *opts, *save = NULL;
  char resolved[PATH_MAX];
  bool readonly = false, idmap = false;

  target = strchr (copy, ':');
  if (target == NULL || target == copy || target[1] == '\0')
    return sr_error_set (err, 0, "invalid bind '%s': expected SRC:DST[:ro|:rw][:idmap]", spec);
  *target++ = '\0';
  opts = strchr (target, ':');
  if (opts)
    *opts++ = '\0';
  for (char *o = opts ? strtok_r (opts, ":,", &save) : NULL; o; o = strtok_r (NULL, ":,", &save))
    {
      if (strcmp (o, "ro") == 0 || strcmp (o, "rw") == 0)
        readonly = o[1] == 'o';
      else if (strcmp (o, "idmap") == 0)
        idmap = true;
      else
        return sr_error_set (err, 0, "invalid bind '%s': an option is ro, rw or idmap, not '%s'",
                             spec, o);
    }
  if (target[0] != '/')
    return sr_error_set (err, 0, "invalid bind '%s': destination must be an absolute path", spec);
  if (has_dotdot (target))
    return sr_error_set (err, 0, "invalid bind '%s': destination must not contain '..'", spec);
  if (strcmp (target, "/") == 0)
    return sr_error_set (err, 0, "invalid bind '%s': cannot bind over /", spec);
  for (const char *p = target; *p; p++)
    if (*p == '\n')
      return sr_error_set (err, 0, "invalid bind '%s': newline in destination", spec);
  if (realpath (source, resolved) == NULL)
    return sr_error_set (err, errno, "bind source %s", source);
  *ret = (struct sr_bind){ .source = sr_xstrdup (resolved), .target = sr_xstrdup (target),
                           .readonly = readonly, .idmap = idmap };
  return 0;
}

void
sr_bind_done (struct sr_bind *b)
{
  free (b->source);
  free (b->target);
  b->source = b->target = NULL;
}

static bool
under_kernel_fs (const char *target)
{
  static const char *const prefixes[] = { "/proc", "/sys", "/dev" };

  for (size_t i = 0; i < SR_ARRAY_SIZE (prefixes); i++)
    {
      size_t n = strlen (prefixes[i]);

      if (strncmp (target, prefixes[i], n) == 0 && (target[n] == '\0' || target[n] == '/'))
        return true;
    }
  return false;
}

static struct mount_op *
plan_add (struct sr_mount_plan *plan, enum mount_kind kind, const char *target)
{
  struct mount_op *op;

  plan->ops = sr_xrealloc (plan->ops, (plan->n_ops + 1) * sizeof *plan->ops);
  op = &plan->ops[plan->n_ops++];
  memset (op, 0, sizeof *op);
  op->kind = kind;
  while (*target == '/')
    target++;
  op->target = sr_xstrdup (target);
  return op;
}

/* The command's writable directory: the root of op's mount, or its
 * subdir, becomes owner's (in the child, in its user namespace, where
 * root may give it away).  A host directory (host_dir) is no one else's
 * to enter; the runner shares it with the command through its group
 * where it writes as itself, and a tmpfs of the container, which no one
 * else reaches, is then open to all (see open_to_runner), setgid too:
 * what the command makes below it is the runner's group's, so the runner
 * can write into the directories the command made.  */
static void
give_to_owner (struct mount_op *op, const struct sr_fs_config *cfg, bool host_dir)
{
  op->owned = true;
  op->owner_uid = cfg->owner_uid;
  op->owner_gid = cfg->open_to_runner ? (gid_t) -1 : cfg->owner_gid;
  if (host_dir)
    op->owner_mode = cfg->open_to_runner ? 02770 : 0700;
  else
    op->owner_mode = cfg->open_to_runner ? 02777 : 0755;
}

int
sr_mount_plan_new (const struct sr_fs_config *cfg, struct sr_mount_plan **ret, sr_error_t *err)
{
  struct sr_mount_plan *plan;
  char resolved[PATH_MAX];
  struct mount_op *op;

  if (cfg->rootfs == NULL)
    return sr_error_set (err, 0, "no rootfs given");
  if (realpath (cfg->rootfs, resolved) == NULL)
    return sr_error_set (err, errno, "rootfs %s", cfg->rootfs);
  if (!sr_is_dir (resolved))
    return sr_error_set (err, ENOTDIR, "rootfs %s", cfg->rootfs);
  if (strcmp (resolved, "/") == 0)
    return sr_error_set (err, 0, "rootfs must not be the host's /");
  if (cfg->n_binds > SR_MOUNT_MAX_BINDS)
    return sr_error_set_plain (err, "invalid_arguments", E2BIG,
                               "%zu binds: a container takes at most %d", cfg->n_binds,
                               SR_MOUNT_MAX_BINDS);
  for (size_t i = 0; i < cfg->n_binds; i++)
    if (under_kernel_fs (cfg->binds[i].target))
      return sr_error_set (err, 0, "bind destination %s: must not be under /proc, /sys or /dev",
                           cfg->binds[i].target);

  plan = sr_xcalloc (1, sizeof *plan);
  plan->rootfs = sr_xstrdup (resolved);

  op = plan_add (plan, MOUNT_FS, "/proc");
  op->source = sr_xstrdup ("proc");
  op->fstype = "proc";
  op->flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;

  op = plan_add (plan, MOUNT_SYSFS, "/sys");
  op->optional = true;

  op = plan_add (plan, MOUNT_DEV, "/dev");
  op->data = sr_xasprintf ("mode=0755,size=%u,nr_inodes=64", 65536u);
  op->source = sr_xasprintf ("mode=1777,size=%llu", (unsigned long long) cfg->shm_size);

  op = plan_add (plan, MOUNT_FS, "/tmp");
  op->source = sr_xstrdup ("tmpfs");
  op->fstype = "tmpfs";
  op->flags = MS_NOSUID | MS_NODEV | MS_NOEXEC;
  op->data = sr_xasprintf ("mode=1777,size=%llu", (unsigned long long) cfg->tmp_size);

  if (cfg->scratch_dir)
    {
      if (realpath (cfg->scratch_dir, resolved) == NULL)
        {
          sr_mount_plan_free (plan);
          return sr_error_set (err, errno, "scratch dir %s", cfg->scratch_dir);
        }
      op = plan_add (plan, MOUNT_BIND, SR_SCRATCH_DIR);
      op->source = sr_xstrdup (resolved);
      op->flags = MS_NOSUID | MS_NODEV;
      op->readonly = cfg->scratch_readonly;
      if (!op->readonly)
        give_to_owner (op, cfg, true);
    }
  else
    {
      op = plan_add (plan, MOUNT_FS, SR_SCRATCH_DIR);
      op->source = sr_xstrdup ("tmpfs");
      op->fstype = "tmpfs";
      op->flags = MS_NOSUID | MS_NODEV;
      op->data = sr_xasprintf ("size=%llu", (unsigned long long) cfg->scratch_size);
      give_to_owner (op, cfg, false);
    }

  if (cfg->code_size)
    {
      op = plan_add (plan, MOUNT_FS, SR_CODE_DIR);
      op->source = sr_xstrdup ("tmpfs");
      op->fstype = "tmpfs";
      op->flags = MS_NOSUID | MS_NODEV;
      op->data = sr_xasprintf ("size=%llu,nr_inodes=%llu",
                               (unsigned long long) cfg->code_size,
                               (unsigned long long) cfg->code_inodes);
      give_to_owner (op, cfg, false);
    }

  if (cfg->data_size)
    {
      op = plan_add (plan, MOUNT_FS, SR_DATA_MOUNT);
      op->source = sr_xstrdup ("tmpfs");
      op->fstype = "tmpfs";
      op->flags = MS_NOSUID | MS_NODEV;
      op->data = sr_xasprintf ("mode=0755,size=%llu", (unsigned long long) cfg->data_size);
      op->subdir = &SR_DATA_DIR[sizeof SR_DATA_MOUNT];
      give_to_owner (op, cfg, false);
    }

  for (size_t i = 0; i < cfg->n_binds; i++)
    {
      op = plan_add (plan, MOUNT_BIND, cfg->binds[i].target);
      op->source = sr_xstrdup (cfg->binds[i].source);
      op->flags = MS_NOSUID | MS_NODEV;
      op->readonly = cfg->binds[i].readonly;
      op->idmap = cfg->binds[i].idmap;
      if (cfg->binds[i].owned)
        give_to_owner (op, cfg, true);
    }

  for (size_t i = 0; i < SR_ARRAY_SIZE (masked_paths); i++)
    {
      op = plan_add (plan, MOUNT_MASK, masked_paths[i]);
      op->optional = true;
    }
  for (size_t i = 0; i < SR_ARRAY_SIZE (readonly_paths); i++)
    {
      op = plan_add (plan, MOUNT_READONLY, readonly_paths[i]);
      op->optional = true;
    }
  *ret = plan;
  return 0;
}

void
sr_mount_plan_free (struct sr_mount_plan *plan)
{
  if (plan == NULL)
    return;
  for (size_t i = 0; i < plan->n_ops && !plan->borrowed; i++)
    {
      free (plan->ops[i].target);
      free (plan->ops[i].source);
      free (plan->ops[i].data);
    }
  free (plan->ops);
  if (!plan->borrowed)
    free (plan->rootfs);
  free (plan);
}

void
sr_mount_plan_pack (const struct sr_mount_plan *plan, struct sr_pack *p)
{
  sr_pack_str (p, plan->rootfs);
  sr_pack_u64 (p, plan->n_ops);
  for (size_t i = 0; i < plan->n_ops; i++)
    {
      const struct mount_op *op = &plan->ops[i];

      sr_pack_u64 (p, op->kind);
      sr_pack_str (p, op->target);
      sr_pack_str (p, op->source);
      sr_pack_str (p, op->fstype);
      sr_pack_str (p, op->data);
      sr_pack_u64 (p, op->flags);
      sr_pack_u64 (p, (uint64_t) op->readonly | (uint64_t) op->idmap << 1
                          | (uint64_t) op->optional << 2 | (uint64_t) op->owned << 3);
      sr_pack_str (p, op->subdir);
      sr_pack_u64 (p, op->owner_uid);
      sr_pack_u64 (p, op->owner_gid);
      sr_pack_u64 (p, op->owner_mode);
    }
}

int
sr_mount_plan_unpack (struct sr_unpack *u, struct sr_mount_plan **ret)
{
  struct sr_mount_plan *plan = sr_xcalloc (1, sizeof *plan);
  uint64_t n;

  plan->borrowed = true;
  plan->rootfs = (char *) sr_unpack_str (u);
  n = sr_unpack_u64 (u);
  /* Each op takes more than 8 bytes: a count past what is left is a lie. */
  if (u->bad || plan->rootfs == NULL || n > u->left / 8)
    goto bad;
  plan->ops = sr_xcalloc (n ? n : 1, sizeof *plan->ops);
  plan->n_ops = n;
  for (size_t i = 0; i < n; i++)
    {
      struct mount_op *op = &plan->ops[i];
      uint64_t bits;

      op->kind = (enum mount_kind) sr_unpack_u64 (u);
      op->target = (char *) sr_unpack_str (u);
      op->source = (char *) sr_unpack_str (u);
      op->fstype = sr_unpack_str (u);
      op->data = (char *) sr_unpack_str (u);
      op->flags = sr_unpack_u64 (u);
      bits = sr_unpack_u64 (u);
      op->readonly = bits & 1;
      op->idmap = bits & 2;
      op->optional = bits & 4;
      op->owned = bits & 8;
      op->subdir = sr_unpack_str (u);
      op->owner_uid = (uid_t) sr_unpack_u64 (u);
      op->owner_gid = (gid_t) sr_unpack_u64 (u);
      op->owner_mode = (mode_t) sr_unpack_u64 (u);
      if (u->bad || op->kind > MOUNT_READONLY || op->target == NULL)
        goto bad;
    }
  *ret = plan;
  return 0;

bad:
  sr_mount_plan_free (plan);
  errno = EBADMSG;
  return -1;
}

bool
sr_mount_plan_wants_idmap (const struct sr_mount_plan *plan)
{
  for (size_t i = 0; i < plan->n_ops; i++)
    if (plan->ops[i].idmap)
      return true;
  return false;
}

/* What a file system says when it cannot be idmapped (or a kernel
 * without idmapped mounts).  */
static bool
idmap_refused (int e)
{
  return e == EINVAL || e == EOPNOTSUPP || e == ENOSYS || e == EPERM;
}

int
sr_mount_plan_detached (const struct sr_mount_plan *plan, pid_t child, int userns_fd, int *fds,
                        sr_error_t *err)
{
  char at[PATH_MAX + 32];
  size_t n = 0;

  fds[n] = sr_idmap_clone_tree (plan->rootfs, userns_fd);
  if (fds[n] < 0 && idmap_refused (errno))
    fds[n] = sr_idmap_clone_tree (plan->rootfs, -1);
  if (fds[n] < 0)
    {
      /* No open_tree here (a kernel before 5.2, a root runner in a
       * container without the host's CAP_SYS_ADMIN): the child binds the
       * rootfs as it is, which only binds without idmap allow.  */
      if ((errno == ENOSYS || errno == EPERM) && !sr_mount_plan_wants_idmap (plan))
        return 0;
      return sr_error_set (err, errno, "clone the rootfs %s", plan->rootfs);
    }
  n++;
  /* Through the child's root: its mount namespace, where it attaches.  */
  snprintf (at, sizeof at, "/proc/%d/root%s", (int) child, plan->rootfs);
  fds[n] = open (at, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fds[n] < 0)
    {
      int e = errno;

      close (fds[0]);
      return sr_error_set (err, e, "open the rootfs %s in the container's namespace",
                           plan->rootfs);
    }
  n++;
  for (size_t i = 0; i < plan->n_ops; i++)
    {
      const struct mount_op *op = &plan->ops[i];

      if (op->kind != MOUNT_BIND)
        continue;
      fds[n] = sr_idmap_clone_tree (op->source, op->idmap ? userns_fd : -1);
      if (fds[n] < 0)
        {
          int e = errno;

          while (n > 0)
            close (fds[--n]);
          if (op->idmap && idmap_refused (e))
            return sr_error_set (err, e, "bind %s:/%s:idmap: its file system refuses an idmapped "
                                 "mount (tmpfs before Linux 6.3, or a kernel without them); "
                                 "bind it without idmap", op->source, op->target);
          return sr_error_set (err, e, "clone the bind source %s", op->source);
        }
      n++;
    }
  return (int) n;
}

/* Child side: no allocation from here on.  */

static int
fail (char *errbuf, size_t errlen, const char *fmt, ...)
{
  int saved = errno;
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (errbuf, errlen, fmt, ap);
  va_end (ap);
  errno = saved;
  return -1;
}

static int
open_in_root (int rootfd, const char *path, int flags)
{
  return sr_openat2 (rootfd, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

static void
fd_path (char *buf, size_t len, int fd)
{
  snprintf (buf, len, "/proc/self/fd/%d", fd);
}

/* Makes the mount at fd read-only (and recursive when asked), keeping its
 * other flags.  mount_setattr changes just those bits; the remount fallback
 * must restate the locked flags it inherited, read back with fstatvfs.  */
static int
set_readonly (int fd, bool recursive, uint64_t extra_attrs)
{
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | extra_attrs };
  unsigned int flags = AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
  struct statvfs sv;
  unsigned long mflags = MS_REMOUNT | MS_BIND | MS_RDONLY;
  char path[64];

  if (syscall (SYS_mount_setattr, fd, "", flags, &attr, sizeof attr) == 0)
    return 0;
  if (errno != ENOSYS)
    return -1;
  if (fstatvfs (fd, &sv) < 0)
    return -1;
  if (sv.f_flag & ST_NOSUID || extra_attrs & MOUNT_ATTR_NOSUID)
    mflags |= MS_NOSUID;
  if (sv.f_flag & ST_NODEV || extra_attrs & MOUNT_ATTR_NODEV)
    mflags |= MS_NODEV;
  if (sv.f_flag & ST_NOEXEC)
    mflags |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME)
    mflags |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME)
    mflags |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME)
    mflags |= MS_RELATIME;
  fd_path (path, sizeof path, fd);
  return mount (NULL, path, NULL, mflags, NULL);
}

/* Reopens a mount target after mounting on it, to reach the new mount.  */
static int
reopen_readonly (int rootfd, const char *target, bool recursive)
{
  _cleanup_close_ int fd = open_in_root (rootfd, target, O_PATH);

  if (fd < 0)
    return -1;
  return set_readonly (fd, recursive, 0);
}

static int
populate_dev (int rootfd, const struct mount_op *op, char *errbuf, size_t errlen)
{
  _cleanup_close_ int devfd = open_in_root (rootfd, "dev", O_PATH | O_DIRECTORY);
  char path[64];
  int r;

  if (devfd < 0)
    return fail (errbuf, errlen, "open /dev");
  for (size_t i = 0; i < SR_ARRAY_SIZE (device_nodes); i++)
    {
      _cleanup_close_ int node = -1;
      char host[32];
      int created = openat (devfd, device_nodes[i], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0666);

      if (created < 0)
        return fail (errbuf, errlen, "create /dev/%s", device_nodes[i]);
      close (created);
      node = openat (devfd, device_nodes[i], O_PATH | O_CLOEXEC | O_NOFOLLOW);
      if (node < 0)
        return fail (errbuf, errlen, "open /dev/%s", device_nodes[i]);
      snprintf (host, sizeof host, "/dev/%s", device_nodes[i]);
      fd_path (path, sizeof path, node);
      if (mount (host, path, NULL, MS_BIND, NULL) < 0)
        return fail (errbuf, errlen, "bind %s", host);
    }

  if (mkdirat (devfd, "pts", 0755) < 0)
    return fail (errbuf, errlen, "mkdir /dev/pts");
  {
    _cleanup_close_ int pts = openat (devfd, "pts", O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

    if (pts < 0)
      return fail (errbuf, errlen, "open /dev/pts");
    fd_path (path, sizeof path, pts);
    if (mount ("devpts", path, "devpts", MS_NOSUID | MS_NOEXEC,
               "newinstance,ptmxmode=0666,mode=0620") < 0)
      return fail (errbuf, errlen, "mount devpts on /dev/pts");
  }
  if (mkdirat (devfd, "shm", 01777) < 0)
    return fail (errbuf, errlen, "mkdir /dev/shm");
  {
    _cleanup_close_ int shm = openat (devfd, "shm", O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

    if (shm < 0)
      return fail (errbuf, errlen, "open /dev/shm");
    fd_path (path, sizeof path, shm);
    if (mount ("shm", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, op->source) < 0)
      return fail (errbuf, errlen, "mount tmpfs on /dev/shm");
  }
  r = symlinkat ("pts/ptmx", devfd, "ptmx");
  if (r == 0)
    r = symlinkat ("/proc/self/fd", devfd, "fd");
  if (r == 0)
    r = symlinkat ("/proc/self/fd/0", devfd, "stdin");
  if (r == 0)
    r = symlinkat ("/proc/self/fd/1", devfd, "stdout");
  if (r == 0)
    r = symlinkat ("/proc/self/fd/2", devfd, "stderr");
  if (r < 0)
    return fail (errbuf, errlen, "symlink in /dev");
  /* Nothing may create nodes or files in /dev itself afterwards.  */
  if (set_readonly (devfd, false, 0) < 0)
    return fail (errbuf, errlen, "make /dev read-only");
  return 0;
}

/* The directory op->owned asks for, chowned and chmodded by path, as an
 * O_PATH fd takes neither.  */
static int
give_owned (int rootfd, const struct mount_op *op)
{
  _cleanup_close_ int dir = open_in_root (rootfd, op->target, O_PATH | O_DIRECTORY);
  char path[64 + NAME_MAX];

  if (dir < 0)
    return -1;
  snprintf (path, sizeof path, "/proc/self/fd/%d%s%s", dir, op->subdir ? "/" : "",
            op->subdir ? op->subdir : "");
  if (chown (path, op->owner_uid, op->owner_gid) < 0)
    return -1;
  return chmod (path, op->owner_mode);
}

/* sr_mount_plan_detached's fds, in the child: the next is the next
 * bind's.  */
struct detached
{
  const int *fds;
  size_t n, next;
};

/* Attaches the detached mount fd onto the mount point at target_fd.  */
static int
attach (int fd, int target_fd)
{
  return (int) syscall (SYS_move_mount, fd, "", target_fd, "",
                        MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
}

static int
apply_op (int rootfd, const struct mount_op *op, struct detached *d, char *errbuf, size_t errlen)
{
  _cleanup_close_ int target = -1;
  char path[64];
  struct stat st;

  target = open_in_root (rootfd, op->target, O_PATH);
  if (target < 0)
    {
      if (op->optional && errno == ENOENT)
        return 0;
      if (errno == ENOENT)
        return fail (errbuf, errlen, "mount point /%s is missing in the rootfs", op->target);
      return fail (errbuf, errlen, "open mount point /%s", op->target);
    }
  fd_path (path, sizeof path, target);

  switch (op->kind)
    {
    case MOUNT_FS:
      if (mount (op->source, path, op->fstype, op->flags, op->data) < 0)
        return fail (errbuf, errlen, "mount %s on /%s", op->fstype, op->target);
      if (op->subdir)
        {
          _cleanup_close_ int mounted = open_in_root (rootfd, op->target, O_PATH | O_DIRECTORY);

          if (mounted < 0 || mkdirat (mounted, op->subdir, 0755) < 0)
            return fail (errbuf, errlen, "mkdir /%s/%s", op->target, op->subdir);
        }
      if (op->owned && give_owned (rootfd, op) < 0)
        return fail (errbuf, errlen, "give /%s%s%s to its user", op->target,
                     op->subdir ? "/" : "", op->subdir ? op->subdir : "");
      break;

    case MOUNT_SYSFS:
      if (mount ("sysfs", path, "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        {
          /* Not every kernel lets a user namespace mount sysfs; an empty
           * /sys is safer than the host's.  */
          if (errno != EPERM && errno != EACCES)
            return fail (errbuf, errlen, "mount sysfs on /%s", op->target);
          if (mount ("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0") < 0)
            return fail (errbuf, errlen, "mount tmpfs on /%s", op->target);
        }
      break;

    case MOUNT_DEV:
      if (mount ("tmpfs", path, "tmpfs", MS_NOSUID | MS_NOEXEC, op->data) < 0)
        return fail (errbuf, errlen, "mount tmpfs on /dev");
      return populate_dev (rootfd, op, errbuf, errlen);

    case MOUNT_BIND:
      if (d->n > 0)
        {
          if (d->next >= d->n)
            {
              errno = EINVAL;
              return fail (errbuf, errlen, "bind %s on /%s: no clone of it", op->source,
                           op->target);
            }
          if (attach (d->fds[d->next++], target) < 0)
            return fail (errbuf, errlen, "attach %s on /%s", op->source, op->target);
        }
      else if (op->idmap)
        {
          errno = EINVAL;
          return fail (errbuf, errlen, "bind %s on /%s: no idmapped mount of it", op->source,
                       op->target);
        }
      else if (mount (op->source, path, NULL, MS_BIND | MS_REC, NULL) < 0)
        return fail (errbuf, errlen, "bind %s on /%s", op->source, op->target);
      {
        _cleanup_close_ int mounted = open_in_root (rootfd, op->target, O_PATH);
        uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;

        if (mounted < 0)
          return fail (errbuf, errlen, "open /%s", op->target);
        /* Before it is read-only.  */
        if (op->owned && give_owned (rootfd, op) < 0)
          return fail (errbuf, errlen, "give /%s to its user", op->target);
        if (op->readonly)
          {
            if (set_readonly (mounted, true, attrs) < 0)
              return fail (errbuf, errlen, "make /%s read-only", op->target);
          }
        else
          {
            struct mount_attr attr = { .attr_set = attrs };

            if (syscall (SYS_mount_setattr, mounted, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0
                && errno != ENOSYS)
              return fail (errbuf, errlen, "set nosuid,nodev on /%s", op->target);
          }
      }
      break;

    case MOUNT_MASK:
      if (fstat (target, &st) < 0)
        return fail (errbuf, errlen, "stat /%s", op->target);
      if (S_ISDIR (st.st_mode))
        {
          if (mount ("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=0") < 0)
            return fail (errbuf, errlen, "mask /%s", op->target);
        }
      else if (mount ("/dev/null", path, NULL, MS_BIND, NULL) < 0)
        return fail (errbuf, errlen, "mask /%s", op->target);
      break;

    case MOUNT_READONLY:
      if (mount (path, path, NULL, MS_BIND | MS_REC, NULL) < 0)
        return fail (errbuf, errlen, "bind /%s read-only", op->target);
      if (reopen_readonly (rootfd, op->target, true) < 0)
        return fail (errbuf, errlen, "make /%s read-only", op->target);
      break;
    }
  return 0;
}

/* Whether target's first component is missing from the rootfs at origfd
 * (a rootfs without /proc, /tmp or /work).  */
static bool
top_missing (int origfd, const char *target)
{
  char top[NAME_MAX + 1];
  size_t n = strcspn (target, "/");
  struct stat st;

  if (n == 0 || n > NAME_MAX)
    return false;
  memcpy (top, target, n);
  top[n] = '\0';
  return fstatat (origfd, top, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

static bool
lacks_mount_point (const struct sr_mount_plan *plan, int origfd)
{
  for (size_t i = 0; i < plan->n_ops; i++)
    if (!plan->ops[i].optional && top_missing (origfd, plan->ops[i].target))
      return true;
  return false;
}

/* Puts the rootfs's top-level entry name into the root at rootfd:
 * directories and files bound (recursively), symlinks copied; anything
 * else left out.  */
static int
scaffold_entry (int rootfd, int origfd, const char *name, char *errbuf, size_t errlen)
{
  _cleanup_close_ int src = -1;
  char target[PATH_MAX], from[64], to[PATH_MAX + 32];
  struct stat st;
  ssize_t n;
  int fd;

  if (fstatat (origfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return fail (errbuf, errlen, "stat /%s in the rootfs", name);
  if (S_ISLNK (st.st_mode))
    {
      n = readlinkat (origfd, name, target, sizeof target - 1);
      if (n < 0)
        return fail (errbuf, errlen, "read the symlink /%s", name);
      target[n] = '\0';
      if (symlinkat (target, rootfd, name) < 0)
        return fail (errbuf, errlen, "copy the symlink /%s", name);
      return 0;
    }
  if (S_ISDIR (st.st_mode))
    {
      if (mkdirat (rootfd, name, 0755) < 0)
        return fail (errbuf, errlen, "mkdir /%s", name);
    }
  else if (S_ISREG (st.st_mode))
    {
      fd = openat (rootfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
      if (fd < 0)
        return fail (errbuf, errlen, "create /%s", name);
      close (fd);
    }
  else
    return 0;
  src = openat (origfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (src < 0)
    return fail (errbuf, errlen, "open /%s in the rootfs", name);
  fd_path (from, sizeof from, src);
  snprintf (to, sizeof to, "/proc/self/fd/%d/%s", rootfd, name);
  if (mount (from, to, NULL, MS_BIND | MS_REC, NULL) < 0)
    return fail (errbuf, errlen, "bind /%s of the rootfs", name);
  return 0;
}

/* Makes the missing directories of target (whose first component the
 * rootfs lacks) in the scaffold, which is ours to write.  */
static int
scaffold_mount_point (int rootfd, int origfd, const char *target, char *errbuf, size_t errlen)
{
  char path[PATH_MAX];
  size_t len = strlen (target);

  if (!top_missing (origfd, target) || len >= sizeof path)
    return 0;
  memcpy (path, target, len + 1);
  for (char *p = path;; p++)
    if (*p == '/' || *p == '\0')
      {
        char c = *p;

        *p = '\0';
        if (mkdirat (rootfd, path, 0755) < 0 && errno != EEXIST)
          return fail (errbuf, errlen, "mkdir /%s", path);
        *p = c;
        if (c == '\0')
          return 0;
      }
}

/* For a rootfs that lacks a mount point, bubblewrap's way: the root is a
 * tmpfs of ours over the rootfs (at: its directory; in this mount
 * namespace only), holding the rootfs's top-level entries and the missing
 * mount points, so nothing is ever written to the rootfs itself.  Returns
 * an O_PATH fd of the new root, read-only with everything in it.  */
static int
scaffold_root (const struct sr_mount_plan *plan, int at, int origfd, char *errbuf,
               size_t errlen)
{
  _cleanup_close_ int fs = -1, rootfd = -1;
  char buf[4096];
  long n;

  fs = fsopen ("tmpfs", FSOPEN_CLOEXEC);
  if (fs < 0 || fsconfig (fs, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0
      || fsconfig (fs, FSCONFIG_SET_STRING, "size", "65536", 0) < 0
      || fsconfig (fs, FSCONFIG_SET_STRING, "nr_inodes", "4096", 0) < 0
      || fsconfig (fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
    return fail (errbuf, errlen, "make a tmpfs root");
  rootfd = fsmount (fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
  if (rootfd < 0 || attach (rootfd, at) < 0)
    return fail (errbuf, errlen, "mount a tmpfs root over %s", plan->rootfs);
  while ((n = syscall (SYS_getdents64, origfd, buf, sizeof buf)) > 0)
    for (long off = 0; off < n;)
      {
        /* struct linux_dirent64: the name follows d_ino, d_off, d_reclen
         * and d_type.  */
        const char *name = buf + off + 19;
        unsigned short reclen;

        memcpy (&reclen, buf + off + 16, sizeof reclen);
        off += reclen;
        if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
          continue;
        if (scaffold_entry (rootfd, origfd, name, errbuf, errlen) < 0)
          return -1;
      }
  if (n < 0)
    return fail (errbuf, errlen, "list the rootfs %s", plan->rootfs);
  for (size_t i = 0; i < plan->n_ops; i++)
    if (!plan->ops[i].optional
        && scaffold_mount_point (rootfd, origfd, plan->ops[i].target, errbuf, errlen) < 0)
      return -1;
  if (set_readonly (rootfd, true, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) < 0)
    return fail (errbuf, errlen, "make the tmpfs root read-only");
  return TAKE_FD (rootfd);
}

int
sr_mount_plan_apply (const struct sr_mount_plan *plan, const int *mount_fds, size_t n_mount_fds,
                     char *errbuf, size_t errlen, uint64_t *mark_mounts)
{
  _cleanup_close_ int rootfd = -1, origfd = -1, own_at = -1;
  struct detached d = { .fds = mount_fds, .n = n_mount_fds, .next = 2 };
  int at;

  /* Nothing we mount may propagate back to the host.  */
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return fail (errbuf, errlen, "make / private");
  /* The parent's clone of the rootfs (idmapped) over its directory, both
   * given as fds: the path may lie below directories closed to us.
   * Without them, the rootfs's own path.  */
  if (n_mount_fds > 0)
    {
      at = mount_fds[1];
      if (attach (mount_fds[0], at) < 0)
        return fail (errbuf, errlen, "attach the rootfs %s", plan->rootfs);
      origfd = openat (mount_fds[0], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
  else
    {
      at = own_at = open (plan->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
      origfd = open (plan->rootfs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    }
  if (at < 0 || origfd < 0)
    return fail (errbuf, errlen, "open rootfs %s", plan->rootfs);
  if (lacks_mount_point (plan, origfd))
    {
      rootfd = scaffold_root (plan, at, origfd, errbuf, errlen);
      if (rootfd < 0)
        return -1;
    }
  else
    {
      if (n_mount_fds > 0)
        rootfd = openat (mount_fds[0], ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
      else if (mount (plan->rootfs, plan->rootfs, NULL, MS_BIND | MS_REC, NULL) == 0)
        rootfd = open (plan->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
      else
        return fail (errbuf, errlen, "bind rootfs %s", plan->rootfs);
      if (rootfd < 0)
        return fail (errbuf, errlen, "open rootfs %s", plan->rootfs);
      /* Read-only before anything is mounted on it: the mounts that follow
       * are new and keep their own flags.  */
      if (set_readonly (rootfd, true, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV) < 0)
        return fail (errbuf, errlen, "make rootfs read-only");
    }

  for (size_t i = 0; i < plan->n_ops; i++)
    if (apply_op (rootfd, &plan->ops[i], &d, errbuf, errlen) < 0)
      return -1;
  for (size_t i = 0; i < n_mount_fds; i++)
    close (mount_fds[i]);
  *mark_mounts = sr_now_ns ();

  if (fchdir (rootfd) < 0)
    return fail (errbuf, errlen, "chdir to the rootfs");
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    return fail (errbuf, errlen, "pivot_root");
  /* The old root is stacked on top of the new one: detach it.  */
  if (umount2 (".", MNT_DETACH) < 0)
    return fail (errbuf, errlen, "detach the old root");
  if (chdir ("/") < 0)
    return fail (errbuf, errlen, "chdir /");
  return 0;
}
