/* Artifacts: the files of a session's data directory, uploaded, listed,
 * read and downloaded, with their MIME types (libmagic).  */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <magic.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/files-internal.h"

/* How much of a file libmagic sees.  */
#define MIME_PEEK (64u * 1024u)
/* A file's timestamp comes from a coarse clock (a tick on ext4 and tmpfs,
 * a second on some file systems), so a file listed within RACY_NS of its
 * last change can change again, to the same size, without its mtime
 * moving: such a file's content is hashed when listed, up to HASH_MAX
 * bytes.  Only where the host reads it directly: through Docker or SSH
 * each read is a command of its own, and a run that wrote a hundred
 * files would wait for a hundred; there size, mtime and inode decide.  */
#define RACY_NS  1000000000ll
#define HASH_MAX (1u << 20)

/* --- MIME --- */

/* libmagic is opened on the first MIME type asked for, not linked: the
 * light binary, which runs every one-shot container, would otherwise load
 * it and its three compression libraries at each start.  One cookie for
 * the process: loading the database is costly and a cookie is not
 * thread-safe, hence the lock.  */
static pthread_mutex_t magic_lock = PTHREAD_MUTEX_INITIALIZER;
static struct
{
  magic_t (*open) (int flags);
  int (*load) (magic_t cookie, const char *path);
  const char *(*buffer) (magic_t cookie, const void *buf, size_t len);
  void (*close) (magic_t cookie);
} magic_api;
static magic_t magic_cookie;
static bool magic_unavailable;

static bool
magic_api_load (void)
{
  void *lib = dlopen ("libmagic.so.1", RTLD_NOW | RTLD_LOCAL);

  if (lib == NULL)
    return false;
  magic_api.open = (magic_t (*) (int)) dlsym (lib, "magic_open");
  magic_api.load = (int (*) (magic_t, const char *)) dlsym (lib, "magic_load");
  magic_api.buffer = (const char *(*) (magic_t, const void *, size_t)) dlsym (lib, "magic_buffer");
  magic_api.close = (void (*) (magic_t)) dlsym (lib, "magic_close");
  if (magic_api.open && magic_api.load && magic_api.buffer && magic_api.close)
    return true;
  dlclose (lib);
  return false;
}

static char *
mime_of_buffer (const void *buf, size_t len)
{
  const char *m = NULL;
  char *ret;

  pthread_mutex_lock (&magic_lock);
  if (magic_cookie == NULL && !magic_unavailable)
    {
      if (magic_api_load ())
        {
          magic_cookie = magic_api.open (MAGIC_MIME_TYPE);
          if (magic_cookie && magic_api.load (magic_cookie, NULL) < 0)
            {
              magic_api.close (magic_cookie);
              magic_cookie = NULL;
            }
        }
      magic_unavailable = magic_cookie == NULL;
    }
  if (magic_cookie)
    m = magic_api.buffer (magic_cookie, buf, len);
  ret = sr_xstrdup (m && *m ? m : "application/octet-stream");
  pthread_mutex_unlock (&magic_lock);
  return ret;
}

/* From the start of the file with pread: the fd's offset stays where the
 * caller left it (an HTTP download reads the same fd).  */
char *
sr_files_mime (int fd)
{
  _cleanup_free_ char *buf = NULL;
  struct stat st;
  size_t len = 0;

  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    return sr_xstrdup ("application/octet-stream");
  buf = sr_xmalloc (MIME_PEEK);
  while (len < MIME_PEEK)
    {
      ssize_t n = pread (fd, buf + len, MIME_PEEK - len, (off_t) len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break;
      len += (size_t) n;
    }
  return mime_of_buffer (buf, len);
}

/* --- listing --- */

void
sr_artifacts_free (struct sr_artifact *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (v[i].path);
      free (v[i].mime_type);
    }
  free (v);
}

static int
compare_artifacts (const void *a, const void *b)
{
  return strcmp (((const struct sr_artifact *) a)->path, ((const struct sr_artifact *) b)->path);
}

/* The MIME type of a file, from its first MIME_PEEK bytes.  */
static char *
mime_at (const struct sr_fsroot *r, const char *abs)
{
  _cleanup_free_ char *data = NULL;
  size_t len;

  if (r->ops->read (r->ctx, abs, SR_FS_DATA | SR_FS_HEAD, MIME_PEEK, &data, &len, NULL) < 0)
    return sr_xstrdup ("application/octet-stream");
  return mime_of_buffer (data, len);
}

struct listing
{
  struct sr_artifact *v;
  size_t n, cap;
  bool truncated;
};

static int
list_one (void *userdata, const struct sr_fs_entry *e)
{
  struct listing *l = userdata;

  if (l->n >= SR_MAX_ARTIFACTS)
    {
      l->truncated = true;
      return 1;
    }
  if (l->n == l->cap)
    {
      l->cap = l->cap ? l->cap * 2 : 64;
      l->v = sr_xrealloc (l->v, l->cap * sizeof *l->v);
    }
  l->v[l->n++] = (struct sr_artifact){ .path = sr_xstrdup (e->rel), .size = e->size,
                                       .mtime_ns = e->mtime_ns, .dev = e->dev, .ino = e->ino };
  return 0;
}

