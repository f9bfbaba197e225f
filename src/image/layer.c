#include "config.h"

#include "image/layer.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"

#define WHITEOUT_PREFIX ".wh."
#define OPAQUE_MARKER ".wh..wh..opq"

int
sr_layer_clean_path (const char *name, char *out, size_t out_len, bool *ret_absolute)
{
  size_t len = 0;
  const char *p = name;

  *ret_absolute = *p == '/';
  while (*p)
    {
      const char *end;
      size_t n;

      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      end = strchr (p, '/');
      n = end ? (size_t) (end - p) : strlen (p);
      if (n == 2 && p[0] == '.' && p[1] == '.')
        return -1;
      if (!(n == 1 && p[0] == '.'))
        {
          if (len + (len ? 1 : 0) + n + 1 > out_len || len + n + 1 > PATH_MAX)
            return -1;
          if (len)
            out[len++] = '/';
          memcpy (out + len, p, n);
          len += n;
        }
      p += n;
    }
  out[len] = '\0';
  return 0;
}

int
sr_layer_budget_take (uint64_t *used, uint64_t max, uint64_t n)
{
  if (max && (n > max || *used > max - n))
    return -1;
  *used += n;
  return 0;
}

/* Sets *err to what libarchive says went wrong in a, after the context
 * fmt.  Its errno is a system call's, or its own classification of a bad
 * archive (ARCHIVE_ERRNO_FILE_FORMAT is EILSEQ on Linux, ARCHIVE_ERRNO_MISC
 * is -1, ARCHIVE_ERRNO_PROGRAMMER is EINVAL) whose strerror would mislead
 * ("Invalid or incomplete multibyte or wide character", "Unknown error
 * -1"): those give the message alone.  Returns -1.  */
static int
archive_failed (sr_error_t *err, struct archive *a, const char *fmt, ...)
    __attribute__ ((format (printf, 3, 4)));
static int
archive_failed (sr_error_t *err, struct archive *a, const char *fmt, ...)
{
  int e = archive_errno (a);
  const char *why = archive_error_string (a);
  _cleanup_free_ char *what = NULL;
  va_list ap;

  va_start (ap, fmt);
  what = sr_xvasprintf (fmt, ap);
  va_end (ap);
  if (why == NULL)
    why = "a damaged archive";
  if (e <= 0 || e == EILSEQ || e == EINVAL)
    return sr_error_set_plain (err, NULL, e > 0 ? e : EIO, "%s: %s", what, why);
  return sr_error_set (err, e, "%s: %s", what, why);
}

/* Opens path (relative, "" for the root) as resolved inside the rootfs:
 * symlinks on the way are followed as the container will follow them,
 * never out of it.  */
static int
open_in_root (int rootfd, const char *path, int flags)
{
  return sr_openat2 (rootfd, path, flags,
                     RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV);
}

/* Copies path, split into its parent ("" for a top-level name), which the
 * returned buffer holds, and its last component (*ret_base).  */
static char *
split_path (const char *path, const char **ret_base)
{
  size_t n = strlen (path);
  char *buf = sr_xmalloc (n + 2), *slash;

  memcpy (buf, path, n + 1);
  slash = strrchr (buf, '/');
  if (slash == NULL)
    {
      memmove (buf + 1, buf, n + 1);
      buf[0] = '\0';
      *ret_base = buf + 1;
      return buf;
    }
  *slash = '\0';
  *ret_base = slash + 1;
  return buf;
}

/* What the extraction remembers across entries.  */
struct dir_fixup
{
  char *path;
  mode_t mode;
  uid_t uid;
  gid_t gid;
  struct timespec mtime;
  bool chown;
  mode_t only_if; /* restore only while the mode is still this one (0: always) */
};

struct extract
{
  int rootfd;
  const struct sr_layer_options *o;
  struct sr_layer_stats *stats;
  const char *layer;  /* for messages */
  /* The parent directory of the last entry, reused while entries stay in
   * one directory.  It cannot go stale: an entry that replaces a component
   * of its path has another parent, which drops it.  */
  char *parent_path;
  int parent_fd;
  /* Directory modes and times are applied at the end: a read-only
   * directory must still take its children, and children change the
   * mtime.  */
  struct dir_fixup *fixups;
  size_t n_fixups, cap_fixups;
  bool warned_absolute;
  /* sr_layer_link: the layer extracted alone, whose regular files are
   * linked instead of written; -1 for sr_layer_apply.  */
  int srcfd;
};

