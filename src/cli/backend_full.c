/* What only sandbox-runner-full has: the Docker backend of run_code.  The
 * light sandbox-runner never links this file, so it never pulls in the
 * Docker client nor libcurl; its run-code hands a Docker run over to us
 * (run_code.c).  */
#include "config.h"

#include "sandbox/docker-run.h"

/* Before main, so that every command of this binary (run-code, serve and
 * the MCP tools) sees the backend.  */
__attribute__ ((constructor)) static void
register_backends (void)
{
  sr_code_set_docker_runner (sr_docker_code_run);
}
