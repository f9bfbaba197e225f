#include <config.h>

#include <dirent.h>
#include <sys/syscall.h>
#include <linux/openat2.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "common/util.h"

void
sr_env_set (char ***env, const char *kv)
{
  const char *eq = strchr (kv, '=');
  size_t key_len = eq ? (size_t) (eq - kv) + 1 : strlen (kv);

  for (char **e = *env; e && *e; e++)
    if (strncmp (*e, kv, key_len) == 0)
      {
        free (*e);
        *e = sr_xstrdup (kv);
        return;
      }
  sr_strv_push (env, kv);
}

void
sr_strv_free (char **v)
{
  if (v == NULL)
    return;
  for (char **p = v; *p; p++)
    free (*p);
  free (v);
}

size_t
sr_strv_length (char *const *v)
{
  size_t n = 0;

  while (v && v[n])
    n++;
  return n;
}

void
sr_strv_push (char ***v, const char *s)
{
  size_t n = sr_strv_length (*v);

  *v = sr_xrealloc (*v, (n + 2) * sizeof (char *));
  (*v)[n] = sr_xstrdup (s);
  (*v)[n + 1] = NULL;
}

int
sr_write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;

  while (len > 0)
    {
      ssize_t w = write (fd, p, len);

      if (w < 0)
        {
          if (errno == EINTR)
            continue;
          return -1;
        }
      p += w;
      len -= (size_t) w;
    }
  return 0;
}

int
sr_write_file (const char *path, const char *s, sr_error_t *err)
{
  _cleanup_close_ int fd = open (path, O_WRONLY | O_CLOEXEC | O_NOCTTY);

  if (fd < 0)
    return sr_error_set (err, errno, "open %s", path);
  if (sr_write_all (fd, s, strlen (s)) < 0)
    return sr_error_set (err, errno, "write %s", path);
  return 0;
}

int
sr_read_fd (int fd, size_t limit, char **ret, size_t *ret_len)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0, cap = 0;

  while (len < limit)
    {
      size_t want;
      ssize_t r;

      if (cap - len < 4096)
        {
          cap = cap ? cap * 2 : 8192;
          buf = sr_xrealloc (buf, cap);
        }
      want = cap - len - 1;
      if (want > limit - len)
        want = limit - len;
      r = read (fd, buf + len, want);
      if (r < 0)
        {
          if (errno == EINTR)
            continue;
          return -1;
        }
      if (r == 0)
        break;
      len += (size_t) r;
    }
  if (buf == NULL)
    buf = sr_xmalloc (1);
  buf[len] = '\0';
  if (ret_len)
    *ret_len = len;
  *ret = TAKE_PTR (buf);
  return 0;
}

int
sr_read_file (const char *path, char **ret, size_t *ret_len, sr_error_t *err)
{
  _cleanup_close_ int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

  if (fd < 0)
    return sr_error_set (err, errno, "open %s", path);
  if (sr_read_fd (fd, SIZE_MAX, ret, ret_len) < 0)
    return sr_error_set (err, errno, "read %s", path);
  return 0;
}

bool
sr_cancel_requested (int cancel_fd)
{
  struct pollfd pfd = { .fd = cancel_fd, .events = POLLIN };

  return cancel_fd >= 0 && poll (&pfd, 1, 0) > 0;
}

uint64_t
sr_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

int64_t
sr_now_realtime_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_REALTIME, &ts);
  return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void
sr_deadline_after (clockid_t clock, uint64_t ms, struct timespec *ret)
{
  clock_gettime (clock, ret);
  ret->tv_sec += (time_t) (ms / 1000);
  ret->tv_nsec += (long) (ms % 1000) * 1000000L;
  if (ret->tv_nsec >= 1000000000L)
    {
      ret->tv_sec++;
      ret->tv_nsec -= 1000000000L;
    }
}

int
sr_parse_size (const char *s, uint64_t *ret)
{
  char *end = NULL;
  unsigned long long v;
  uint64_t mult = 1;

  if (s == NULL || *s < '0' || *s > '9')
    return -EINVAL;
  errno = 0;
  v = strtoull (s, &end, 10);
  if (errno != 0)
    return -ERANGE;
  switch (*end)
    {
    case '\0':
      break;
    case 'k': case 'K': mult = 1ULL << 10; end++; break;
    case 'm': case 'M': mult = 1ULL << 20; end++; break;
    case 'g': case 'G': mult = 1ULL << 30; end++; break;
    default:
      return -EINVAL;
    }
  if (*end == 'i' || *end == 'B' || *end == 'b')
    end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
  if (*end != '\0')
    return -EINVAL;
  if (v > UINT64_MAX / mult)
    return -ERANGE;
  *ret = v * mult;
  return 0;
}

