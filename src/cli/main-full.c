/* sandbox-runner-full: every command, both backends and both transports.
 * The light sandbox-runner hands over to it what it does not carry
 * (delegate.c); registering here, before any command runs, is what makes
 * the Docker backend and the HTTP transport exist in this binary only.  */
#include "config.h"

#include "cli/commands.h"
#include "sandbox/backend.h"

int
main (int argc, char **argv)
{
  sr_backend_register (&sr_native_backend);
  sr_backend_register (&sr_ssh_backend);
  sr_backend_register (&sr_docker_backend);
  sr_cli_serve_http = sr_cli_serve_mhd;
  return sr_cli_main (argc, argv);
}
