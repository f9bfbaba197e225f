/* run_code on the Docker backend (backend = docker): the same two stages,
 * limits, policy and result as the native path in code.c, through the
 * Docker Engine client (docker/engine.h).
 *
 * code.c never calls this directly: the Docker client pulls in libcurl,
 * which the light sandbox-runner binary must not load (see
 * cli/delegate.c), so code.c reaches it through a hook that only
 * sandbox-runner-full registers (cli/backend_full.c).  */
#ifndef SR_SANDBOX_DOCKER_RUN_H
#define SR_SANDBOX_DOCKER_RUN_H

#include <stdbool.h>

#include "common/config.h"
#include "common/error.h"
#include "docker/engine.h"
#include "sandbox/code.h"

/* Runs a validated request for language l in Docker containers.  The
 * caller has set res->language; a failure's code is image_missing (no
 * image for the language, or the daemon lacks it: errnum ENOENT), or none
 * (a sandbox_error: the daemon is unreachable, a container could not be
 * set up).  */
typedef int (*sr_code_docker_runner) (const struct sr_config *cfg, const struct sr_language *l,
                                      const struct sr_code_request *req,
                                      struct sr_code_result *res, sr_error_t *err);
int sr_docker_code_run (const struct sr_config *cfg, const struct sr_language *l,
                        const struct sr_code_request *req, struct sr_code_result *res,
                        sr_error_t *err);

/* The hook in code.c; NULL unregisters.  */
void sr_code_set_docker_runner (sr_code_docker_runner fn);
/* Whether this binary can run code on Docker (a runner is registered).  */
bool sr_code_docker_available (void);

/* The Docker image for a language: $SANDBOX_DOCKER_IMAGE_<LANGUAGE> (the
 * name upper-cased, anything but letters and digits as '_') when set and
 * not empty, else the built-in default (defaults.h), else NULL.  The
 * result is allocated.  */
char *sr_docker_code_image (const char *language);

#endif
