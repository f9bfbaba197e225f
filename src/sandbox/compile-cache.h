/* run_code's compile cache: what a successful compile stage left in the
 * code directory (a binary, class files, JavaScript...), kept under a key
 * that hashes everything the compile read, so a repeated snippet skips
 * the compile.
 *
 * It lives in <runtime_dir>/compile-cache, the runner's own (mode 0700,
 * owned by it: never shared with another user), one file an entry named
 * by its key, written to a temporary name and renamed into place, its
 * content hashed into its last bytes and checked on every read.  The
 * entries together stay within the configured size, the least recently
 * used (mtime, touched on each hit) evicted first.  Only the caller
 * decides what to cache: successful compiles only.  */
#ifndef SR_SANDBOX_COMPILE_CACHE_H
#define SR_SANDBOX_COMPILE_CACHE_H

#include <stdint.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/error.h"
#include "common/sha256.h"
#include "sandbox/code-request.h"

#define SR_COMPILE_KEY_LEN (2 * SR_SHA256_LEN)

/* The key (hex) of compiling req's code and files for language l (every
 * field that says how it compiles and runs) with compile_argv in the
 * image whose content digest is image_id: a change to any of them, a
 * file's name included, is another key.  */
void sr_compile_cache_key (const struct sr_language *l, char *const *compile_argv,
                           const char *image_id, const struct sr_code_request *req,
                           char ret_key[SR_COMPILE_KEY_LEN + 1]);

struct sr_compile_cache;

/* Opens (making it) the cache of runtime_dir holding at most max_size
 * bytes; fails when the directory is not the caller's alone.  */
int sr_compile_cache_open (const char *runtime_dir, uint64_t max_size,
                           struct sr_compile_cache **ret, sr_error_t *err);
/* Accepts NULL.  */
void sr_compile_cache_close (struct sr_compile_cache *c);

/* The entry of key put in dirfd (its files owned by uid, gid, replacing
 * an input of the same name, as the compile did): 1 when
 * there was one, 0 when none.  -1 when it could not be read or failed its
 * check, which removes it (the caller compiles instead).  */
int sr_compile_cache_get (struct sr_compile_cache *c, const char *key, int dirfd, uid_t uid,
                          gid_t gid, sr_error_t *err);

/* Stores as key's entry the regular files under dirfd but the inputs
 * (relative names) that still hold what was written, then evicts down to
 * the size.  An output larger than the whole cache is not stored
 * (returns 0).  */
int sr_compile_cache_put (struct sr_compile_cache *c, const char *key, int dirfd,
                          const struct sr_code_file *inputs, size_t n_inputs, sr_error_t *err);

#endif