int
sr_parse_seconds (const char *s, uint64_t *ret_ms)
{
  char *end = NULL;
  double v;

  if (s == NULL || *s < '0' || *s > '9')
    return -EINVAL;
  errno = 0;
  v = strtod (s, &end);
  if (errno != 0 || *end != '\0' || !isfinite (v) || v < 0 || v > 1e9)
    return -EINVAL;
  *ret_ms = (uint64_t) llround (v * 1000.0);
  return 0;
}

bool
sr_is_dir (const char *path)
{
  struct stat st;

  if (stat (path, &st) < 0)
    return false;
  if (!S_ISDIR (st.st_mode))
    {
      errno = ENOTDIR;
      return false;
    }
  return true;
}

int
sr_mkdir_p (const char *dir, sr_error_t *err)
{
  _cleanup_free_ char *copy = sr_xstrdup (dir);

  for (char *p = copy + 1; *p; p++)
    if (*p == '/')
      {
        *p = '\0';
        if (mkdir (copy, 0755) < 0 && errno != EEXIST)
          return sr_error_set (err, errno, "mkdir %s", copy);
        *p = '/';
      }
  if (mkdir (copy, 0700) < 0 && errno != EEXIST)
    return sr_error_set (err, errno, "mkdir %s", copy);
  return 0;
}

/* Empties the directory open as dfd (which it takes over).  Directories
 * without write or search permission for their owner get it first, so
 * that a tree we own but locked (0555) can go.  Never leaves the file
 * system it started on.  */