/* FNV-1a of the content of path (relative to SR_DATA_DIR), if it is a
 * file of at most HASH_MAX bytes.  */
static bool
content_digest (const struct sr_fsroot *r, const char *path, uint64_t *ret)
{
  _cleanup_free_ char *abs = sr_xasprintf ("%s/%s", SR_DATA_DIR, path);
  _cleanup_free_ char *data = NULL;
  uint64_t h = 0xcbf29ce484222325ull;
  size_t len;

  if (r->ops->read (r->ctx, abs, SR_FS_DATA, HASH_MAX, &data, &len, NULL) < 0)
    return false;
  for (size_t i = 0; i < len; i++)
    h = (h ^ (unsigned char) data[i]) * 0x100000001b3ull;
  *ret = h;
  return true;
}

int
sr_files_list (const struct sr_fsroot *r, bool with_mime, struct sr_artifact **ret,
               size_t *ret_n, bool *ret_truncated, sr_error_t *err)
{
  struct listing l = { 0 };
  bool deeper = false;
  int64_t racy_since = sr_now_realtime_ms () * 1000000 - RACY_NS;

  if (r->ops->walk (r->ctx, SR_DATA_DIR, SR_FS_DATA, SR_MAX_ARTIFACT_DEPTH, -1, list_one, &l,
                    &deeper, err)
      < 0)
    {
      sr_artifacts_free (l.v, l.n);
      return -1;
    }
  if (l.n)
    qsort (l.v, l.n, sizeof *l.v, compare_artifacts);
  for (size_t i = 0; i < l.n; i++)
    if (r->ops == &sr_fs_native_ops && l.v[i].mtime_ns >= racy_since
        && l.v[i].size <= HASH_MAX)
      l.v[i].hashed = content_digest (r, l.v[i].path, &l.v[i].digest);
  for (size_t i = 0; with_mime && i < l.n; i++)
    {
      _cleanup_free_ char *abs = sr_xasprintf ("%s/%s", SR_DATA_DIR, l.v[i].path);

      l.v[i].mime_type = mime_at (r, abs);
    }
  *ret = l.v;
  *ret_n = l.n;
  *ret_truncated = l.truncated || deeper;
  return 0;
}

static void
copy_artifact (struct sr_artifact *to, const struct sr_artifact *from)
{
  to->path = sr_xstrdup (from->path);
  to->size = from->size;
  to->mtime_ns = from->mtime_ns;
  to->dev = from->dev;
  to->ino = from->ino;
  to->hashed = from->hashed;
  to->digest = from->digest;
  to->mime_type = from->mime_type ? sr_xstrdup (from->mime_type) : NULL;
}

/* Whether after (listed from r) is the file before was.  */
static bool
same_file (const struct sr_fsroot *r, const struct sr_artifact *before,
           const struct sr_artifact *after)
{
  uint64_t digest;

  if (before->size != after->size || before->mtime_ns != after->mtime_ns
      || before->dev != after->dev || before->ino != after->ino)
    return false;
  if (!before->hashed)
    return true;
  if (after->hashed)
    return after->digest == before->digest;
  return content_digest (r, after->path, &digest) && digest == before->digest;
}

void
sr_artifacts_changed (const struct sr_fsroot *r, const struct sr_artifact *before,
                      size_t n_before, const struct sr_artifact *after, size_t n_after,
                      struct sr_artifact **ret, size_t *ret_n)
{
  struct sr_artifact *v = NULL;
  size_t n = 0, i = 0;

  for (size_t j = 0; j < n_after; j++)
    {
      int c = 1;

      while (i < n_before && (c = strcmp (before[i].path, after[j].path)) < 0)
        i++;
      if (i < n_before && c == 0 && same_file (r, &before[i], &after[j]))
        continue;
      if (v == NULL)
        v = sr_xcalloc (n_after, sizeof *v);
      copy_artifact (&v[n++], &after[j]);
    }
  *ret = v;
  *ret_n = n;
}

int
sr_files_upload (const struct sr_fsroot *r, const char *path, const void *data, size_t len,
                 bool overwrite, char **ret_path, sr_error_t *err)
{
  struct sr_files_where w = { 0 };
  int ret;

  if (sr_files_parse_path (path, true, &w, err) < 0)
    return -1;
  ret = r->ops->write (r->ctx, w.abs, SR_FS_DATA, data, len, overwrite, err);
  if (ret == 0 && ret_path)
    *ret_path = TAKE_PTR (w.abs);
  sr_files_where_done (&w);
  return ret;
}

