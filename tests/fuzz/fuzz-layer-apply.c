/* Layer extraction (sr_layer_apply in src/image/layer.c) with hostile
 * entry names.  A tar's checksums defeat byte mutations, so the input
 * describes the layers and the harness writes them with libarchive: one
 * entry a line,
 *
 *   TYPE NAME [TAB TARGET]
 *
 * TYPE f file (TARGET is its content), x setuid file, d directory,
 * r directory 0555, l symlink to TARGET, h hardlink to TARGET, p fifo,
 * c character device; a line "-" starts the next layer.  The layers are
 * applied in order onto one fresh rootfs.
 *
 * The rootfs lies in a private directory beside a sentinel directory
 * holding one file; after each input nothing may have changed beside the
 * rootfs, and the sentinel file may have gained no hardlink.  run.sh runs
 * this harness in bubblewrap with the host read-only, so a write that
 * escapes elsewhere fails with EROFS, which no extraction inside the
 * writable rootfs can see: that error is a finding too.
 *
 * The layers share one budget with small caps, so inputs reach them: a
 * refusal at a cap names the setting, and the rootfs may never hold more
 * bytes of file data or names than the budget counted.  */
#include "config.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "image/layer.h"
#include "tests/fuzz/fuzz.h"

#define MAX_LAYERS 4
#define MAX_ENTRIES 64
#define SENTINEL "sentinel-content"
#define MAX_BYTES 2048
#define MAX_NAMES 48

static char *dir;        /* the private directory */
static int dirfd_ = -1;

static void
write_entry (struct archive *a, char type, const char *name, const char *target)
{
  struct archive_entry *e = archive_entry_new ();
  size_t len = strlen (target);

  archive_entry_set_pathname (e, name);
  archive_entry_set_mtime (e, 1700000000, 0);
  archive_entry_set_uid (e, 0);
  archive_entry_set_gid (e, 0);
  switch (type)
    {
    case 'x':
    case 'f':
      archive_entry_set_filetype (e, AE_IFREG);
      archive_entry_set_perm (e, type == 'x' ? 04755 : 0644);
      archive_entry_set_size (e, (la_int64_t) len);
      break;
    case 'd':
    case 'r':
      archive_entry_set_filetype (e, AE_IFDIR);
      archive_entry_set_perm (e, type == 'r' ? 0555 : 0755);
      break;
    case 'l':
      archive_entry_set_filetype (e, AE_IFLNK);
      archive_entry_set_perm (e, 0777);
      archive_entry_set_symlink (e, target);
      break;
    case 'h':
      archive_entry_set_filetype (e, AE_IFREG);
      archive_entry_set_perm (e, 0644);
      archive_entry_set_hardlink (e, target);
      break;
    case 'p':
      archive_entry_set_filetype (e, AE_IFIFO);
      archive_entry_set_perm (e, 0644);
      break;
    default:
      archive_entry_set_filetype (e, AE_IFCHR);
      archive_entry_set_perm (e, 0666);
      archive_entry_set_rdev (e, makedev (1, 3));
      break;
    }
  if (archive_write_header (a, e) == ARCHIVE_OK && (type == 'f' || type == 'x') && len)
    (void) archive_write_data (a, target, len);
  archive_entry_free (e);
}

/* Writes the layers of the description into dir/layer-N.tar; returns how
 * many.  */
static int
write_layers (const char *text)
{
  struct archive *a = NULL;
  int n = 0, entries = 0;

  for (const char *p = text; *p && n <= MAX_LAYERS;)
    {
      size_t len = strcspn (p, "\n");
      _cleanup_free_ char *line = sr_xasprintf ("%.*s", (int) len, p);
      char *tab = strchr (line, '\t');

      p += len + (p[len] == '\n');
      if (a == NULL || strcmp (line, "-") == 0)
        {
          _cleanup_free_ char *path = NULL;

          if (a)
            {
              archive_write_close (a);
              archive_write_free (a);
            }
          if (n == MAX_LAYERS)
            return n;
          path = sr_xasprintf ("%s/layer-%d.tar", dir, n++);
          a = archive_write_new ();
          archive_write_set_format_pax_restricted (a);
          if (archive_write_open_filename (a, path) != ARCHIVE_OK)
            fuzz_die (archive_error_string (a), NULL);
          if (strcmp (line, "-") == 0)
            continue;
        }
      if (len < 2 || entries++ == MAX_ENTRIES)
        continue;
      if (tab)
        *tab = '\0';
      write_entry (a, line[0], line + 1, tab ? tab + 1 : "");
    }
  if (a)
    {
      archive_write_close (a);
      archive_write_free (a);
    }
  return n;
}

static void
setup_dir (void)
{
  int fd;

  if (mkdirat (dirfd_, "root", 0755) < 0 || mkdirat (dirfd_, "outside", 0755) < 0)
    fuzz_die ("mkdir", NULL);
  fd = openat (dirfd_, "outside/sentinel", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0 || sr_write_all (fd, SENTINEL, strlen (SENTINEL)) < 0)
    fuzz_die ("sentinel", NULL);
  close (fd);
}

/* Nothing but the rootfs changed: dir holds root, outside and the layer
 * files; outside holds the sentinel, unchanged and with one link.  */
