/* What the parts of sandbox/files.h share.  The artifacts
 * (files-artifacts.c), the file tools that read or change one file
 * (files-edit.c) and file_search (files-search.c) are written over a
 * backend's primitives (struct sr_fs_ops) and validated paths
 * (files-path.c); the native primitives (files-native.c) over paths
 * confined to the container's root (files-path.c) and atomic writes as
 * its root (files-write.c).  Failures carry the codes files.h lists.  */
#ifndef SR_SANDBOX_FILES_INTERNAL_H
#define SR_SANDBOX_FILES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "common/error.h"
#include "sandbox/files.h"

/* Temp files of an atomic write start with this; listings skip them.  */
#define SR_FILES_TMP_PREFIX ".sr-tmp-"

/* --- files-path.c --- */

/* A path inside the container, split into the directory it is resolved
 * against (the data directory or the root) and the rest.  */
struct sr_files_where
{
  int dirfd;    /* native: rootfd or datafd, not owned; -1 elsewhere */
  bool data;    /* dirfd is the data directory */
  char *rel;    /* normalised, relative to dirfd; "" for dirfd itself */
  char *abs;    /* absolute inside the container, for messages and results */
};
void sr_files_where_done (struct sr_files_where *w);

/* Validates path (invalid_path) and decides what it is resolved against:
 * the data directory for a relative path or one under SR_DATA_DIR, else
 * the container's root; artifact refuses the latter
 * (path_outside_sandbox).  Fills *w but its dirfd (sr_files_where_done
 * frees it).  */
int sr_files_parse_path (const char *path, bool artifact, struct sr_files_where *w,
                         sr_error_t *err);

/* The primitives' flags of w: SR_FS_DATA for a path in the data
 * directory.  */
unsigned sr_files_where_flags (const struct sr_files_where *w);

/* The one way a path under rootfd or datafd is opened: openat2 with
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, O_CLOEXEC added.  An fd, or -1
 * with errno.  rel "" opens dirfd itself.  */
int sr_files_open_in (int dirfd, const char *rel, int flags);

/* "a directory", "a FIFO", ...: what a mode is, for messages.  */
const char *sr_files_kind_of (mode_t m);

/* Checks the file system under fd: never a kernel interface or FUSE; for
 * a write, a writable tmpfs of the session (path_outside_sandbox).  */
int sr_files_check_fs (int fd, bool for_write, const char *abs, sr_error_t *err);

/* A readable fd of the regular file the O_PATH fd pathfd is (not_a_file
 * otherwise; never opens a FIFO or device for real); *st gets its stat.  */
int sr_files_reopen_regular (int pathfd, const char *abs, struct stat *st, sr_error_t *err);

/* sr_files_reopen_regular of the file w names.  */
int sr_files_open_regular (const struct sr_files_where *w, struct stat *st, sr_error_t *err);

/* All of fd, the regular file abs whose stat is *st, at most max bytes
 * (file_too_large past it, checked while reading too: the container may
 * grow the file), NUL-terminated in *ret; one already over max is
 * file_too_large without a read.  */
int sr_files_read_sized (int fd, const struct stat *st, uint64_t max, const char *abs, char **ret,
                         size_t *ret_len, sr_error_t *err);

/* The content of the regular file w names, at most max bytes.  */
int sr_files_open_and_read (const struct sr_files_where *w, uint64_t max, char **ret,
                            size_t *ret_len, sr_error_t *err);

/* An error from errno, with the code errnum means for a file (not_found,
 * quota_exceeded, ..., io_error).  Returns -1.  */
int sr_files_fail_errno (sr_error_t *err, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));

/* --- files-write.c --- */

/* Opens the directory holding w's last component (*ret_name, pointing
 * into w->rel), creating the missing ones of mode dir_mode (0: none;
 * only sr_files_write_path creates, as the files' owner).  */
int sr_files_open_parent (const struct sr_files_where *w, mode_t dir_mode, int *ret_fd,
                          const char **ret_name, sr_error_t *err);

/* The temp name a write goes through: SR_FILES_TMP_PREFIX and 16 random
 * hex digits.  */
#define SR_FILES_TMP_LEN (sizeof SR_FILES_TMP_PREFIX + 16)
int sr_files_temp_name (char tmp[static SR_FILES_TMP_LEN]);

/* Writes data whole as the file w names (through the temp file tmp, of
 * sr_files_temp_name, beside it, renamed over it), its missing parents
 * created, as the container's root.  */
int sr_files_write_path (const struct sr_fs_native *r, const struct sr_files_where *w,
                         const void *data, size_t len, bool overwrite, const char *tmp,
                         sr_error_t *err);

/* Removes the temp file tmp that a write of w killed between naming it
 * and renaming it left (the memory limit's kill of a charged writer):
 * nothing half-written stays.  */
void sr_files_drop_temp (const struct sr_fs_native *r, const struct sr_files_where *w,
                         const char *tmp);

#endif