static void
warn (struct extract *x, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));
static void
warn (struct extract *x, const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  va_list ap;

  if (x->o->warn == NULL)
    return;
  va_start (ap, fmt);
  msg = sr_xvasprintf (fmt, ap);
  va_end (ap);
  x->o->warn (msg, x->o->userdata);
}

/* Counts n bytes of file data (or, with !data, n names) that entry is
 * about to write.  */
static int
take (struct extract *x, const char *entry, bool data, uint64_t n, sr_error_t *err)
{
  struct sr_layer_budget *b = x->o->budget;

  if (b == NULL
      || sr_layer_budget_take (data ? &b->bytes : &b->entries,
                               data ? b->max_bytes : b->max_entries, n) == 0)
    return 0;
  return sr_error_set_plain (err, NULL, EFBIG,
                             "entry %s: the image passes %s (%llu %s); raise that setting to "
                             "allow it",
                             entry, data ? "max_image_size" : "max_image_entries",
                             (unsigned long long) (data ? b->max_bytes : b->max_entries),
                             data ? "bytes of file data" : "files, directories and links");
}

static void
drop_parent_cache (struct extract *x)
{
  free (x->parent_path);
  x->parent_path = NULL;
  if (x->parent_fd >= 0)
    close (x->parent_fd);
  x->parent_fd = -1;
}

static void
add_fixup (struct extract *x, const char *path, mode_t mode, uid_t uid, gid_t gid,
           struct timespec mtime, bool chown_it)
{
  if (x->n_fixups == x->cap_fixups)
    {
      x->cap_fixups = x->cap_fixups ? 2 * x->cap_fixups : 256;
      x->fixups = sr_xrealloc (x->fixups, x->cap_fixups * sizeof *x->fixups);
    }
  x->fixups[x->n_fixups++] = (struct dir_fixup) {
    .path = sr_xstrdup (path), .mode = mode, .uid = uid, .gid = gid, .mtime = mtime,
    .chown = chown_it,
  };
}

/* Rootless, a directory of a lower layer may lack the owner's write bit;
 * it gets it for the extraction and its mode back at the end.  */
