/* Sessions on the Docker backend (backend = docker): each session is one
 * held container (docker/engine.h sr_docker_hold) with the policy of a
 * Docker run_code (sandbox/docker-run.h) plus a persistent, size-capped
 * tmpfs at SR_DATA_DIR and the session's code directory bound at
 * SR_CODE_DIR.  Commands run through the exec API; the files of
 * sandbox/files.h go through small commands of the image's own shell and
 * coreutils run in the container as its user (sr_fs_remote), never
 * through the host's /proc/<pid>/root, which a runner in the docker group
 * may not open (and which a remote daemon does not have).
 *
 * Persistent shells run through an exec with its stdin attached: the
 * host terminal shell.c hands over is relayed raw to a terminal of the
 * exec's own (docker/engine.h), so ^C is interpreted in the container.
 *
 * Only sandbox-runner-full links this file; it registers the backend
 * with sr_session_set_docker_backend (cli/backend_full.c).  */
#ifndef SR_SANDBOX_DOCKER_SESSION_H
#define SR_SANDBOX_DOCKER_SESSION_H

#include "sandbox/session-backend.h"

extern const struct sr_session_backend sr_docker_session_backend;

#endif
