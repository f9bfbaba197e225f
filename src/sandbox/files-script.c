/* The file primitives as scripts run where the files are
 * (sandbox/files-script.h), moved here from the Docker backend so that
 * the SSH one shares them.  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/files-script.h"

/* A file operation is a few small commands; one that takes this long
 * means a daemon, container or host in trouble.  */
#define FS_TIMEOUT_MS 60000u
/* The most a listing may print (SR_MAX_ARTIFACTS short entries).  */
#define WALK_MAX_OUTPUT (16u << 20)

/* What the scripts' exit codes mean (anything else: io_error, or what
 * stderr shows).  */
enum
{
  X_NOT_FOUND = 3,
  X_NOT_A_FILE = 4,
  X_EXISTS = 5,
  X_OUTSIDE = 6,
  X_TOO_LARGE = 7,
  X_IO = 9,
  X_FSIZE = 10,
};

/* Shared by every script: check PATH FLAGS refuses a resolved path on a
 * kernel file system, or outside SR_DATA_DIR when FLAGS has SR_FS_DATA.  */
#define SH_CHECK                                                                         \
  "check () {\n"                                                                         \
  "  case $1 in /proc|/proc/*|/sys|/sys/*)\n"                                            \
  "    echo \"$1 is on a kernel file system\" >&2; return 1;; esac\n"                    \
  "  if [ $(($2 & 1)) -ne 0 ]; then case $1 in " SR_DATA_DIR "|" SR_DATA_DIR "/*) ;;\n" \
  "    *) echo \"$1 is outside " SR_DATA_DIR "\" >&2; return 1;; esac; fi\n"            \
  "}\n"

/* read PATH FLAGS MAX: the file's content on stdout.  */
static const char read_script[] =
  SH_CHECK
  "p=$1 f=$2 max=$3\n"
  "if [ $((f & 2)) -ne 0 ] && [ -L \"$p\" ]; then echo \"$p is a symlink\" >&2; exit 4; fi\n"
  "r=$(realpath -e -- \"$p\" 2>/dev/null) ||\n"
  "  { echo \"$p: no such file or directory\" >&2; exit 3; }\n"
  "check \"$r\" \"$f\" || exit 6\n"
  "[ -d \"$r\" ] && { echo \"$p is a directory\" >&2; exit 4; }\n"
  "[ -f \"$r\" ] || { echo \"$p is not a regular file\" >&2; exit 4; }\n"
  "s=$(stat -L -c %s -- \"$r\") || exit 9\n"
  "if [ \"$s\" -gt \"$max\" ] && [ $((f & 4)) -eq 0 ]; then echo \"$s\" >&2; exit 7; fi\n"
  "exec head -c \"$max\" -- \"$r\"\n";

/* write PATH FLAGS OVERWRITE FINAL TMP CHUNK...: the first call (TMP "")
 * checks and makes the temp file (printing its name), every call appends
 * its base64 chunks, the FINAL one renames it into place.  */
static const char write_script[] =
  SH_CHECK
  "p=$1 f=$2 ow=$3 fin=$4 t=$5; shift 5\n"
  "d=${p%/*}; n=${p##*/}; [ -n \"$d\" ] || d=/\n"
  "if [ -z \"$t\" ]; then\n"
  "  mkdir -p -- \"$d\" || exit 9\n"
  "  rd=$(realpath -e -- \"$d\") || exit 3\n"
  "  check \"${rd%/}/$n\" \"$f\" || exit 6\n"
  "  if [ -d \"$p\" ] && [ ! -L \"$p\" ]; then echo \"$p is a directory\" >&2; exit 4; fi\n"
  "  if [ \"$ow\" = 0 ] && { [ -e \"$p\" ] || [ -L \"$p\" ]; }; then\n"
  "    echo \"$p exists\" >&2; exit 5; fi\n"
  "  t=$(mktemp -- \"${rd%/}/.sr-tmp-XXXXXXXX\") || exit 9\n"
  "  chmod 644 -- \"$t\"\n"
  "  if [ -f \"$p\" ] && [ ! -L \"$p\" ]; then chmod --reference=\"$p\" -- \"$t\" 2>/dev/null; fi\n"
  "  echo \"$t\"\n"
  "fi\n"
  "for c; do\n"
  "  printf %s \"$c\" | base64 -d >>\"$t\"; st=$?\n"
  "  if [ $st -ne 0 ]; then rm -f -- \"$t\"; [ $st -eq 153 ] && exit 10; exit 9; fi\n"
  "done\n"
  "[ \"$fin\" = 1 ] || exit 0\n"
  "if [ \"$ow\" = 1 ]; then mv -fT -- \"$t\" \"$p\" || { rm -f -- \"$t\"; exit 9; }\n"
  "else mv -nT -- \"$t\" \"$p\"\n"
  "  if [ -e \"$t\" ]; then rm -f -- \"$t\"; echo \"$p exists\" >&2; exit 5; fi\n"
  "fi\n";