static int
empty_dir_fd (int dfd, dev_t dev, sr_error_t *err)
{
  DIR *d;
  struct dirent *de;
  int r = 0;

  d = fdopendir (dfd);
  if (d == NULL)
    {
      int e = errno;

      close (dfd);
      return sr_error_set (err, e, "fdopendir");
    }
  while ((errno = 0, de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (sr_rm_rf_at_dev (dirfd (d), de->d_name, dev, err) < 0)
        {
          r = -1;
          break;
        }
    }
  if (r == 0 && errno != 0)
    r = sr_error_set (err, errno, "readdir");
  closedir (d);
  return r;
}

int
sr_rm_rf_at_dev (int dirfd, const char *name, dev_t dev, sr_error_t *err)
{
  struct stat sb;
  int fd;

  if (fstatat (dirfd, name, &sb, AT_SYMLINK_NOFOLLOW) < 0)
    return errno == ENOENT ? 0 : sr_error_set (err, errno, "stat %s", name);
  if (!S_ISDIR (sb.st_mode))
    {
      if (unlinkat (dirfd, name, 0) < 0 && errno != ENOENT)
        return sr_error_set (err, errno, "remove %s", name);
      return 0;
    }
  if (dev != 0 && sb.st_dev != dev)
    return sr_error_set (err, EXDEV, "remove %s: a mount point", name);
  fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return sr_error_set (err, errno, "open %s", name);
  if ((sb.st_mode & 0700) != 0700 && sb.st_uid == geteuid ())
    (void) fchmod (fd, (sb.st_mode & 07777) | 0700);
  if (empty_dir_fd (fd, sb.st_dev, err) < 0)
    return sr_error_wrap (err, "%s", name);
  if (unlinkat (dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
    return sr_error_set (err, errno, "remove %s", name);
  return 0;
}

int
sr_rm_rf_at (int dirfd, const char *name, sr_error_t *err)
{
  return sr_rm_rf_at_dev (dirfd, name, 0, err);
}

int
sr_empty_dir_at (int dirfd, const char *name, sr_error_t *err)
{
  struct stat sb;
  int fd = openat (dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    return sr_error_set (err, errno, "open %s", name);
  if (fstat (fd, &sb) < 0)
    {
      int e = errno;

      close (fd);
      return sr_error_set (err, e, "stat %s", name);
    }
  if ((sb.st_mode & 0700) != 0700 && sb.st_uid == geteuid ())
    (void) fchmod (fd, (sb.st_mode & 07777) | 0700);
  return empty_dir_fd (fd, sb.st_dev, err);
}

int
sr_base64_decode (const char *text, size_t len, char **ret, size_t *ret_len)
{
  _cleanup_free_ char *out = sr_xmalloc (len / 4 * 3 + 3);
  size_t n = 0, pad = 0;
  uint32_t acc = 0;
  unsigned bits = 0, group = 0;

  for (size_t i = 0; i < len; i++)
    {
      unsigned char ch = (unsigned char) text[i];
      int v;

      if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
        continue;
      if (ch == '=')
        {
          pad++;
          continue;
        }
      if (pad)
        goto invalid;   /* data after padding */
      if (ch >= 'A' && ch <= 'Z')
        v = ch - 'A';
      else if (ch >= 'a' && ch <= 'z')
        v = ch - 'a' + 26;
      else if (ch >= '0' && ch <= '9')
        v = ch - '0' + 52;
      else if (ch == '+')
        v = 62;
      else if (ch == '/')
        v = 63;
      else
        goto invalid;
      acc = acc << 6 | (uint32_t) v;
      bits += 6;
      group = (group + 1) % 4;
      if (bits >= 8)
        {
          bits -= 8;
          out[n++] = (char) (acc >> bits);
          acc &= (1u << bits) - 1;
        }
    }
  /* One character alone in its group carries no whole byte; padding may
   * only complete the last group.  */
  if (group == 1 || pad > 2 || (pad && (group + pad) % 4 != 0))
    goto invalid;
  *ret = TAKE_PTR (out);
  *ret_len = n;
  return 0;

invalid:
  errno = EINVAL;
  return -1;
}

char *
sr_base64_encode (const void *buf, size_t len)
{
  static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const unsigned char *p = buf;
  char *out = sr_xmalloc (4 * ((len + 2) / 3) + 1), *o = out;

  for (size_t i = 0; i < len; i += 3)
    {
      uint32_t v = (uint32_t) p[i] << 16 | (i + 1 < len ? (uint32_t) p[i + 1] << 8 : 0)
                   | (i + 2 < len ? p[i + 2] : 0);

      *o++ = alphabet[v >> 18];
      *o++ = alphabet[(v >> 12) & 63];
      *o++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
      *o++ = i + 2 < len ? alphabet[v & 63] : '=';
    }
  *o = '\0';
  return out;
}

int
sr_random_bytes (void *buf, size_t len, sr_error_t *err)
{
  size_t got = 0;

  while (got < len)
    {
      ssize_t n = getrandom ((unsigned char *) buf + got, len - got, 0);

      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return sr_error_set (err, errno, "getrandom");
      got += (size_t) n;
    }
  return 0;
}

void
sr_hex_encode (const void *in, size_t n, char *out)
{
  static const char digits[] = "0123456789abcdef";
  const unsigned char *p = in;

  for (size_t i = 0; i < n; i++)
    {
      out[2 * i] = digits[p[i] >> 4];
      out[2 * i + 1] = digits[p[i] & 0xf];
    }
  out[2 * n] = '\0';
}

int
sr_random_hex (char *out, size_t n, sr_error_t *err)
{
  _cleanup_free_ unsigned char *raw = sr_xmalloc (n);

  if (sr_random_bytes (raw, n, err) < 0)
    return -1;
  sr_hex_encode (raw, n, out);
  return 0;
}

int
sr_openat2 (int dirfd, const char *path, int flags, uint64_t resolve)
{
  struct open_how how = { .flags = (uint64_t) (flags | O_CLOEXEC), .resolve = resolve };

  for (int i = 0; i < 64; i++)
    {
      int fd = (int) syscall (SYS_openat2, dirfd, *path ? path : ".", &how, sizeof how);

      if (fd >= 0 || errno != EAGAIN)
        return fd;
    }
  return -1;
}

uint64_t
sr_process_start_time (pid_t pid)
{
  char path[64], buf[1024], *p;
  unsigned long long start = 0;
  ssize_t n;
  int fd;

  snprintf (path, sizeof path, "/proc/%ld/stat", (long) pid);
  fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  n = read (fd, buf, sizeof buf - 1);
  close (fd);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  /* The command name may hold spaces and parentheses: fields count from
   * the last ')'.  starttime is field 22, the 19th after the state.  */
  p = strrchr (buf, ')');
  if (p == NULL || p[1] != ' ')
    return 0;
  /* A zombie is dead, whoever has yet to reap it.  */
  if (p[2] == 'Z' || p[2] == 'X')
    return 0;
  p++;
  for (int field = 0; field < 19 && p; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL || sscanf (p, " %llu", &start) != 1)
    return 0;
  return start;
}
