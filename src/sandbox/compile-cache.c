#include "config.h"

#include "sandbox/compile-cache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/statedir.h"
#include "common/util.h"
#include "sandbox/code-dir.h"

/* An entry: MAGIC, then per file a header (name length, mode, size), its
 * name and its bytes, then the SHA-256 of all that.  Host byte order: an
 * entry never leaves the runner's own runtime dir.  */
static const char MAGIC[8] = "srcc\1\0\0\0";
struct file_header
{
  uint32_t name_len;
  uint32_t mode;
  uint64_t size;
};
/* What one entry may hold: a compiler's output, not a tree.  */
#define MAX_FILES 1024
#define MAX_DEPTH 8
/* A temporary entry older than this belongs to a runner that died.  */
#define STALE_TMP_SECONDS 3600

struct sr_compile_cache
{
  int dfd;
  uint64_t max_size;
};

/* --- the key --- */

/* Each input with its length first, so no two inputs run together.  */
static void
hash_field (struct sr_sha256 *h, const void *data, size_t len)
{
  uint64_t n = len;

  sr_sha256_update (h, &n, sizeof n);
  sr_sha256_update (h, data, len);
}

static void
hash_string (struct sr_sha256 *h, const char *s)
{
  hash_field (h, s ? s : "", s ? strlen (s) : 0);
}

void
sr_compile_cache_key (const struct sr_language *l, char *const *compile_argv,
                      const char *image_id, const struct sr_code_request *req,
                      char ret_key[SR_COMPILE_KEY_LEN + 1])
{
  struct sr_sha256 *h = sr_sha256_new ();
  unsigned char sum[SR_SHA256_LEN];

  hash_string (h, MAGIC);
  /* The language entry but its description, which changes nothing.  */
  hash_string (h, l->name);
  hash_string (h, l->image);
  hash_string (h, l->source);
  hash_string (h, l->compile);
  hash_string (h, l->run);
  hash_string (h, l->docker_image);
  hash_string (h, l->sources);
  hash_string (h, image_id);
  for (char *const *a = compile_argv; *a; a++)
    hash_string (h, *a);
  hash_string (h, "");
  hash_field (h, req->code, req->code_len);
  for (size_t i = 0; i < req->n_files; i++)
    {
      hash_string (h, req->files[i].name);
      hash_field (h, req->files[i].content, req->files[i].len);
    }
  sr_sha256_final (h, sum);
  sr_hex_encode (sum, sizeof sum, ret_key);
}

/* --- the directory --- */

int
sr_compile_cache_open (const char *runtime_dir, uint64_t max_size,
                       struct sr_compile_cache **ret, sr_error_t *err)
{
  _cleanup_free_ char *path = sr_statedir_runtime_sub (runtime_dir, "compile-cache", err);
  struct sr_compile_cache *c;
  int fd;

  if (path == NULL)
    return -1;
  /* Its entries are programs this user's snippets built: no other user
   * reads them, nor plants one.  */
  fd = sr_statedir_open (path, "runtime_dir", SR_STATEDIR_PRIVATE, err);
  if (fd < 0)
    return -1;
  if (fchmod (fd, 0700) < 0)
    {
      sr_error_set (err, errno, "chmod %s", path);
      close (fd);
      return -1;
    }
  c = sr_xcalloc (1, sizeof *c);
  c->dfd = fd;
  c->max_size = max_size;
  *ret = c;
  return 0;
}

void
sr_compile_cache_close (struct sr_compile_cache *c)
{
  if (c == NULL)
    return;
  close (c->dfd);
  free (c);
}

/* --- reading an entry --- */

/* A name an entry may carry: relative, without '.', '..' or empty
 * components.  */
static bool
name_safe (const char *name, size_t len)
{
  const char *p = name, *end = name + len;

  if (len == 0 || memchr (name, '\0', len))
    return false;
  while (p <= end)
    {
      const char *slash = memchr (p, '/', (size_t) (end - p));
      size_t n = (size_t) ((slash ? slash : end) - p);

      if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
        return false;
      if (slash == NULL)
        return true;
      p = slash + 1;
    }
  return false;
}

