/* sr_files_*: artifacts and file tools against a fake container root.
 *
 * The fake root is a temp directory with tmpfs mounts on mnt (holding the
 * data directory) and tmp, a read-only tmpfs on work, a ramfs on usr (a
 * file system that is not tmpfs) and the host's /proc and /sys bound on
 * proc and sys, all in a private mount namespace: as root one of its own,
 * otherwise inside a user namespace.  As root, the tmpfs mounts on mnt and
 * tmp are made as a session's are: from a user namespace whose root is
 * fsn.uid, so their superblocks belong to it and the host's root cannot
 * create anything there as itself.  A second root has a 64 KiB data
 * tmpfs, to run out of.  The host
 * holds a file "host-secret" next to the fake root: no read may return
 * it.  */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/files.h"
#include "tap.h"

#define HOST_SECRET "HOST SECRET 7f3a"
#define FAKE_MARKER "FAKE ROOT MARKER"
#define BIG (1u << 20)

/* sr_files_search with no byte cap nor cancel fd.  */
static int
search (const struct sr_fsroot *r, const char *pattern, const char *glob, const char *dir,
        uint64_t max_size, size_t max_matches, struct sr_file_match **ret, size_t *ret_n,
        bool *ret_truncated, sr_error_t *err)
{
  const struct sr_search_limits lim = { .max_size = max_size, .max_matches = max_matches,
                                        .max_bytes = UINT64_MAX, .cancel_fd = -1 };
  struct sr_search_result res;

  if (sr_files_search (r, pattern, glob, dir, &lim, &res, err) < 0)
    return -1;
  *ret = res.v;
  *ret_n = res.n;
  if (ret_truncated)
    *ret_truncated = res.truncated;
  return 0;
}

static char base[64];       /* host temp dir */
static char root[96];       /* base/root: the fake container's / */
static char qroot[96];      /* base/qroot: a second one, for the quota */
/* The native primitives of each: its fds and owner.  */
static struct sr_fs_native fsn = { .rootfd = -1, .datafd = -1 };
static struct sr_fs_native qfsn = { .rootfd = -1, .datafd = -1 };
static struct sr_fsroot fs = { .ops = &sr_fs_native_ops, .ctx = &fsn };
static struct sr_fsroot qfs = { .ops = &sr_fs_native_ops, .ctx = &qfsn };
static bool in_userns, have_proc, have_ramfs;
/* mnt and tmp belong to a user namespace mapping 0 and 1 to fsn.uid and
 * fsn.uid + 1 (gids fsn.gid, fsn.gid + 1): the test writes there as fsn.uid.  */
static bool userns_tmpfs_ok;

static void
croot_begin (void)
{
  if (userns_tmpfs_ok)
    {
      setfsgid (fsn.gid);
      setfsuid (fsn.uid);
    }
}

static void
croot_end (void)
{
  if (userns_tmpfs_ok)
    {
      setfsuid (0);
      setfsgid (0);
    }
}

/* A 1x1 RGBA PNG.  */
static const unsigned char png[] = {
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44,
  0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f,
  0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00,
  0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49,
  0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
};



static void cleanup (void);

static void
die (const char *what)
{
  printf ("Bail out! %s: %s\n", what, strerror (errno));
  croot_end ();
  cleanup ();
  exit (1);
}

static void
host_write (const char *path, const char *s)
{
  int fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

  if (fd < 0 || sr_write_all (fd, s, strlen (s)) < 0)
    die (path);
  close (fd);
}

static char *
under (const char *rel)
{
  return sr_xasprintf ("%s/%s", root, rel);
}

static void
data_write (const char *rel, const char *s)
{
  _cleanup_free_ char *p = sr_xasprintf ("%s/mnt/data/%s", root, rel);

  croot_begin ();
  host_write (p, s);
  croot_end ();
}

/* A symlink under the fake root, as the container's root.  */
static void
make_symlink (const char *target, const char *rel)
{
  _cleanup_free_ char *p = under (rel);
  int r;

  croot_begin ();
  r = symlink (target, p);
  croot_end ();
  if (r < 0)
    die (p);
}

static void
data_symlink (const char *target, const char *rel)
{
  _cleanup_free_ char *p = sr_xasprintf ("mnt/data/%s", rel);

  make_symlink (target, p);
}

static bool
host_exists (const char *rel)
{
  _cleanup_free_ char *p = under (rel);
  struct stat st;

  return lstat (p, &st) == 0;
}

/* Whether dir (under the fake root) holds a temp file of an atomic write.  */
static bool
temp_left (const char *rel)
{
  _cleanup_free_ char *p = under (rel);
  DIR *d = opendir (p);
  struct dirent *de;
  bool found = false;

  if (d == NULL)
    return false;
  while ((de = readdir (d)))
    if (strncmp (de->d_name, ".sr-tmp-", 8) == 0)
      found = true;
  closedir (d);
  return found;
}

static bool
write_map (const char *path, const char *s)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  bool r;

  if (fd < 0)
    return false;
  r = sr_write_all (fd, s, strlen (s)) == 0;
  close (fd);
  return r;
}

/* A mount namespace of our own, entering a user namespace first when not
 * root.  NULL when it worked, else why not.  */
static const char *
private_namespace (void)
{
  static char why[128];

  if (geteuid () == 0)
    {
      if (unshare (CLONE_NEWNS) < 0)
        {
          snprintf (why, sizeof why, "unshare(CLONE_NEWNS): %s", strerror (errno));
          return why;
        }
    }
  else
    {
      uid_t uid = geteuid ();
      gid_t gid = getegid ();
      char map[64];

      if (unshare (CLONE_NEWUSER | CLONE_NEWNS) < 0)
        {
          snprintf (why, sizeof why, "unshare(CLONE_NEWUSER|CLONE_NEWNS): %s", strerror (errno));
          return why;
        }
      in_userns = true;
      snprintf (map, sizeof map, "0 %u 1\n", (unsigned) uid);
      if (!write_map ("/proc/self/uid_map", map) || !write_map ("/proc/self/setgroups", "deny")
          || (snprintf (map, sizeof map, "0 %u 1\n", (unsigned) gid),
              !write_map ("/proc/self/gid_map", map)))
        {
          snprintf (why, sizeof why, "writing the id maps: %s", strerror (errno));
          return why;
        }
    }
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    {
      snprintf (why, sizeof why, "making / private: %s", strerror (errno));
      return why;
    }
  return NULL;
}

static void
mkdir_under (const char *rel, mode_t mode)
{
  _cleanup_free_ char *p = under (rel);

  if (mkdir (p, mode) < 0)
    die (p);
}

static void
mount_under (const char *src, const char *rel, const char *type, unsigned long flags,
             const char *data)
{
  _cleanup_free_ char *p = under (rel);

  if (mount (src, p, type, flags, data) < 0)
    die (p);
}

static bool
send_fd (int sock, int fd)
{
  char c = 'f';
  struct iovec iov = { &c, 1 };
  union
  {
    struct cmsghdr h;
    char buf[CMSG_SPACE (sizeof (int))];
  } u = { 0 };
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = sizeof u.buf };
  struct cmsghdr *cm = CMSG_FIRSTHDR (&msg);

  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN (sizeof (int));
  memcpy (CMSG_DATA (cm), &fd, sizeof fd);
  return sendmsg (sock, &msg, 0) == 1;
}

static int
recv_fd (int sock)
{
  char c;
  struct iovec iov = { &c, 1 };
  union
  {
    struct cmsghdr h;
    char buf[CMSG_SPACE (sizeof (int))];
  } u;
  struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                        .msg_controllen = sizeof u.buf };
  struct cmsghdr *cm;
  int fd = -1;

  if (recvmsg (sock, &msg, MSG_CMSG_CLOEXEC) != 1)
    return -1;
  cm = CMSG_FIRSTHDR (&msg);
  if (cm && cm->cmsg_type == SCM_RIGHTS)
    memcpy (&fd, CMSG_DATA (cm), sizeof fd);
  return fd;
}

/* Mounts on target a tmpfs made, as a session's is, by the root of a user
 * namespace mapping 0-1 to fsn.uid-fsn.uid+1: a child enters it, makes the
 * tmpfs with fsopen/fsmount (and subdir in it, as its root) and hands the
 * detached mount back.  */