/* walk PATH FLAGS DEPTH: "f SIZE MTIME DEV INO PATH\0" and
 * "d 0 0 0 0 PATH\0" below PATH, or one "f SIZE MTIME DEV INO \0" when
 * PATH is a file.  */
static const char walk_script[] =
  SH_CHECK
  "p=$1 f=$2 md=$3\n"
  "r=$(realpath -e -- \"$p\" 2>/dev/null) ||\n"
  "  { echo \"$p: no such file or directory\" >&2; exit 3; }\n"
  "check \"$r\" \"$f\" || exit 6\n"
  "if [ -f \"$r\" ]; then exec find \"$r\" -maxdepth 0 -printf 'f %s %T@ %D %i \\0'; fi\n"
  "[ -d \"$r\" ] || { echo \"$p is not a regular file\" >&2; exit 4; }\n"
  "cd -- \"$r\" || exit 9\n"
  "exec find . -mindepth 1 -maxdepth \"$md\""
  " \\( -fstype proc -o -fstype sysfs -o -name '.sr-tmp-*' \\) -prune"
  " -o -type f -printf 'f %s %T@ %D %i %P\\0' -o -type d -printf 'd 0 0 0 0 %P\\0'"
  " 2>/dev/null\n";

/* A script that could not run is an io_error, unless the box said why
 * in a code of its own (machine_stopped: the file tools pass it on).  */
static int
run_failed (sr_error_t *err)
{
  return sr_error_code (err ? *err : NULL) ? -1 : sr_error_recode (err, "io_error");
}

/* Runs script with args where the box's files are; its stdout kept up
 * to max_out bytes.  cancel_fd (-1: none) readable stops it.  */
static int
run_script (const struct sr_fs_script *fsx, const char *script, char *const *args,
            size_t max_out, int cancel_fd, struct sr_run_result *res, sr_error_t *err)
{
  _cleanup_strv_ char **argv = NULL;

  memset (res, 0, sizeof *res);
  sr_strv_push (&argv, "sh");
  sr_strv_push (&argv, "-c");
  sr_strv_push (&argv, script);
  sr_strv_push (&argv, "sh");
  for (size_t i = 0; args[i]; i++)
    sr_strv_push (&argv, args[i]);
  return fsx->run (fsx->ctx, argv, FS_TIMEOUT_MS, max_out ? max_out : 1, cancel_fd, res, err);
}

/* The first line of what a script said on stderr.  */
static char *
said (const struct sr_run_result *res)
{
  const char *t = res->err.data ? res->err.data : "";
  size_t n = strcspn (t, "\n");

  return sr_xasprintf ("%.*s", (int) (n > 400 ? 400 : n), t);
}

