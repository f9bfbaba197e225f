#include "config.h"

#include "image/store.h"
#include "image/store-internal.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/json.h"
#include "common/defaults.h"
#include "common/statedir.h"
#include "common/util.h"
#include "common/workdir.h"
#include "image/layer.h"
#include "image/oci.h"

#define PARTIAL_SUFFIX ".partial"



const char *
sr_store_dir (const struct sr_store *s)
{
  return s->dir;
}

void
sr_store_set_progress (struct sr_store *s, sr_progress_fn fn, void *userdata)
{
  s->progress = fn;
  s->progress_data = userdata;
}

void
sr_store_set_warn (struct sr_store *s, void (*fn) (const char *msg, void *userdata),
                   void *userdata)
{
  s->warn = fn;
  s->warn_data = userdata;
}

void
sr_store_set_caps (struct sr_store *s, uint64_t max_size, uint64_t max_entries)
{
  s->max_image_size = max_size;
  s->max_image_entries = max_entries;
}

void
sr_store_get_caps (const struct sr_store *s, uint64_t *ret_max_size, uint64_t *ret_max_entries)
{
  *ret_max_size = s->max_image_size;
  *ret_max_entries = s->max_image_entries;
}

void
sr_store_report_ (struct sr_store *s, enum sr_progress_stage stage, const char *digest, size_t layer,
        size_t n_layers, uint64_t current, uint64_t total)
{
  struct sr_progress p = {
    .stage = stage, .digest = digest, .layer = layer, .n_layers = n_layers,
    .current = current, .total = total,
  };

  if (s->progress)
    s->progress (&p, s->progress_data);
}

/* A shared lock on an image's lock file in a read-only store, opened for
 * reading (its owner made it at install, mode 0644), so that the owner's
 * rm waits for the run as it does for its own.  -ENOENT without an error
 * when there is none (an image installed before lock files came with the
 * install): that run goes unlocked, as nothing can be made there.  */