static void
check_outside (int n_layers)
{
  _cleanup_free_ char *outside = sr_xasprintf ("%s/outside", dir);
  DIR *d = opendir (dir);
  struct dirent *de;
  struct stat sb;
  size_t n = 0;

  fuzz_check (d != NULL, "the private directory is gone");
  while ((de = readdir (d)))
    {
      int k;
      char tail;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      n++;
      fuzz_check (strcmp (de->d_name, "root") == 0 || strcmp (de->d_name, "outside") == 0
                      || (sscanf (de->d_name, "layer-%d.ta%c", &k, &tail) == 2 && k < n_layers),
                  "extraction created %s/%s outside the rootfs", dir, de->d_name);
    }
  closedir (d);
  fuzz_check (n == 2 + (size_t) n_layers, "something beside the rootfs went away");
  fuzz_check (fstatat (dirfd_, "outside/sentinel", &sb, AT_SYMLINK_NOFOLLOW) == 0
                  && S_ISREG (sb.st_mode) && sb.st_size == (off_t) strlen (SENTINEL),
              "the sentinel file outside the rootfs was changed");
  fuzz_check (sb.st_nlink == 1, "a hardlink to the sentinel outside the rootfs was made");
  d = opendir (outside);
  n = 0;
  while (d && (de = readdir (d)))
    n += strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0;
  if (d)
    closedir (d);
  fuzz_check (n == 1, "the sentinel directory outside the rootfs gained entries");
}

/* Adds up the names below the directory fd (which it closes) and the
 * sizes of its regular files, a hard link's file once.  */
static void
measure (int fd, uint64_t *names, uint64_t *bytes, ino_t *seen, size_t *n_seen, size_t max_seen)
{
  DIR *d = fdopendir (fd);
  struct dirent *de;

  if (d == NULL)
    {
      close (fd);
      return;
    }
  while ((de = readdir (d)))
    {
      struct stat sb;
      bool known = false;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0
          || fstatat (dirfd (d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      (*names)++;
      if (S_ISDIR (sb.st_mode))
        {
          int sub = openat (dirfd (d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          if (sub >= 0)
            measure (sub, names, bytes, seen, n_seen, max_seen);
          continue;
        }
      if (!S_ISREG (sb.st_mode))
        continue;
      for (size_t i = 0; i < *n_seen; i++)
        known = known || seen[i] == sb.st_ino;
      if (known)
        continue;
      if (*n_seen < max_seen)
        seen[(*n_seen)++] = sb.st_ino;
      *bytes += (uint64_t) sb.st_size;
    }
  closedir (d);
}

/* The rootfs holds no more than the budget counted.  */
static void
check_budget (int rootfd, const struct sr_layer_budget *b)
{
  ino_t seen[4 * MAX_NAMES];
  size_t n_seen = 0;
  uint64_t names = 0, bytes = 0;

  fuzz_check (b->bytes <= b->max_bytes && b->entries <= b->max_entries,
              "the budget counted past its caps");
  measure (dup (rootfd), &names, &bytes, seen, &n_seen, SR_ARRAY_SIZE (seen));
  fuzz_check (names <= b->entries, "the rootfs holds %llu names, the budget counted %llu",
              (unsigned long long) names, (unsigned long long) b->entries);
  fuzz_check (bytes <= b->bytes, "the rootfs holds %llu bytes, the budget counted %llu",
              (unsigned long long) bytes, (unsigned long long) b->bytes);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  dir = fuzz_tmpdir ("layer");
  dirfd_ = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd_ < 0)
    fuzz_die ("open", NULL);
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  _cleanup_free_ char *text = fuzz_strndup (data, size);
  struct sr_layer_budget budget = { .max_bytes = MAX_BYTES, .max_entries = MAX_NAMES };
  struct sr_layer_options o = { .chown = geteuid () == 0, .budget = &budget };
  int n, rootfd;

  setup_dir ();
  n = write_layers (text);
  rootfd = openat (dirfd_, "root", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    fuzz_die ("open root", NULL);
  for (int i = 0; i < n; i++)
    {
      _cleanup_free_ char *path = sr_xasprintf ("%s/layer-%d.tar", dir, i);
      struct sr_layer_stats stats;
      sr_error_t err = NULL;

      if (sr_layer_apply (rootfd, path, &o, &stats, &err) < 0)
        {
          fuzz_check (err && err->msg, "a failed layer without an error");
          fuzz_check (err->errnum != EROFS, "extraction wrote outside the rootfs: %s", err->msg);
          fuzz_check (err->errnum != EFBIG || strstr (err->msg, "the image passes max_image_"),
                      "EFBIG that does not name the cap: %s", err->msg);
          sr_error_free (&err);
          break;
        }
    }
  check_budget (rootfd, &budget);
  close (rootfd);
  check_outside (n);
  /* Afresh for the next input.  */
  {
    sr_error_t err = NULL;
    DIR *d = opendir (dir);
    struct dirent *de;

    while (d && (de = readdir (d)))
      if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0
          && sr_rm_rf_at (dirfd_, de->d_name, &err) < 0)
        fuzz_die ("clean up", &err);
    if (d)
      closedir (d);
  }
  return 0;
}