/* Checks the entry's hash and every header against its length.  */
static int
check_entry (const unsigned char *data, size_t len, sr_error_t *err)
{
  unsigned char sum[SR_SHA256_LEN];
  struct sr_sha256 *h;
  size_t off = sizeof MAGIC, n = 0;

  if (len < sizeof MAGIC + SR_SHA256_LEN || memcmp (data, MAGIC, sizeof MAGIC) != 0)
    return sr_error_set_plain (err, "compile_cache_corrupt", EBADMSG, "not a cache entry");
  len -= SR_SHA256_LEN;
  h = sr_sha256_new ();
  sr_sha256_update (h, data, len);
  sr_sha256_final (h, sum);
  if (memcmp (sum, data + len, SR_SHA256_LEN) != 0)
    return sr_error_set_plain (err, "compile_cache_corrupt", EBADMSG,
                               "its content does not match its hash");
  while (off < len)
    {
      struct file_header fh;

      if (len - off < sizeof fh || ++n > MAX_FILES)
        return sr_error_set_plain (err, "compile_cache_corrupt", EBADMSG, "a header is cut");
      memcpy (&fh, data + off, sizeof fh);
      off += sizeof fh;
      if (fh.name_len > len - off || fh.size > len - off - fh.name_len
          || !name_safe ((const char *) data + off, fh.name_len))
        return sr_error_set_plain (err, "compile_cache_corrupt", EBADMSG,
                                   "a file's name or size is out of bounds");
      off += fh.name_len + fh.size;
    }
  return 0;
}

static int
write_file (int dirfd, const char *name, const struct file_header *fh, const void *data,
            uid_t uid, gid_t gid, sr_error_t *err)
{
  const char *base = name;
  _cleanup_close_ int pfd = sr_code_open_parent (dirfd, name, uid, gid, &base, err);
  _cleanup_close_ int fd = -1;

  if (pfd < 0)
    return -1;
  /* An input the compile overwrote (a file named as its output) is
   * replaced, as the compile replaced it.  */
  if (unlinkat (pfd, base, 0) < 0 && errno != ENOENT)
    return sr_error_set (err, errno, "put %s in place", name);
  fd = openat (pfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 || sr_write_all (fd, data, fh->size) < 0
      || (geteuid () == 0 && fchown (fd, uid, gid) < 0) || fchmod (fd, fh->mode & 0755) < 0)
    return sr_error_set (err, errno, "put %s in place", name);
  return 0;
}

static int
unpack (const unsigned char *data, size_t len, int dirfd, uid_t uid, gid_t gid,
        sr_error_t *err)
{
  size_t off = sizeof MAGIC;

  len -= SR_SHA256_LEN;
  while (off < len)
    {
      struct file_header fh;
      _cleanup_free_ char *name = NULL;

      memcpy (&fh, data + off, sizeof fh);
      off += sizeof fh;
      name = sr_xasprintf ("%.*s", (int) fh.name_len, (const char *) data + off);
      off += fh.name_len;
      if (write_file (dirfd, name, &fh, data + off, uid, gid, err) < 0)
        return -1;
      off += fh.size;
    }
  return 0;
}

/* The whole entry, read rather than mapped: a file cut under a mapping
 * would kill the runner with SIGBUS.  */
static int
read_entry (int fd, uint64_t max_size, char **ret, size_t *ret_len, sr_error_t *err)
{
  if (sr_read_fd (fd, max_size + 1, ret, ret_len) < 0)
    return sr_error_set (err, errno, "read");
  if (*ret_len > max_size)
    return sr_error_set_plain (err, "compile_cache_corrupt", EBADMSG, "over the cache's size");
  return 0;
}