/* The outcome of a script as files.h's codes.  */
static int
script_result (const struct sr_run_result *res, const char *what, const char *abs,
               sr_error_t *err)
{
  _cleanup_free_ char *msg = said (res);
  int x = res->exit_code;

  if (res->status == SR_RUN_SUCCESS)
    return 0;
  if (res->status == SR_RUN_CANCELLED)
    return sr_error_set_code (err, "cancelled", ECANCELED, "%s %s: cancelled", what, abs);
  if (res->status == SR_RUN_TIMEOUT)
    return sr_error_set_code (err, "io_error", ETIMEDOUT, "%s %s: no answer within %u ms", what,
                              abs, FS_TIMEOUT_MS);
  if (res->signal == SIGXFSZ || x == X_FSIZE)
    return sr_error_set_code (err, "file_too_large", EFBIG,
                              "%s %s: over the file size limit", what, abs);
  if (strstr (msg, "No space left on device") || strstr (msg, "Disk quota exceeded"))
    return sr_error_set_code (err, "quota_exceeded", ENOSPC,
                              "%s %s: no space left there", what, abs);
  if (strstr (msg, "Read-only file system"))
    return sr_error_set_code (err, "path_outside_sandbox", EROFS,
                              "%s %s: a read-only file system", what, abs);
  switch (x)
    {
    case X_NOT_FOUND:
      return sr_error_set_code (err, "not_found", ENOENT, "%s: no such file or directory", abs);
    case X_NOT_A_FILE:
      return sr_error_set_code (err, "not_a_file", 0, "%s", msg);
    case X_EXISTS:
      return sr_error_set_code (err, "file_exists", EEXIST,
                                "%s exists; give overwrite to replace it", abs);
    case X_OUTSIDE:
      return sr_error_set_code (err, "path_outside_sandbox", 0, "%s: %s", abs, msg);
    default:
      if (strstr (msg, "Not a directory") || strstr (msg, "No such file"))
        return sr_error_set_code (err, "not_found", ENOENT, "%s %s: %s", what, abs, msg);
      return sr_error_set_code (err, "io_error", EIO, "%s %s: %s (exit %d)", what, abs,
                                *msg ? msg : "failed", res->signal ? 128 + res->signal : x);
    }
}

static int
fs_read (void *ctx, const char *abs, unsigned flags, uint64_t max, char **ret, size_t *ret_len,
         sr_error_t *err)
{
  const struct sr_fs_script *fsx = ctx;
  char flags_s[16], max_s[24];
  char *args[] = { (char *) abs, flags_s, max_s, NULL };
  struct sr_run_result res;
  int r;

  snprintf (flags_s, sizeof flags_s, "%u", flags);
  snprintf (max_s, sizeof max_s, "%" PRIu64, max);
  if (run_script (fsx, read_script, args, max + 1, -1, &res, err) < 0)
    {
      sr_run_result_done (&res);
      return run_failed (err);
    }
  r = script_result (&res, "read", abs, err);
  if (r == 0 && res.exit_code == 0 && res.status == SR_RUN_SUCCESS && res.out.truncated)
    r = sr_error_set_code (err, "file_too_large", EFBIG,
                           "%s grew over the limit of %" PRIu64 " bytes while read", abs, max);
  else if (r < 0 && res.exit_code == X_TOO_LARGE)
    {
      _cleanup_free_ char *size = said (&res);

      sr_error_free (err);
      r = sr_error_set_code (err, "file_too_large", EFBIG,
                             "%s is %s bytes, over the limit of %" PRIu64 " bytes", abs, size, max);
    }
  if (r == 0)
    {
      /* NUL-terminated past its length, as the file tools' readers expect.  */
      *ret_len = res.out.len;
      *ret = TAKE_PTR (res.out.data);
    }
  sr_run_result_done (&res);
  return r;
}

