/* What runs a session's container: the backend behind sandbox/session.h.
 *
 * session.c keeps everything a session is to the service (ids, busy
 * state, limits, idle expiry, the code directory, artifacts, shells) and
 * hands the container to a backend: native (runtime/container.h, the
 * default) or Docker (sandbox/docker-session.c, which only
 * sandbox-runner-full has and registers, so the light binary never links
 * libcurl).  cfg->backend chooses it when the manager starts.
 *
 * Every function but open runs for one session at a time; create runs on
 * the manager's own thread (a native container's init dies with the
 * thread that cloned it).  */
#ifndef SR_SANDBOX_SESSION_BACKEND_H
#define SR_SANDBOX_SESSION_BACKEND_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/error.h"
#include "image/store.h"
#include "runtime/container.h"
#include "sandbox/files.h"

/* One session's container, as a backend keeps it.  */
struct sr_session_box;

struct sr_session_backend
{
  const char *name;     /* "native", "docker": for messages */
  /* The backend's state for one manager (policy, daemon connection).  */
  int (*open) (const struct sr_config *cfg, struct sr_store *store, void **ret_state,
               sr_error_t *err);
  void (*close) (void *state);
  /* A held container of image_ref for session id, with the host
   * directory code_dir bound read-write at SR_CODE_DIR and a persistent
   * SR_DATA_DIR of cfg->session_data_size.  Fills *fs for sandbox/files.h
   * (fs->uid, fs->gid come set to the code directory's owner for native;
   * a backend whose user differs changes them and the directory's
   * owner).  Fails with the codes session.h names (image_missing).  */
  int (*create) (void *state, const char *id, const char *image_ref, const char *code_dir,
                 int code_fd, struct sr_session_box **ret, struct sr_fsroot *fs,
                 sr_error_t *err);
  /* Kills and removes the container; accepts NULL.  */
  void (*destroy) (struct sr_session_box *b);
  bool (*alive) (struct sr_session_box *b);
  /* The container's init on the host (0 when not known).  */
  pid_t (*pid) (const struct sr_session_box *b);
  /* The image's name as the user knows it.  */
  const char *(*image) (const struct sr_session_box *b);
  /* The environment of a command that gives none (allocated).  */
  char **(*env) (const struct sr_session_box *b);
  /* One command, as sr_container_exec: cwd set, env set.  */
  int (*exec) (struct sr_session_box *b, const struct sr_exec_spec *spec,
               const struct sr_run_options *opts, struct sr_run_result *res, sr_error_t *err);
  /* A persistent shell (sandbox/shell.c) is a command whose stdin is a
   * host terminal.  Its stdout and stderr come back as one stream: its terminal's
   * in the container (Docker), not two pipes.  */
  bool shell_one_stream;
};

/* The Docker backend, registered by sandbox-runner-full
 * (cli/backend_full.c); NULL unregisters.  */
void sr_session_set_docker_backend (const struct sr_session_backend *be);

#endif