static bool
userns_tmpfs (const char *target, const char *options, const char *subdir)
{
  int sv[2], mfd, status;
  pid_t pid;
  char c, map[64];

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
    return false;
  pid = fork ();
  if (pid < 0)
    return false;
  if (pid == 0)
    {
      int fsfd;
      char *opts = sr_xstrdup (options), *save = NULL;

      close (sv[0]);
      if (unshare (CLONE_NEWUSER | CLONE_NEWNS) < 0 || write (sv[1], "u", 1) != 1
          || read (sv[1], &c, 1) != 1 || setresgid (0, 0, 0) < 0 || setresuid (0, 0, 0) < 0)
        _exit (1);
      fsfd = fsopen ("tmpfs", FSOPEN_CLOEXEC);
      if (fsfd < 0)
        _exit (2);
      for (char *o = strtok_r (opts, ",", &save); o; o = strtok_r (NULL, ",", &save))
        {
          char *eq = strchr (o, '=');

          *eq = '\0';
          if (fsconfig (fsfd, FSCONFIG_SET_STRING, o, eq + 1, 0) < 0)
            _exit (3);
        }
      if (fsconfig (fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        _exit (4);
      mfd = fsmount (fsfd, FSMOUNT_CLOEXEC, 0);
      if (mfd < 0 || (subdir && mkdirat (mfd, subdir, 0755) < 0) || !send_fd (sv[1], mfd))
        _exit (5);
      _exit (0);
    }
  close (sv[1]);
  if (read (sv[0], &c, 1) != 1)
    goto fail;
  snprintf (map, sizeof map, "/proc/%d/uid_map", (int) pid);
  {
    char ids[64];

    snprintf (ids, sizeof ids, "0 %u 2\n", (unsigned) fsn.uid);
    if (!write_map (map, ids))
      goto fail;
    snprintf (map, sizeof map, "/proc/%d/gid_map", (int) pid);
    snprintf (ids, sizeof ids, "0 %u 2\n", (unsigned) fsn.gid);
    if (!write_map (map, ids))
      goto fail;
  }
  if (write (sv[0], "g", 1) != 1)
    goto fail;
  mfd = recv_fd (sv[0]);
  close (sv[0]);
  if (waitpid (pid, &status, 0) != pid || status != 0 || mfd < 0)
    return false;
  status = move_mount (mfd, "", AT_FDCWD, target, MOVE_MOUNT_F_EMPTY_PATH);
  close (mfd);
  return status == 0;

fail:
  close (sv[0]);
  kill (pid, SIGKILL);
  waitpid (pid, &status, 0);
  return false;
}

static const char *
setup (void)
{
  const char *why;
  _cleanup_free_ char *secret = NULL, *secret_dir = NULL;

  snprintf (base, sizeof base, "/tmp/sr-test-files.XXXXXX");
  if (mkdtemp (base) == NULL)
    die ("mkdtemp");
  /* The test's own writes as the container's root walk this path.  */
  if (chmod (base, 0755) < 0)
    die (base);
  snprintf (root, sizeof root, "%s/root", base);
  secret = sr_xasprintf ("%s/host-secret", base);
  host_write (secret, HOST_SECRET "\n");
  secret_dir = sr_xasprintf ("%s/f.txt", base);
  host_write (secret_dir, HOST_SECRET "\n");
  if (mkdir (root, 0755) < 0)
    die (root);

  if ((why = private_namespace ()))
    return why;
  for (const char *const *d = (const char *const[]){ "etc", "mnt", "tmp", "usr", "work", "proc",
                                                      "sys", NULL };
       *d; d++)
    mkdir_under (*d, 0755);
  {
    _cleanup_free_ char *m = under ("etc/marker");

    host_write (m, FAKE_MARKER "\n");
  }
  /* In a user namespace only 0 is mapped.  */
  fsn.uid = in_userns ? 0 : 4242;
  fsn.gid = in_userns ? 0 : 4243;
  {
    static char why_mnt[128];
    _cleanup_free_ char *p = under ("mnt"), *t = under ("tmp");

    if (!in_userns)
      {
        userns_tmpfs_ok = userns_tmpfs (p, "size=4m,mode=0755", "data")
                          && userns_tmpfs (t, "size=1m,mode=1777", NULL);
        if (!userns_tmpfs_ok)
          {
            printf ("# no tmpfs from a user namespace (%s): the test's own instead\n",
                    strerror (errno));
            umount2 (t, MNT_DETACH);
            umount2 (p, MNT_DETACH);
          }
      }
    if (!userns_tmpfs_ok)
      {
        /* The first mount tells whether this namespace may mount at all.  */
        if (mount ("tmpfs", p, "tmpfs", 0, "size=4m,mode=0755") < 0)
          {
            snprintf (why_mnt, sizeof why_mnt, "cannot mount a tmpfs: %s", strerror (errno));
            return why_mnt;
          }
        mkdir_under ("mnt/data", 0755);
        mount_under ("tmpfs", "tmp", "tmpfs", 0, "size=1m,mode=1777");
        /* As a session's data directory, the container's root owns it.  */
        {
          _cleanup_free_ char *d = under ("mnt/data");

          if (chown (d, fsn.uid, fsn.gid) < 0)
            die (d);
        }
      }
  }
  mount_under ("tmpfs", "work", "tmpfs", MS_RDONLY, "size=64k");
  {
    _cleanup_free_ char *p = under ("usr");

    have_ramfs = mount ("ramfs", p, "ramfs", 0, NULL) == 0;
  }
  {
    _cleanup_free_ char *p = under ("proc"), *s = under ("sys");

    have_proc = mount ("/proc", p, NULL, MS_BIND | MS_REC, NULL) == 0;
    (void) mount ("/sys", s, NULL, MS_BIND | MS_REC, NULL);
  }

  fsn.rootfd = open (root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fsn.rootfd < 0)
    die (root);
  {
    struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                            .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };

    fsn.datafd = (int) syscall (SYS_openat2, fsn.rootfd, SR_DATA_DIR, &how, sizeof how);
    if (fsn.datafd < 0 && errno == ENOSYS)
      return "no openat2 (Linux < 5.6, or under valgrind): sr_files needs it";
    if (fsn.datafd < 0)
      die ("open the data dir");
  }
  /* A second session whose data tmpfs is 64 KiB, to run out of.  */
  snprintf (qroot, sizeof qroot, "%s/qroot", base);
  {
    _cleanup_free_ char *mnt = sr_xasprintf ("%s/mnt", qroot), *data = NULL;
    struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                            .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };

    if (mkdir (qroot, 0755) < 0 || mkdir (mnt, 0755) < 0)
      die (mnt);
    data = sr_xasprintf ("%s/data", mnt);
    if (userns_tmpfs_ok)
      {
        if (!userns_tmpfs (mnt, "size=64k,mode=0755", "data"))
          die (mnt);
      }
    else if (mount ("tmpfs", mnt, "tmpfs", 0, "size=64k,mode=0755") < 0 || mkdir (data, 0755) < 0
             || chown (data, fsn.uid, fsn.gid) < 0)
      die (mnt);
    qfsn = fsn;
    qfsn.rootfd = open (qroot, O_PATH | O_DIRECTORY | O_CLOEXEC);
    qfsn.datafd = (int) syscall (SYS_openat2, qfsn.rootfd, SR_DATA_DIR, &how, sizeof how);
    if (qfsn.rootfd < 0 || qfsn.datafd < 0)
      die (qroot);
  }
  return NULL;
}

/* --- helpers that check one call --- */

/* Whether err carries the code want.  */
static bool
code_is (sr_error_t err, const char *want)
{
  const char *code = sr_error_code (err);

  return code && strcmp (code, want) == 0;
}

static void
expect_code (int ret, sr_error_t *err, const char *want, const char *name)
{
  const char *code = sr_error_code (*err);

  if (!ok (ret < 0 && code_is (*err, want), "%s: %s", name, want))
    printf ("#   ret %d, code %s, error %s\n", ret, code ? code : "(none)",
            *err ? (*err)->msg : "(none)");
  else if (*err)
    printf ("#   %s\n", (*err)->msg);
  sr_error_free (err);
}

static char *
read_artifact (const char *path, sr_error_t *err)
{
  char *data = NULL, *mime = NULL;
  size_t len;

  if (sr_files_read_artifact (&fs, path, BIG, &data, &len, &mime, err) < 0)
    return NULL;
  free (mime);
  return data;
}

static void
artifact_is (const char *path, const char *want, const char *name)
{
  sr_error_t err = NULL;
  _cleanup_free_ char *data = read_artifact (path, &err);

  if (!data)
    printf ("#   %s: %s\n", sr_error_code (err), err->msg);
  is_str (data, want, name);
  sr_error_free (&err);
}

static void
artifact_refused (const char *path, const char *want, const char *name)
{
  sr_error_t err = NULL;
  char *data = read_artifact (path, &err);

  if (data)
    printf ("#   read: %s\n", data);
  expect_code (data ? 0 : -1, &err, want, name);
  free (data);
}

static char *
lines_of (const char *path, uint64_t offset, uint64_t limit, uint64_t *total, sr_error_t *err)
{
  char *text = NULL;

  if (sr_files_read_lines (&fs, path, offset, limit, BIG, &text, total, err) < 0)
    return NULL;
  return text;
}

static void
lines_refused (const char *path, const char *want, const char *name)
{
  sr_error_t err = NULL;
  uint64_t total;
  char *text = lines_of (path, 1, 0, &total, &err);

  if (text)
    printf ("#   read: %s\n", text);
  expect_code (text ? 0 : -1, &err, want, name);
  free (text);
}

static int
upload (const char *path, const char *s, bool overwrite, char **ret_path, sr_error_t *err)
{
  return sr_files_upload (&fs, path, s, strlen (s), overwrite, ret_path, err);
}

static void
write_ok (const char *path, const char *s, const char *name)
{
  sr_error_t err = NULL;

  if (!ok (sr_files_write (&fs, path, s, strlen (s), NULL, &err) == 0, "%s", name))
    printf ("#   %s: %s\n", sr_error_code (err), err->msg);
  sr_error_free (&err);
}

static const struct sr_artifact *
find_artifact (const struct sr_artifact *v, size_t n, const char *path)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (v[i].path, path) == 0)
      return &v[i];
  return NULL;
}

/* Evaluates call first, then checks the code of the error it left.  */
#define EXPECT(call, want, name)                                            \
  do                                                                         \
    {                                                                        \
      int _ret = (call);                                                     \
      expect_code (_ret, &err, want, name);                                  \
    }                                                                        \
  while (0)

/* --- the tests --- */

static void
test_upload (void)
{
  _cleanup_free_ char *path = NULL, *p2 = NULL;
  sr_error_t err = NULL;
  struct stat st;

  ok (upload ("hello.txt", "hello\n", false, &path, &err) == 0, "upload hello.txt");
  is_str (path, "/mnt/data/hello.txt", "upload returns the path inside the container");
  artifact_is ("hello.txt", "hello\n", "an upload reads back");
  artifact_is ("/mnt/data/hello.txt", "hello\n", "an absolute path under /mnt/data reads back");

  EXPECT (upload ("hello.txt", "other\n", false, NULL, &err),
          "file_exists", "an upload onto an existing file without overwrite");
  artifact_is ("hello.txt", "hello\n", "the existing file is left as it was");
  ok (upload ("hello.txt", "hello again\n", true, NULL, &err) == 0,
      "an upload with overwrite replaces it");
  artifact_is ("hello.txt", "hello again\n", "the new content reads back");

  ok (upload ("/mnt/data/a/b/c/deep.txt", "deep\n", false, &p2, &err) == 0,
      "an upload creates the missing parent directories");
  is_str (p2, "/mnt/data/a/b/c/deep.txt", "its path");
  artifact_is ("a/b/c/deep.txt", "deep\n", "the file in new parents reads back");
  {
    _cleanup_free_ char *d = under ("mnt/data/a/b"), *f = under ("mnt/data/a/b/c/deep.txt");

    ok (stat (d, &st) == 0 && S_ISDIR (st.st_mode) && (st.st_mode & 07777) == 0755,
        "a created parent is a 0755 directory");
    if (geteuid () == 0)
      {
        ok (st.st_uid == fsn.uid && st.st_gid == fsn.gid,
            "a created parent belongs to the container's root (%u:%u)", (unsigned) st.st_uid,
            (unsigned) st.st_gid);
        ok (stat (f, &st) == 0 && st.st_uid == fsn.uid && st.st_gid == fsn.gid
                && (st.st_mode & 0777) == 0644,
            "an uploaded file belongs to the container's root, mode 0644");
      }
  }
  ok (!temp_left ("mnt/data") && !temp_left ("mnt/data/a/b/c"), "no temp file is left behind");
  sr_error_free (&err);
}

/* A file moved in pieces: appended at its size, read back a piece at a
 * time with its total size.  */
static void
test_pieces (void)
{
  sr_error_t err = NULL;
  _cleanup_free_ char *path = NULL;
  char *data = NULL, *mime = NULL;
  size_t len = 0;
  uint64_t size = 0;

  ok (sr_files_upload (&fs, "p/piece.txt", "hello", 5, false, NULL, &err) == 0
          && sr_files_append (&fs, "p/piece.txt", 5, " world\n", 7, BIG, &path, &err) == 0,
      "a piece appends at the file's size");
  is_str (path, "/mnt/data/p/piece.txt", "... and names the file");
  artifact_is ("p/piece.txt", "hello world\n", "... the file holds both pieces");
  EXPECT (sr_files_append (&fs, "p/piece.txt", 5, "x", 1, BIG, NULL, &err), "offset_mismatch",
          "a piece at an offset that is not the file's size");
  EXPECT (sr_files_append (&fs, "p/none.txt", 5, "x", 1, BIG, NULL, &err), "not_found",
          "a piece of a file never started");
  EXPECT (sr_files_append (&fs, "p/piece.txt", 12, "xx", 2, 13, NULL, &err), "file_too_large",
          "a piece past the size limit");
  artifact_is ("p/piece.txt", "hello world\n", "refused pieces leave the file as it was");

  ok (sr_files_read_piece (&fs, "p/piece.txt", BIG, 6, 5, &data, &len, &size, &mime, &err) == 0
          && len == 5 && memcmp (data, "world", 5) == 0 && size == 12,
      "a piece reads length bytes from offset, with the file's size");
  is_str (mime, "text/plain", "... and the MIME type of the file's start");
  free (data), free (mime);
  ok (sr_files_read_piece (&fs, "p/piece.txt", BIG, 10, 100, &data, &len, &size, &mime, &err)
          == 0 && len == 2 && memcmp (data, "d\n", 2) == 0,
      "the last piece is cut at the end of the file");
  free (data), free (mime);
  ok (sr_files_read_piece (&fs, "p/piece.txt", BIG, 50, 10, &data, &len, &size, &mime, &err)
          == 0 && len == 0 && size == 12,
      "a piece past the end is empty");
  free (data), free (mime);
  EXPECT (sr_files_read_piece (&fs, "p/piece.txt", 11, 0, 1, &data, &len, &size, &mime, &err),
          "file_too_large", "a piece of a file over max_size");
  EXPECT (sr_files_read_piece (&fs, "../x", BIG, 0, 1, &data, &len, &size, &mime, &err),
          "invalid_path", "a piece of a path with '..'");
  sr_error_free (&err);
}

