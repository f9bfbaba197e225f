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

/* All of fd, at most max bytes (file_too_large past it), NUL-terminated
 * in *ret.  */
int sr_files_read_all (int fd, uint64_t max, const char *abs, char **ret, size_t *ret_len,
                       sr_error_t *err);

/* sr_files_read_all of fd, the regular file abs whose stat is *st: one
 * already over max is file_too_large without a read.  */
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

/* A tmpfs the container mounted belongs to its user namespace, and the
 * kernel creates an inode there only for a caller whose fsuid and fsgid
 * are mapped in it (EOVERFLOW otherwise): host root is not.  So the steps
 * that create (mkdir, the temp file, the rename onto a new name) run with
 * this thread's fsuid and fsgid set to the container's root.  That makes
 * it the owner of what is created, and drops the capabilities file access
 * would use, so the kernel checks permissions as for the container's root.
 * Per thread: the server's other threads are not affected.  Not needed
 * when the runner is not root: its own uid is the container's root.  */
struct sr_files_fsid
{
  const struct sr_fs_native *r;
  bool switched;
  uid_t uid;    /* what to go back to */
  gid_t gid;
};
void sr_files_fsid_enter (const struct sr_fs_native *r, struct sr_files_fsid *s);
void sr_files_fsid_leave (struct sr_files_fsid *s);

/* Opens the directory holding w's last component (*ret_name, pointing
 * into w->rel), creating the missing ones when create (run it between
 * sr_files_fsid_enter and leave then).  */
int sr_files_open_parent (const struct sr_files_where *w, bool create, int *ret_fd,
                          const char **ret_name, sr_error_t *err);

/* Writes data as name in parentfd through a temp file renamed over it: a
 * reader sees the old or the new content.  A symlink at name is
 * replaced, not followed; a replaced file keeps its mode and owner.  An
 * existing name is file_exists unless overwrite.  Runs between
 * sr_files_fsid_enter (fs) and leave.  */
int sr_files_write_atomic (struct sr_files_fsid *fs, int parentfd, const char *name,
                           const char *abs, const void *data, size_t len, bool overwrite,
                           sr_error_t *err);

/* sr_files_write_atomic of the file w names, parents created, as the
 * container's root.  */
int sr_files_write_path (const struct sr_fs_native *r, const struct sr_files_where *w,
                         const void *data, size_t len, bool overwrite, sr_error_t *err);

/* --- files-artifacts.c --- */

/* qsort's order of struct sr_artifact: by path.  */
int sr_files_compare_artifacts (const void *a, const void *b);

#endif