static void
make_writable (struct extract *x, int dirfd, const char *path)
{
  struct stat sb;
  int fd;

  if (x->o->chown || fstat (dirfd, &sb) < 0 || (sb.st_mode & 0700) == 0700)
    return;
  fd = open_in_root (x->rootfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  if (fd < 0)
    return;
  if (fchmod (fd, (sb.st_mode & 07777) | 0700) == 0)
    {
      add_fixup (x, path, sb.st_mode & 07777, sb.st_uid, sb.st_gid, sb.st_mtim, false);
      x->fixups[x->n_fixups - 1].only_if = (sb.st_mode & 07777) | 0700;
    }
  close (fd);
}

/* The directory path, created (0755, the caller's) where missing.  */
static int
ensure_dir (struct extract *x, const char *path, const char *entry, sr_error_t *err)
{
  _cleanup_free_ char *parent = NULL;
  const char *base;
  int fd, pfd;

  fd = open_in_root (x->rootfd, path, O_PATH | O_DIRECTORY);
  if (fd >= 0)
    return fd;
  if (errno == ENOSYS)
    return sr_error_set (err, ENOSYS, "openat2 (Linux 5.6 or newer) is needed to extract "
                         "layers safely");
  if (errno == ENOTDIR)
    return sr_error_set (err, ENOTDIR, "entry %s: a parent of it is not a directory", entry);
  if (errno == EXDEV || errno == ELOOP)
    return sr_error_set (err, errno, "entry %s: its parent %s cannot be resolved inside the rootfs",
                         entry, path);
  if (errno != ENOENT || *path == '\0')
    return sr_error_set (err, errno, "entry %s: open %s", entry, *path ? path : "/");

  parent = split_path (path, &base);
  pfd = ensure_dir (x, parent, entry, err);
  if (pfd < 0)
    return -1;
  make_writable (x, pfd, parent);
  if (take (x, entry, false, 1, err) < 0)
    {
      close (pfd);
      return -1;
    }
  if (mkdirat (pfd, base, 0755) < 0)
    {
      int e = errno;
      struct stat sb;

      if (e == EEXIST && fstatat (pfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (sb.st_mode))
        {
          close (pfd);
          return sr_error_set (err, 0,
                               "entry %s: its parent %s is a symlink to nothing inside the rootfs",
                               entry, path);
        }
      if (e != EEXIST)
        {
          close (pfd);
          return sr_error_set (err, e, "entry %s: mkdir %s", entry, path);
        }
    }
  close (pfd);
  fd = open_in_root (x->rootfd, path, O_PATH | O_DIRECTORY);
  if (fd < 0)
    return sr_error_set (err, errno, "entry %s: open %s", entry, path);
  return fd;
}

static int
parent_of (struct extract *x, const char *parent, const char *entry, sr_error_t *err)
{
  if (x->parent_path && strcmp (x->parent_path, parent) == 0)
    return x->parent_fd;
  drop_parent_cache (x);
  x->parent_fd = ensure_dir (x, parent, entry, err);
  if (x->parent_fd < 0)
    return -1;
  make_writable (x, x->parent_fd, parent);
  x->parent_path = sr_xstrdup (parent);
  return x->parent_fd;
}

/* --- pass 1: whiteouts --- */

static int
apply_whiteout (struct extract *x, const char *path, sr_error_t *err)
{
  const char *base;
  _cleanup_free_ char *parent = split_path (path, &base);
  _cleanup_close_ int pfd = -1;

  pfd = open_in_root (x->rootfd, parent, O_PATH | O_DIRECTORY);
  if (pfd < 0)
    return 0; /* nothing below to hide */
  make_writable (x, pfd, parent);
  x->stats->whiteouts++;
  if (strcmp (base, OPAQUE_MARKER) == 0)
    {
      if (sr_empty_dir_at (pfd, ".", err) < 0)
        return sr_error_wrap (err, "layer %s: opaque directory %s", x->layer,
                              *parent ? parent : "/");
      return 0;
    }
  if (strncmp (base, WHITEOUT_PREFIX ".wh.", 8) == 0)
    return 0; /* aufs metadata (.wh..wh.plnk and the like) */
  base += strlen (WHITEOUT_PREFIX);
  if (*base == '\0' || strcmp (base, ".") == 0 || strcmp (base, "..") == 0)
    return sr_error_set (err, 0, "layer %s: entry %s: not a valid whiteout", x->layer, path);
  if (sr_rm_rf_at (pfd, base, err) < 0)
    return sr_error_wrap (err, "layer %s: whiteout %s", x->layer, path);
  return 0;
}

static bool
is_whiteout (const char *path)
{
  const char *slash = strrchr (path, '/');
  const char *base = slash ? slash + 1 : path;

  return strncmp (base, WHITEOUT_PREFIX, strlen (WHITEOUT_PREFIX)) == 0;
}

/* --- pass 2: entries --- */

static int
write_data (struct extract *x, struct archive *a, int fd, const char *entry, uint64_t size,
            sr_error_t *err)
{
  const void *buf;
  size_t len;
  la_int64_t offset;
  int r;

  while ((r = archive_read_data_block (a, &buf, &len, &offset)) == ARCHIVE_OK)
    {
      const char *p = buf;

      if (take (x, entry, true, len, err) < 0)
        return -1;
      while (len > 0)
        {
          ssize_t n = pwrite (fd, p, len, (off_t) offset);

          if (n < 0 && errno == EINTR)
            continue;
          if (n <= 0)
            return sr_error_set (err, n < 0 ? errno : EIO, "entry %s: write", entry);
          p += n;
          len -= (size_t) n;
          offset += n;
        }
    }
  if (r != ARCHIVE_EOF)
    return archive_failed (err, a, "entry %s: read", entry);
  /* A sparse file may end in a hole.  */
  if (ftruncate (fd, (off_t) size) < 0)
    return sr_error_set (err, errno, "entry %s: truncate", entry);
  return 0;
}

/* Removes what stands at pfd/base unless it is a directory and a
 * directory is coming.  */
static int
clear_place (struct extract *x, int pfd, const char *base, bool want_dir, const char *entry,
             sr_error_t *err)
{
  struct stat sb;

  if (fstatat (pfd, base, &sb, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : sr_error_set (err, errno, "entry %s: stat", entry);
  if (want_dir && S_ISDIR (sb.st_mode))
    return 0;
  if (sr_rm_rf_at (pfd, base, err) < 0)
    return sr_error_wrap (err, "entry %s: replace", entry);
  return 0;
}

static int
set_owner (struct extract *x, int pfd, const char *base, struct archive_entry *e,
           const char *entry, sr_error_t *err)
{
  if (!x->o->chown)
    return 0;
  if (fchownat (pfd, base, (uid_t) archive_entry_uid (e), (gid_t) archive_entry_gid (e),
                AT_SYMLINK_NOFOLLOW)
      < 0)
    return sr_error_set (err, errno, "entry %s: chown", entry);
  return 0;
}

static void
set_times (int pfd, const char *base, struct archive_entry *e)
{
  struct timespec ts[2] = {
    { .tv_sec = archive_entry_mtime (e), .tv_nsec = archive_entry_mtime_nsec (e) },
    { .tv_sec = archive_entry_mtime (e), .tv_nsec = archive_entry_mtime_nsec (e) },
  };

  (void) utimensat (pfd, base, ts, AT_SYMLINK_NOFOLLOW);
}

/* The mode entry e gets on disk; *ret_cleared says whether setuid or
 * setgid bits were dropped.  */
static mode_t
entry_mode_of (struct extract *x, struct archive_entry *e, bool *ret_cleared)
{
  mode_t mode = sr_layer_shared_mode (archive_entry_perm (e));

  *ret_cleared = !x->o->keep_setid && (mode & (S_ISUID | S_ISGID))
                 && archive_entry_filetype (e) != AE_IFDIR;
  if (*ret_cleared)
    mode &= (mode_t) ~(S_ISUID | S_ISGID);
  return mode;
}

static mode_t
entry_mode (struct extract *x, struct archive_entry *e)
{
  bool cleared;
  mode_t mode = entry_mode_of (x, e, &cleared);

  if (cleared)
    x->stats->setid_cleared++;
  return mode;
}

static int
extract_file (struct extract *x, struct archive *a, struct archive_entry *e, int pfd,
              const char *base, const char *entry, sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  mode_t mode = entry_mode (x, e);
  struct stat sb;

  /* Alone, a file there is an earlier entry of the same name: its twin
   * is gone.  */
  if (x->o->alone && fstatat (pfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (sb.st_mode))
    x->stats->unlinkable++;
  if (clear_place (x, pfd, base, false, entry, err) < 0)
    return -1;
  fd = openat (pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return sr_error_set (err, errno, "entry %s: create", entry);
  if (write_data (x, a, fd, entry, (uint64_t) archive_entry_size (e), err) < 0)
    return -1;
  if (x->o->chown
      && fchown (fd, (uid_t) archive_entry_uid (e), (gid_t) archive_entry_gid (e)) < 0)
    return sr_error_set (err, errno, "entry %s: chown", entry);
  if (fchmod (fd, mode) < 0)
    return sr_error_set (err, errno, "entry %s: chmod", entry);
  {
    struct timespec ts[2] = {
      { .tv_sec = archive_entry_mtime (e), .tv_nsec = archive_entry_mtime_nsec (e) },
      { .tv_sec = archive_entry_mtime (e), .tv_nsec = archive_entry_mtime_nsec (e) },
    };

    (void) futimens (fd, ts);
  }
  return 0;
}

/* Whether st is what extract_file made of e: a damaged or replaced twin
 * in the layer's own extraction is not linked.  Content is not hashed
 * (that would cost what linking saves): type, size, mode, owner and mtime
 * are, which any write through a path or a truncation changes.  */
static bool
same_file (struct extract *x, struct archive_entry *e, const struct stat *st)
{
  bool cleared;

  return S_ISREG (st->st_mode) && st->st_size == archive_entry_size (e)
         && (st->st_mode & 07777) == entry_mode_of (x, e, &cleared)
         && st->st_mtim.tv_sec == archive_entry_mtime (e)
         && st->st_mtim.tv_nsec == archive_entry_mtime_nsec (e)
         && (!x->o->chown
             || (st->st_uid == (uid_t) archive_entry_uid (e)
                 && st->st_gid == (gid_t) archive_entry_gid (e)));
}

/* A regular file as a hard link to its twin in the layer's own
 * extraction: the data is shared, not written.  Where there is no
 * matching twin (stats->unshared counts them) or the link cannot be made
 * (EMLINK: too many images share it; another file system), the data is
 * written from the layer as extract_file does.  */
static int
link_file (struct extract *x, struct archive *a, struct archive_entry *e, int pfd,
           const char *base, const char *entry, sr_error_t *err)
{
  const char *sbase;
  _cleanup_free_ char *sparent = split_path (entry, &sbase);
  _cleanup_close_ int spfd = open_in_root (x->srcfd, sparent, O_PATH | O_DIRECTORY);
  struct stat sb;

  if (spfd < 0 || fstatat (spfd, sbase, &sb, AT_SYMLINK_NOFOLLOW) < 0 || !same_file (x, e, &sb))
    {
      x->stats->unshared++;
      return extract_file (x, a, e, pfd, base, entry, err);
    }
  if (clear_place (x, pfd, base, false, entry, err) < 0)
    return -1;
  if (linkat (spfd, sbase, pfd, base, 0) == 0)
    {
      bool cleared;

      (void) entry_mode_of (x, e, &cleared);
      if (cleared)
        x->stats->setid_cleared++;
      return 0;
    }
  if (errno != EMLINK && errno != EXDEV && errno != EPERM)
    return sr_error_set (err, errno, "entry %s: link from the layer's extraction", entry);
  return extract_file (x, a, e, pfd, base, entry, err);
}

static int
extract_dir (struct extract *x, struct archive_entry *e, int pfd, const char *base,
             const char *path, const char *entry, sr_error_t *err)
{
  struct timespec mtime = { .tv_sec = archive_entry_mtime (e),
                            .tv_nsec = archive_entry_mtime_nsec (e) };

  if (clear_place (x, pfd, base, true, entry, err) < 0)
    return -1;
  if (mkdirat (pfd, base, 0700) < 0 && errno != EEXIST)
    return sr_error_set (err, errno, "entry %s: mkdir", entry);
  add_fixup (x, path, sr_layer_shared_mode (archive_entry_perm (e)), (uid_t) archive_entry_uid (e),
             (gid_t) archive_entry_gid (e), mtime, x->o->chown);
  return 0;
}

static int
extract_symlink (struct extract *x, struct archive_entry *e, int pfd, const char *base,
                 const char *entry, sr_error_t *err)
{
  const char *target = archive_entry_symlink (e);

  if (target == NULL || *target == '\0')
    return sr_error_set (err, 0, "layer %s: entry %s: symlink without a target", x->layer, entry);
  if (clear_place (x, pfd, base, false, entry, err) < 0)
    return -1;
  /* The target is kept as it is: it is only ever resolved inside the
   * rootfs, by this extraction and by the container.  */
  if (symlinkat (target, pfd, base) < 0)
    return sr_error_set (err, errno, "entry %s: symlink", entry);
  if (set_owner (x, pfd, base, e, entry, err) < 0)
    return -1;
  set_times (pfd, base, e);
  return 0;
}

static int
extract_hardlink (struct extract *x, struct archive_entry *e, int pfd, const char *base,
                  const char *entry, sr_error_t *err)
{
  char target[PATH_MAX];
  _cleanup_free_ char *tparent = NULL;
  _cleanup_close_ int tpfd = -1;
  const char *tbase;
  struct stat sb;
  bool absolute;

  if (sr_layer_clean_path (archive_entry_hardlink (e), target, sizeof target, &absolute) < 0
      || *target == '\0')
    return sr_error_set (err, 0, "layer %s: entry %s: hardlink target %s leaves the rootfs",
                         x->layer, entry, archive_entry_hardlink (e));
  tparent = split_path (target, &tbase);
  tpfd = open_in_root (x->rootfd, tparent, O_PATH | O_DIRECTORY);
  if (tpfd < 0 || fstatat (tpfd, tbase, &sb, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (x->o->alone && errno == ENOENT)
        return 0;
      return sr_error_set (err, errno, "layer %s: entry %s: hardlink target %s", x->layer, entry,
                           target);
    }
  if (S_ISDIR (sb.st_mode))
    return sr_error_set (err, EPERM, "layer %s: entry %s: hardlink to directory %s", x->layer,
                         entry, target);
  /* Linking a file to itself is a no-op, not a removal.  */
  {
    struct stat cur;

    if (fstatat (pfd, base, &cur, AT_SYMLINK_NOFOLLOW) == 0 && cur.st_dev == sb.st_dev
        && cur.st_ino == sb.st_ino)
      return 0;
  }
  if (clear_place (x, pfd, base, false, entry, err) < 0)
    return -1;
  if (linkat (tpfd, tbase, pfd, base, 0) < 0)
    return sr_error_set (err, errno, "entry %s: link to %s", entry, target);
  return 0;
}

/* Devices and sockets: a container gets its own /dev.  */
static bool
is_skipped (struct archive_entry *e)
{
  mode_t type = archive_entry_filetype (e);

  return archive_entry_hardlink (e) == NULL && type != AE_IFREG && type != AE_IFDIR
         && type != AE_IFLNK && type != AE_IFIFO;
}

static int
extract_entry (struct extract *x, struct archive *a, struct archive_entry *e,
               const char *path, sr_error_t *err)
{
  const char *base;
  _cleanup_free_ char *parent = split_path (path, &base);
  int pfd;

  if (*path == '\0')
    return 0; /* the root itself keeps the store's mode */
  if (x->o->alone)
    {
      sr_error_t perr = NULL;

      pfd = parent_of (x, parent, path, &perr);
      /* Below a symlink to what only the layers below hold: the rootfs
       * will have it, this layer alone has nowhere to put it.  */
      if (pfd < 0 && (perr->errnum == 0 || perr->errnum == ENOENT || perr->errnum == ENOTDIR
                      || perr->errnum == EXDEV || perr->errnum == ELOOP))
        {
          if (archive_entry_filetype (e) == AE_IFREG && archive_entry_hardlink (e) == NULL)
            x->stats->unlinkable++;
          sr_error_free (&perr);
          return 0;
        }
      if (pfd < 0)
        sr_error_move (err, &perr);
    }
  else
    pfd = parent_of (x, parent, path, err);
  if (pfd < 0)
    return sr_error_wrap (err, "layer %s", x->layer);

  if (!is_skipped (e) && take (x, path, false, 1, err) < 0)
    return -1;
  if (archive_entry_hardlink (e))
    return extract_hardlink (x, e, pfd, base, path, err);
  switch (archive_entry_filetype (e))
    {
    case AE_IFREG:
      if (x->srcfd >= 0)
        return link_file (x, a, e, pfd, base, path, err);
      return extract_file (x, a, e, pfd, base, path, err);
    case AE_IFDIR:
      return extract_dir (x, e, pfd, base, path, path, err);
    case AE_IFLNK:
      return extract_symlink (x, e, pfd, base, path, err);
    case AE_IFIFO:
      if (clear_place (x, pfd, base, false, path, err) < 0)
        return -1;
      if (mknodat (pfd, base, S_IFIFO | (sr_layer_shared_mode (archive_entry_perm (e)) & 0777), 0)
          < 0)
        return sr_error_set (err, errno, "entry %s: mkfifo", path);
      return set_owner (x, pfd, base, e, path, err);
    default: /* is_skipped */
      x->stats->skipped++;
      return 0;
    }
}

static void
apply_fixups (struct extract *x)
{
  /* Deepest last-recorded first, so a parent's mtime is set after its
   * children were touched.  */
  for (size_t i = x->n_fixups; i-- > 0;)
    {
      struct dir_fixup *f = &x->fixups[i];
      int fd = open_in_root (x->rootfd, f->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

      struct stat sb;

      if (fd >= 0 && f->only_if && (fstat (fd, &sb) < 0 || (sb.st_mode & 07777) != f->only_if))
        {
          close (fd);
          fd = -1;
        }
      if (fd >= 0)
        {
          struct timespec ts[2] = { f->mtime, f->mtime };

          if (f->chown)
            (void) fchown (fd, f->uid, f->gid);
          (void) fchmod (fd, f->mode);
          (void) futimens (fd, ts);
          close (fd);
        }
      free (f->path);
    }
  free (x->fixups);
  x->fixups = NULL;
  x->n_fixups = x->cap_fixups = 0;
}

static struct archive *
open_layer (const char *path, sr_error_t *err)
{
  struct archive *a = archive_read_new ();

  if (a == NULL)
    sr_oom ();
  archive_read_support_filter_gzip (a);
  archive_read_support_filter_zstd (a);
  archive_read_support_filter_xz (a);
  archive_read_support_filter_bzip2 (a);
  archive_read_support_format_tar (a);
  if (archive_read_open_filename (a, path, 1 << 16) != ARCHIVE_OK)
    {
      archive_failed (err, a, "open layer %s", path);
      archive_read_free (a);
      return NULL;
    }
  return a;
}

/* One pass over the layer; with whiteouts_only, applies its whiteouts,
 * otherwise everything else.  */
static int
layer_pass (struct extract *x, const char *layer_path, bool whiteouts_only, sr_error_t *err)
{
  struct archive *a = open_layer (layer_path, err);
  struct archive_entry *e;
  uint64_t last_progress = 0;
  int r, ret = -1;

  if (a == NULL)
    return -1;
  while ((r = archive_read_next_header (a, &e)) == ARCHIVE_OK || r == ARCHIVE_WARN)
    {
      const char *name = archive_entry_pathname (e);
      char path[PATH_MAX];
      bool absolute;

      if (name == NULL)
        {
          sr_error_set (err, 0, "layer %s: an entry without a name", x->layer);
          goto out;
        }
      if (sr_layer_clean_path (name, path, sizeof path, &absolute) < 0)
        {
          sr_error_set (err, 0, "layer %s: entry %s: the path leaves the rootfs (a .. component)",
                        x->layer, name);
          goto out;
        }
      if (whiteouts_only)
        {
          if (is_whiteout (path) && apply_whiteout (x, path, err) < 0)
            goto out;
          continue;
        }
      if (absolute)
        {
          x->stats->made_relative++;
          if (!x->warned_absolute)
            warn (x, "layer %s: entry %s has an absolute name; extracted as %s", x->layer, name,
                  path);
          x->warned_absolute = true;
        }
      if (is_whiteout (path))
        continue;
      x->stats->entries++;
      if (extract_entry (x, a, e, path, err) < 0)
        goto out;
      if (x->o->progress)
        {
          uint64_t done = (uint64_t) archive_filter_bytes (a, -1);

          if (done - last_progress >= (1u << 20))
            {
              x->o->progress (done, x->o->userdata);
              last_progress = done;
            }
        }
    }
  if (r != ARCHIVE_EOF)
    {
      archive_failed (err, a, "layer %s", x->layer);
      goto out;
    }
  if (!whiteouts_only && x->o->progress)
    x->o->progress ((uint64_t) archive_filter_bytes (a, -1), x->o->userdata);
  ret = 0;

out:
  archive_read_free (a);
  return ret;
}

int
sr_layer_mkdir_in_root (int rootfd, const char *path, sr_error_t *err)
{
  struct sr_layer_options o = { .chown = false };
  struct sr_layer_stats stats = { 0 };
  struct extract x = { .rootfd = rootfd, .o = &o, .stats = &stats, .parent_fd = -1,
                       .srcfd = -1 };
  int fd = ensure_dir (&x, path, path, err);

  if (fd >= 0)
    close (fd);
  apply_fixups (&x);
  return fd < 0 ? -1 : 0;
}

static int
apply (int rootfd, const char *layer_path, int srcfd, const struct sr_layer_options *o,
       struct sr_layer_stats *stats, sr_error_t *err)
{
  const char *slash = strrchr (layer_path, '/');
  struct extract x = {
    .rootfd = rootfd, .o = o, .stats = stats, .parent_fd = -1,
    .layer = slash ? slash + 1 : layer_path, .srcfd = srcfd,
  };
  int r;

  memset (stats, 0, sizeof *stats);
  /* Whiteouts hide what the layers below hold, never what this layer
   * brings, whatever order the tar lists them in: they go first.  */
  r = layer_pass (&x, layer_path, true, err);
  drop_parent_cache (&x);
  if (r == 0)
    r = layer_pass (&x, layer_path, false, err);
  drop_parent_cache (&x);
  apply_fixups (&x);
  return r;
}

int
sr_layer_apply (int rootfd, const char *layer_path, const struct sr_layer_options *o,
                struct sr_layer_stats *stats, sr_error_t *err)
{
  return apply (rootfd, layer_path, -1, o, stats, err);
}

int
sr_layer_link (int rootfd, const char *layer_path, int extracted_fd,
               const struct sr_layer_options *o, struct sr_layer_stats *stats, sr_error_t *err)
{
  return apply (rootfd, layer_path, extracted_fd, o, stats, err);
}
