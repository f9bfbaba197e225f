/* The compile cache without a container: its key changes with every input
 * of a compile; an entry round-trips what a compile left (modes,
 * subdirectories) but the inputs; a corrupt entry is refused and removed;
 * the size bound evicts the least recently used entry first; the
 * directory is the runner's alone.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "sandbox/compile-cache.h"
#include "tap.h"

static struct sr_language cpp = {
  .name = (char *) "cpp", .image = (char *) "cpp", .source = (char *) "main.cpp",
  .compile = (char *) "g++ -O2 -o /scratch/main /scratch/main.cpp", .run = (char *) "/scratch/main",
  .description = (char *) "C++", .docker_image = (char *) "gcc:14",
  .sources = (char *) "*.cpp",
};

static char *const argv_o2[] = { (char *) "g++", (char *) "-O2", (char *) "/scratch/main.cpp",
                                 NULL };
static char *const argv_o0[] = { (char *) "g++", (char *) "-O0", (char *) "/scratch/main.cpp",
                                 NULL };

static void
key_of (const struct sr_language *l, char *const *argv, const char *image,
        const struct sr_code_request *req, char out[SR_COMPILE_KEY_LEN + 1])
{
  sr_compile_cache_key (l, argv, image, req, out);
}

static void
test_key (void)
{
  struct sr_code_file f = { .name = "util.cpp", .content = "int f;", .len = 6 };
  struct sr_code_file g = { .name = "other.cpp", .content = "int f;", .len = 6 };
  struct sr_code_file h = { .name = "util.cpp", .content = "int g;", .len = 6 };
  struct sr_code_request req = { .language = "cpp", .code = "int main(){}", .code_len = 12,
                                 .files = &f, .n_files = 1, .cancel_fd = -1 };
  struct sr_code_request r2 = req;
  struct sr_language l2 = cpp;
  char base[SR_COMPILE_KEY_LEN + 1], k[SR_COMPILE_KEY_LEN + 1];

  key_of (&cpp, argv_o2, "img1", &req, base);
  is_int (strlen (base), SR_COMPILE_KEY_LEN, "the key is 64 hex digits");
  key_of (&cpp, argv_o2, "img1", &req, k);
  is_str (k, base, "the same inputs give the same key");

  r2.code = "int main(){ }";
  r2.code_len = 13;
  key_of (&cpp, argv_o2, "img1", &r2, k);
  ok (strcmp (k, base) != 0, "a changed source changes the key");
  r2 = req;
  r2.files = &g;
  key_of (&cpp, argv_o2, "img1", &r2, k);
  ok (strcmp (k, base) != 0, "a renamed file changes the key");
  r2.files = &h;
  key_of (&cpp, argv_o2, "img1", &r2, k);
  ok (strcmp (k, base) != 0, "a file's changed content changes the key");
  r2.n_files = 0;
  key_of (&cpp, argv_o2, "img1", &r2, k);
  ok (strcmp (k, base) != 0, "a file less changes the key");
  key_of (&cpp, argv_o0, "img1", &req, k);
  ok (strcmp (k, base) != 0, "a changed compiler flag changes the key");
  key_of (&cpp, argv_o2, "img2", &req, k);
  ok (strcmp (k, base) != 0, "another image digest changes the key");
  l2.run = (char *) "/scratch/main --x";
  key_of (&l2, argv_o2, "img1", &req, k);
  ok (strcmp (k, base) != 0, "a changed language entry changes the key");
  l2 = cpp;
  l2.name = (char *) "cpp2";
  key_of (&l2, argv_o2, "img1", &req, k);
  ok (strcmp (k, base) != 0, "another language name changes the key");
  l2 = cpp;
  l2.description = (char *) "another description";
  key_of (&l2, argv_o2, "img1", &req, k);
  is_str (k, base, "the description alone does not");
  /* Inputs that run together the same way are told apart.  */
  {
    char *const a1[] = { (char *) "g++", (char *) "-O2x", NULL };
    char *const a2[] = { (char *) "g++-O2", (char *) "x", NULL };
    char k1[SR_COMPILE_KEY_LEN + 1], k2[SR_COMPILE_KEY_LEN + 1];

    key_of (&cpp, a1, "img1", &req, k1);
    key_of (&cpp, a2, "img1", &req, k2);
    ok (strcmp (k1, k2) != 0, "arguments split elsewhere give another key");
  }
}

