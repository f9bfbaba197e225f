#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <pwd.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/defaults.h"
#include "common/util.h"
#include "runtime/idmap.h"

extern char **environ;

static const char *const newuidmap_paths[] = { "/usr/bin/newuidmap", "/bin/newuidmap" };
static const char *const newgidmap_paths[] = { "/usr/bin/newgidmap", "/bin/newgidmap" };

static const char *
find_helper (const char *const *paths, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (access (paths[i], X_OK) == 0)
      return paths[i];
  return NULL;
}

/* Splits one line of a subid file, "owner:start:count", in place.  False
 * for a line that is not one (a comment, a malformed or empty range).  */
static bool
parse_subid_line (char *line, const char **ret_owner, uint32_t *ret_start, uint32_t *ret_count)
{
  char *start, *count, *end;
  unsigned long s, c;

  start = strchr (line, ':');
  if (start == NULL)
    return false;
  *start++ = '\0';
  count = strchr (start, ':');
  if (count == NULL)
    return false;
  *count++ = '\0';
  errno = 0;
  s = strtoul (start, &end, 10);
  if (errno || *end)
    return false;
  c = strtoul (count, &end, 10);
  if (errno || *end || c == 0 || s > UINT32_MAX || c > UINT32_MAX - s)
    return false;
  *ret_owner = line;
  *ret_start = (uint32_t) s;
  *ret_count = (uint32_t) c;
  return true;
}

int
sr_subid_lookup (const char *path, const char *user_name, uid_t uid,
                 uint32_t *ret_start, uint32_t *ret_count, sr_error_t *err)
{
  _cleanup_free_ char *text = NULL;
  char uid_text[32];
  char *save = NULL;

  if (sr_read_file (path, &text, NULL, NULL) < 0)
    {
      if (errno == ENOENT)
        return 0;
      return sr_error_set (err, errno, "read %s", path);
    }
  snprintf (uid_text, sizeof uid_text, "%u", (unsigned) uid);
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      const char *name;
      uint32_t s, c;

      if (!parse_subid_line (line, &name, &s, &c))
        continue;
      if (strcmp (name, uid_text) != 0 && (user_name == NULL || strcmp (name, user_name) != 0))
        continue;
      *ret_start = s;
      *ret_count = c;
      return 1;
    }
  return 0;
}