static void
test_limits (void)
{
  _cleanup_free_ char *big = sr_xmalloc (128 * 1024 + 1);
  char *data = NULL, *mime = NULL, *text = NULL;
  sr_error_t err = NULL;
  size_t len;
  uint64_t total;

  EXPECT (sr_files_read_artifact (&fs, "hello.txt", 5, &data, &len, &mime, &err),
          "file_too_large", "read_artifact over max_size");
  EXPECT (sr_files_read_lines (&fs, "hello.txt", 1, 0, 5, &text, &total, &err),
          "file_too_large", "read_lines over max_size");

  memset (big, 'x', 128 * 1024);
  big[128 * 1024] = '\0';
  EXPECT (sr_files_upload (&qfs, "big.bin", big, strlen (big), false, NULL, &err),
          "quota_exceeded", "an upload past a 64 KiB data tmpfs");
  EXPECT (sr_files_write (&qfs, "/mnt/data/dir/big.bin", big, strlen (big), NULL, &err),
          "quota_exceeded", "a file_write past it");
  {
    _cleanup_free_ char *f = sr_xasprintf ("%s/mnt/data/big.bin", qroot);
    _cleanup_free_ char *d = sr_xasprintf ("%s/mnt/data", qroot);
    DIR *dir = opendir (d);
    struct dirent *de;
    bool temp = false;
    struct stat st;

    ok (lstat (f, &st) < 0 && errno == ENOENT, "the file that did not fit is not there");
    while (dir && (de = readdir (dir)))
      if (strncmp (de->d_name, ".sr-tmp-", 8) == 0)
        temp = true;
    if (dir)
      closedir (dir);
    ok (dir && !temp, "nor its temp file");
  }
  ok (sr_files_upload (&qfs, "fits.txt", "fits\n", 5, false, NULL, &err) == 0,
      "the space is back: a small upload still works");
  sr_error_free (&err);
}

static void
test_list (void)
{
  struct sr_artifact *v = NULL, *v2 = NULL, *changed = NULL;
  size_t n = 0, n2 = 0, nc = 0;
  bool truncated = true, sorted = true;
  sr_error_t err = NULL;
  const struct sr_artifact *a;
  struct stat st;

  ok (sr_files_upload (&fs, "chart.png", png, sizeof png, false, NULL, &err) == 0,
      "upload a PNG");
  ok (upload ("out/table.csv", "name,value\nx,1\ny,2\nz,3\n", false, NULL, &err) == 0,
      "upload a CSV");
  data_symlink ("hello.txt", "link-to-hello");
  {
    _cleanup_free_ char *f = under ("mnt/data/fifo");

    int r;

    croot_begin ();
    r = mkfifo (f, 0644);
    croot_end ();
    if (r < 0)
      die (f);
  }

  if (!ok (sr_files_list (&fs, true, &v, &n, &truncated, &err) == 0, "list the data"))
    {
      printf ("#   %s\n", err->msg);
      sr_error_free (&err);
      return;
    }
  ok (!truncated, "not truncated");
  for (size_t i = 1; i < n; i++)
    if (strcmp (v[i - 1].path, v[i].path) >= 0)
      sorted = false;
  ok (sorted, "sorted by path");
  for (size_t i = 0; i < n; i++)
    printf ("#   %s %llu %s\n", v[i].path, (unsigned long long) v[i].size, v[i].mime_type);
  a = find_artifact (v, n, "chart.png");
  ok (a && a->size == sizeof png, "the PNG with its size");
  is_str (a ? a->mime_type : NULL, "image/png", "the PNG's MIME type");
  a = find_artifact (v, n, "out/table.csv");
  ok (a != NULL, "a file in a subdirectory, by its relative path");
  /* libmagic 5.44 says text/csv; older ones text/plain.  */
  ok (a && a->mime_type
          && (strcmp (a->mime_type, "text/csv") == 0 || strcmp (a->mime_type, "text/plain") == 0),
      "the CSV's MIME type: %s", a && a->mime_type ? a->mime_type : "(none)");
  a = find_artifact (v, n, "a/b/c/deep.txt");
  {
    _cleanup_free_ char *p = under ("mnt/data/a/b/c/deep.txt");

    ok (a && stat (p, &st) == 0
            && a->mtime_ns == (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
        "mtime in nanoseconds, as stat says");
  }
  ok (find_artifact (v, n, "link-to-hello") == NULL, "a symlink is not listed");
  ok (find_artifact (v, n, "fifo") == NULL, "a FIFO is not listed");
  ok (find_artifact (v, n, "a") == NULL && find_artifact (v, n, "out") == NULL,
      "directories are not listed");

  /* Changed: one new, one modified in place (same size, other mtime),
   * one rewritten with another size, the rest unchanged.  */
  ok (upload ("new.txt", "new\n", false, NULL, &err) == 0, "add a file");
  ok (upload ("hello.txt", "hello, longer\n", true, NULL, &err) == 0, "resize a file");
  {
    _cleanup_free_ char *p = under ("mnt/data/a/b/c/deep.txt");
    struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = 1000000000 } };

    data_write ("a/b/c/deep.txt", "DEEP\n");
    utimensat (AT_FDCWD, p, ts, 0);
  }
  ok (sr_files_list (&fs, false, &v2, &n2, &truncated, &err) == 0, "list again");
  ok (n2 == n + 1, "one more entry (%zu, was %zu)", n2, n);
  ok (v2 && v2[0].mime_type == NULL, "without with_mime no MIME type");
  sr_artifacts_changed (&fs, v, n, v2, n2, &changed, &nc);
  is_int (nc, 3, "three artifacts changed");
  if (nc == 3)
    {
      is_str (changed[0].path, "a/b/c/deep.txt", "the one modified in place (same size)");
      is_str (changed[1].path, "hello.txt", "the resized one");
      is_str (changed[2].path, "new.txt", "the new one");
      ok (changed[2].size == 4, "with its size");
    }
  sr_artifacts_free (changed, nc);
  sr_artifacts_changed (&fs, v2, n2, v2, n2, &changed, &nc);
  is_int (nc, 0, "a listing compared with itself: nothing changed");
  sr_artifacts_free (changed, nc);
  sr_artifacts_changed (&fs, NULL, 0, v2, n2, &changed, &nc);
  is_int (nc, n2, "against an empty listing: everything is new");
  sr_artifacts_free (changed, nc);
  sr_artifacts_free (v, n);
  sr_artifacts_free (v2, n2);
  sr_error_free (&err);
}

/* A listing of live/x.txt only, with its mtime set back to mtime_ns (0:
 * left alone): what a coarse file-system clock would have stamped.  */
static void
list_stamped (const char *content, int64_t mtime_ns, struct sr_artifact **v, size_t *n)
{
  _cleanup_free_ char *p = under ("mnt/data/live/x.txt");
  struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT },
                            { .tv_sec = mtime_ns / 1000000000, .tv_nsec = mtime_ns % 1000000000 } };
  sr_error_t err = NULL;
  bool truncated;

  if (content)
    data_write ("live/x.txt", content);
  if (mtime_ns)
    utimensat (AT_FDCWD, p, ts, 0);
  if (sr_files_list (&fs, false, v, n, &truncated, &err) < 0)
    die (err->msg);
}

static size_t
n_changed (const struct sr_artifact *before, size_t n_before, const struct sr_artifact *after,
           size_t n_after)
{
  struct sr_artifact *changed = NULL;
  size_t nc = 0;

  sr_artifacts_changed (&fs, before, n_before, after, n_after, &changed, &nc);
  sr_artifacts_free (changed, nc);
  return nc;
}

static struct sr_artifact *
live_file (struct sr_artifact *v, size_t n)
{
  struct sr_artifact *a = (struct sr_artifact *) find_artifact (v, n, "live/x.txt");

  if (a == NULL)
    die ("live/x.txt is not listed");
  return a;
}

/* Timestamps come from a coarse clock: two writes of the same size within
 * one tick leave size and mtime alike, and only the content tells.  */
static void
test_changed_within_a_tick (void)
{
  struct sr_artifact *v1 = NULL, *v2 = NULL, *v3 = NULL, *v4 = NULL;
  size_t n1 = 0, n2 = 0, n3 = 0, n4 = 0;
  const struct sr_artifact *a1;
  sr_error_t err = NULL;

  ok (upload ("live/x.txt", "one", false, NULL, &err) == 0, "write live/x.txt");
  list_stamped (NULL, 0, &v1, &n1);
  a1 = live_file (v1, n1);
  ok (a1->hashed, "a file changed in the last second is hashed when listed");
  list_stamped ("two", a1->mtime_ns, &v2, &n2);
  ok (live_file (v2, n2)->mtime_ns == a1->mtime_ns && live_file (v2, n2)->ino == a1->ino,
      "rewritten in place, same size, same mtime");
  is_int (n_changed (v1, n1, v2, n2), 1, "its new content counts as a change");
  list_stamped ("two", a1->mtime_ns, &v3, &n3);
  is_int (n_changed (v2, n2, v3, n3), 0, "the same content written again is no change");

  /* The later listing came over a second after the file changed: it did
   * not hash it, the comparison does.  */
  live_file (v3, n3)->hashed = false;
  is_int (n_changed (v2, n2, v3, n3), 0, "nor when the later listing did not hash it");
  list_stamped ("six", a1->mtime_ns, &v4, &n4);
  live_file (v4, n4)->hashed = false;
  is_int (n_changed (v2, n2, v4, n4), 1, "a change it did not hash is still seen");

  sr_artifacts_free (v4, n4);
  ok (upload ("live/x.txt", "ten", true, NULL, &err) == 0, "replace it by rename");
  list_stamped (NULL, a1->mtime_ns, &v4, &n4);
  live_file (v4, n4)->hashed = false;
  live_file (v3, n3)->hashed = false;
  is_int (n_changed (v3, n3, v4, n4), 1, "another inode, same size and mtime, is a change");

  sr_artifacts_free (v4, n4);
  list_stamped ("old", 1000000000ll * 1000000000, &v4, &n4);
  ok (!live_file (v4, n4)->hashed, "a file last changed long ago is not read");
  sr_artifacts_free (v1, n1);
  sr_artifacts_free (v2, n2);
  sr_artifacts_free (v3, n3);
  sr_artifacts_free (v4, n4);
  sr_error_free (&err);
}