static void
write_at (int dfd, const char *name, const char *content, mode_t mode)
{
  int fd = openat (dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

  if (fd >= 0)
    {
      (void) sr_write_all (fd, content, strlen (content));
      (void) fchmod (fd, mode);
      close (fd);
    }
}

static char *
read_at (int dfd, const char *name)
{
  static char buf[256];
  int fd = openat (dfd, name, O_RDONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : read (fd, buf, sizeof buf - 1);

  if (fd >= 0)
    close (fd);
  if (n < 0)
    return NULL;
  buf[n] = '\0';
  return buf;
}

/* A fresh directory under base.  */
static int
new_dir (const char *base, const char *name)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/%s", base, name);

  (void) sr_rm_rf_at (AT_FDCWD, path, NULL);
  (void) mkdir (path, 0700);
  return open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Ages the entry key by seconds, as if last used then.  */
static void
age (const char *cache_dir, const char *key, time_t seconds)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/%s", cache_dir, key);
  struct timespec t[2];

  clock_gettime (CLOCK_REALTIME, &t[0]);
  t[0].tv_sec -= seconds;
  t[1] = t[0];
  (void) utimensat (AT_FDCWD, path, t, 0);
}

static void
test_store (void)
{
  char tmpl[] = "/tmp/sr-ccache.XXXXXX";
  char *base = mkdtemp (tmpl);
  _cleanup_free_ char *runtime = sr_xasprintf ("%s/run", base);
  _cleanup_free_ char *cache_dir = sr_xasprintf ("%s/run/compile-cache", base);
  _cleanup_free_ char *entry = NULL;
  const struct sr_code_file inputs[] = { { "main.cpp", "int main(){}", 12 },
                                         { "lib/util.cpp", "int f;", 6 } };
  struct sr_compile_cache *c = NULL;
  sr_error_t err = NULL;
  struct stat st;
  int src, dst, fd;
  const char *k1 = "1111111111111111111111111111111111111111111111111111111111111111";
  const char *k2 = "2222222222222222222222222222222222222222222222222222222222222222";
  const char *k3 = "3333333333333333333333333333333333333333333333333333333333333333";

  if (base == NULL)
    {
      ok (false, "mkdtemp");
      return;
    }
  ok (sr_compile_cache_open (runtime, 4096, &c, &err) == 0, "the cache opens in a runtime dir");
  ok (stat (cache_dir, &st) == 0 && (st.st_mode & 07777) == 0700 && st.st_uid == geteuid (),
      "its directory is the runner's, mode 0700");

  /* What a compile left: a binary and a class under a directory, beside
   * the inputs.  */
  src = new_dir (base, "src");
  write_at (src, "main.cpp", "int main(){}", 0644);
  (void) mkdirat (src, "lib", 0755);
  write_at (src, "lib/util.cpp", "int f;", 0644);
  write_at (src, "main", "ELF-binary", 0755);
  (void) mkdirat (src, "pkg", 0755);
  write_at (src, "pkg/A.class", "class-bytes", 0644);
  ok (sr_compile_cache_put (c, k1, src, inputs, 2, &err) == 0, "a compile's output is stored");
  dst = new_dir (base, "dst");
  write_at (dst, "main.cpp", "int main(){}", 0644);
  is_int (sr_compile_cache_get (c, k1, dst, getuid (), getgid (), &err), 1, "and found again");
  is_str (read_at (dst, "main"), "ELF-binary", "the binary is put in place");
  ok (fstatat (dst, "main", &st, 0) == 0 && (st.st_mode & 0777) == 0755,
      "with its executable mode");
  is_str (read_at (dst, "pkg/A.class"), "class-bytes", "a file in a directory too");
  ok (faccessat (dst, "lib", F_OK, 0) < 0, "the inputs are not part of the entry");
  is_int (sr_compile_cache_get (c, k2, dst, getuid (), getgid (), &err), 0,
          "an unknown key is a miss");

  /* One byte of the entry flipped.  */
  entry = sr_xasprintf ("%s/%s", cache_dir, k1);
  fd = open (entry, O_RDWR | O_CLOEXEC);
  ok (fd >= 0 && pwrite (fd, "X", 1, 30) == 1, "an entry's byte is changed");
  if (fd >= 0)
    close (fd);
  close (dst);
  dst = new_dir (base, "dst");
  ok (sr_compile_cache_get (c, k1, dst, getuid (), getgid (), &err) < 0
          && strcmp (sr_error_code (err), "compile_cache_corrupt") == 0,
      "a corrupt entry fails its check");
  sr_error_free (&err);
  ok (access (entry, F_OK) < 0 && errno == ENOENT, "and is removed");
  ok (faccessat (dst, "main", F_OK, 0) < 0, "and nothing of it is put in place");

  /* An input the compile overwrote is part of its output, and replaces
   * the input where the entry is put.  */
  {
    const struct sr_code_file given[] = { { "main.cpp", "int main(){}", 12 },
                                          { "main", "data", 4 } };
    const char *k6 = "6666666666666666666666666666666666666666666666666666666666666666";

    ok (sr_compile_cache_put (c, k6, src, given, 2, &err) == 0, "an overwritten input is stored");
    close (dst);
    dst = new_dir (base, "dst");
    write_at (dst, "main", "data", 0644);
    is_int (sr_compile_cache_get (c, k6, dst, getuid (), getgid (), &err), 1, "and found");
    is_str (read_at (dst, "main"), "ELF-binary", "the compile's file replaces the input's");
    _cleanup_free_ char *p6 = sr_xasprintf ("%s/%s", cache_dir, k6);
    (void) unlink (p6);
  }

  /* A cut entry.  */
  ok (sr_compile_cache_put (c, k1, src, inputs, 2, &err) == 0, "stored again");
  ok (truncate (entry, 20) == 0, "then cut short");
  ok (sr_compile_cache_get (c, k1, dst, getuid (), getgid (), &err) < 0, "a cut entry is refused");
  sr_error_free (&err);

  /* Eviction: three entries of about 1.1 KiB in a 4 KiB cache... then a
   * fourth: the least recently used goes.  */
  {
    char big[1100];

    memset (big, 'b', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    write_at (src, "main", big, 0755);
    (void) unlinkat (src, "pkg/A.class", 0);
    ok (sr_compile_cache_put (c, k1, src, inputs, 2, &err) == 0
            && sr_compile_cache_put (c, k2, src, inputs, 2, &err) == 0
            && sr_compile_cache_put (c, k3, src, inputs, 2, &err) == 0,
        "three entries fit in 4 KiB");
    age (cache_dir, k1, 300);
    age (cache_dir, k2, 200);
    age (cache_dir, k3, 100);
    close (dst);
    dst = new_dir (base, "dst");
    is_int (sr_compile_cache_get (c, k1, dst, getuid (), getgid (), &err), 1,
            "using the oldest makes it the newest");
    ok (sr_compile_cache_put (c, "4444444444444444444444444444444444444444444444444444444444444444",
                              src, inputs, 2, &err) == 0, "a fourth is stored");
    is_int (sr_compile_cache_get (c, k2, dst, getuid (), getgid (), &err), 0,
            "the least recently used entry was evicted");
    ok (faccessat (AT_FDCWD, entry, F_OK, 0) == 0, "the one just used was kept");
  }

  /* More than the whole cache is not stored, and that is no error.  */
  {
    char *huge = sr_xcalloc (1, 8192);

    memset (huge, 'h', 8191);
    write_at (src, "main", huge, 0755);
    free (huge);
    ok (sr_compile_cache_put (c, "5555555555555555555555555555555555555555555555555555555555555555",
                              src, inputs, 2, &err) == 0, "an output over the bound is no error");
    _cleanup_free_ char *p5 = sr_xasprintf ("%s/%s", cache_dir,
                                            "5555555555555555555555555555555555555555555555555555555555555555");
    ok (access (p5, F_OK) < 0, "and is not stored");
  }

  close (src);
  close (dst);
  sr_compile_cache_close (c);

  /* A directory someone else can write is refused.  */
  ok (chmod (cache_dir, 0777) == 0, "the cache directory is made world-writable");
  ok (sr_compile_cache_open (runtime, 4096, &c, &err) < 0, "the cache refuses to open it");
  sr_error_free (&err);
  (void) sr_rm_rf_at (AT_FDCWD, base, NULL);
}

int
main (void)
{
  test_key ();
  test_store ();
  return done_testing ();
}
