/* The commands that need libarchive, libcurl or libmicrohttpd (image
 * import, image pull, session) live in sandbox-runner-full, so that
 * sandbox-runner itself loads only what a run needs: those libraries and
 * theirs (ICU, GnuTLS, Kerberos, ...) would cost every run some 20 ms of
 * dynamic linking.  Here they hand over to it, with the same arguments.  */
#include "config.h"

#include "cli/commands.h"

int
sr_cmd_image_import (int argc, char **argv)
{
  return sr_cli_exec_helper (SR_HELPER_FULL);
}

int
sr_cmd_image_pull (int argc, char **argv)
{
  return sr_cli_exec_helper (SR_HELPER_FULL);
}

int
sr_cmd_session (int argc, char **argv)
{
  return sr_cli_exec_helper (SR_HELPER_FULL);
}