static void
test_open_and_mime (void)
{
  sr_error_t err = NULL;
  uint64_t size = 0;
  int fd = sr_files_open_artifact (&fs, "chart.png", &size, &err);
  char *data = NULL, *mime = NULL, first[8];
  size_t len;

  if (!ok (fd >= 0, "open_artifact opens the PNG"))
    {
      sr_error_free (&err);
      return;
    }
  is_int (size, sizeof png, "with its size");
  {
    _cleanup_free_ char *m = sr_files_mime (fd);

    is_str (m, "image/png", "sr_files_mime of the open fd");
  }
  ok (read (fd, first, sizeof first) == (ssize_t) sizeof first && memcmp (first, png, 8) == 0,
      "sr_files_mime left the offset alone: the fd still reads from the start");
  close (fd);
  ok (sr_files_read_artifact (&fs, "chart.png", BIG, &data, &len, &mime, &err) == 0
          && len == sizeof png && memcmp (data, png, len) == 0,
      "read_artifact returns the PNG's bytes");
  is_str (mime, "image/png", "and its MIME type");
  free (data);
  free (mime);
}

/* Every way out of the session is refused, and no host file is read.  */
static void
test_escapes (void)
{
  sr_error_t err = NULL;
  uint64_t total;
  _cleanup_free_ char *text = NULL;
  _cleanup_free_ char *secret = sr_xasprintf ("%s/host-secret", base);

  artifact_refused ("../x", "invalid_path", "'..' as an artifact path");
  artifact_refused ("a/../../x", "invalid_path", "'..' inside an artifact path");
  artifact_refused ("./hello.txt", "invalid_path", "'.' in a path");
  artifact_refused ("", "invalid_path", "an empty path");
  artifact_refused ("/etc/passwd", "path_outside_sandbox", "/etc/passwd as an artifact path");
  artifact_refused ("/mnt/database", "path_outside_sandbox",
                    "/mnt/database is not under /mnt/data");
  EXPECT (upload ("/etc/x", "x", false, NULL, &err),
          "path_outside_sandbox", "an upload outside /mnt/data");
  lines_refused ("../../etc/passwd", "invalid_path", "'..' for a file tool");

  /* A symlink to "/" in data resolves with data as the root.  */
  data_symlink ("/", "rootlink");
  artifact_is ("rootlink/hello.txt", "hello, longer\n",
               "a symlink to / in data stays in data (rootlink/hello.txt is data's)");
  artifact_refused ("rootlink/etc/passwd", "not_found",
                    "through a symlink to /: no /etc/passwd, not the host's");
  artifact_refused ("rootlink/etc/marker", "not_found", "nor the fake root's /etc");
  data_symlink ("../../../../etc", "etclink");
  artifact_refused ("etclink/passwd", "not_found", "a symlink to ../../../../etc stays in data");
  data_symlink (secret, "secretlink");
  artifact_refused ("secretlink", "not_found", "an absolute symlink to a host file");

  /* A file tool's absolute path resolves in the container's root.  */
  make_symlink ("/", "tmp/rl");
  make_symlink ("../../../../../etc", "tmp/etclink");
  text = lines_of ("/tmp/rl/etc/marker", 1, 0, &total, &err);
  ok (text && strstr (text, FAKE_MARKER), "a symlink to / in /tmp reaches the fake root's /etc");
  sr_error_free (&err);
  free (TAKE_PTR (text));
  text = lines_of ("/tmp/etclink/marker", 1, 0, &total, &err);
  ok (text && strstr (text, FAKE_MARKER), "../../../../../etc from /tmp stops at the fake root");
  sr_error_free (&err);
  free (TAKE_PTR (text));
  lines_refused ("/tmp/rl/etc/passwd", "not_found", "the host's /etc/passwd is not reached");
  lines_refused ("/etc/passwd", "not_found", "/etc/passwd is the fake root's (none)");
  lines_refused ("/tmp/etclink/hostname", "not_found", "nor the host's /etc/hostname");

  if (have_proc)
    {
      make_symlink ("/proc/self/root", "tmp/selfroot");
      data_symlink ("/proc/self/root", "selfroot");
      lines_refused ("/proc/self/root/etc/passwd", "path_outside_sandbox",
                     "/proc/self/root is a magic link");
      lines_refused ("/tmp/selfroot/etc/passwd", "path_outside_sandbox",
                     "a symlink to /proc/self/root");
      lines_refused ("/proc/self/cwd/etc/hostname", "path_outside_sandbox", "/proc/self/cwd");
      lines_refused ("/proc/self/status", "path_outside_sandbox", "a file on procfs");
      artifact_refused ("selfroot/etc/passwd", "not_found",
                        "a symlink to /proc/self/root in data stays in data");
      {
        struct sr_file_match *m = NULL;
        size_t nm = 0;

        EXPECT (search (&fs, "root", NULL, "/proc/self", BIG, 10, &m, &nm, NULL, &err),
                "path_outside_sandbox", "file_search refuses procfs");
      }
      if (host_exists ("sys/kernel/uevent_seqnum"))
        lines_refused ("/sys/kernel/uevent_seqnum", "path_outside_sandbox", "a file on sysfs");
      else
        ok (true, "# SKIP no /sys/kernel/uevent_seqnum in the bound /sys");
    }
  else
    ok (true, "# SKIP cannot bind /proc into the fake root");

  /* A FIFO: refused at once, never opened for reading (no writer: a
   * blocking open would hang; alarm() makes a hang a failure).  */
  alarm (20);
  artifact_refused ("fifo", "not_a_file", "a FIFO as an artifact");
  lines_refused ("/mnt/data/fifo", "not_a_file", "a FIFO for file_read");
  {
    uint64_t size;
    int fd = sr_files_open_artifact (&fs, "fifo", &size, &err);

    EXPECT (fd, "not_a_file", "open_artifact of a FIFO");
    if (fd >= 0)
      close (fd);
  }
  EXPECT (upload ("fifo", "x", true, NULL, &err),
          "not_a_file", "an upload over a FIFO");
  alarm (0);
  lines_refused ("/dev/null", "not_found", "no /dev in the fake root");

  artifact_refused ("a", "not_a_file", "a directory as an artifact");
  artifact_refused ("/mnt/data", "not_a_file", "the data directory itself");
  EXPECT (upload ("a/b", "x", true, NULL, &err),
          "not_a_file", "an upload over a directory");
  EXPECT (upload ("/mnt/data", "x", true, NULL, &err),
          "not_a_file", "an upload to /mnt/data itself");
  artifact_refused ("missing.txt", "not_found", "a missing file");
  artifact_refused ("hello.txt/x", "not_found", "a file used as a directory");

  /* Writes land on the session's writable tmpfs only.  */
  {

    if (have_ramfs)
      {
        EXPECT (sr_files_write (&fs, "/usr/x", "x", 1, NULL, &err),
                "path_outside_sandbox", "a write on a file system that is not tmpfs");
        ok (!host_exists ("usr/x"), "nothing written there");
      }
    else
      ok (true, "# SKIP cannot mount a ramfs");
    EXPECT (sr_files_write (&fs, "/etc/newdir/x", "x", 1, NULL, &err),
            "path_outside_sandbox", "a write under the image's /etc");
    ok (!host_exists ("etc/newdir"), "no parent directory made there");
    EXPECT (sr_files_write (&fs, "/work/x", "x", 1, NULL, &err),
            "path_outside_sandbox", "a write on a read-only tmpfs");
    EXPECT (sr_files_write (&fs, "/etc/marker", "x", 1, NULL, &err),
            "path_outside_sandbox", "overwriting a file of the image");
    artifact_refused ("/etc/marker", "path_outside_sandbox", "(still an artifact refusal)");
    text = lines_of ("/etc/marker", 1, 0, &total, &err);
    ok (text && strstr (text, FAKE_MARKER), "the image's file is unchanged");
    sr_error_free (&err);
    if (have_proc)
      {
        EXPECT (sr_files_write (&fs, "/tmp/selfroot/tmp/x", "x", 1, NULL, &err),
                "path_outside_sandbox", "a write through /proc/self/root");
        EXPECT (sr_files_write (&fs, "/proc/self/x", "x", 1, NULL, &err),
                "path_outside_sandbox", "a write into procfs");
      }
  }
  sr_error_free (&err);
}

/* --- the swapped symlink race --- */

static atomic_bool race_stop;

/* Swaps the symlinks race (a file) and racedir (a directory) between a
 * target in data and host paths, every other time, as fast as it can.  */
static void *
flipper (void *arg)
{
  const char *const *targets = arg;
  _cleanup_free_ char *tmp = under ("mnt/data/race.tmp"), *link = under ("mnt/data/race");
  _cleanup_free_ char *dtmp = under ("mnt/data/racedir.tmp"), *dlink = under ("mnt/data/racedir");

  croot_begin ();
  for (unsigned i = 0; !atomic_load (&race_stop); i++)
    {
      unlink (tmp);
      unlink (dtmp);
      if (symlink (i % 2 ? targets[1 + i / 2 % 2] : targets[0], tmp) == 0)
        rename (tmp, link);
      if (symlink (targets[3 + i % 2], dtmp) == 0)
        rename (dtmp, dlink);
      sched_yield ();
    }
  return NULL;
}

static void
test_race (void)
{
  _cleanup_free_ char *secret = sr_xasprintf ("%s/host-secret", base);
  _cleanup_free_ char *rel_secret = sr_xstrdup ("../../../host-secret");
  const char *targets[] = { "inside.txt", secret, rel_secret, "realdir", base };
  unsigned inside = 0, leaked = 0, other = 0, dir_inside = 0, not_found = 0;
  pthread_t t;

  data_write ("inside.txt", "inside\n");
  {
    _cleanup_free_ char *d = under ("mnt/data/realdir");
    int r;

    croot_begin ();
    r = mkdir (d, 0755);
    croot_end ();
    if (r < 0)
      die (d);
  }
  data_write ("realdir/f.txt", "inside\n");
  data_symlink ("inside.txt", "race");
  data_symlink ("realdir", "racedir");
  atomic_store (&race_stop, false);
  if (pthread_create (&t, NULL, flipper, targets) != 0)
    die ("pthread_create");
  for (unsigned i = 0; i < 6000; i++)
    {
          sr_error_t err = NULL;
      char *data = NULL;
      uint64_t total;

      switch (i % 4)
        {
        case 0:
          data = read_artifact ("race", &err);
          break;
        case 1:
          data = lines_of ("/mnt/data/race", 1, 0, &total, &err);
          break;
        case 2:
          data = read_artifact ("racedir/f.txt", &err);
          break;
        case 3:
          {
            uint64_t size;
            int fd = sr_files_open_artifact (&fs, "race", &size, &err);

            if (fd >= 0)
              {
                char buf[64] = "";

                (void) !read (fd, buf, sizeof buf - 1);
                data = sr_xstrdup (buf);
                close (fd);
              }
          }
          break;
        }
      if (data && strstr (data, "HOST SECRET"))
        leaked++;
      else if (data && strstr (data, "inside"))
        (*(i % 4 == 2 ? &dir_inside : &inside))++;
      else if (data)
        other++;
      else if (code_is (err, "not_found"))
        not_found++;
      free (data);
      sr_error_free (&err);
    }
  atomic_store (&race_stop, true);
  pthread_join (t, NULL);
  is_int (leaked, 0, "6000 reads through symlinks swapped meanwhile: none returns host content");
  ok (inside > 0 && dir_inside > 0,
      "some reads went through (%u files, %u through the dir; %u not found)", inside, dir_inside,
      not_found);
  is_int (other, 0, "no read returns anything else");
}

