/* Hands the command over to a binary beside sandbox-runner with what the
 * light binary leaves out: sandbox-runner-full (libarchive, libcurl,
 * libmicrohttpd, the Docker client) or sandbox-runner-http (only
 * libmicrohttpd).  */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/util.h"

/* Beside this binary first (a build tree), then where make install puts
 * it.  */
int
sr_cli_exec_helper (const char *name)
{
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  _cleanup_free_ char *beside = NULL, *installed = NULL;

  if (n > 0)
    {
      char *slash;

      self[n] = '\0';
      slash = strrchr (self, '/');
      if (slash)
        {
          *slash = '\0';
          beside = sr_xasprintf ("%s/%s", self, name);
          execv (beside, sr_cli_argv);
        }
    }
  installed = sr_xasprintf ("%s/%s", SR_PKGLIBEXECDIR, name);
  execv (installed, sr_cli_argv);
  sr_cli_error ("%s: %s (sandbox-runner is not completely installed)", installed,
                strerror (errno));
  return SR_EXIT_RUNNER;
}