static int
fs_write (void *ctx, const char *abs, unsigned flags, const void *buf, size_t len,
          bool overwrite, sr_error_t *err)
{
  const struct sr_fs_script *fsx = ctx;
  const unsigned char *p = buf;
  _cleanup_free_ char *tmp = NULL;
  char flags_s[16];
  size_t off = 0;
  int r = 0;

  snprintf (flags_s, sizeof flags_s, "%u", flags);
  do
    {
      _cleanup_strv_ char **args = NULL;
      struct sr_run_result res;
      bool final;

      sr_strv_push (&args, abs);
      sr_strv_push (&args, flags_s);
      sr_strv_push (&args, overwrite ? "1" : "0");
      sr_strv_push (&args, "0");  /* FINAL, set below */
      sr_strv_push (&args, tmp ? tmp : "");
      for (unsigned i = 0; i < fsx->chunks_per_run && off < len; i++)
        {
          size_t n = len - off < fsx->chunk_raw ? len - off : fsx->chunk_raw;
          _cleanup_free_ char *b64 = sr_base64_encode (p + off, n);

          sr_strv_push (&args, b64);
          off += n;
        }
      final = off >= len;
      if (final)
        args[3][0] = '1';
      if (run_script (fsx, write_script, args, 4096, -1, &res, err) < 0)
        {
          sr_run_result_done (&res);
          return run_failed (err);
        }
      r = script_result (&res, "write", abs, err);
      if (r == 0 && tmp == NULL)
        {
          size_t n = strcspn (res.out.data, "\n");

          tmp = sr_xasprintf ("%.*s", (int) n, res.out.data);
        }
      sr_run_result_done (&res);
    }
  while (r == 0 && off < len);
  return r;
}

/* "1701600000.1234567890" as nanoseconds.  */
static int64_t
parse_mtime (const char *s)
{
  char *end;
  int64_t sec = strtoll (s, &end, 10), ns = 0;

  if (*end == '.')
    {
      int64_t scale = 100000000;

      for (const char *q = end + 1; *q >= '0' && *q <= '9' && scale; q++, scale /= 10)
        ns += (*q - '0') * scale;
    }
  return sec * 1000000000 + ns;
}

static int
fs_walk (void *ctx, const char *abs, unsigned flags, unsigned max_depth, int cancel_fd,
         sr_fs_visit_fn visit, void *userdata, bool *ret_truncated, sr_error_t *err)
{
  const struct sr_fs_script *fsx = ctx;
  char flags_s[16], depth_s[16];
  char *args[] = { (char *) abs, flags_s, depth_s, NULL };
  struct sr_run_result res;
  bool truncated;

  snprintf (flags_s, sizeof flags_s, "%u", flags);
  snprintf (depth_s, sizeof depth_s, "%u", max_depth);
  if (run_script (fsx, walk_script, args, WALK_MAX_OUTPUT, cancel_fd, &res, err) < 0)
    {
      sr_run_result_done (&res);
      return run_failed (err);
    }
  if (script_result (&res, "list", abs, err) < 0)
    {
      sr_run_result_done (&res);
      return -1;
    }
  truncated = res.out.truncated;
  for (size_t pos = 0; pos < res.out.len;)
    {
      const char *e = res.out.data + pos;
      size_t elen = strnlen (e, res.out.len - pos);
      unsigned long long size, dev, ino;
      char kind, mtime[64];
      struct sr_fs_entry entry;
      int off = 0;

      pos += elen + 1;
      if (pos > res.out.len
          || sscanf (e, "%c %llu %63s %llu %llu %n", &kind, &size, mtime, &dev, &ino, &off) < 5
          || off == 0)
        continue;
      if (kind == 'd')
        {
          /* A directory as deep as the walk goes: what is below it is
           * left out, as native does.  */
          unsigned depth = 1;

          for (const char *q = e + off; *q; q++)
            depth += *q == '/';
          if (depth >= max_depth)
            truncated = true;
          continue;
        }
      entry = (struct sr_fs_entry){ .rel = e + off, .size = size,
                                    .mtime_ns = parse_mtime (mtime), .dev = dev, .ino = ino };
      if (visit (userdata, &entry) != 0)
        break;
    }
  sr_run_result_done (&res);
  *ret_truncated = truncated;
  return 0;
}

/* The host cannot open the box's files: a copy of the file.  */
static int
fs_open (void *ctx, const char *abs, unsigned flags, uint64_t *ret_size, sr_error_t *err)
{
  _cleanup_free_ char *data = NULL;
  size_t len;

  if (fs_read (ctx, abs, flags, SR_FS_COPY_MAX, &data, &len, err) < 0)
    return -1;
  return sr_files_copy_fd (abs, data, len, ret_size, err);
}

const struct sr_fs_ops sr_fs_script_ops = {
  .read = fs_read,
  .write = fs_write,
  .walk = fs_walk,
  .open = fs_open,
};

