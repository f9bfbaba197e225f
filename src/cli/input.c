/* The input a command reads from a file named on its command line, or
 * from stdin.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/util.h"

int
sr_cli_read_input (const char *cmd, const char *path, size_t max, char **ret, size_t *ret_len)
{
  _cleanup_close_ int fd = -1;
  _cleanup_free_ char *buf = NULL;
  size_t len = 0, cap = 0;
  bool from_stdin = path == NULL || strcmp (path, "-") == 0;
  const char *name = from_stdin ? "stdin" : path;

  if (from_stdin)
    {
      if (isatty (STDIN_FILENO))
        {
          sr_cli_error ("%s: give a FILE, or the input on stdin", cmd);
          return -1;
        }
      fd = dup (STDIN_FILENO);
    }
  else
    fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    {
      sr_cli_error ("%s: %s: %s", cmd, name, strerror (errno));
      return -1;
    }
  /* Up to max + 1 bytes, so that the caller sees an input over max as
   * such rather than cut.  */
  while (len < max + 1)
    {
      ssize_t n;

      if (len + 1 >= cap)
        {
          cap = cap ? 2 * cap : 65536;
          if (cap > max + 2)
            cap = max + 2;
          buf = sr_xrealloc (buf, cap);
        }
      n = read (fd, buf + len, cap - 1 - len);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        {
          sr_cli_error ("%s: read %s: %s", cmd, name, strerror (errno));
          return -1;
        }
      if (n == 0)
        break;
      len += (size_t) n;
    }
  if (buf == NULL)
    buf = sr_xmalloc (1);
  buf[len] = '\0';
  *ret = TAKE_PTR (buf);
  *ret_len = len;
  return 0;
}
