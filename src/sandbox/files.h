/* Files inside a session's container: the artifacts (upload, list, read,
 * download) and the file tools (read lines, write, patch, search), written
 * once over the primitives of struct sr_fs_ops that each backend provides
 * for its boxes (sandbox/backend.h):
 *
 *   native  (files-native.c)  from the host, through two directory fds of
 *           the container: its root (/proc/<init>/root) and SR_DATA_DIR.
 *           Every path is resolved with openat2 and RESOLVE_IN_ROOT |
 *           RESOLVE_NO_MAGICLINKS against one of them, so `..`, absolute
 *           symlinks, /proc/<pid>/root links and symlinks swapped while we
 *           resolve never reach a host file; what is opened is checked on
 *           the open fd (fstat, fstatfs): only regular files are read or
 *           written, never on procfs or sysfs, and writes only land on the
 *           container's tmpfs mounts (/mnt/data, /tmp, /work, /scratch).  Opens use
 *           O_NONBLOCK so a FIFO cannot stall the caller.
 *   Docker  (docker-session.c)  small commands run inside the container as
 *           its user, whose own mount tree confines them.
 *   SSH     (ssh.c)  the same commands (files-script.c) run on the host
 *           as the remote account: nothing confines them, an SSH machine
 *           is no sandbox.
 *
 * Paths: a relative path is relative to SR_DATA_DIR.  The artifact
 * functions (sr_files_upload, sr_files_read_artifact, sr_files_list)
 * accept only paths inside SR_DATA_DIR ("chart.png", "out/x.csv",
 * "/mnt/data/chart.png"); the file tools (sr_files_read_lines,
 * sr_files_write, sr_files_patch, sr_files_search) accept absolute paths
 * anywhere in the container as well.  A path inside SR_DATA_DIR is
 * resolved against the data directory, so a symlink in it resolves with
 * SR_DATA_DIR as its root (a link to "/" names SR_DATA_DIR itself); other
 * absolute paths resolve against the container's root.  Components "."
 * and ".." are refused, not interpreted.
 *
 * A failure's error carries a code (common/error.h, sr_error_code):
 *   invalid_path          empty, NUL, a component "." / "..", too long
 *   path_outside_sandbox  resolution left the root, crossed a magic link,
 *                         or reached procfs/sysfs or a read-only area for
 *                         a write; an artifact path outside SR_DATA_DIR
 *   not_found             no such file or directory
 *   not_a_file            a directory, FIFO, device or socket
 *   file_exists           the target exists and overwrite was not asked
 *   offset_mismatch       sr_files_append: the file's size is not the
 *                         offset given
 *   file_too_large        over the size limit given
 *   quota_exceeded        the session's tmpfs is full (ENOSPC, EDQUOT)
 *   no_match              file_patch: old_string or a hunk not found
 *   ambiguous_match       file_patch: old_string found more than once,
 *                         or no exact match and more than one tolerant one
 *   lint_failed           file_write, file_patch: a .json, .yaml, .yml or
 *                         .toml file that does not parse (line, column)
 *   lint_unavailable      file_write, file_patch: a .toml file where no
 *                         python3 with tomllib runs to check it
 *   invalid_patch         file_patch: a malformed unified diff (or no
 *                         diff and no old_string/new_string, or an
 *                         empty old_string)
 *   invalid_pattern       file_search: the regular expression is invalid
 *   cancelled             file_search: the caller's cancel_fd said so
 *   io_error              anything else (the error says what)
 * and its message (errnum set where there is one) says it for people.  */
#ifndef SR_SANDBOX_FILES_H
#define SR_SANDBOX_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

/* The primitives a backend gives for one container's files.  Paths come
 * validated and absolute (no "." or "..", no empty components).  flags:
 *   SR_FS_DATA      the path was given inside SR_DATA_DIR and must resolve
 *                   (symlinks followed) inside it, else
 *                   path_outside_sandbox;
 *   SR_FS_NOFOLLOW  read the file itself, to replace it: a symlink at the
 *                   path is not_a_file (and a backend that can tell refuses
 *                   a file outside the writable areas, path_outside_sandbox);
 *   SR_FS_HEAD      read returns the first max bytes of a larger file
 *                   instead of file_too_large.
 * Each fails with the codes of the functions below.  */
#define SR_FS_DATA     1u
#define SR_FS_NOFOLLOW 2u
#define SR_FS_HEAD     4u

/* What a walk finds: a regular file at rel, relative to the walk's top
 * ("" when the top is that file), with its size, mtime and identity (its
 * hard links share dev and ino).  */