static void
test_read_lines (void)
{
  sr_error_t err = NULL;
  uint64_t total = 0;
  char *text;

  data_write ("five.txt", "one\ntwo\nthree\nfour\nfive\n");
  text = lines_of ("five.txt", 2, 2, &total, &err);
  is_str (text, "     2\ttwo\n     3\tthree\n", "offset 2, limit 2: cat -n style lines");
  is_int (total, 5, "total_lines");
  free (text);
  text = lines_of ("/mnt/data/five.txt", 1, 0, &total, &err);
  is_str (text, "     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive\n",
          "limit 0: to the end");
  free (text);
  text = lines_of ("five.txt", 4, 100, &total, &err);
  is_str (text, "     4\tfour\n     5\tfive\n", "a limit past the end stops at the end");
  free (text);
  text = lines_of ("five.txt", 9, 1, &total, &err);
  is_str (text, "", "an offset past the end: no lines");
  is_int (total, 5, "but the total");
  free (text);
  data_write ("noeol.txt", "a\n\nb");
  text = lines_of ("noeol.txt", 1, 0, &total, &err);
  is_str (text, "     1\ta\n     2\t\n     3\tb\n",
          "an empty line and a last line without newline");
  is_int (total, 3, "count as lines");
  free (text);
  data_write ("empty.txt", "");
  text = lines_of ("empty.txt", 1, 0, &total, &err);
  is_str (text, "", "an empty file: no lines");
  is_int (total, 0, "and a total of 0");
  free (text);
  {
    static const char nul[] = "x\0y\nz\n";
    _cleanup_free_ char *p = under ("mnt/data/nul.txt");
    int fd;

    croot_begin ();
    fd = open (p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    croot_end ();
    if (fd < 0 || sr_write_all (fd, nul, sizeof nul - 1) < 0)
      die (p);
    close (fd);
    text = lines_of ("nul.txt", 1, 0, &total, &err);
    is_str (text, "     1\tx\xef\xbf\xbdy\n     2\tz\n", "a NUL shows as U+FFFD, not as the end");
    free (text);
  }
  sr_error_free (&err);
}

static void
test_write (void)
{
  _cleanup_free_ char *p = under ("tmp/w/deeper/x.txt");
  _cleanup_free_ char *ret_path = NULL;
  sr_error_t err = NULL;
  struct stat st1, st2;
  char buf[64] = "";
  int fd;

  ok (sr_files_write (&fs, "/tmp/w/deeper/x.txt", "first\n", 6, &ret_path, &err) == 0,
      "file_write in /tmp creates parents");
  is_str (ret_path, "/tmp/w/deeper/x.txt", "and returns the path");
  fd = open (p, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st1) < 0 || chmod (p, 0600) < 0)
    die (p);
  write_ok ("/tmp/w/deeper/x.txt", "second, longer\n", "file_write replaces a file");
  ok (read (fd, buf, sizeof buf - 1) == 6 && strcmp (buf, "first\n") == 0,
      "a reader of the old file still sees all of the old content (renamed, not rewritten)");
  close (fd);
  ok (stat (p, &st2) == 0 && st2.st_ino != st1.st_ino, "the new content is a new inode");
  ok ((st2.st_mode & 07777) == 0600, "which keeps the replaced file's mode");
  if (!in_userns)
    {
      /* The container's uid 1, as the host sees it.  */
      if (chown (p, fsn.uid + 1, fsn.gid + 1) < 0)
        die (p);
      write_ok ("/tmp/w/deeper/x.txt", "third\n", "file_write over a file of another owner");
      ok (stat (p, &st2) == 0 && st2.st_uid == fsn.uid + 1 && st2.st_gid == fsn.gid + 1,
          "keeps that owner (%u:%u)", (unsigned) st2.st_uid, (unsigned) st2.st_gid);
      write_ok ("/tmp/w/deeper/x.txt", "second, longer\n", "and back");
    }
  {
    uint64_t total;
    _cleanup_free_ char *text = lines_of ("/tmp/w/deeper/x.txt", 1, 0, &total, &err);

    is_str (text, "     1\tsecond, longer\n", "the content is replaced");
  }
  ok (!temp_left ("tmp/w/deeper"), "no temp file is left");
  write_ok ("relative.txt", "rel\n", "a relative file_write path is in /mnt/data");
  artifact_is ("relative.txt", "rel\n", "and reads back as an artifact");
  {
    _cleanup_free_ char *l = under ("tmp/wlink");

    make_symlink ("/etc/marker", "tmp/wlink");
    write_ok ("/tmp/wlink", "replaced\n", "file_write onto a symlink");
    ok (lstat (l, &st1) == 0 && S_ISREG (st1.st_mode), "replaces the link, not its target");
  }
  sr_error_free (&err);
}

/* sr_files_patch of r, max_size max; *ret_fuzzy (may be NULL) says how
 * old_s matched.  */
static int
patch_in (const struct sr_fsroot *r, const char *path, const char *old_s, const char *new_s,
          bool all, const char *diff, uint64_t max, unsigned *n, bool *ret_fuzzy,
          sr_error_t *err)
{
  struct sr_patch p = { .old_string = old_s, .new_string = new_s, .replace_all = all,
                        .diff = diff, .max_size = max, .lint = true };
  int r_ = sr_files_patch (r, path, &p, err);

  *n = p.replacements;
  if (ret_fuzzy)
    *ret_fuzzy = p.fuzzy;
  return r_;
}

static int
patch (const char *path, const char *old_s, const char *new_s, bool all, const char *diff,
       unsigned *n, sr_error_t *err)
{
  return patch_in (&fs, path, old_s, new_s, all, diff, BIG, n, NULL, err);
}

static void
test_patch_string (void)
{
  sr_error_t err = NULL;
  unsigned n = 0;
  int ret;

  data_write ("p.txt", "alpha beta\ngamma beta\ndelta beta\nunique\n");
  ok (patch ("p.txt", "unique", "UNIQUE", false, NULL, &n, &err) == 0 && n == 1,
      "a string found once is replaced");
  artifact_is ("p.txt", "alpha beta\ngamma beta\ndelta beta\nUNIQUE\n", "the result");
  EXPECT (patch ("p.txt", "absent", "x", false, NULL, &n, &err),
          "no_match", "a string not found");
  EXPECT (patch ("p.txt", "beta", "BETA", false, NULL, &n, &err),
          "ambiguous_match", "a string found three times");
  artifact_is ("p.txt", "alpha beta\ngamma beta\ndelta beta\nUNIQUE\n",
               "the file is left alone on failure");
  ret = patch ("p.txt", "beta", "BETA", true, NULL, &n, &err);
  ok (ret == 0 && n == 3, "replace_all replaces every one (%u)", n);
  artifact_is ("p.txt", "alpha BETA\ngamma BETA\ndelta BETA\nUNIQUE\n", "the result");
  ok (patch ("p.txt", "\nUNIQUE\n", "\n", false, NULL, &n, &err) == 0,
      "a multi-line string, replaced by less");
  artifact_is ("p.txt", "alpha BETA\ngamma BETA\ndelta BETA\n", "the result");
  EXPECT (patch ("missing.txt", "a", "b", false, NULL, &n, &err),
          "not_found", "patching a missing file");
  EXPECT (patch ("fifo", "a", "b", false, NULL, &n, &err),
          "not_a_file", "patching a FIFO");
  EXPECT (patch ("link-to-hello", "a", "b", false, NULL, &n, &err),
          "not_a_file", "patching a symlink");
  EXPECT (patch ("/etc/marker", "FAKE", "x", false, NULL, &n, &err),
          "path_outside_sandbox", "patching a file of the image");
  EXPECT (patch_in (&fs, "p.txt", "alpha", NULL, false, NULL, 3, &n, NULL, &err),
          "invalid_patch", "no new_string and no diff");
  EXPECT (patch_in (&fs, "p.txt", "alpha", "x", false, NULL, 3, &n, NULL, &err),
          "file_too_large", "a file over max_size");
}

/* old_string not found as given: matched ignoring indentation and line
 * endings when that match is unique, re-indented, the file's CRLF and BOM
 * kept.  */
static void
test_patch_fuzzy (void)
{
  sr_error_t err = NULL;
  unsigned n = 0;
  bool fuzzy = true;

  data_write ("f.py", "def f():\n    if x:\n        return 1\n    return 2\n");
  ok (patch_in (&fs, "f.py", "return 2", "return 3", false, NULL, BIG, &n, &fuzzy, &err) == 0
        && !fuzzy,
      "fuzzy patch: an exact match is used first, and said to be exact");
  ok (patch_in (&fs, "f.py", "if x:\n    return 1\n", "if y:\n    return 10\n    # ten\n",
                false, NULL, BIG, &n, &fuzzy, &err)
          == 0
        && fuzzy && n == 1,
      "fuzzy patch: old_string indented differently matches, said to be fuzzy");
  artifact_is ("f.py",
               "def f():\n    if y:\n        return 10\n        # ten\n    return 3\n",
               "fuzzy patch: new_string takes the file's indentation");
  ok (patch_in (&fs, "f.py", "            return 10\n            # ten\n        return 3\n",
                "            return 11\n        return 4\n", false, NULL, BIG, &n, &fuzzy, &err)
          == 0
        && fuzzy,
      "fuzzy patch: old_string indented more than the file");
  artifact_is ("f.py", "def f():\n    if y:\n        return 11\n    return 4\n",
               "fuzzy patch: a dedented line of new_string stays dedented");

  data_write ("crlf.txt", "\xef\xbb\xbfone\r\n  two\r\nthree\r\n");
  ok (patch_in (&fs, "crlf.txt", "one\ntwo\n", "ONE\nTWO\n", false, NULL, BIG, &n, &fuzzy, &err)
          == 0
        && fuzzy,
      "fuzzy patch: LF old_string matches CRLF lines (after a BOM)");
  artifact_is ("crlf.txt", "\xef\xbb\xbfONE\r\nTWO\r\nthree\r\n",
               "fuzzy patch: the BOM and CRLF line endings are kept");

  data_write ("noeol.txt", "a\n  b");
  ok (patch_in (&fs, "noeol.txt", "b", "B", false, NULL, BIG, &n, &fuzzy, &err) == 0 && !fuzzy,
      "exact patch of a file without a final newline");
  ok (patch_in (&fs, "noeol.txt", "\tB\n", "C\n", false, NULL, BIG, &n, &fuzzy, &err) == 0
        && fuzzy,
      "fuzzy patch of its last line");
  artifact_is ("noeol.txt", "a\n  C", "fuzzy patch: no final newline is added");

  data_write ("amb.py", "if a:\n    pass\nif b:\n  pass\n");
  EXPECT (patch_in (&fs, "amb.py", "\tpass", "x", false, NULL, BIG, &n, &fuzzy, &err),
          "ambiguous_match", "fuzzy patch: two tolerant matches are refused");
  EXPECT (patch_in (&fs, "amb.py", "\tpass", "x", true, NULL, BIG, &n, &fuzzy, &err),
          "ambiguous_match", "fuzzy patch: even with replace_all");
  artifact_is ("amb.py", "if a:\n    pass\nif b:\n  pass\n", "and the file is left alone");
  EXPECT (patch_in (&fs, "amb.py", "pass\nif c:", "x", false, NULL, BIG, &n, &fuzzy, &err),
          "no_match", "fuzzy patch: lines that are not there are no_match");
}

/* A string and its length.  */
#define TEXT(s) s, strlen (s)

/* The syntax check: JSON and YAML on the host, and file_patch refusing
 * to write a result that does not parse.  */
