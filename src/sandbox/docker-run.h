/* The Docker backend's state and its run_code (sandbox/backend.h): the
 * same two stages, limits, policy and result as the native backend,
 * through the Docker Engine client (docker/engine.h).  The backend's
 * table, its sessions and their files are docker-session.c's.
 *
 * Only sandbox-runner-full links these files, by registering
 * sr_docker_backend (cli/main-full.c): the Docker client pulls in libcurl,
 * which the light sandbox-runner binary must not load (see
 * cli/delegate.c).  */
#ifndef SR_SANDBOX_DOCKER_RUN_H
#define SR_SANDBOX_DOCKER_RUN_H

#include <sys/types.h>

#include "common/config.h"
#include "common/error.h"
#include "docker/engine.h"
#include "sandbox/backend.h"

/* The state of one manager: the daemon and the policy's Docker
 * translation.  */
struct sr_docker_state
{
  struct sr_docker *d;
  struct sr_policy *policy;
  const struct sr_config *cfg;  /* the caller's, which outlives the state */
};

/* The ops of struct sr_backend of the same names (backend.h).  Opening
 * for sessions also removes the containers of dead runners.  */
int sr_docker_state_open (const struct sr_config *cfg, struct sr_store *store,
                          enum sr_backend_use use, void **ret, sr_error_t *err);
void sr_docker_state_close (void *state);
int sr_docker_code_dir (void *state, const char *dir, int dirfd, uid_t *uid, gid_t *gid,
                        sr_error_t *err);
/* run_begin fails with image_missing (errnum ENOENT) when the language
 * has no Docker image or the daemon lacks it.  */
int sr_docker_run_begin (void *state, const struct sr_language *l, struct sr_backend_run **ret,
                         sr_error_t *err);
int sr_docker_run_stage (struct sr_backend_run *run, const char *code_dir,
                         struct sr_code_stage *st, struct sr_run_result *res, sr_error_t *err);
void sr_docker_run_end (struct sr_backend_run *run);
const char *sr_docker_run_image_id (struct sr_backend_run *run);

/* The Docker image of the language of cfg named language: its
 * language.NAME.docker_image (the file, $SANDBOX_DOCKER_IMAGE_<NAME> or
 * the built-in default, common/config.h), or NULL when there is no such
 * language or it has none.  The result is allocated.  */
char *sr_docker_code_image (const struct sr_config *cfg, const char *language);

#endif
