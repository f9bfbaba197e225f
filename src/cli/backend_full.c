/* What only sandbox-runner-full has: the Docker backend of run_code and
 * of sessions.  The light sandbox-runner never links this file, so it
 * never pulls in the Docker client nor libcurl; its run-code hands a
 * Docker run over to us (run_code.c), and only this binary serves.  */
#include "config.h"

#include "sandbox/docker-run.h"
#include "sandbox/docker-session.h"

/* Before main, so that every command of this binary (run-code, serve and
 * the MCP tools) sees the backend.  */
__attribute__ ((constructor)) static void
register_backends (void)
{
  sr_code_set_docker_runner (sr_docker_code_run);
  sr_session_set_docker_backend (&sr_docker_session_backend);
}
