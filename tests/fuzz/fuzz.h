/* What the libFuzzer harnesses share.  Each harness is one program built
 * by tests/fuzz/run.sh with clang -fsanitize=fuzzer,address,undefined
 * against the project's sources; a crash, a sanitizer report or a broken
 * invariant (fuzz_check, which aborts) is a bug in the code under test.  */
#ifndef SR_FUZZ_H
#define SR_FUZZ_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/error.h"
#include "common/util.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

/* An invariant of the code under test: abort, so libFuzzer keeps the
 * input as a crash.  */
#define fuzz_check(cond, ...)                                                \
  do {                                                                       \
    if (!(cond))                                                             \
      {                                                                      \
        fprintf (stderr, "fuzz_check failed at %s:%d: %s: ", __FILE__,       \
                 __LINE__, #cond);                                           \
        fprintf (stderr, __VA_ARGS__);                                       \
        fputc ('\n', stderr);                                                \
        abort ();                                                            \
      }                                                                      \
  } while (0)

/* Set-up that cannot fail on a working host; when it does, the harness
 * cannot run at all, which is not a finding.  */
static inline void
fuzz_die (const char *what, sr_error_t *err)
{
  fprintf (stderr, "fuzz harness set-up: %s: %s\n", what, err && *err ? (*err)->msg : strerror (errno));
  exit (2);
}

/* The input as a NUL-terminated string (the first NUL ends it).  */
static inline char *
fuzz_strndup (const uint8_t *data, size_t size)
{
  char *s = sr_xmalloc (size + 1);

  memcpy (s, data, size);
  s[size] = '\0';
  return s;
}

static char *fuzz_dir;

static inline void
fuzz_tmpdir_remove (void)
{
  if (fuzz_dir)
    (void) sr_rm_rf_at (AT_FDCWD, fuzz_dir, NULL);
}

/* A private directory for the whole fuzzing process, on tmpfs when the
 * host has one (the server and tools harnesses write a SQLite history).
 * It goes when the fuzzer exits; a crash leaves it for the post-mortem.  */
static inline char *
fuzz_tmpdir (const char *name)
{
  const char *base = getenv ("SR_FUZZ_TMPDIR");

  if (base == NULL || *base == '\0')
    base = access ("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  fuzz_dir = sr_xasprintf ("%s/sr-fuzz-%s-XXXXXX", base, name);
  if (mkdtemp (fuzz_dir) == NULL)
    fuzz_die ("mkdtemp", NULL);
  atexit (fuzz_tmpdir_remove);
  return fuzz_dir;
}

/* The built-in configuration (no files; SANDBOX_* variables apply, as
 * they would for the server), with everything it writes under dir.  */
static inline void
fuzz_config (struct sr_config *cfg, const char *dir)
{
  _cleanup_free_ char *store = sr_xasprintf ("%s/images", dir);
  _cleanup_free_ char *history = sr_xasprintf ("%s/history.db", dir);
  _cleanup_free_ char *runtime = sr_xasprintf ("%s/run", dir);
  sr_error_t err = NULL;

  if (sr_config_load (cfg, "/nonexistent", "/nonexistent", &err) < 0
      || sr_config_set (cfg, "image_store", store, SR_ORIGIN_FLAG, "fuzz", &err) < 0
      || sr_config_set (cfg, "history_db", history, SR_ORIGIN_FLAG, "fuzz", &err) < 0
      || sr_config_set (cfg, "runtime_dir", runtime, SR_ORIGIN_FLAG, "fuzz", &err) < 0)
    fuzz_die ("configuration", &err);
  /* A one-shot service opens the store, never makes it.  */
  if (mkdir (store, 0700) < 0 && errno != EEXIST)
    fuzz_die ("mkdir the image store", NULL);
}

#endif