static int
lock_readonly (struct sr_store *s, const char *name, sr_error_t *err)
{
  int fd = openat (s->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

  if (fd < 0)
    return errno == ENOENT ? -ENOENT : sr_error_set (err, errno, "%s/%s", s->dir, name);
  while (flock (fd, LOCK_SH) < 0)
    if (errno != EINTR)
      {
        int e = errno;

        close (fd);
        return sr_error_set (err, e, "lock %s/%s", s->dir, name);
      }
  return fd;
}

/* flock on a file of the store; returns the fd holding it.  */
static int
lock_file (struct sr_store *s, const char *name, int op, sr_error_t *err)
{
  int fd = openat (s->dirfd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

  if (fd < 0)
    return sr_error_set (err, errno, "%s/%s", s->dir, name);
  while (flock (fd, op) < 0)
    {
      int e = errno;

      if (e == EINTR)
        continue;
      close (fd);
      if (e == EWOULDBLOCK)
        return sr_error_set (err, 0, "%s/%s is locked", s->dir, name);
      return sr_error_set (err, e, "lock %s/%s", s->dir, name);
    }
  return fd;
}

int
sr_store_writable_ (struct sr_store *s, sr_error_t *err)
{
  if (!s->readonly)
    return 0;
  return sr_error_set_plain (err, "store_read_only", EROFS,
                             "image store %s is read-only here (image_stores_readonly): only its "
                             "owner changes it; import or pull into your own store (image_store)",
                             s->dir);
}

int
sr_store_lock_ (struct sr_store *s, sr_error_t *err)
{
  if (sr_store_writable_ (s, err) < 0)
    return -1;
  return lock_file (s, "store.lock", LOCK_EX, err);
}

/* Images extracted before sr_layer_shared_mode kept their group and
 * others' write bits (a 1777 /tmp): cleared once per store, which a
 * marker file then records.  Left to the next open if it fails.  */
#define SHARED_MODES_MARKER "shared-modes"

static char **list_ids (struct sr_store *s);

static void
drop_shared_write (struct sr_store *s)
{
  static const char what[] = "no entry of an image is writable by group or others\n";
  _cleanup_strv_ char **ids = NULL;
  bool done = true;
  int fd;

  if (faccessat (s->dirfd, SHARED_MODES_MARKER, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
    return;
  ids = list_ids (s);
  for (char **id = ids; *id; id++)
    {
      _cleanup_free_ char *rootfs = sr_xasprintf ("images/%s/rootfs", *id);
      _cleanup_close_ int rootfd = openat (s->dirfd, rootfs,
                                           O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      sr_error_t err = NULL;

      if (rootfd >= 0 && sr_layer_drop_shared_write (rootfd, &err) < 0)
        {
          done = false;
          sr_error_free (&err);
        }
    }
  if (!done)
    return;
  fd = openat (s->dirfd, SHARED_MODES_MARKER, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd >= 0)
    {
      (void) sr_write_all (fd, what, strlen (what));
      close (fd);
    }
}

/* statedir_flags: SR_STATEDIR_NO_CREATE for a store that must exist.  */
static int
open_store (const char *dir, unsigned statedir_flags, struct sr_store **ret, sr_error_t *err)
{
  struct sr_store *s;
  static const char *const subdirs[] = { "blobs", "blobs/sha256", "images", "layers", "tmp" };
  sr_error_t e = NULL;

  if (dir == NULL || *dir != '/')
    return sr_error_set (err, 0, "image store %s: not an absolute path", dir ? dir : "(unset)");
  s = sr_xcalloc (1, sizeof *s);
  s->dir = sr_xstrdup (dir);
  s->max_image_size = SR_DEFAULT_MAX_IMAGE_SIZE;
  s->max_image_entries = SR_DEFAULT_MAX_IMAGE_ENTRIES;
  s->dirfd = sr_statedir_open (dir, "image_store", statedir_flags, &e);
  if (s->dirfd < 0)
    {
      if (e->errnum == ENOENT && (statedir_flags & SR_STATEDIR_NO_CREATE))
        sr_error_set_plain (err, NULL, ENOENT, "image store %s does not exist: no image was "
                            "imported or pulled into it (is image_store right?)", dir);
      else
        {
          sr_error_move (err, &e);
          sr_error_wrap (err, "image store");
        }
      sr_error_free (&e);
      sr_store_close (s);
      return -1;
    }
  /* Containers run as an unprivileged mapped uid: the path to every
   * rootfs must be searchable by others.  */
  (void) fchmod (s->dirfd, 0755);
  for (size_t i = 0; i < SR_ARRAY_SIZE (subdirs); i++)
    {
      if (mkdirat (s->dirfd, subdirs[i], 0755) < 0 && errno != EEXIST)
        {
          sr_error_set (err, errno, "image store %s/%s", dir, subdirs[i]);
          sr_store_close (s);
          return -1;
        }
      /* tmp/ and layers/ are the store's own: no run's path goes there.  */
      (void) fchmodat (s->dirfd, subdirs[i],
                       strcmp (subdirs[i], "tmp") && strcmp (subdirs[i], "layers") ? 0755 : 0700,
                       0);
    }
  drop_shared_write (s);
  /* What crashed extractions left; partial downloads stay for a resume.  */
  {
    _cleanup_free_ char *tmp = sr_xasprintf ("%s/tmp", dir);

    sr_workdir_reclaim (tmp, EXTRACT_PREFIX);
  }
  *ret = s;
  return 0;
}

/* Another's store, to read images from: *ret NULL when dir does not
 * exist.  Nothing is made, changed or cleaned in it.  */
static int
open_readonly (const char *dir, struct sr_store **ret, sr_error_t *err)
{
  struct stat sb;
  int fd;

  *ret = NULL;
  if (*dir != '/')
    return sr_error_set_plain (err, NULL, EINVAL, "read-only image store %s: not an absolute path "
                               "(image_stores_readonly)", dir);
  fd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0 || fstat (fd, &sb) < 0)
    {
      sr_error_set (err, errno, "read-only image store %s (image_stores_readonly)", dir);
      if (fd >= 0)
        close (fd);
      return -1;
    }
  /* Its images run as the caller's: a store that a third user owns or
   * that others may write could hand the caller a rootfs of their making.  */
  if ((sb.st_uid != 0 && sb.st_uid != geteuid ()) || (sb.st_mode & 0022))
    {
      close (fd);
      return sr_error_set_plain (err, NULL, EPERM,
                                 "read-only image store %s: owned by uid %u%s; only a store of "
                                 "root or of your own that no one else may write is read "
                                 "(image_stores_readonly)",
                                 dir, (unsigned) sb.st_uid,
                                 sb.st_mode & 0022 ? " and writable by others" : "");
    }
  *ret = sr_xcalloc (1, sizeof **ret);
  (*ret)->dir = sr_xstrdup (dir);
  (*ret)->dirfd = fd;
  (*ret)->readonly = true;
  return 0;
}

int
sr_store_open_all (const char *dir, const char *readonly, bool create, struct sr_store **ret,
                   sr_error_t *err)
{
  _cleanup_free_ char *list = sr_xstrdup (readonly ? readonly : "");
  struct sr_store *head = NULL, **tail = &head;
  sr_error_t own_err = NULL;
  char *save = NULL;

  if (open_store (dir, create ? 0 : SR_STATEDIR_NO_CREATE, &head, &own_err) == 0)
    tail = &head->next;
  else if (create || own_err->errnum != ENOENT)
    {
      sr_error_move (err, &own_err);
      return -1;
    }
  for (char *d = strtok_r (list, ":", &save); d; d = strtok_r (NULL, ":", &save))
    {
      struct sr_store *ro;

      if (strcmp (d, dir) == 0)
        continue;
      if (open_readonly (d, &ro, err) < 0)
        {
          sr_error_free (&own_err);
          sr_store_close (head);
          return -1;
        }
      if (ro)
        {
          *tail = ro;
          tail = &ro->next;
        }
    }
  /* No store of one's own yet is no error while another's can be read.  */
  if (head == NULL)
    {
      sr_error_move (err, &own_err);
      return -1;
    }
  sr_error_free (&own_err);
  *ret = head;
  return 0;
}

void
sr_store_close (struct sr_store *s)
{
  if (s == NULL)
    return;
  sr_store_close (s->next);
  if (s->dirfd >= 0)
    close (s->dirfd);
  free (s->dir);
  free (s);
}

/* --- blobs --- */

static char *
blob_rel (const char *digest)
{
  return sr_xasprintf ("blobs/sha256/%s", digest + 7);
}

bool
sr_store_has_blob (struct sr_store *s, const char *digest)
{
  _cleanup_free_ char *rel = NULL;

  if (!sr_digest_valid (digest))
    return false;
  rel = blob_rel (digest);
  return faccessat (s->dirfd, rel, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

char *
sr_store_blob_path (struct sr_store *s, const char *digest)
{
  return sr_xasprintf ("%s/blobs/sha256/%s", s->dir, digest + 7);
}

int
sr_store_read_blob (struct sr_store *s, const char *digest, size_t max, char **ret,
                    size_t *ret_len, sr_error_t *err)
{
  _cleanup_free_ char *rel = NULL, *buf = NULL;
  _cleanup_close_ int fd = -1;
  struct stat sb;
  size_t got = 0;

  if (sr_digest_hex (digest, err) == NULL)
    return -1;
  rel = blob_rel (digest);
  fd = openat (s->dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0)
    return sr_error_set (err, errno, "blob %s", digest);
  if (fstat (fd, &sb) < 0)
    return sr_error_set (err, errno, "blob %s", digest);
  if ((uint64_t) sb.st_size > max)
    return sr_error_set (err, EFBIG, "blob %s: %lld bytes, more than the %zu a document may have",
                         digest, (long long) sb.st_size, max);
  buf = sr_xmalloc ((size_t) sb.st_size + 1);
  while (got < (size_t) sb.st_size)
    {
      ssize_t n = read (fd, buf + got, (size_t) sb.st_size - got);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return sr_error_set (err, n < 0 ? errno : EIO, "read blob %s", digest);
      got += (size_t) n;
    }
  buf[got] = '\0';
  *ret = TAKE_PTR (buf);
  if (ret_len)
    *ret_len = got;
  return 0;
}

struct sr_blob_writer
{
  struct sr_store *s;
  char digest[SR_DIGEST_LEN + 1];
  char *partial;   /* relative to the store */
  int fd;
  uint64_t expected_size, written, reported;
  struct sr_sha256 *hash;
  bool progress;
  size_t layer, n_layers;
};

void
sr_blob_writer_set_progress (struct sr_blob_writer *w, size_t layer, size_t n_layers)
{
  w->progress = true;
  w->layer = layer;
  w->n_layers = n_layers;
}

int
sr_blob_writer_begin (struct sr_store *s, const char *digest, uint64_t expected_size,
                      struct sr_blob_writer **ret, uint64_t *ret_offset, sr_error_t *err)
{
  struct sr_blob_writer *w;
  char buf[1 << 16];
  ssize_t n;

  if (sr_store_writable_ (s, err) < 0 || sr_digest_hex (digest, err) == NULL)
    return -1;
  w = sr_xcalloc (1, sizeof *w);
  w->s = s;
  memcpy (w->digest, digest, SR_DIGEST_LEN + 1);
  w->expected_size = expected_size;
  w->partial = sr_xasprintf ("tmp/blob-%s" PARTIAL_SUFFIX, digest + 7);
  w->hash = sr_sha256_new ();
  w->fd = openat (s->dirfd, w->partial, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (w->fd < 0)
    {
      sr_error_set (err, errno, "%s/%s", s->dir, w->partial);
      goto fail;
    }
  /* One writer per blob; a second waits for the first.  */
  while (flock (w->fd, LOCK_EX) < 0)
    if (errno != EINTR)
      {
        sr_error_set (err, errno, "lock %s/%s", s->dir, w->partial);
        goto fail;
      }
  /* What an interrupted writer left counts toward the digest.  */
  while ((n = read (w->fd, buf, sizeof buf)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          sr_error_set (err, errno, "read %s/%s", s->dir, w->partial);
          goto fail;
        }
      sr_sha256_update (w->hash, buf, (size_t) n);
      w->written += (uint64_t) n;
    }
  if (expected_size && w->written > expected_size && sr_blob_writer_restart (w, err) < 0)
    goto fail;
  *ret = w;
  if (ret_offset)
    *ret_offset = w->written;
  return 0;

fail:
  sr_blob_writer_free (w);
  return -1;
}

int
sr_blob_writer_write (struct sr_blob_writer *w, const void *buf, size_t len, sr_error_t *err)
{
  if (w->expected_size && w->written + len > w->expected_size)
    return sr_error_set (err, EFBIG, "blob %s: more than the %llu bytes its descriptor gives",
                         w->digest, (unsigned long long) w->expected_size);
  if (sr_write_all (w->fd, buf, len) < 0)
    return sr_error_set (err, errno, "write blob %s", w->digest);
  sr_sha256_update (w->hash, buf, len);
  w->written += len;
  if (w->progress && w->written - w->reported >= (1u << 20))
    {
      sr_store_report_ (w->s, SR_PROGRESS_FETCH, w->digest, w->layer, w->n_layers, w->written,
              w->expected_size);
      w->reported = w->written;
    }
  return 0;
}

int
sr_blob_writer_restart (struct sr_blob_writer *w, sr_error_t *err)
{
  if (ftruncate (w->fd, 0) < 0 || lseek (w->fd, 0, SEEK_SET) < 0)
    return sr_error_set (err, errno, "truncate %s/%s", w->s->dir, w->partial);
  sr_sha256_free (w->hash);
  w->hash = sr_sha256_new ();
  w->written = 0;
  return 0;
}

int
sr_blob_writer_commit (struct sr_blob_writer *w, sr_error_t *err)
{
  char got[SR_DIGEST_LEN + 1];
  _cleanup_free_ char *rel = blob_rel (w->digest);

  sr_sha256_finish (w->hash, got);
  w->hash = NULL;
  if (w->expected_size && w->written != w->expected_size)
    {
      (void) unlinkat (w->s->dirfd, w->partial, 0);
      return sr_error_set (err, 0, "blob %s: %llu bytes where its descriptor says %llu",
                           w->digest, (unsigned long long) w->written,
                           (unsigned long long) w->expected_size);
    }
  if (strcmp (got, w->digest) != 0)
    {
      (void) unlinkat (w->s->dirfd, w->partial, 0);
      return sr_error_set_plain (err, NULL, EBADMSG,
                                 "blob %s: digest mismatch: the content hashes to %s", w->digest,
                                 got);
    }
  if (fdatasync (w->fd) < 0 || renameat (w->s->dirfd, w->partial, w->s->dirfd, rel) < 0)
    return sr_error_set (err, errno, "store blob %s", w->digest);
  if (w->progress)
    sr_store_report_ (w->s, SR_PROGRESS_FETCH, w->digest, w->layer, w->n_layers, w->written,
            w->expected_size ? w->expected_size : w->written);
  return 0;
}

void
sr_blob_writer_free (struct sr_blob_writer *w)
{
  if (w == NULL)
    return;
  if (w->fd >= 0)
    close (w->fd);
  sr_sha256_free (w->hash);
  free (w->partial);
  free (w);
}

int
sr_store_put_blob_fd (struct sr_store *s, int fd, const char *digest, uint64_t expected_size,
                      sr_error_t *err)
{
  struct sr_blob_writer *w = NULL;
  char buf[1 << 16];
  uint64_t done = 0, last = 0;
  ssize_t n;
  int r = -1;

  if (sr_store_has_blob (s, digest))
    return 0;
  if (sr_blob_writer_begin (s, digest, expected_size, &w, NULL, err) < 0)
    return -1;
  if (sr_blob_writer_restart (w, err) < 0)
    goto out;
  while ((n = read (fd, buf, sizeof buf)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          sr_error_set (err, errno, "read blob %s", digest);
          goto out;
        }
      if (sr_blob_writer_write (w, buf, (size_t) n, err) < 0)
        goto out;
      done += (uint64_t) n;
      if (done - last >= (4u << 20))
        {
          sr_store_report_ (s, SR_PROGRESS_FETCH, digest, 0, 0, done, expected_size);
          last = done;
        }
    }
  r = sr_blob_writer_commit (w, err);
  if (r == 0)
    sr_store_report_ (s, SR_PROGRESS_FETCH, digest, 0, 0, done, expected_size);

out:
  sr_blob_writer_free (w);
  return r;
}

int
sr_store_put_blob_buf (struct sr_store *s, const void *buf, size_t len, const char *digest,
                       sr_error_t *err)
{
  struct sr_blob_writer *w = NULL;
  char got[SR_DIGEST_LEN + 1];
  int r = -1;

  if (sr_digest_hex (digest, err) == NULL)
    return -1;
  sr_sha256_buf (buf, len, got);
  if (strcmp (got, digest) != 0)
    return sr_error_set (err, 0, "document %s: digest mismatch: the content hashes to %s", digest,
                         got);
  if (sr_store_has_blob (s, digest))
    return 0;
  if (sr_blob_writer_begin (s, digest, len, &w, NULL, err) < 0)
    return -1;
  if (sr_blob_writer_restart (w, err) == 0 && sr_blob_writer_write (w, buf, len, err) == 0)
    r = sr_blob_writer_commit (w, err);
  sr_blob_writer_free (w);
  return r;
}

/* --- names --- */

static cJSON *
load_names (struct sr_store *s, sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/names.json", s->dir), *text = NULL;
  sr_error_t e = NULL;
  cJSON *names;

  if (sr_read_file (path, &text, NULL, &e) < 0)
    {
      if (e->errnum == ENOENT)
        {
          sr_error_free (&e);
          return cJSON_CreateObject ();
        }
      sr_error_move (err, &e);
      return NULL;
    }
  names = cJSON_Parse (text);
  if (!cJSON_IsObject (names))
    {
      cJSON_Delete (names);
      sr_error_set (err, 0, "%s: not a JSON object (the store's name table is damaged)", path);
      return NULL;
    }
  return names;
}

static int
save_names (struct sr_store *s, cJSON *names, sr_error_t *err)
{
  _cleanup_free_ char *text = cJSON_Print (names);
  _cleanup_close_ int fd = -1;

  fd = openat (s->dirfd, "names.json.new", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
               0644);
  if (fd < 0)
    return sr_error_set (err, errno, "%s/names.json.new", s->dir);
  if (sr_write_all (fd, text, strlen (text)) < 0 || sr_write_all (fd, "\n", 1) < 0
      || fdatasync (fd) < 0)
    return sr_error_set (err, errno, "write %s/names.json.new", s->dir);
  if (renameat (s->dirfd, "names.json.new", s->dirfd, "names.json") < 0)
    return sr_error_set (err, errno, "rename %s/names.json.new", s->dir);
  return 0;
}

/* --- images --- */

bool
sr_store_image_exists_ (struct sr_store *s, const char *id)
{
  _cleanup_free_ char *rel = sr_xasprintf ("images/%s/image.json", id);

  return faccessat (s->dirfd, rel, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

int
sr_store_set_name_ (struct sr_store *s, const char *name, const char *id, sr_error_t *err)
{
  _cleanup_json_ cJSON *names = NULL;

  if (name == NULL)
    return 0;
  names = load_names (s, err);
  if (names == NULL)
    return -1;
  cJSON_DeleteItemFromObjectCaseSensitive (names, name);
  cJSON_AddStringToObject (names, name, id);
  return save_names (s, names, err);
}

/* --- reading images --- */

void
sr_image_info_done (struct sr_image_info *info)
{
  free (info->id);
  sr_strv_free (info->names);
  free (info->store);
  free (info->manifest_digest);
  free (info->source);
  sr_strv_free (info->env);
  sr_strv_free (info->entrypoint);
  sr_strv_free (info->cmd);
  free (info->working_dir);
  free (info->version);
  free (info->user);
  free (info->architecture);
  free (info->os);
  memset (info, 0, sizeof *info);
}

void
sr_image_info_free_array (struct sr_image_info *v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    sr_image_info_done (&v[i]);
  free (v);
}

static const char *
json_string (const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);

  return cJSON_IsString (v) ? v->valuestring : NULL;
}

static int
read_image (struct sr_store *s, const char *id, const cJSON *names, struct sr_image_info *ret,
            sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/images/%s/image.json", s->dir, id);
  _cleanup_free_ char *text = NULL, *config_text = NULL;
  _cleanup_json_ cJSON *o = NULL;
  struct sr_image_info info = { 0 };
  struct sr_oci_config c = { 0 };
  const cJSON *layers, *name;
  const char *config;
  size_t config_len;

  if (sr_read_file (path, &text, NULL, err) < 0)
    return -1;
  o = cJSON_Parse (text);
  config = json_string (o, "config");
  if (!cJSON_IsObject (o) || config == NULL)
    return sr_error_set (err, 0, "%s: damaged", path);
  if (sr_store_read_blob (s, config, SR_MAX_IMAGE_DOCUMENT, &config_text, &config_len, err) < 0
      || sr_oci_parse_config (config_text, config_len, &c, err) < 0)
    return sr_error_wrap (err, "image %.12s", id);

  info.id = sr_xstrdup (id);
  info.names = sr_xcalloc (1, sizeof *info.names);
  cJSON_ArrayForEach (name, names)
    if (cJSON_IsString (name) && strcmp (name->valuestring, id) == 0)
      sr_strv_push (&info.names, name->string);
  info.store = sr_xstrdup (s->dir);
  info.readonly = s->readonly;
  info.manifest_digest = sr_xstrdup (json_string (o, "manifest") ?: "");
  info.source = sr_xstrdup (json_string (o, "source") ?: "");
  info.created = (time_t) cJSON_GetNumberValue (cJSON_GetObjectItemCaseSensitive (o, "created"));
  info.size = (uint64_t) cJSON_GetNumberValue (cJSON_GetObjectItemCaseSensitive (o, "size"));
  layers = cJSON_GetObjectItemCaseSensitive (o, "layers");
  info.n_layers = cJSON_IsArray (layers) ? (size_t) cJSON_GetArraySize (layers) : 0;
  info.env = TAKE_PTR (c.env);
  info.entrypoint = TAKE_PTR (c.entrypoint);
  info.cmd = TAKE_PTR (c.cmd);
  info.working_dir = TAKE_PTR (c.working_dir);
  info.version = TAKE_PTR (c.version);
  info.user = TAKE_PTR (c.user);
  info.architecture = TAKE_PTR (c.architecture);
  info.os = TAKE_PTR (c.os);
  sr_oci_config_done (&c);
  *ret = info;
  return 0;
}

static bool
is_hex_id (const char *s)
{
  size_t n = strlen (s);

  if (n != SR_DIGEST_HEX_LEN)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

/* Every image id in images/.  */
static char **
list_ids (struct sr_store *s)
{
  int fd = openat (s->dirfd, "images", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  char **ids = sr_xcalloc (1, sizeof *ids);
  struct dirent *de;
  DIR *d;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return ids;
    }
  while ((de = readdir (d)) != NULL)
    if (is_hex_id (de->d_name))
      sr_strv_push (&ids, de->d_name);
  closedir (d);
  return ids;
}

/* ref -> id, with the name table at hand.  */
static int
resolve (struct sr_store *s, const cJSON *names, const char *ref, char **ret_id, sr_error_t *err)
{
  _cleanup_free_ char *tagged = sr_xasprintf ("%s:latest", ref);
  _cleanup_strv_ char **ids = NULL;
  const char *id, *hex = ref;
  const char *found = NULL;
  size_t n;

  id = json_string (names, ref);
  if (id == NULL && strchr (ref, ':') == NULL)
    id = json_string (names, tagged);
  if (id == NULL && strncmp (hex, "sha256:", 7) == 0)
    hex += 7;
  if (id == NULL && (n = strlen (hex)) >= 6 && n <= SR_DIGEST_HEX_LEN)
    {
      ids = list_ids (s);
      for (char **p = ids; *p; p++)
        if (strncmp (*p, hex, n) == 0)
          {
            if (found)
              return sr_error_set (err, 0, "image id prefix %s is ambiguous", hex);
            found = *p;
          }
      id = found;
    }
  if (id == NULL || !sr_store_image_exists_ (s, id))
    return sr_error_set (err, ENOENT,
                         "no image %s in the store %s (see `sandbox-runner image list`)", ref,
                         s->dir);
  *ret_id = sr_xstrdup (id);
  return 0;
}

static int
lookup_one (struct sr_store *s, const char *ref, struct sr_image_info *ret, sr_error_t *err)
{
  _cleanup_json_ cJSON *names = load_names (s, err);
  _cleanup_free_ char *id = NULL;

  if (names == NULL || resolve (s, names, ref, &id, err) < 0)
    return -1;
  return read_image (s, id, names, ret, err);
}

/* The first store of the chain s that has ref, or NULL with the error of
 * the first store: "not there" (ENOENT) goes on to the next store, any
 * other failure stops the search.  */
static struct sr_store *
lookup_chain (struct sr_store *s, const char *ref, struct sr_image_info *ret, sr_error_t *err)
{
  sr_error_t first = NULL;

  for (; s; s = s->next)
    {
      sr_error_t e = NULL;

      if (lookup_one (s, ref, ret, &e) == 0)
        {
          sr_error_free (&first);
          return s;
        }
      if (first == NULL)
        first = e;
      else
        sr_error_free (&e);
      if (first->errnum != ENOENT)
        break;
    }
  sr_error_move (err, &first);
  return NULL;
}

int
sr_store_lookup (struct sr_store *s, const char *ref, struct sr_image_info *ret, sr_error_t *err)
{
  return lookup_chain (s, ref, ret, err) ? 0 : -1;
}

static int
by_created_desc (const void *a, const void *b)
{
  const struct sr_image_info *x = a, *y = b;

  if (x->created != y->created)
    return x->created < y->created ? 1 : -1;
  return strcmp (x->id, y->id);
}

int
sr_store_list (struct sr_store *s, struct sr_image_info **ret, size_t *ret_n, sr_error_t *err)
{
  struct sr_image_info *v = sr_xcalloc (1, sizeof *v);
  size_t n = 0;

  for (; s; s = s->next)
    {
      _cleanup_json_ cJSON *names = load_names (s, err);
      _cleanup_strv_ char **ids = NULL;

      if (names == NULL)
        {
          sr_image_info_free_array (v, n);
          return -1;
        }
      ids = list_ids (s);
      v = sr_xrealloc (v, (n + sr_strv_length (ids) + 1) * sizeof *v);
      for (char **p = ids; *p; p++)
        {
          if (!sr_store_image_exists_ (s, *p))
            continue;
          if (read_image (s, *p, names, &v[n], err) < 0)
            {
              sr_image_info_free_array (v, n);
              return -1;
            }
          n++;
        }
    }
  qsort (v, n, sizeof *v, by_created_desc);
  *ret = v;
  *ret_n = n;
  return 0;
}

int
sr_store_use (struct sr_store *s, const char *ref, struct sr_image_use *ret, sr_error_t *err)
{
  struct sr_image_use use = { .lock_fd = -1 };
  _cleanup_free_ char *lock = NULL;

  s = lookup_chain (s, ref, &use.info, err);
  if (s == NULL)
    return -1;
  lock = sr_xasprintf ("images/%s.lock", use.info.id);
  use.lock_fd = s->readonly ? lock_readonly (s, lock, err) : lock_file (s, lock, LOCK_SH, err);
  if (use.lock_fd < 0 && !(s->readonly && use.lock_fd == -ENOENT))
    {
      sr_image_info_done (&use.info);
      return -1;
    }
  /* rm may have won the race between lookup and lock.  */
  if (!sr_store_image_exists_ (s, use.info.id))
    {
      sr_error_set (err, ENOENT, "image %s was removed", ref);
      sr_image_release (&use);
      return -1;
    }
  use.rootfs = sr_xasprintf ("%s/images/%s/rootfs", s->dir, use.info.id);
  *ret = use;
  return 0;
}

void
sr_image_release (struct sr_image_use *use)
{
  if (use->lock_fd >= 0)
    close (use->lock_fd);
  free (use->rootfs);
  sr_image_info_done (&use->info);
  use->lock_fd = -1;
  use->rootfs = NULL;
}

/* Deletes an image directory, unless a run holds it.  Store lock held.  */
static int
delete_image (struct sr_store *s, const char *id, sr_error_t *err)
{
  _cleanup_free_ char *lock = sr_xasprintf ("images/%s.lock", id);
  _cleanup_free_ char *dir = sr_xasprintf ("images/%s", id);
  _cleanup_free_ char *tmp = sr_xasprintf ("tmp/" EXTRACT_PREFIX "rm-%s", id);
  _cleanup_close_ int lockfd = lock_file (s, lock, LOCK_EX | LOCK_NB, NULL);

  if (lockfd < 0)
    return sr_error_set (err, EBUSY, "image %.12s is in use by a running container", id);
  /* Renamed first, so that no reader ever sees half an image.  */
  if (renameat (s->dirfd, dir, s->dirfd, tmp) < 0)
    return sr_error_set (err, errno, "remove image %.12s", id);
  if (sr_rm_rf_at (s->dirfd, tmp, err) < 0)
    return sr_error_wrap (err, "remove image %.12s", id);
  (void) unlinkat (s->dirfd, lock, 0);
  return 0;
}

static void
add_referenced (struct sr_store *s, const char *id, char ***keep)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/images/%s/image.json", s->dir, id);
  _cleanup_free_ char *text = NULL;
  _cleanup_json_ cJSON *o = NULL;
  const cJSON *layer;

  if (sr_read_file (path, &text, NULL, NULL) < 0)
    return;
  o = cJSON_Parse (text);
  if (json_string (o, "manifest"))
    sr_strv_push (keep, json_string (o, "manifest") + 7);
  if (json_string (o, "config"))
    sr_strv_push (keep, json_string (o, "config") + 7);
  cJSON_ArrayForEach (layer, cJSON_GetObjectItemCaseSensitive (o, "layers"))
    if (cJSON_IsString (layer) && sr_digest_valid (layer->valuestring))
      sr_strv_push (keep, layer->valuestring + 7);
}

static bool
strv_contains (char *const *v, const char *s)
{
  for (; v && *v; v++)
    if (strcmp (*v, s) == 0)
      return true;
  return false;
}

/* Removes the trees of the layer cache (layers/<hex>, store-install.c)
 * that no image refers to (keep: the hex digests images refer to) and no
 * install holds, and their lock files.  Store lock held.  */
static void
drop_unused_layers (struct sr_store *s, char *const *keep)
{
  _cleanup_strv_ char **gone = sr_xcalloc (1, sizeof *gone);
  int fd = openat (s->dirfd, "layers", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  struct dirent *de;
  DIR *d;

  if (fd < 0 || (d = fdopendir (fd)) == NULL)
    {
      if (fd >= 0)
        close (fd);
      return;
    }
  while ((de = readdir (d)) != NULL)
    {
      _cleanup_free_ char *hex = sr_xasprintf ("%.64s", de->d_name);

      if (is_hex_id (hex) && !strv_contains (keep, hex) && !strv_contains (gone, hex))
        sr_strv_push (&gone, hex);
    }
  closedir (d);
  for (char **hex = gone; *hex; hex++)
    {
      _cleanup_free_ char *lock = sr_xasprintf ("layers/%s.lock", *hex);
      _cleanup_free_ char *dir = sr_xasprintf ("layers/%s", *hex);
      _cleanup_free_ char *tmp = sr_xasprintf ("tmp/" EXTRACT_PREFIX "rm-layer-%s", *hex);
      _cleanup_close_ int lockfd = lock_file (s, lock, LOCK_EX | LOCK_NB, NULL);

      if (lockfd < 0)
        continue; /* an install is linking from it */
      (void) sr_rm_rf_at (s->dirfd, tmp, NULL);
      if (renameat (s->dirfd, dir, s->dirfd, tmp) == 0 || errno == ENOENT)
        {
          (void) sr_rm_rf_at (s->dirfd, tmp, NULL);
          (void) unlinkat (s->dirfd, lock, 0);
        }
    }
}

/* The hex digests of every blob the store's images refer to.  */
static char **
referenced_blobs (struct sr_store *s)
{
  _cleanup_strv_ char **ids = list_ids (s);
  char **keep = sr_xcalloc (1, sizeof *keep);

  for (char **p = ids; *p; p++)
    add_referenced (s, *p, &keep);
  return keep;
}

int
sr_store_remove (struct sr_store *s, const char *ref, bool force, sr_error_t *err)
{
  _cleanup_close_ int lockfd = sr_store_lock_ (s, err);
  _cleanup_json_ cJSON *names = NULL;
  _cleanup_free_ char *id = NULL;
  _cleanup_strv_ char **left = NULL;
  const cJSON *name;
  bool by_name;

  if (lockfd < 0)
    return -1;
  names = load_names (s, err);
  if (names == NULL)
    return -1;
  if (resolve (s, names, ref, &id, err) < 0)
    {
      struct sr_image_info info = { 0 };
      struct sr_store *ro = s->next ? lookup_chain (s->next, ref, &info, NULL) : NULL;

      sr_image_info_done (&info);
      if (ro)
        return sr_store_writable_ (ro, err);
      return -1;
    }
  by_name = json_string (names, ref) != NULL;
  if (by_name)
    cJSON_DeleteItemFromObjectCaseSensitive (names, ref);
  else if (json_string (names, ref) == NULL && strchr (ref, ':') == NULL)
    {
      _cleanup_free_ char *tagged = sr_xasprintf ("%s:latest", ref);

      if (json_string (names, tagged))
        {
          cJSON_DeleteItemFromObjectCaseSensitive (names, tagged);
          by_name = true;
        }
    }
  left = sr_xcalloc (1, sizeof *left);
  cJSON_ArrayForEach (name, names)
    if (cJSON_IsString (name) && strcmp (name->valuestring, id) == 0)
      sr_strv_push (&left, name->string);
  if (!by_name && left[0] && !force)
    return sr_error_set (err, 0, "image %.12s has names (%s%s); remove them or use --force", id,
                         left[0], left[1] ? ", ..." : "");
  if (left[0] == NULL || force)
    {
      _cleanup_strv_ char **keep = NULL;

      if (delete_image (s, id, err) < 0)
        return -1;
      keep = referenced_blobs (s);
      drop_unused_layers (s, keep);
      for (char **p = left; *p; p++)
        cJSON_DeleteItemFromObjectCaseSensitive (names, *p);
    }
  return save_names (s, names, err);
}

int
sr_store_prune (struct sr_store *s, size_t *ret_images, size_t *ret_blobs, uint64_t *ret_bytes,
                sr_error_t *err)
{
  _cleanup_close_ int lockfd = sr_store_lock_ (s, err);
  _cleanup_json_ cJSON *names = NULL;
  _cleanup_strv_ char **ids = NULL, **keep = NULL;
  size_t images = 0, blobs = 0;
  uint64_t bytes = 0;
  struct dirent *de;
  DIR *d;
  int fd;

  if (lockfd < 0)
    return -1;
  names = load_names (s, err);
  if (names == NULL)
    return -1;
  ids = list_ids (s);
  keep = sr_xcalloc (1, sizeof *keep);
  for (char **p = ids; *p; p++)
    {
      bool named = false;
      const cJSON *name;

      cJSON_ArrayForEach (name, names)
        if (cJSON_IsString (name) && strcmp (name->valuestring, *p) == 0)
          named = true;
      if (!named && delete_image (s, *p, NULL) == 0)
        images++;
      else
        add_referenced (s, *p, &keep);
    }
  drop_unused_layers (s, keep);

  fd = openat (s->dirfd, "blobs/sha256", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 && (d = fdopendir (fd)) != NULL)
    {
      while ((de = readdir (d)) != NULL)
        {
          struct stat sb;

          if (!is_hex_id (de->d_name) || strv_contains (keep, de->d_name))
            continue;
          if (fstatat (dirfd (d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == 0
              && unlinkat (dirfd (d), de->d_name, 0) == 0)
            {
              blobs++;
              bytes += (uint64_t) sb.st_size;
            }
        }
      closedir (d);
    }
  else if (fd >= 0)
    close (fd);

  /* Partial downloads nobody is writing.  */
  fd = openat (s->dirfd, "tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0 && (d = fdopendir (fd)) != NULL)
    {
      while ((de = readdir (d)) != NULL)
        {
          size_t n = strlen (de->d_name);
          struct stat sb;
          int pfd;

          if (n <= strlen (PARTIAL_SUFFIX)
              || strcmp (de->d_name + n - strlen (PARTIAL_SUFFIX), PARTIAL_SUFFIX) != 0)
            continue;
          pfd = openat (dirfd (d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
          if (pfd < 0)
            continue;
          if (flock (pfd, LOCK_EX | LOCK_NB) == 0 && fstat (pfd, &sb) == 0
              && unlinkat (dirfd (d), de->d_name, 0) == 0)
            bytes += (uint64_t) sb.st_size;
          close (pfd);
        }
      closedir (d);
    }
  else if (fd >= 0)
    close (fd);

  *ret_images = images;
  *ret_blobs = blobs;
  *ret_bytes = bytes;
  return 0;
}
