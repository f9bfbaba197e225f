/* Hands the command over to sandbox-runner-full, which has what the light
 * binary leaves out (libarchive, libcurl, libmicrohttpd, the Docker
 * client).  */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/util.h"

#define FULL_NAME "sandbox-runner-full"

/* Beside this binary first (a build tree), then where make install puts
 * it.  */
int
sr_cli_exec_full (void)
{
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  _cleanup_free_ char *beside = NULL;

  if (n > 0)
    {
      char *slash;

      self[n] = '\0';
      slash = strrchr (self, '/');
      if (slash)
        {
          *slash = '\0';
          beside = sr_xasprintf ("%s/" FULL_NAME, self);
          execv (beside, sr_cli_argv);
        }
    }
  execv (SR_PKGLIBEXECDIR "/" FULL_NAME, sr_cli_argv);
  sr_cli_error ("%s/%s: %s (sandbox-runner is not completely installed)", SR_PKGLIBEXECDIR,
                FULL_NAME, strerror (errno));
  return SR_EXIT_RUNNER;
}