/* True when [start, start + SR_SUBID_RANGE) overlaps a range of text.  */
static bool
subid_overlaps (const char *text, uint64_t start)
{
  _cleanup_free_ char *copy = NULL;
  char *save = NULL;

  if (text == NULL)
    return false;
  copy = sr_xstrdup (text);
  for (char *line = strtok_r (copy, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      const char *owner;
      uint32_t s, c;

      if (parse_subid_line (line, &owner, &s, &c) && s < start + SR_SUBID_RANGE
          && start < (uint64_t) s + c)
        return true;
    }
  return false;
}

uint32_t
sr_subid_free_range (const char *subuid_text, const char *subgid_text)
{
  for (uint64_t start = (SR_SUBID_FLOOR / SR_SUBID_RANGE + 1) * SR_SUBID_RANGE;
       start + SR_SUBID_RANGE <= UINT32_MAX; start += SR_SUBID_RANGE)
    if (!subid_overlaps (subuid_text, start) && !subid_overlaps (subgid_text, start))
      return (uint32_t) start;
  return 0;
}

int
sr_idmap_plan (struct sr_idmap *ret, const char *subuid_file, const char *subgid_file,
               sr_error_t *err)
{
  struct sr_idmap m = { .caller_uid = geteuid (), .caller_gid = getegid (), .lease_fd = -1 };
  struct passwd *pw = getpwuid (m.caller_uid);
  const char *name = pw ? pw->pw_name : NULL;
  int found_u, found_g;

  found_u = sr_subid_lookup (subuid_file, name, m.caller_uid, &m.uid_base, &m.uid_count, err);
  if (found_u < 0)
    return -1;
  found_g = sr_subid_lookup (subgid_file, name, m.caller_uid, &m.gid_base, &m.gid_count, err);
  if (found_g < 0)
    return -1;

  if (m.caller_uid == 0)
    {
      m.mode = SR_IDMAP_ROOT;
      if (!found_u || !found_g)
        {
          m.uid_base = m.gid_base = SR_ROOT_MAP_BASE;
          m.uid_count = m.gid_count = SR_ROOT_MAP_COUNT * SR_ROOT_MAP_SLOTS;
        }
      m.slots = (m.uid_count < m.gid_count ? m.uid_count : m.gid_count) / SR_ROOT_MAP_COUNT;
      if (m.slots == 0)
        m.slots = 1;
      if (m.uid_count > SR_ROOT_MAP_COUNT)
        m.uid_count = SR_ROOT_MAP_COUNT;
      if (m.gid_count > SR_ROOT_MAP_COUNT)
        m.gid_count = SR_ROOT_MAP_COUNT;
    }
  else if (found_u && found_g
           && find_helper (newuidmap_paths, SR_ARRAY_SIZE (newuidmap_paths))
           && find_helper (newgidmap_paths, SR_ARRAY_SIZE (newgidmap_paths)))
    {
      m.mode = SR_IDMAP_SUBID;
      if (m.uid_count > SR_ROOT_MAP_COUNT - 1)
        m.uid_count = SR_ROOT_MAP_COUNT - 1;
      if (m.gid_count > SR_ROOT_MAP_COUNT - 1)
        m.gid_count = SR_ROOT_MAP_COUNT - 1;
    }
  else
    m.mode = SR_IDMAP_SINGLE;
  *ret = m;
  return 0;
}

bool
sr_idmap_setgroups_allowed (const struct sr_idmap *m)
{
  return m->mode != SR_IDMAP_SINGLE;
}

bool
sr_idmap_maps (const struct sr_idmap *m, uid_t uid, gid_t gid)
{
  switch (m->mode)
    {
    case SR_IDMAP_ROOT:
      return uid < m->uid_count && gid < m->gid_count;
    case SR_IDMAP_SUBID:
      /* 0 is the caller; 1..count the subordinate range.  */
      return uid <= m->uid_count && gid <= m->gid_count;
    case SR_IDMAP_SINGLE:
      break;
    }
  return uid == 0 && gid == 0;
}

int
sr_idmap_lease (struct sr_idmap *m, const char *lock_dir, sr_error_t *err)
{
  _cleanup_close_ int dfd = -1;

  m->lease_fd = -1;
  if (m->mode != SR_IDMAP_ROOT || m->slots <= 1)
    return 0;
  dfd = open (lock_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0)
    return sr_error_set (err, errno, "open %s", lock_dir);
  /* The lowest free slot: as many lock files as containers ever lived at
   * once, and a few opens per container where many live.  */
  for (uint32_t slot = 0; slot < m->slots; slot++)
    {
      char name[16];
      int fd;

      snprintf (name, sizeof name, "%u", slot);
      fd = openat (dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd < 0)
        return sr_error_set (err, errno, "open %s/%s", lock_dir, name);
      if (flock (fd, LOCK_EX | LOCK_NB) == 0)
        {
          m->uid_base += slot * SR_ROOT_MAP_COUNT;
          m->gid_base += slot * SR_ROOT_MAP_COUNT;
          m->slots = 1;
          m->lease_fd = fd;
          return 0;
        }
      int e = errno;
      close (fd);
      if (e != EWOULDBLOCK)
        return sr_error_set (err, e, "lock %s/%s", lock_dir, name);
    }
  return sr_error_set_code (err, "ids_exhausted", EAGAIN,
                            "every one of the %u id ranges of %u ids from host uid %u is leased "
                            "to a live container (locks in %s): as many containers as ranges "
                            "can live at once; give root a larger range in /etc/subuid and "
                            "/etc/subgid",
                            m->slots, SR_ROOT_MAP_COUNT, m->uid_base, lock_dir);
}

const char *
sr_idmap_mode_name (enum sr_idmap_mode mode)
{
  switch (mode)
    {
    case SR_IDMAP_ROOT: return "root-range";
    case SR_IDMAP_SUBID: return "subid";
    case SR_IDMAP_SINGLE: return "single";
    }
  return "unknown";
}

static int
write_map (pid_t pid, const char *file, const char *content, sr_error_t *err)
{
  char path[64];

  snprintf (path, sizeof path, "/proc/%d/%s", (int) pid, file);
  return sr_write_file (path, content, err);
}

static int
spawn_helper (const char *helper, char *const argv[], pid_t *ret_pid, sr_error_t *err)
{
  int r = posix_spawn (ret_pid, helper, NULL, NULL, argv, environ);

  if (r != 0)
    return sr_error_set (err, r, "spawn %s", helper);
  return 0;
}

static int
wait_helper (const char *helper, pid_t pid, sr_error_t *err)
{
  int status;

  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      return sr_error_set (err, errno, "wait for %s", helper);
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return sr_error_set (err, 0, "%s failed (status %d): check the ranges in /etc/subuid and /etc/subgid",
                         helper, WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status));
  return 0;
}

/* newuidmap and newgidmap run side by side: each costs a fork and exec of a
 * setuid binary, the largest part of a rootless setup.  */
