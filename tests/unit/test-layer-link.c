/* sr_layer_link, the store's layer cache at the level of one layer: a
 * layer applied alone, then linked into rootfs directories, shares its
 * files' inodes; what its tree cannot hold (a name written twice, an
 * entry below a symlink into the layers below) and what was damaged in
 * the tree is written from the layer instead, and counted.  */
#include <config.h>

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "image/layer.h"
#include "tap.h"

static void
add (struct archive *a, const char *name, mode_t type, const char *data, const char *link)
{
  struct archive_entry *e = archive_entry_new ();

  archive_entry_set_pathname (e, name);
  archive_entry_set_filetype (e, type);
  archive_entry_set_perm (e, type == AE_IFDIR ? 0755 : 0644);
  archive_entry_set_mtime (e, 1000000, 0);
  if (link && type == AE_IFLNK)
    archive_entry_set_symlink (e, link);
  else if (link)
    archive_entry_set_hardlink (e, link);
  archive_entry_set_size (e, data ? (la_int64_t) strlen (data) : 0);
  archive_write_header (a, e);
  if (data)
    archive_write_data (a, data, strlen (data));
  archive_entry_free (e);
}

/* The first bytes of dirfd/name, in a buffer the next call reuses.  */
static const char *
slurp (int dirfd, const char *name)
{
  static char buf[64];
  ssize_t n;
  int fd = openat (dirfd, name, O_RDONLY | O_NOFOLLOW);

  if (fd < 0)
    return "(missing)";
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  buf[n < 0 ? 0 : n] = '\0';
  return buf;
}

static ino_t
inode (int dirfd, const char *name)
{
  struct stat sb;

  return fstatat (dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 ? sb.st_ino : 0;
}

static int
mkroot (const char *top, const char *name)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/%s", top, name);

  mkdir (path, 0755);
  return open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int
main (void)
{
  _cleanup_free_ char *top = sr_xasprintf ("%s/test-layer-link.XXXXXX",
                                           getenv ("TMPDIR") ? getenv ("TMPDIR") : "/tmp");
  _cleanup_free_ char *tar = NULL;
  struct sr_layer_options alone = { .alone = true }, linked = { 0 };
  struct sr_layer_stats st;
  sr_error_t err = NULL;
  struct archive *a;
  int tree, r1, r2;

  if (mkdtemp (top) == NULL)
    return 99;
  tar = sr_xasprintf ("%s/layer.tar", top);
  a = archive_write_new ();
  archive_write_set_format_pax_restricted (a);
  archive_write_open_filename (a, tar);
  add (a, "etc", AE_IFDIR, NULL, NULL);
  add (a, "etc/shared", AE_IFREG, "shared data", NULL);
  add (a, "etc/hard", AE_IFREG, NULL, "etc/shared");
  add (a, "etc/twice", AE_IFREG, "first", NULL);
  add (a, "etc/twice", AE_IFREG, "second!", NULL);
  add (a, "etc/link", AE_IFLNK, NULL, "shared");
  /* lower: a directory only the layers below have */
  add (a, "via", AE_IFLNK, NULL, "/lower");
  add (a, "via/below", AE_IFREG, "below", NULL);
  archive_write_close (a);
  archive_write_free (a);

  tree = mkroot (top, "tree");
  r1 = mkroot (top, "r1");
  r2 = mkroot (top, "r2");
  mkdirat (r1, "lower", 0755);
  mkdirat (r2, "lower", 0755);

  ok (sr_layer_apply (tree, tar, &alone, &st, &err) == 0, "a layer applies alone%s%s",
      err ? ": " : "", err ? err->msg : "");
  is_int (st.unlinkable, 2, "what its tree cannot hold is counted: a name written twice, an "
          "entry below a symlink into the layers below");

  ok (sr_layer_link (r1, tar, tree, &linked, &st, &err) == 0, "and links into a rootfs");
  ok (inode (r1, "etc/shared") == inode (tree, "etc/shared"), "its files are the tree's (same inode)");
  ok (inode (r1, "etc/hard") == inode (r1, "etc/shared"), "a hard link of the layer stays one");
  is_str (slurp (r1, "etc/twice"), "second!", "a name written twice has the last data");
  is_str (slurp (r1, "lower/below"), "below", "an entry below a symlink lands in the layers below");
  is_int (st.unshared, 2, "and exactly those are written, not linked");

  /* A write through one image, as any of them could.  */
  {
    int fd = openat (tree, "etc/shared", O_WRONLY | O_TRUNC);

    ok (fd >= 0 && write (fd, "damage", 6) == 6, "the tree's file is changed in place");
    close (fd);
  }
  ok (sr_layer_link (r2, tar, tree, &linked, &st, &err) == 0, "a damaged tree still links");
  is_int (st.unshared, 3, "the changed file is found");
  is_str (slurp (r2, "etc/shared"), "shared data", "and written from the layer");
  ok (inode (r2, "etc/shared") != inode (tree, "etc/shared"), "not linked to the damage");

  close (tree);
  close (r1);
  close (r2);
  sr_rm_rf_at (AT_FDCWD, top, NULL);
  return done_testing ();
}