static void
test_lint (void)
{
  sr_error_t err = NULL;
  unsigned n = 0;

  ok (sr_files_lint (NULL, "/x/a.json", TEXT ("{\"a\": [1, 2]}\n"), &err) == 0,
      "lint: valid JSON passes");
  EXPECT (sr_files_lint (NULL, "/x/a.json", TEXT ("{\n  \"a\": 1,\n  \"b\" 2\n}\n"), &err),
          "lint_failed", "lint: broken JSON is lint_failed");
  ok (sr_files_lint (NULL, "/x/a.JSON", TEXT ("{} x"), &err) < 0 && err
        && strstr (err->msg, "line 1, column 4"),
      "lint: text after the value is refused at its line and column");
  sr_error_free (&err);
  ok (sr_files_lint (NULL, "/x/a.json", TEXT ("{\n  \"a\": 1,\n  \"b\" 2\n}\n"), &err) < 0 && err
        && strstr (err->msg, "line 3, column"),
      "lint: the JSON error names its line");
  if (err)
    printf ("# %s\n", err->msg);
  sr_error_free (&err);
  ok (sr_files_lint (NULL, "/x/c.yaml", TEXT ("a: 1\nb:\n  - x\n---\nc: d\n"), &err) == 0,
      "lint: valid YAML of two documents passes");
  ok (sr_files_lint (NULL, "/x/c.yml", TEXT ("a: 1\nb: [1, 2\nc: 3\n"), &err) < 0
        && strcmp (sr_error_code (err), "lint_failed") == 0 && strstr (err->msg, "line "),
      "lint: broken YAML is lint_failed, with its line");
  if (err)
    printf ("# %s\n", err->msg);
  sr_error_free (&err);
  ok (sr_files_lint (NULL, "/x/c.yaml", TEXT ("a: &x [*x]\nb: *x\n"), &err) == 0,
      "lint: YAML aliases are not expanded");
  sr_error_free (&err);
  ok (sr_files_lint (NULL, "/x/notes.txt", TEXT ("{"), &err) == 0, "lint: other names pass");
  EXPECT (sr_files_lint (NULL, "/x/c.toml", TEXT ("a = 1\n"), &err), "lint_unavailable",
          "lint: TOML with no command to run it is lint_unavailable");

  data_write ("conf.json", "{\"a\": 1}\n");
  EXPECT (patch ("conf.json", "1}", "1,}", false, NULL, &n, &err), "lint_failed",
          "lint: file_patch refuses a result that is not JSON");
  artifact_is ("conf.json", "{\"a\": 1}\n", "lint: and leaves the file as it was");
}

static void
test_sensitive (void)
{
  static const char *const yes[] = {
    "/root/.ssh/authorized_keys", ".ssh", "/home/u/.aws/credentials", "/home/u/.gnupg/x",
    "/app/.env", ".env.local", "/etc/shadow", "/etc/sudoers", "/etc/sudoers.d/x",
    "/home/u/.ssh2/id_rsa.pub", "certs/server.pem", "/x/tls.key", "/root/.netrc",
    "/root/.docker/config.json", "/home/u/.kube/config",
  };
  static const char *const no[] = {
    "/mnt/data/x.csv", "/etc/shadowed", "environment.txt", "/x/.envrc", "/home/u/ssh/x",
    "/home/u/.kube/config.bak", "/etc/passwd", "keys.txt", "etc/shadow",
  };

  for (size_t i = 0; i < SR_ARRAY_SIZE (yes); i++)
    ok (sr_files_sensitive (yes[i]) != NULL, "sensitive: %s", yes[i]);
  for (size_t i = 0; i < SR_ARRAY_SIZE (no); i++)
    ok (sr_files_sensitive (no[i]) == NULL, "not sensitive: %s", no[i]);
}

/* file_search: the newest files first, whatever their names.  */
static void
test_search_mtime (void)
{
  static const char *const names[] = { "m/a.txt", "m/b.txt", "m/c.txt" };
  /* Seconds since the epoch of each: b newest, then c, then a.  */
  static const time_t when[] = { 1000000000, 1700000000, 1600000000 };
  struct sr_file_match *m = NULL;
  size_t n = 0;
  sr_error_t err = NULL;

  for (size_t i = 0; i < SR_ARRAY_SIZE (names); i++)
    {
      _cleanup_free_ char *host = sr_xasprintf ("%s/mnt/data/%s", root, names[i]);
      struct timespec ts[2] = { { when[i], 0 }, { when[i], 0 } };

      ok (upload (names[i], "needle\n", false, NULL, &err) == 0, "mtime data: %s", names[i]);
      croot_begin ();
      if (utimensat (AT_FDCWD, host, ts, AT_SYMLINK_NOFOLLOW) < 0)
        printf ("# utimensat %s: %s\n", host, strerror (errno));
      croot_end ();
    }
  ok (search (&fs, "needle", NULL, "m", BIG, 100, &m, &n, NULL, &err) == 0 && n == 3,
      "search by mtime: every file matches");
  if (n == 3)
    {
      ok (strcmp (m[0].path, "/mnt/data/m/b.txt") == 0 && strcmp (m[1].path, "/mnt/data/m/c.txt") == 0
            && strcmp (m[2].path, "/mnt/data/m/a.txt") == 0,
          "search by mtime: newest first (%s, %s, %s)", m[0].path, m[1].path, m[2].path);
      ok (m[0].mtime_ns == (int64_t) when[1] * 1000000000, "search by mtime: a match has its file's mtime");
    }
  sr_file_matches_free (m, n);
  ok (search (&fs, "needle", NULL, "m", BIG, 1, &m, &n, NULL, &err) == 0 && n == 1
        && strcmp (m[0].path, "/mnt/data/m/b.txt") == 0,
      "search by mtime: a limit keeps the newest");
  sr_file_matches_free (m, n);
}

/* Runs diff -u on two host files holding a and b; NULL when diff is not
 * there.  */
static char *
make_diff (const char *a, const char *b)
{
  _cleanup_free_ char *pa = sr_xasprintf ("%s/diff-a", base);
  _cleanup_free_ char *pb = sr_xasprintf ("%s/diff-b", base);
  _cleanup_free_ char *cmd = sr_xasprintf ("diff -u %s %s", pa, pb);
  char *out = NULL;
  size_t len = 0;
  FILE *f, *o = open_memstream (&out, &len);
  char buf[4096];
  size_t n;

  host_write (pa, a);
  host_write (pb, b);
  f = popen (cmd, "r");
  if (f == NULL || o == NULL)
    die ("popen diff");
  while ((n = fread (buf, 1, sizeof buf, f)) > 0)
    fwrite (buf, 1, n, o);
  if (pclose (f) == -1)
    die ("pclose");
  fclose (o);
  if (strncmp (out, "---", 3) != 0)
    {
      free (out);
      return NULL;
    }
  return out;
}

static char *
numbered (unsigned from, unsigned to)
{
  char *p = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&p, &len);

  if (f == NULL)
    die ("open_memstream");
  for (unsigned i = from; i <= to; i++)
    fprintf (f, "line %u\n", i);
  fclose (f);
  return p;
}

static void
test_patch_diff (void)
{
  _cleanup_free_ char *orig = numbered (1, 30);
  _cleanup_free_ char *mod = NULL, *diff = NULL, *shifted = NULL, *want_shifted = NULL;
  sr_error_t err = NULL;
  unsigned n = 0;

  /* Three hunks: a change near the top, a deletion in the middle, an
   * addition at the end.  */
  {
    _cleanup_free_ char *mid = numbered (6, 14), *rest = numbered (17, 30);

    mod = sr_xasprintf ("line 1\nline 2\nLINE THREE\nline 4\nline 5\n%s%s"
                        "line 31\nline 32\n",
                        mid, rest);
  }
  diff = make_diff (orig, mod);
  if (diff == NULL)
    {
      ok (true, "# SKIP diff -u is not available");
      return;
    }
  data_write ("d.txt", orig);
  ok (patch ("d.txt", NULL, NULL, false, diff, &n, &err) == 0,
      "a multi-hunk diff -u applies");
  is_int (n, 3, "three hunks applied");
  artifact_is ("d.txt", mod, "the result is the new file");

  /* The same diff on a file with three lines more at the top: every hunk
   * is found three lines lower.  */
  shifted = sr_xasprintf ("new a\nnew b\nnew c\n%s", orig);
  want_shifted = sr_xasprintf ("new a\nnew b\nnew c\n%s", mod);
  data_write ("d.txt", shifted);
  ok (patch ("d.txt", NULL, NULL, false, diff, &n, &err) == 0,
      "hunks whose lines moved apply at an offset");
  artifact_is ("d.txt", want_shifted, "the result");

  /* Without its file headers, and with wrong counts in a header.  */
  data_write ("d.txt", orig);
  {
    const char *at = strstr (diff, "@@");

    ok (patch ("d.txt", NULL, NULL, false, at, &n, &err) == 0,
        "a diff without ---/+++ headers applies");
    artifact_is ("d.txt", mod, "the result");
  }
  data_write ("d.txt", "one\ntwo\nthree\n");
  ok (patch ("d.txt", NULL, NULL, false, "@@ -1,9 +1,9 @@\n one\n-two\n+TWO\n three\n", &n, &err)
          == 0,
      "a hunk whose counts are wrong: recounted from its lines");
  artifact_is ("d.txt", "one\nTWO\nthree\n", "the result");

  /* One hunk does not match: nothing is written.  */
  data_write ("d.txt", orig);
  {
    _cleanup_free_ char *bad = sr_xstrdup (diff);
    char *l = strstr (bad, " line 5\n");

    if (l)
      memcpy (l, " LINE 5", 7);
    EXPECT (patch ("d.txt", NULL, NULL, false, bad, &n, &err),
            "no_match", "a diff with a hunk whose context is not in the file");
    artifact_is ("d.txt", orig, "the file is unchanged");
  }
  EXPECT (patch ("d.txt", NULL, NULL, false, "no hunk here\n", &n, &err),
          "invalid_patch", "a diff without hunks");
  EXPECT (patch ("d.txt", NULL, NULL, false, "@@ -x +y @@\n-a\n", &n, &err),
          "invalid_patch", "a malformed hunk header");
  EXPECT (patch ("d.txt", NULL, NULL, false, "@@ -1 +1 @@\n-line 1\n?line 1\n", &n, &err),
          "invalid_patch", "a hunk line with an unknown prefix");

  /* "\ No newline at end of file", both ways.  */
  {
    _cleanup_free_ char *d1 = make_diff ("a\nb", "a\nc\n"), *d2 = make_diff ("a\nb\n", "a\nB");

    data_write ("e.txt", "a\nb");
    ok (patch ("e.txt", NULL, NULL, false, d1, &n, &err) == 0,
        "a diff that adds the final newline");
    artifact_is ("e.txt", "a\nc\n", "the result ends with a newline");
    data_write ("e.txt", "a\nb\n");
    ok (patch ("e.txt", NULL, NULL, false, d2, &n, &err) == 0,
        "a diff that removes the final newline");
    artifact_is ("e.txt", "a\nB", "the result ends without one");
  }
  /* Insertion into an empty file, as diff -u writes it.  */
  {
    _cleanup_free_ char *d3 = make_diff ("", "x\ny\n");

    data_write ("e.txt", "");
    ok (patch ("e.txt", NULL, NULL, false, d3, &n, &err) == 0, "a diff onto an empty file");
    artifact_is ("e.txt", "x\ny\n", "the result");
  }
  ok (!temp_left ("mnt/data"), "no temp file is left after the patches");
  sr_error_free (&err);
}