int
sr_compile_cache_get (struct sr_compile_cache *c, const char *key, int dirfd, uid_t uid,
                      gid_t gid, sr_error_t *err)
{
  _cleanup_close_ int fd = openat (c->dfd, key, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  _cleanup_free_ char *data = NULL;
  size_t len = 0;

  if (fd < 0)
    return errno == ENOENT ? 0 : sr_error_set (err, errno, "open compile cache entry %s", key);
  if (read_entry (fd, c->max_size, &data, &len, err) < 0
      || check_entry ((unsigned char *) data, len, err) < 0
      || unpack ((unsigned char *) data, len, dirfd, uid, gid, err) < 0)
    {
      if (sr_error_code (*err) && strcmp (sr_error_code (*err), "compile_cache_corrupt") == 0)
        (void) unlinkat (c->dfd, key, 0);
      return sr_error_wrap (err, "compile cache entry %s", key);
    }
  /* Recently used: the last evicted.  */
  (void) futimens (fd, NULL);
  return 1;
}

/* --- storing an entry --- */

struct output
{
  char *name;
  uint32_t mode;
  uint64_t size;
};

struct outputs
{
  struct output *v;
  size_t n;
  uint64_t bytes;
};

static void
outputs_done (struct outputs *o)
{
  for (size_t i = 0; i < o->n; i++)
    free (o->v[i].name);
  free (o->v);
}

/* Whether the file name (base in dirfd) is one of the inputs as it was
 * given: one the compile overwrote is output.  */
static bool
is_input (int dirfd, const char *base, const char *name, uint64_t size,
          const struct sr_code_file *inputs, size_t n_inputs)
{
  for (size_t i = 0; i < n_inputs; i++)
    if (strcmp (inputs[i].name, name) == 0)
      {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;

        if (size != inputs[i].len)
          return false;
        fd = openat (dirfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        return fd >= 0 && sr_read_fd (fd, size + 1, &buf, &len) == 0 && len == size
               && (size == 0 || memcmp (buf, inputs[i].content, size) == 0);
      }
  return false;
}

/* The regular files below fd (at prefix) but the inputs.  */
static int
collect (int fd, const char *prefix, const struct sr_code_file *inputs, size_t n_inputs,
         int depth, struct outputs *o, sr_error_t *err)
{
  DIR *d;
  struct dirent *de;
  int r = 0;

  if (depth > MAX_DEPTH)
    return sr_error_set_plain (err, "compile_output_too_large", E2BIG, "nested too deep");
  d = fdopendir (fd);
  if (d == NULL)
    {
      close (fd);
      return sr_error_set (err, errno, "read the code directory");
    }
  while (r == 0 && (de = readdir (d)))
    {
      _cleanup_free_ char *name = NULL;
      struct stat st;

      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      name = *prefix ? sr_xasprintf ("%s/%s", prefix, de->d_name) : sr_xstrdup (de->d_name);
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        r = sr_error_set (err, errno, "stat %s", name);
      else if (S_ISDIR (st.st_mode))
        {
          int sub = openat (dirfd (d), de->d_name,
                            O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

          r = sub < 0 ? sr_error_set (err, errno, "open %s", name)
                      : collect (sub, name, inputs, n_inputs, depth + 1, o, err);
        }
      else if (S_ISREG (st.st_mode)
               && !is_input (dirfd (d), de->d_name, name, (uint64_t) st.st_size, inputs,
                             n_inputs))
        {
          if (o->n >= MAX_FILES)
            r = sr_error_set_plain (err, "compile_output_too_large", E2BIG, "too many files");
          else
            {
              o->v = sr_xrealloc (o->v, (o->n + 1) * sizeof *o->v);
              o->v[o->n++] = (struct output){ .name = TAKE_PTR (name),
                                              .mode = st.st_mode & 07777,
                                              .size = (uint64_t) st.st_size };
              o->bytes += sizeof (struct file_header) + strlen (o->v[o->n - 1].name)
                          + (uint64_t) st.st_size;
            }
        }
    }
  closedir (d);
  return r;
}

/* Appends the file name under dirfd to out, with h hashing what goes.  */
static int
copy_file (int dirfd, const struct output *f, int out, struct sr_sha256 *h, sr_error_t *err)
{
  _cleanup_close_ int fd = openat (dirfd, f->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct file_header fh = { .name_len = (uint32_t) strlen (f->name), .mode = f->mode,
                            .size = f->size };
  char buf[65536];
  uint64_t left = f->size;

  if (fd < 0)
    return sr_error_set (err, errno, "open %s", f->name);
  sr_sha256_update (h, &fh, sizeof fh);
  sr_sha256_update (h, f->name, fh.name_len);
  if (sr_write_all (out, &fh, sizeof fh) < 0 || sr_write_all (out, f->name, fh.name_len) < 0)
    return sr_error_set (err, errno, "write the entry");
  while (left)
    {
      ssize_t n = read (fd, buf, left < sizeof buf ? left : sizeof buf);

      if (n <= 0)
        return sr_error_set (err, n < 0 ? errno : EIO, "read %s: it changed", f->name);
      sr_sha256_update (h, buf, (size_t) n);
      if (sr_write_all (out, buf, (size_t) n) < 0)
        return sr_error_set (err, errno, "write the entry");
      left -= (uint64_t) n;
    }
  return 0;
}

static int
write_entry (struct sr_compile_cache *c, const char *tmp, int dirfd, const struct outputs *o,
             sr_error_t *err)
{
  _cleanup_close_ int out = openat (c->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  struct sr_sha256 *h;
  unsigned char sum[SR_SHA256_LEN];
  int r = 0;

  if (out < 0)
    return sr_error_set (err, errno, "create %s", tmp);
  h = sr_sha256_new ();
  sr_sha256_update (h, MAGIC, sizeof MAGIC);
  if (sr_write_all (out, MAGIC, sizeof MAGIC) < 0)
    r = sr_error_set (err, errno, "write the entry");
  for (size_t i = 0; r == 0 && i < o->n; i++)
    r = copy_file (dirfd, &o->v[i], out, h, err);
  sr_sha256_final (h, sum);
  if (r == 0 && sr_write_all (out, sum, sizeof sum) < 0)
    r = sr_error_set (err, errno, "write the entry");
  return r;
}

struct entry
{
  char name[NAME_MAX + 1];
  struct timespec used;
  uint64_t size;
};

static int
older_first (const void *a, const void *b)
{
  const struct entry *x = a, *y = b;

  if (x->used.tv_sec != y->used.tv_sec)
    return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
  if (x->used.tv_nsec != y->used.tv_nsec)
    return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
  return 0;
}

/* Removes the least recently used entries until the rest fit, and the
 * temporary entries of runners that died.  */
static int
evict (struct sr_compile_cache *c, sr_error_t *err)
{
  int fd = openat (c->dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd < 0 ? NULL : fdopendir (fd);
  struct entry *v = NULL;
  size_t n = 0;
  uint64_t total = 0;
  struct dirent *de;
  time_t now = time (NULL);

  if (d == NULL)
    {
      if (fd >= 0)
        close (fd);
      return sr_error_set (err, errno, "read the compile cache");
    }
  while ((de = readdir (d)))
    {
      struct stat st;

      if (de->d_name[0] == '.' || fstatat (c->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (strncmp (de->d_name, "tmp.", 4) == 0)
        {
          if (now - st.st_mtime > STALE_TMP_SECONDS)
            (void) unlinkat (c->dfd, de->d_name, 0);
          continue;
        }
      v = sr_xrealloc (v, (n + 1) * sizeof *v);
      snprintf (v[n].name, sizeof v[n].name, "%s", de->d_name);
      v[n].used = st.st_mtim;
      v[n].size = (uint64_t) st.st_size;
      total += v[n++].size;
    }
  closedir (d);
  qsort (v, n, sizeof *v, older_first);
  for (size_t i = 0; i < n && total > c->max_size; i++)
    if (unlinkat (c->dfd, v[i].name, 0) == 0)
      total -= v[i].size;
  free (v);
  return 0;
}

/* Tells apart the temporary entries of one runner's threads.  */
static atomic_uint seq;

int
sr_compile_cache_put (struct sr_compile_cache *c, const char *key, int dirfd,
                      const struct sr_code_file *inputs, size_t n_inputs, sr_error_t *err)
{
  struct outputs o = { 0 };
  _cleanup_free_ char *tmp = NULL;
  /* A description of its own: a dup would share the directory's offset.  */
  int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int r;

  if (fd < 0)
    return sr_error_set (err, errno, "open the code directory");
  r = collect (fd, "", inputs, n_inputs, 0, &o, err);
  if (r == 0 && (o.n == 0 || sizeof MAGIC + o.bytes + SR_SHA256_LEN > c->max_size))
    goto out;   /* nothing to keep, or more than the cache holds: not an error */
  if (r == 0)
    {
      tmp = sr_xasprintf ("tmp.%s.%ld.%u", key, (long) getpid (), atomic_fetch_add (&seq, 1));
      r = write_entry (c, tmp, dirfd, &o, err);
      if (r == 0 && renameat (c->dfd, tmp, c->dfd, key) < 0)
        r = sr_error_set (err, errno, "rename %s", tmp);
      if (r < 0)
        (void) unlinkat (c->dfd, tmp, 0);
    }
  if (r == 0)
    r = evict (c, err);

out:
  outputs_done (&o);
  return r < 0 ? sr_error_wrap (err, "compile cache") : 0;
}
