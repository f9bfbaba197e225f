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
#include "common/config.h"
#include "common/util.h"

extern char **environ;

/* The SANDBOX_ variables nothing reads, and the aliases our own names
 * override, once this process has warned about them: the helper would
 * warn again.  */
static void
drop_unknown_variables (void)
{
  _cleanup_strv_ char **unknown = NULL;
  size_t n = 0;

  for (char **e = environ; *e; e++)
    {
      const char *eq = strchr (*e, '=');
      _cleanup_free_ char *var = NULL;

      if (strncmp (*e, "SANDBOX_", 8) != 0 || eq == NULL)
        continue;
      var = sr_xasprintf ("%.*s", (int) (eq - *e), *e);
      if (sr_config_variable_known (var) && !sr_config_alias_overridden (var))
        continue;
      unknown = sr_xrealloc (unknown, (n + 2) * sizeof *unknown);
      unknown[n++] = TAKE_PTR (var);
      unknown[n] = NULL;
    }
  for (size_t i = 0; i < n; i++)
    unsetenv (unknown[i]);
}

/* Beside this binary first (a build tree), then where make install puts
 * it.  */
int
sr_cli_exec_helper (const char *name)
{
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  _cleanup_free_ char *beside = NULL, *installed = NULL;

  if (sr_config_env_warned ())
    drop_unknown_variables ();

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