/* file_search reads a file of many hard links once, stops before
 * max_bytes, and gives up when its cancel fd says so.  */
static void
test_search_limits (void)
{
  struct sr_search_limits lim = { .max_size = BIG, .max_matches = 1000,
                                  .max_bytes = UINT64_MAX, .cancel_fd = -1 };
  struct sr_search_result res;
  sr_error_t err = NULL;
  int cancel[2];

  ok (upload ("links/0.txt", "needle\n", false, NULL, &err) == 0, "limits: a file");
  ok (upload ("links/other.txt", "needle too\n", false, NULL, &err) == 0, "and another");
  /* One mtime for both, so that path order decides which comes first,
   * not whether a clock tick fell between the two uploads.  */
  for (size_t i = 0; i < 2; i++)
    {
      _cleanup_free_ char *p = under (i == 0 ? "mnt/data/links/0.txt" : "mnt/data/links/other.txt");
      struct timespec ts[2] = { { 1600000000, 0 }, { 1600000000, 0 } };

      croot_begin ();
      if (utimensat (AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW) < 0)
        die (p);
      croot_end ();
    }
  for (int i = 1; i < 50; i++)
    {
      _cleanup_free_ char *from = under ("mnt/data/links/0.txt");
      _cleanup_free_ char *to = sr_xasprintf ("%s/mnt/data/links/%d.txt", root, i);

      croot_begin ();
      if (link (from, to) < 0)
        die (to);
      croot_end ();
    }
  ok (sr_files_search (&fs, "needle", NULL, "links", &lim, &res, &err) == 0,
      "search 50 hard links of one file and another file");
  ok (res.n == 2 && res.files_read == 2 && res.bytes_read == 7 + 11 && !res.truncated,
      "each file read once: %zu matches, %zu files, %llu bytes", res.n, res.files_read,
      (unsigned long long) res.bytes_read);
  if (res.n == 2)
    ok (strcmp (res.v[0].path, "/mnt/data/links/0.txt") == 0
            && strcmp (res.v[1].path, "/mnt/data/links/other.txt") == 0,
        "under the first of its paths");
  sr_file_matches_free (res.v, res.n);

  lim.max_bytes = 10;
  ok (sr_files_search (&fs, "needle", NULL, "links", &lim, &res, &err) == 0,
      "search with a byte cap of 10");
  ok (res.n == 1 && res.bytes_read == 7 && res.truncated,
      "stops before the cap, truncated (%llu bytes)", (unsigned long long) res.bytes_read);
  sr_file_matches_free (res.v, res.n);

  lim.max_bytes = UINT64_MAX;
  if (pipe2 (cancel, O_CLOEXEC) < 0 || write (cancel[1], "x", 1) != 1)
    die ("pipe");
  lim.cancel_fd = cancel[0];
  EXPECT (sr_files_search (&fs, "needle", NULL, "links", &lim, &res, &err), "cancelled",
          "a readable cancel fd cancels the search");
  EXPECT (sr_files_search (&fs, "needle", NULL, "links/0.txt", &lim, &res, &err), "cancelled",
          "and the search of one file");
  close (cancel[0]);
  close (cancel[1]);
}

/* Searches bt/ for pattern in a child that an alarm kills after 20 s,
 * making cancel_fd (-1: none) readable 200 ms after it starts; true when
 * the search failed with code, naming the file and line.  */
static bool
search_fails_with (const char *pattern, const struct sr_search_limits *lim, int cancel_fd,
                   const char *code)
{
  int status;
  pid_t pid;

  fflush (NULL);
  pid = fork ();
  if (pid < 0)
    die ("fork");
  if (pid == 0)
    {
      struct sr_search_result res;
      sr_error_t err = NULL;
      int rc;

      alarm (20);
      rc = sr_files_search (&fs, pattern, NULL, "bt", lim, &res, &err);
      if (rc == 0)
        _exit (2);
      printf ("# %s: %s\n", pattern, err->msg);
      fflush (stdout);
      _exit (strcmp (sr_error_code (err), code) == 0
                     && (strcmp (code, "cancelled") == 0
                         || strstr (err->msg, "/mnt/data/bt/x.txt:1"))
                 ? 0
                 : 1);
    }
  if (cancel_fd >= 0)
    {
      usleep (200000);
      if (write (cancel_fd, "x", 1) != 1)
        die ("write");
    }
  if (waitpid (pid, &status, 0) < 0)
    die ("waitpid");
  return WIFEXITED (status) && WEXITSTATUS (status) == 0;
}

/* A pattern that is slow on a long line gives up instead of holding the
 * server thread: glibc's regexec took about 100 s on this line, and
 * nothing could interrupt it.  */
static void
test_search_backtracking (void)
{
  struct sr_search_limits lim = { .max_size = BIG, .max_matches = 10,
                                  .max_bytes = UINT64_MAX, .cancel_fd = -1 };
  const size_t len = 300000;
  _cleanup_free_ char *line = sr_xmalloc (len + 4);
  int cancel[2];

  memset (line, 'x', len);
  strcpy (line + len, "!y\n");
  ok (upload ("bt/x.txt", line, false, NULL, NULL) == 0,
      "backtracking: a line of 300000 x then y");
  ok (search_fails_with ("(x+)+y", &lim, -1, "pattern_too_complex"),
      "(x+)+y stops with pattern_too_complex, naming the file and line");
  lim.max_ms = 300;
  ok (search_fails_with ("x*[yz]", &lim, -1, "search_timeout"),
      "x*[yz], quadratic in the line, stops at max_ms with search_timeout");
  lim.max_ms = 0;
  if (pipe2 (cancel, O_CLOEXEC) < 0)
    die ("pipe");
  lim.cancel_fd = cancel[0];
  ok (search_fails_with ("x*[yz]", &lim, cancel[1], "cancelled"),
      "and a cancel interrupts it inside the line");
  close (cancel[0]);
  close (cancel[1]);
}

static void
test_search (void)
{
  struct sr_file_match *m = NULL;
  size_t n = 0;
  bool truncated = true;
  sr_error_t err = NULL;
  _cleanup_free_ char *longline = NULL;

  ok (upload ("s/src/a.py", "import os\n\ndef foo():\n    return 1\n", false, NULL, &err)
          == 0,
      "search data: a.py");
  ok (upload ("s/src/b.txt", "foo bar\nnothing\nfoooo\n", false, NULL, &err) == 0, "b.txt");
  {
    static const char bin[] = "foo\0foo\nfoo\n";

    ok (sr_files_upload (&fs, "s/bin.dat", bin, sizeof bin - 1, false, NULL, &err) == 0,
        "a binary file holding foo");
  }
  data_symlink ("../hello.txt", "s/link.txt");
  longline = sr_xmalloc (2001);
  memset (longline, 'f', 2000);
  longline[2000] = '\0';
  longline[0] = 'x';
  memcpy (longline + 1, "foo", 3);
  /* A two-byte character across byte 500: the cut goes before it.  */
  memcpy (longline + 499, "\xc3\xa9", 2);
  ok (upload ("s/long.txt", longline, false, NULL, &err) == 0, "a file with a long line");

  ok (search (&fs, "fo+\\(", "*.py", "/mnt/data/s", BIG, 100, &m, &n, &truncated, &err)
          == 0,
      "search a regex with a glob");
  is_int (n, 1, "one match in the .py files");
  if (n >= 1)
    {
      is_str (m[0].path, "/mnt/data/s/src/a.py", "its absolute path");
      is_int (m[0].line, 3, "its line number");
      is_str (m[0].text, "def foo():", "its text");
    }
  ok (!truncated, "not truncated");
  sr_file_matches_free (m, n);

  ok (search (&fs, "^fo+", NULL, "s", BIG, 100, &m, &n, &truncated, &err) == 0,
      "search everything under a relative dir");
  is_int (n, 2, "two matches: bin.dat is binary, long.txt does not start with f, the link is "
                "not followed");
  if (n == 2)
    {
      ok (strcmp (m[0].path, "/mnt/data/s/src/b.txt") == 0 && m[0].line == 1 && m[1].line == 3,
          "both in b.txt, lines 1 and 3");
    }
  sr_file_matches_free (m, n);

  ok (search (&fs, "xfoo", NULL, NULL, BIG, 100, &m, &n, &truncated, &err) == 0,
      "the default dir is /mnt/data");
  is_int (n, 1, "one match");
  if (n == 1)
    {
      is_str (m[0].path, "/mnt/data/s/long.txt", "in long.txt");
      ok (strlen (m[0].text) == 499, "a long line is cut to at most 500 bytes, on a character "
                                     "boundary (%zu)",
          strlen (m[0].text));
    }
  sr_file_matches_free (m, n);

  ok (search (&fs, "foo", "*.txt", "/mnt/data/s", BIG, 1, &m, &n, &truncated, &err)
          == 0,
      "max_matches 1");
  ok (n == 1 && truncated, "one match and truncated");
  sr_file_matches_free (m, n);

  ok (search (&fs, "foo", NULL, "/mnt/data/s/src/b.txt", BIG, 100, &m, &n, &truncated,
                       &err)
          == 0
          && n == 2,
      "a file as the path searches that file");
  sr_file_matches_free (m, n);

  ok (search (&fs, "foo", NULL, "/mnt/data/s", 10, 100, &m, &n, &truncated, &err)
          == 0
          && n == 0,
      "files over max_size are skipped");
  sr_file_matches_free (m, n);

  ok (search (&fs, "MARKER", NULL, "/", BIG, 100, &m, &n, &truncated, &err) == 0,
      "search from the container's /");
  {
    bool marker = false;

    for (size_t i = 0; i < n; i++)
      {
        if (strcmp (m[i].path, "/etc/marker") == 0)
          marker = true;
        if (strncmp (m[i].path, "/proc", 5) == 0 || strncmp (m[i].path, "/sys", 4) == 0)
          marker = false;
      }
    ok (marker, "finds the fake root's /etc/marker and nothing in /proc or /sys");
  }
  sr_file_matches_free (m, n);

  EXPECT (search (&fs, "(", NULL, NULL, BIG, 100, &m, &n, &truncated, &err),
          "invalid_pattern", "an invalid regular expression");
  EXPECT (search (&fs, "x", NULL, "/mnt/data/nope", BIG, 100, &m, &n, &truncated, &err),
          "not_found", "a missing directory");
  EXPECT (search (&fs, "x", NULL, "../..", BIG, 100, &m, &n, &truncated, &err),
          "invalid_path", "'..' as the directory");
}

static void
cleanup (void)
{
  /* The files under the fake root are on its mounts, except etc.  */
  _cleanup_free_ char *m = under ("etc/marker"), *e = under ("etc");
  const char *names[] = { "mnt", "tmp", "usr", "work", "proc", "sys", NULL };
  _cleanup_free_ char *s = sr_xasprintf ("%s/host-secret", base);
  _cleanup_free_ char *f = sr_xasprintf ("%s/f.txt", base);
  _cleanup_free_ char *da = sr_xasprintf ("%s/diff-a", base);
  _cleanup_free_ char *db = sr_xasprintf ("%s/diff-b", base);
  _cleanup_free_ char *qm = sr_xasprintf ("%s/mnt", qroot);

  if (fsn.datafd >= 0)
    close (fsn.datafd);
  if (fsn.rootfd >= 0)
    close (fsn.rootfd);
  if (qfsn.datafd >= 0)
    close (qfsn.datafd);
  if (qfsn.rootfd >= 0)
    close (qfsn.rootfd);
  if (qroot[0])
    {
      umount2 (qm, MNT_DETACH);
      rmdir (qm);
      rmdir (qroot);
    }
  for (const char **n = names; *n; n++)
    {
      _cleanup_free_ char *p = under (*n);

      umount2 (p, MNT_DETACH);
      rmdir (p);
    }
  unlink (m);
  rmdir (e);
  rmdir (root);
  unlink (s);
  unlink (f);
  unlink (da);
  unlink (db);
  rmdir (base);
}

