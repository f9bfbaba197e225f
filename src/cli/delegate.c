/* The commands that need libarchive, libcurl or libmicrohttpd (image
 * import, image pull, serve) live in sandbox-runner-full, so that
 * sandbox-runner itself loads only what a run needs: those libraries and
 * theirs (ICU, GnuTLS, Kerberos, ...) would cost every run some 20 ms of
 * dynamic linking.  Here they hand over to it, with the same arguments.  */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/util.h"

#define FULL_NAME "sandbox-runner-full"

/* Beside this binary first (a build tree), then where make install puts
 * it.  */
static int
exec_full (void)
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

int
sr_cmd_serve (int argc, char **argv)
{
  return exec_full ();
}

int
sr_cmd_image_import (int argc, char **argv)
{
  return exec_full ();
}

int
sr_cmd_image_pull (int argc, char **argv)
{
  return exec_full ();
}