struct sr_fs_entry
{
  const char *rel;
  uint64_t size;
  int64_t mtime_ns;
  uint64_t dev, ino;
};
/* Returns 0 to go on, 1 to stop the walk.  */
typedef int (*sr_fs_visit_fn) (void *userdata, const struct sr_fs_entry *e);

struct sr_fs_ops
{
  /* A regular file's content, at most max bytes (file_too_large),
   * NUL-terminated past its length.  */
  int (*read) (void *ctx, const char *abs, unsigned flags, uint64_t max, char **ret,
               size_t *ret_len, sr_error_t *err);
  /* Writes atomically (a temp file renamed), parents created; a symlink
   * at abs is replaced, not followed; a replaced file keeps its mode.  */
  int (*write) (void *ctx, const char *abs, unsigned flags, const void *buf, size_t len,
                bool overwrite, sr_error_t *err);
  /* Visits the regular files below the directory abs (or abs itself, when
   * it is a file), in any order; symlinks not followed, names starting
   * ".sr-tmp-" (temp files of a write) and kernel file systems left out;
   * at most max_depth levels (*ret_truncated when deeper ones were left
   * out).  cancel_fd (-1: none) readable stops it: cancelled.  */
  int (*walk) (void *ctx, const char *abs, unsigned flags, unsigned max_depth, int cancel_fd,
               sr_fs_visit_fn visit, void *userdata, bool *ret_truncated, sr_error_t *err);
  /* A readable fd of a regular file, *ret_size its size: the file itself,
   * or a copy (sr_files_copy_fd) where the host cannot open it.  */
  int (*open) (void *ctx, const char *abs, unsigned flags, uint64_t *ret_size, sr_error_t *err);
};

struct sr_exec_spec;
struct sr_run_options;
struct sr_run_result;
/* One command run where the files are (a session's sr_session_exec).  */
typedef int (*sr_fs_exec_fn) (void *ctx, const struct sr_exec_spec *spec,
                              const struct sr_run_options *opts, struct sr_run_result *res,
                              sr_error_t *err);

/* One container's files: its primitives and their context (a backend's
 * box), and how a command runs there (NULL: it cannot), for the checks
 * that need one (TOML, sr_files_lint).  */
struct sr_fsroot
{
  const struct sr_fs_ops *ops;
  void *ctx;
  sr_fs_exec_fn exec;
  void *exec_ctx;
};

/* The native primitives' context: the container's / and SR_DATA_DIR
 * inside it (O_PATH directories, the caller's), the owner given to
 * files the host creates, as the host sees it (a root runner's fsuid);
 * and the container its writes are charged to (sr_container_charged:
 * an upload counts against the session's memory, not the server's), or
 * NULL to write in the caller.  With as_user (and charge_to), writes run
 * as user_uid:user_gid inside charge_to's user namespace instead
 * (sr_container_charged_as; sr_policy_ids_writes_inside says when).  */
struct sr_container;
struct sr_fs_native
{
  int rootfd;
  int datafd;
  uid_t uid;
  gid_t gid;
  struct sr_container *charge_to;
  bool as_user;
  uid_t user_uid;
  gid_t user_gid;
};
extern const struct sr_fs_ops sr_fs_native_ops;

/* The largest file a backend copies for open (sr_files_copy_fd).  */
#define SR_FS_COPY_MAX (256ull << 20)
/* An fd (a memfd) holding data, positioned at its start, for the open of
 * a backend that cannot hand out the file itself; *ret_size gets len.  */
int sr_files_copy_fd (const char *abs, const void *data, size_t len, uint64_t *ret_size,
                      sr_error_t *err);

struct sr_artifact;

/* One entry of the data directory, path relative to SR_DATA_DIR.  */
struct sr_artifact
{
  char *path;
  uint64_t size;
  int64_t mtime_ns;     /* nanoseconds since the epoch */
  uint64_t dev, ino;
  bool hashed;          /* modified too recently for its mtime to date it:
                         * digest is of its content when listed */
  uint64_t digest;
  char *mime_type;      /* NULL until sr_files_mime fills it */
};
void sr_artifacts_free (struct sr_artifact *v, size_t n);

/* Every regular file under SR_DATA_DIR, sorted by path; at most
 * SR_MAX_ARTIFACTS entries and SR_MAX_ARTIFACT_DEPTH levels (deeper or
 * further entries are left out; *ret_truncated says so).  Symlinks are
 * not followed.  with_mime fills mime_type.  */