/* --- the file tools over a backend's primitives (struct sr_fs_ops), as Docker's --- */

/* A fake remote: files in memory, each call recorded.  */
struct fake_file
{
  char *abs;
  char *data;
  size_t len;
};

static struct fake_file fake[8];
static size_t n_fake;
static unsigned fake_calls, fake_last_flags;
static char fake_last_abs[256];

static void
fake_put (const char *abs, const char *data, size_t len)
{
  for (size_t i = 0; i < n_fake; i++)
    if (strcmp (fake[i].abs, abs) == 0)
      {
        free (fake[i].data);
        fake[i].data = sr_xmalloc (len + 1);
        memcpy (fake[i].data, data, len);
        fake[i].data[len] = '\0';
        fake[i].len = len;
        return;
      }
  fake[n_fake].abs = sr_xstrdup (abs);
  fake[n_fake].data = sr_xmalloc (len + 1);
  memcpy (fake[n_fake].data, data, len);
  fake[n_fake].data[len] = '\0';
  fake[n_fake].len = len;
  n_fake++;
}

static void
fake_note (const char *abs, unsigned flags)
{
  fake_calls++;
  fake_last_flags = flags;
  snprintf (fake_last_abs, sizeof fake_last_abs, "%s", abs);
}

static int
fake_read (void *ctx, const char *abs, unsigned flags, uint64_t max, char **ret, size_t *ret_len,
           sr_error_t *err)
{
  (void) ctx;
  fake_note (abs, flags);
  for (size_t i = 0; i < n_fake; i++)
    if (strcmp (fake[i].abs, abs) == 0)
      {
        size_t len = fake[i].len;

        if (len > max && !(flags & SR_FS_HEAD))
          return sr_error_set_code (err, "file_too_large", EFBIG, "%s is too large", abs);
        if (len > max)
          len = (size_t) max;
        *ret = sr_xmalloc (len + 1);
        memcpy (*ret, fake[i].data, len);
        (*ret)[len] = '\0';
        *ret_len = len;
        return 0;
      }
  return sr_error_set_code (err, "not_found", ENOENT, "%s: no such file", abs);
}

static int
fake_write (void *ctx, const char *abs, unsigned flags, const void *buf, size_t len,
            bool overwrite, sr_error_t *err)
{
  (void) ctx;
  fake_note (abs, flags);
  for (size_t i = 0; i < n_fake && !overwrite; i++)
    if (strcmp (fake[i].abs, abs) == 0)
      return sr_error_set_code (err, "file_exists", EEXIST, "%s exists", abs);
  fake_put (abs, buf, len);
  return 0;
}

static int
fake_walk (void *ctx, const char *abs, unsigned flags, unsigned max_depth, int cancel_fd,
           sr_fs_visit_fn visit, void *userdata, bool *ret_truncated, sr_error_t *err)
{
  size_t dlen = strlen (abs);

  (void) ctx, (void) max_depth, (void) cancel_fd, (void) err;
  fake_note (abs, flags);
  /* Backwards: the caller must sort.  */
  for (size_t i = n_fake; i-- > 0;)
    if (strncmp (fake[i].abs, abs, dlen) == 0 && fake[i].abs[dlen] == '/')
      {
        struct sr_fs_entry e = { .rel = fake[i].abs + dlen + 1, .size = fake[i].len,
                                 .mtime_ns = 1, .dev = 1, .ino = i + 1 };

        if (visit (userdata, &e) != 0)
          break;
      }
  *ret_truncated = false;
  return 0;
}

/* A copy, as a backend that cannot open the file itself gives.  */
static int
fake_open (void *ctx, const char *abs, unsigned flags, uint64_t *ret_size, sr_error_t *err)
{
  _cleanup_free_ char *data = NULL;
  size_t len;

  if (fake_read (ctx, abs, flags, SR_FS_COPY_MAX, &data, &len, err) < 0)
    return -1;
  return sr_files_copy_fd (abs, data, len, ret_size, err);
}

static void
test_remote (void)
{
  static const struct sr_fs_ops rm = {
    .read = fake_read, .write = fake_write, .walk = fake_walk, .open = fake_open,
  };
  struct sr_fsroot r = { .ops = &rm };
  sr_error_t err = NULL;
  char *path = NULL, *data = NULL, *mime = NULL, *text = NULL;
  size_t len = 0, n = 0;
  uint64_t lines = 0, size = 0;
  struct sr_artifact *v = NULL;
  struct sr_file_match *m = NULL;
  unsigned reps = 0;
  bool truncated = true;
  int fd;

  ok (sr_files_upload (&r, "out/x.csv", "a,b\n", 4, false, &path, &err) == 0,
      "remote: an upload goes to the remote's write");
  is_str (fake_last_abs, "/mnt/data/out/x.csv", "remote: ... with the absolute path");
  ok (fake_last_flags == SR_FS_DATA, "remote: ... marked as an artifact path (SR_FS_DATA)");
  is_str (path, "/mnt/data/out/x.csv", "remote: the upload's path");
  free (path);
  ok (sr_files_upload (&r, "out/x.csv", "z", 1, false, NULL, &err) < 0
          && code_is (err, "file_exists"),
      "remote: the remote's code comes back (file_exists)");
  sr_error_free (&err);

  fake_calls = 0;
  ok (sr_files_read_artifact (&r, "/etc/passwd", 100, &data, &len, NULL, &err) < 0
          && code_is (err, "path_outside_sandbox") && fake_calls == 0,
      "remote: an artifact path outside the data directory is refused before the remote");
  sr_error_free (&err);
  ok (sr_files_read_lines (&r, "/mnt/data/../../etc/passwd", 1, 0, 100, &text, NULL, &err) < 0
          && code_is (err, "invalid_path") && fake_calls == 0,
      "remote: '..' is refused before the remote");
  sr_error_free (&err);

  ok (sr_files_read_artifact (&r, "/mnt/data/out/x.csv", 100, &data, &len, &mime, &err)
          == 0 && len == 4 && memcmp (data, "a,b\n", 4) == 0,
      "remote: read_artifact returns the content");
  is_str (mime, "text/plain", "remote: ... and its MIME type");
  free (data), free (mime);
  ok (sr_files_read_artifact (&r, "out/x.csv", 2, &data, &len, NULL, &err) < 0
          && code_is (err, "file_too_large"),
      "remote: max_size reaches the remote (file_too_large)");
  sr_error_free (&err);

  fake_put ("/mnt/data/dot.png", (const char *) png, sizeof png);
  ok (sr_files_list (&r, true, &v, &n, &truncated, &err) == 0 && n == 2 && !truncated,
      "remote: list_artifacts lists the remote's walk");
  ok (n == 2 && strcmp (v[0].path, "dot.png") == 0 && strcmp (v[1].path, "out/x.csv") == 0,
      "remote: ... sorted by path");
  ok (n == 2 && v[0].mime_type && strcmp (v[0].mime_type, "image/png") == 0
          && v[1].mime_type && strcmp (v[1].mime_type, "text/plain") == 0,
      "remote: ... with MIME types");
  sr_artifacts_free (v, n);

  fd = sr_files_open_artifact (&r, "dot.png", &size, &err);
  ok (fd >= 0 && size == sizeof png, "remote: open_artifact gives an fd of the file's size");
  if (fd >= 0)
    {
      char buf[sizeof png];

      ok (read (fd, buf, sizeof buf) == (ssize_t) sizeof png && memcmp (buf, png, sizeof png) == 0,
          "remote: ... that reads the content from its start");
      close (fd);
    }

  ok (sr_files_write (&r, "/tmp/t.txt", "one\ntwo\n", 8, NULL, &err) == 0
          && fake_last_flags == 0,
      "remote: file_write outside the data directory has no SR_FS_DATA");
  ok (sr_files_read_lines (&r, "/tmp/t.txt", 2, 0, 100, &text, &lines, &err) == 0,
      "remote: file_read");
  is_str (text, "     2\ttwo\n", "remote: ... formats the lines asked for");
  ok (lines == 2, "remote: ... and counts them all");
  free (text);
  ok (patch_in (&r, "/tmp/t.txt", "two", "three", false, NULL, 100, &reps, NULL, &err) == 0
          && reps == 1,
      "remote: file_patch");
  ok (strcmp (fake_last_abs, "/tmp/t.txt") == 0 && fake[n_fake - 1].len == 10
          && memcmp (fake[n_fake - 1].data, "one\nthree\n", 10) == 0,
      "remote: ... writes the patched content back");
  fake_calls = 0;
  fake_last_flags = 0;
  (void) patch_in (&r, "/tmp/absent", "a", "b", false, NULL, 100, &reps, NULL, &err);
  ok (fake_calls == 1 && (fake_last_flags & SR_FS_NOFOLLOW), "remote: file_patch reads with "
      "SR_FS_NOFOLLOW (a symlink is not_a_file)");
  sr_error_free (&err);

  fake_put ("/tmp/sub/u.py", "three = 3\n", 10);
  ok (search (&r, "^thr", NULL, "/tmp", 100, 10, &m, &n, &truncated, &err) == 0
          && n == 2,
      "remote: file_search finds the matches of every file");
  ok (n == 2 && strcmp (m[0].path, "/tmp/sub/u.py") == 0 && strcmp (m[1].path, "/tmp/t.txt") == 0
          && m[1].line == 2 && strcmp (m[1].text, "three") == 0,
      "remote: ... in path order, with lines and text");
  sr_file_matches_free (m, n);
  ok (search (&r, "^thr", "*.py", "/tmp", 100, 10, &m, &n, &truncated, &err) == 0
          && n == 1,
      "remote: ... and the glob filters by name");
  sr_file_matches_free (m, n);
  ok (search (&r, "^thr", NULL, "/tmp", 5, 10, &m, &n, &truncated, &err) == 0
          && n == 0,
      "remote: ... files over max_size are skipped");
  sr_file_matches_free (m, n);

  for (size_t i = 0; i < n_fake; i++)
    {
      free (fake[i].abs);
      free (fake[i].data);
    }
  n_fake = 0;
}

int
main (void)
{
  const char *why = setup ();

  if (why)
    {
      skip_all (why);
      cleanup ();
      return 0;
    }
  printf ("# fake root %s, running as %s, owner %u:%u\n", root,
          geteuid () == 0 && fsn.uid ? "root" : "root of a user namespace", (unsigned) fsn.uid,
          (unsigned) fsn.gid);
  test_upload ();
  test_limits ();
  test_pieces ();
  test_list ();
  test_changed_within_a_tick ();
  test_open_and_mime ();
  test_escapes ();
  test_race ();
  test_read_lines ();
  test_write ();
  test_patch_string ();
  test_patch_diff ();
  test_patch_fuzzy ();
  test_lint ();
  test_sensitive ();
  test_search ();
  test_search_mtime ();
  test_search_limits ();
  test_search_backtracking ();
  test_remote ();
  cleanup ();
  return done_testing ();
}
