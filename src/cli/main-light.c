/* sandbox-runner: everything a run needs and nothing more.  It carries
 * the native backend, and the SSH one (sandbox/ssh.c), which needs
 * nothing but the ssh client at run time; serve --transport http and the
 * Docker backend are handed over to the helpers that carry them
 * (delegate.c, exec_helper.c), so this binary never loads libmicrohttpd,
 * libcurl nor the Docker client.  */
#include "config.h"

#include "cli/commands.h"
#include "sandbox/backend.h"

int
main (int argc, char **argv)
{
  sr_backend_register (&sr_native_backend);
  sr_backend_register (&sr_ssh_backend);
  return sr_cli_main (argc, argv);
}