int sr_files_list (const struct sr_fsroot *r, bool with_mime, struct sr_artifact **ret,
                   size_t *ret_n, bool *ret_truncated, sr_error_t *err);

/* The entries of after (listed from r) that are not in before, or that
 * changed; both sorted by path as sr_files_list returns them.  A file
 * changed when its size, mtime or inode did, or, when before hashed it
 * (a file's timestamp is coarse: a rewrite of the same size moments later
 * can keep it; sr_files_list hashes the files of a native root changed in
 * the last second), when its content now hashes otherwise.  Copies into
 * *ret.  */
void sr_artifacts_changed (const struct sr_fsroot *r, const struct sr_artifact *before,
                           size_t n_before, const struct sr_artifact *after, size_t n_after,
                           struct sr_artifact **ret, size_t *ret_n);

/* The MIME type of an open regular file (libmagic), e.g. "image/png";
 * "application/octet-stream" when unknown.  Reads the file's start with
 * pread, so the fd's offset is left alone.  Thread-safe.  */
char *sr_files_mime (int fd);

/* Writes data to path inside SR_DATA_DIR, atomically (a temp file renamed
 * into place), creating parent directories.  An existing file is an
 * error (file_exists) unless overwrite.  *ret_path gets the absolute path
 * inside the container ("/mnt/data/x.csv").  */
int sr_files_upload (const struct sr_fsroot *r, const char *path, const void *data, size_t len,
                     bool overwrite, char **ret_path, sr_error_t *err);

/* Appends data to the file at path inside SR_DATA_DIR (a piece of an
 * upload), which must hold exactly offset bytes: else offset_mismatch,
 * whose message names its size (not_found when there is no file).  The
 * whole is rewritten atomically as by sr_files_upload, so a piece that
 * fails leaves the file as it was; each piece costs a read and a write of
 * what is there already.  The result may be at most max_size bytes
 * (file_too_large).  *ret_path as sr_files_upload.  */
int sr_files_append (const struct sr_fsroot *r, const char *path, uint64_t offset,
                     const void *data, size_t len, uint64_t max_size, char **ret_path,
                     sr_error_t *err);

/* A piece of a regular file inside SR_DATA_DIR: at most length bytes
 * from offset (fewer at its end, none from past it) into *ret_data
 * (NUL-terminated past *ret_len), the file's size into *ret_size and its
 * MIME type (of its first bytes) into *ret_mime.  A file over max_size
 * bytes is file_too_large.  */
int sr_files_read_piece (const struct sr_fsroot *r, const char *path, uint64_t max_size,
                         uint64_t offset, size_t length, char **ret_data, size_t *ret_len,
                         uint64_t *ret_size, char **ret_mime, sr_error_t *err);

/* The content of a regular file inside SR_DATA_DIR, at most max_size
 * bytes (file_too_large past it), and its MIME type.  */
int sr_files_read_artifact (const struct sr_fsroot *r, const char *path, uint64_t max_size,
                            char **ret_data, size_t *ret_len, char **ret_mime,
                            sr_error_t *err);

/* Opens a regular file inside SR_DATA_DIR for reading (HTTP download);
 * *ret_size gets its size.  Where the host cannot open the container's
 * files (Docker) the fd is a copy of the file, at most SR_FS_COPY_MAX
 * bytes.  */
int sr_files_open_artifact (const struct sr_fsroot *r, const char *path, uint64_t *ret_size,
                            sr_error_t *err);

/* file_read: lines [offset, offset + limit) of a text file (offset counts
 * from 1; limit 0: to the end), each as "%6u\t<line>\n" like cat -n, in
 * *ret_text; *ret_total_lines is the file's line count.  The file may be
 * at most max_size bytes.  */
int sr_files_read_lines (const struct sr_fsroot *r, const char *path, uint64_t offset,
                         uint64_t limit, uint64_t max_size, char **ret_text,
                         uint64_t *ret_total_lines, sr_error_t *err);

/* file_write: the whole content, atomically, parents created; an existing
 * file is replaced (keeping its mode and owner).  A symlink at path is
 * replaced too, not followed; so is it by sr_files_upload with
 * overwrite.  */
int sr_files_write (const struct sr_fsroot *r, const char *path, const char *content,
                    size_t len, char **ret_path, sr_error_t *err);

/* What looks like a secret at path (SSH and cloud credentials, .env
 * files, /etc/shadow, private keys, ...), for an advisory warning; NULL
 * when nothing does.  One table, in files-check.c.  */