int
sr_files_append (const struct sr_fsroot *r, const char *path, uint64_t offset, const void *data,
                 size_t len, uint64_t max_size, char **ret_path, sr_error_t *err)
{
  struct sr_files_where w = { 0 };
  _cleanup_free_ char *old = NULL, *whole = NULL;
  size_t old_len = 0;
  int ret = -1;

  if (sr_files_parse_path (path, true, &w, err) < 0)
    return -1;
  if (offset + len > max_size)
    {
      sr_error_set_code (err, "file_too_large", EFBIG,
                         "%s would be %" PRIu64 " bytes, over the limit of %" PRIu64 " bytes",
                         w.abs, offset + len, max_size);
      goto out;
    }
  if (r->ops->read (r->ctx, w.abs, SR_FS_DATA | SR_FS_NOFOLLOW, max_size, &old, &old_len, err)
      < 0)
    goto out;
  if (old_len != offset)
    {
      sr_error_set_code (err, "offset_mismatch", 0,
                         "%s holds %zu bytes, not %" PRIu64 ": send the piece at offset %zu",
                         w.abs, old_len, offset, old_len);
      goto out;
    }
  whole = sr_xmalloc (old_len + len + 1);
  memcpy (whole, old, old_len);
  memcpy (whole + old_len, data, len);
  ret = r->ops->write (r->ctx, w.abs, SR_FS_DATA, whole, old_len + len, true, err);
  if (ret == 0 && ret_path)
    *ret_path = TAKE_PTR (w.abs);
out:
  sr_files_where_done (&w);
  return ret;
}

int
sr_files_read_piece (const struct sr_fsroot *r, const char *path, uint64_t max_size,
                     uint64_t offset, size_t length, char **ret_data, size_t *ret_len,
                     uint64_t *ret_size, char **ret_mime, sr_error_t *err)
{
  struct sr_files_where w = { 0 };
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *data = NULL, *peek = NULL;
  uint64_t size = 0;
  size_t len = 0, want;
  ssize_t n;

  if (sr_files_parse_path (path, true, &w, err) < 0)
    return -1;
  fd = r->ops->open (r->ctx, w.abs, SR_FS_DATA, &size, err);
  if (fd < 0)
    goto fail;
  if (size > max_size)
    {
      sr_error_set_code (err, "file_too_large", EFBIG,
                         "%s is %" PRIu64 " bytes, over the limit of %" PRIu64 " bytes", w.abs,
                         size, max_size);
      goto fail;
    }
  want = offset >= size ? 0 : size - offset < length ? (size_t) (size - offset) : length;
  data = sr_xmalloc (want + 1);
  while (len < want)
    {
      n = pread (fd, data + len, want - len, (off_t) (offset + len));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          sr_files_fail_errno (err, errno, "read %s", w.abs);
          goto fail;
        }
      if (n == 0)
        break; /* it shrank meanwhile */
      len += (size_t) n;
    }
  data[len] = '\0';
  if (offset == 0 && len >= (size < MIME_PEEK ? size : MIME_PEEK))
    *ret_mime = mime_of_buffer (data, len < MIME_PEEK ? len : MIME_PEEK);
  else
    {
      peek = sr_xmalloc (MIME_PEEK);
      n = pread (fd, peek, MIME_PEEK, 0);
      *ret_mime = mime_of_buffer (peek, n > 0 ? (size_t) n : 0);
    }
  sr_files_where_done (&w);
  *ret_data = TAKE_PTR (data);
  *ret_len = len;
  *ret_size = size;
  return 0;
fail:
  sr_files_where_done (&w);
  return -1;
}

int
sr_files_read_artifact (const struct sr_fsroot *r, const char *path, uint64_t max_size,
                        char **ret_data, size_t *ret_len, char **ret_mime, sr_error_t *err)
{
  struct sr_files_where w = { 0 };
  char *data;
  size_t len;
  int ret;

  if (sr_files_parse_path (path, true, &w, err) < 0)
    return -1;
  ret = r->ops->read (r->ctx, w.abs, SR_FS_DATA, max_size, &data, &len, err);
  sr_files_where_done (&w);
  if (ret < 0)
    return -1;
  if (ret_mime)
    *ret_mime = mime_of_buffer (data, len < MIME_PEEK ? len : MIME_PEEK);
  *ret_data = data;
  *ret_len = len;
  return 0;
}

int
sr_files_copy_fd (const char *abs, const void *data, size_t len, uint64_t *ret_size,
                  sr_error_t *err)
{
  _cleanup_close_ int fd = memfd_create ("sr-artifact", MFD_CLOEXEC);

  if (fd < 0 || sr_write_all (fd, data, len) < 0 || lseek (fd, 0, SEEK_SET) < 0)
    return sr_files_fail_errno (err, errno, "copy %s", abs);
  if (ret_size)
    *ret_size = len;
  return TAKE_FD (fd);
}

int
sr_files_open_artifact (const struct sr_fsroot *r, const char *path, uint64_t *ret_size,
                        sr_error_t *err)
{
  struct sr_files_where w = { 0 };
  uint64_t size = 0;
  int fd;

  if (sr_files_parse_path (path, true, &w, err) < 0)
    return -1;
  fd = r->ops->open (r->ctx, w.abs, SR_FS_DATA, &size, err);
  sr_files_where_done (&w);
  if (fd >= 0 && ret_size)
    *ret_size = size;
  return fd;
}