static int
apply_subid (const struct sr_idmap *m, pid_t pid, sr_error_t *err)
{
  const char *uhelper = find_helper (newuidmap_paths, SR_ARRAY_SIZE (newuidmap_paths));
  const char *ghelper = find_helper (newgidmap_paths, SR_ARRAY_SIZE (newgidmap_paths));
  char spid[16], caller_u[16], caller_g[16], ubase[16], ucount[16], gbase[16], gcount[16];
  pid_t upid = -1, gpid = -1;
  int ret;

  if (uhelper == NULL || ghelper == NULL)
    return sr_error_set (err, ENOENT, "newuidmap/newgidmap");
  snprintf (spid, sizeof spid, "%d", (int) pid);
  snprintf (caller_u, sizeof caller_u, "%u", (unsigned) m->caller_uid);
  snprintf (caller_g, sizeof caller_g, "%u", (unsigned) m->caller_gid);
  snprintf (ubase, sizeof ubase, "%u", m->uid_base);
  snprintf (ucount, sizeof ucount, "%u", m->uid_count);
  snprintf (gbase, sizeof gbase, "%u", m->gid_base);
  snprintf (gcount, sizeof gcount, "%u", m->gid_count);
  {
    char *uargv[] = { (char *) uhelper, spid, "0", caller_u, "1", "1", ubase, ucount, NULL };
    char *gargv[] = { (char *) ghelper, spid, "0", caller_g, "1", "1", gbase, gcount, NULL };

    if (spawn_helper (uhelper, uargv, &upid, err) < 0)
      return -1;
    if (spawn_helper (ghelper, gargv, &gpid, err) < 0)
      {
        (void) wait_helper (uhelper, upid, NULL);
        return -1;
      }
  }
  ret = wait_helper (uhelper, upid, err);
  if (wait_helper (ghelper, gpid, ret < 0 ? NULL : err) < 0)
    ret = -1;
  return ret;
}

int
sr_idmap_apply (const struct sr_idmap *m, pid_t pid, sr_error_t *err)
{
  char map[128];

  switch (m->mode)
    {
    case SR_IDMAP_ROOT:
      snprintf (map, sizeof map, "0 %u %u\n", m->uid_base, m->uid_count);
      if (write_map (pid, "uid_map", map, err) < 0)
        return sr_error_wrap (err, "uid map");
      snprintf (map, sizeof map, "0 %u %u\n", m->gid_base, m->gid_count);
      if (write_map (pid, "gid_map", map, err) < 0)
        return sr_error_wrap (err, "gid map");
      return 0;
    case SR_IDMAP_SUBID:
      return apply_subid (m, pid, err);
    case SR_IDMAP_SINGLE:
      snprintf (map, sizeof map, "0 %u 1\n", (unsigned) m->caller_uid);
      if (write_map (pid, "uid_map", map, err) < 0)
        return sr_error_wrap (err, "uid map");
      if (write_map (pid, "setgroups", "deny", err) < 0)
        return sr_error_wrap (err, "setgroups");
      snprintf (map, sizeof map, "0 %u 1\n", (unsigned) m->caller_gid);
      if (write_map (pid, "gid_map", map, err) < 0)
        return sr_error_wrap (err, "gid map");
      return 0;
    }
  return sr_error_set (err, EINVAL, "unknown id mapping mode");
}

int
sr_idmap_clone_tree (const char *path, int userns_fd)
{
  /* A clone joins its source's peer group: left shared, whatever the
   * container mounts on it would propagate back to the host's mount
   * (every host whose / is shared, as under systemd).  */
  struct mount_attr attr = { .propagation = MS_PRIVATE };
  _cleanup_close_ int fd = -1;

  if (userns_fd >= 0)
    {
      attr.attr_set = MOUNT_ATTR_IDMAP;
      attr.userns_fd = (uint64_t) userns_fd;
    }
  fd = (int) syscall (SYS_open_tree, AT_FDCWD, path,
                      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
  if (fd < 0)
    return -1;
  if (syscall (SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) < 0)
    return -1;
  return TAKE_FD (fd);
}

int
sr_idmap_mount_probe (const char *path)
{
  int go[2], ready[2], e = 0;
  char c, file[64], map[64];
  pid_t pid;

  if (pipe2 (go, O_CLOEXEC) < 0)
    return errno;
  if (pipe2 (ready, O_CLOEXEC) < 0)
    {
      e = errno;
      close (go[0]);
      close (go[1]);
      return e;
    }
  pid = fork ();
  if (pid == 0)
    {
      close (go[1]);
      c = unshare (CLONE_NEWUSER) == 0 ? 'y' : 'n';
      if (write (ready[1], &c, 1) == 1)
        (void) read (go[0], &c, 1);
      _exit (0);
    }
  close (ready[1]);
  close (go[0]);
  snprintf (map, sizeof map, "0 %u 1\n", SR_ROOT_MAP_BASE);
  if (pid < 0 || read (ready[0], &c, 1) != 1 || c != 'y')
    e = pid < 0 ? errno : EPERM;
  for (const char *const *f = (const char *const[]){ "uid_map", "gid_map", NULL }; !e && *f; f++)
    {
      snprintf (file, sizeof file, "/proc/%d/%s", (int) pid, *f);
      if (sr_write_file (file, map, NULL) < 0)
        e = errno;
    }
  if (!e)
    {
      _cleanup_close_ int userns = -1, tree = -1;

      snprintf (file, sizeof file, "/proc/%d/ns/user", (int) pid);
      userns = open (file, O_RDONLY | O_CLOEXEC);
      tree = userns < 0 ? -1 : sr_idmap_clone_tree (path, userns);
      if (tree < 0)
        e = errno;
    }
  close (go[1]);
  close (ready[0]);
  if (pid > 0)
    waitpid (pid, NULL, 0);
  return e;
}
