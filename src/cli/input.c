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
  if (sr_read_fd (fd, max + 1, ret, ret_len) < 0)
    {
      sr_cli_error ("%s: read %s: %s", cmd, name, strerror (errno));
      return -1;
    }
  return 0;
}
