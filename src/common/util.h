/* Small helpers shared by every module: fd and string-vector cleanup,
 * I/O loops that retry EINTR, files, directories and time.  Memory
 * (allocation, _cleanup_free_, TAKE_PTR) is common/xalloc.h, included
 * here for every user of both.  */
#ifndef SR_UTIL_H
#define SR_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/xalloc.h"

#define _cleanup_close_ _cleanup_ (sr_closep)
#define _cleanup_strv_ _cleanup_ (sr_strv_freep)

/* Hands an fd over: returns it and leaves the variable -1.  */
#define TAKE_FD(fd) ({ int _tf = (fd); (fd) = -1; _tf; })

#define SR_ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

/* The file at path (a string literal), assembled into the binary's
 * read-only data as name[] up to name_end[]: data kept in a file of its
 * own in the tree, which a build-tree or relocated binary never runs
 * without.  */
#define SR_INCBIN(name, path)                                                          \
  __asm__ (".section .rodata\n"                                                        \
           ".balign 16\n" #name ":\n"                                                  \
           ".incbin \"" path "\"\n" #name "_end:\n"                                    \
           ".previous\n");                                                             \
  extern const char name[] __asm__ (#name);                                            \
  extern const char name##_end[] __asm__ (#name "_end")

static inline void
sr_closep (int *fd)
{
  if (*fd >= 0)
    close (*fd);
}

void sr_strv_free (char **v);
static inline void
sr_strv_freep (char ***v)
{
  sr_strv_free (*v);
}
size_t sr_strv_length (char *const *v);
/* Appends a copy of s; *v may be NULL.  */
void sr_strv_push (char ***v, const char *s);
/* Sets KEY=VALUE in the environment *env (may be NULL): a later value for
 * a key replaces the earlier one.  */
void sr_env_set (char ***env, const char *kv);

/* Write all of buf, retrying on EINTR and short writes.  */
int sr_write_all (int fd, const void *buf, size_t len);
/* Writes s to path (O_WRONLY, no O_CREAT); used for /proc and cgroup files.  */
int sr_write_file (const char *path, const char *s, sr_error_t *err);
/* Reads a whole small file into a NUL-terminated heap buffer.  */
int sr_read_file (const char *path, char **ret, size_t *ret_len, sr_error_t *err);
/* Reads fd to its end, or until limit bytes (SIZE_MAX: no limit), into a
 * NUL-terminated buffer; -1 with errno on a failed read.  */
int sr_read_fd (int fd, size_t limit, char **ret, size_t *ret_len);

/* buf as base64 (RFC 4648, padded), NUL-terminated.  */
char *sr_base64_encode (const void *buf, size_t len);
/* Decodes base64 text (padding optional, whitespace ignored) into a new
 * buffer; -1 with errno EINVAL at the first other character, a misplaced
 * '=' or a dangling final character.  */
int sr_base64_decode (const char *text, size_t len, char **ret, size_t *ret_len);

/* Whether a caller's cancel_fd (-1: none) is readable: it asks to give
 * up.  */
bool sr_cancel_requested (int cancel_fd);

/* CLOCK_MONOTONIC in nanoseconds.  */
uint64_t sr_now_ns (void);
/* CLOCK_REALTIME in milliseconds since the epoch: what records carry.  */
int64_t sr_now_realtime_ms (void);
/* Sets *ret to ms milliseconds from now on clock: the absolute deadline
 * of a pthread_cond_timedwait whose condition waits on that clock
 * (CLOCK_REALTIME unless its attribute says otherwise).  */
void sr_deadline_after (clockid_t clock, uint64_t ms, struct timespec *ret);

/* openat2 (dirfd, path, flags | O_CLOEXEC) with the RESOLVE_* flags
 * resolve; an empty path is dirfd itself.  The one way a path below a
 * root of ours is opened: EAGAIN, which the kernel answers when a rename
 * or mount anywhere raced a ".." walk under RESOLVE_IN_ROOT, is tried
 * again (a busy host makes it common).  */
int sr_openat2 (int dirfd, const char *path, int flags, uint64_t resolve);

/* Fills buf with len bytes from the kernel's random source, retrying
 * EINTR and short reads.  */
int sr_random_bytes (void *buf, size_t len, sr_error_t *err);
/* n bytes as 2n lowercase hex digits and a NUL in out.  */
void sr_hex_encode (const void *in, size_t n, char *out);
/* An id of n random bytes as 2n lowercase hex digits and a NUL in out.  */
int sr_random_hex (char *out, size_t n, sr_error_t *err);

/* Parses a size such as 512, 64k, 256M, 1G (binary units) into bytes.  */
int sr_parse_size (const char *s, uint64_t *ret);
/* Parses a duration in seconds ("10", "2.5") into milliseconds.  */
int sr_parse_seconds (const char *s, uint64_t *ret_ms);

/* Whether path is a directory (following symlinks); when not, errno says
 * why: stat's, or ENOTDIR.  */
bool sr_is_dir (const char *path);
/* Creates dir and any missing parents: parents 0755, dir itself 0700.
 * Existing directories are left as they are.  */
int sr_mkdir_p (const char *dir, sr_error_t *err);

/* Removes name under dirfd and, when it is a directory, everything in it,
 * without following symlinks.  A missing name is not an error.
 * sr_rm_rf_at_dev refuses to cross into another file system than dev
 * (0: the one name is on).  */
int sr_rm_rf_at (int dirfd, const char *name, sr_error_t *err);
int sr_rm_rf_at_dev (int dirfd, const char *name, dev_t dev, sr_error_t *err);
/* Removes everything inside the directory name under dirfd.  */
int sr_empty_dir_at (int dirfd, const char *name, sr_error_t *err);

/* The start time of pid (clock ticks since boot), 0 when it is gone or a
 * zombie.  */
uint64_t sr_process_start_time (pid_t pid);

#endif