const char *sr_files_sensitive (const char *path);

/* The syntax a file's name asks to be checked before it is written.  */
enum sr_lint_kind
{
  SR_LINT_NONE,
  SR_LINT_JSON,   /* .json, with cJSON */
  SR_LINT_YAML,   /* .yaml, .yml, with libyaml (every document) */
  SR_LINT_TOML,   /* .toml, with python3's tomllib where the file is (r->exec) */
};
enum sr_lint_kind sr_files_lint_kind (const char *path);
/* 0 when content parses as the syntax abs's name asks for (or none);
 * else lint_failed, its message naming the line and column, or
 * lint_unavailable for TOML where no python3 with tomllib runs (the file
 * is refused rather than written unchecked).  r may be NULL but for
 * TOML.  */
int sr_files_lint (const struct sr_fsroot *r, const char *abs, const char *content, size_t len,
                   sr_error_t *err);

/* file_patch: what to change, and what was done.  */
struct sr_patch
{
  /* String mode (diff NULL): old_string replaced by new_string. */
  const char *old_string, *new_string;
  bool replace_all;
  /* Unified-diff mode (old_string and new_string NULL).  */
  const char *diff;
  uint64_t max_size;     /* of the file */
  bool lint;             /* check the result with sr_files_lint before writing it */
  /* Out.  */
  unsigned replacements; /* replacements, or hunks applied */
  bool fuzzy;            /* old_string matched only with indentation and line
                          * endings tolerated */
};

/* file_patch, string mode: old_string must occur exactly once unless
 * replace_all.  When it does not occur at all, it is looked for again
 * line by line, ignoring each line's leading white space and CR LF
 * against LF; one such match (never more) is replaced, new_string
 * re-indented as the file's lines are and its line endings made the
 * file's (fuzzy).  A UTF-8 BOM is kept.  Unified-diff mode: applies
 * every hunk of the diff to the file (its ---/+++ headers are optional
 * and ignored; a hunk whose lines are not found at or near its line
 * number is no_match; its line counts are recounted from its lines, not
 * trusted).  path must name a regular file itself: a symlink is
 * not_a_file.  The result is written atomically.  */
int sr_files_patch (const struct sr_fsroot *r, const char *path, struct sr_patch *p,
                    sr_error_t *err);

struct sr_file_match
{
  char *path;           /* absolute inside the container */
  int64_t mtime_ns;     /* of the file, when the search found it */
  uint64_t line;        /* from 1 */
  char *text;           /* the line, at most 500 bytes */
};
void sr_file_matches_free (struct sr_file_match *v, size_t n);

/* What one file_search may do.  */
struct sr_search_limits
{
  uint64_t max_size;    /* larger files are skipped */
  size_t max_matches;
  uint64_t max_bytes;   /* of file content read in all */
  int cancel_fd;        /* readable: give up (cancelled); -1: none */
  uint64_t max_ms;      /* of the whole search (timeout); 0: no limit */
};

/* What it found; v is the caller's (sr_file_matches_free (v, n)).  */
struct sr_search_result
{
  struct sr_file_match *v;
  size_t n;
  bool truncated;       /* a limit left matches out */
  uint64_t bytes_read;  /* of file content */
  size_t files_read;
};

/* file_search: lines matching the Perl-compatible regular expression
 * pattern (PCRE2, UTF-8) in the regular files under dir (default SR_DATA_DIR) whose
 * name matches glob (fnmatch on the base name; NULL: every file), the
 * most recently modified files first (then in path order), so that a
 * limit keeps the newest.
 * Binary files (a NUL in the first 8 KiB) and files over max_size are
 * skipped; symlinks are not followed, kernel file systems (procfs, sysfs)
 * not entered.  dir may name one file: it is searched whatever glob says.
 * A file with several hard links is read once, under the first of its
 * paths in path order.  At most max_matches results, SR_MAX_ARTIFACTS
 * files found, max_bytes read (a file that would go past it is not read)
 * and SR_MAX_ARTIFACT_DEPTH levels walked (truncated then).  Matching
 * is bounded: a line whose match backtracks without end fails the search
 * with code pattern_too_complex, and searching past max_ms with code
 * search_timeout; both name the file and line.  */
int sr_files_search (const struct sr_fsroot *r, const char *pattern, const char *glob,
                     const char *dir, const struct sr_search_limits *lim,
                     struct sr_search_result *ret, sr_error_t *err);

#endif
