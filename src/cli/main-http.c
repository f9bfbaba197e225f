/* sandbox-runner-http: `serve --transport http` on the native backend,
 * with libmicrohttpd and none of libcurl and libarchive.  */
#include "config.h"

#include "cli/commands.h"
#include "sandbox/backend.h"

int
main (int argc, char **argv)
{
  sr_backend_register (&sr_native_backend);
  sr_backend_register (&sr_ssh_backend);
  sr_cli_serve_http = sr_cli_serve_mhd;
  return sr_cli_main (argc, argv);
}
