/* Where containers run: one ops table per backend, as crun's cgroup
 * managers are (struct libcrun_cgroup_manager), and the registry that
 * maps the configuration's enum sr_backend_kind to one.
 *
 *   run_code (code.c) ──┐                     ┌── native  (native.c: runtime/)
 *   warm pool (pool.c) ─┼─► struct sr_backend ┼── Docker  (docker-*.c: docker/, -full only)
 *   sessions (session.c)┤                     └── SSH hosts (ssh.c: no sandbox, machines only)
 *   file tools (files-*.c) over a box's file primitives (struct sr_fs_ops)
 *
 * Callers never test which backend they hold: what differs between
 * backends is either behind an op or a capability field below.
 *
 * Registration is explicit, on each binary's main path (cli/main-*.c):
 * the light sandbox-runner registers native only, so it never links the
 * Docker client nor libcurl; sandbox-runner-full registers Docker too.
 *
 * What an implementation must provide (a third one, such as an SSH host,
 * adds a kind to common/config.h, a file defining its struct sr_backend,
 * and a sr_backend_register call in the mains that carry it; no caller
 * changes):
 *   - its kind, and the capabilities (false is always safe);
 *   - open/close: its state for one manager (a daemon connection, the
 *     policy translated once; sandbox/policy.h builds it);
 *   - code_dir and run_begin/run_stage/run_end: run_code's stages, each
 *     in a fresh container of the language's image with the code
 *     directory bound at SR_CODE_DIR;
 *   - with keeps_warm, warm_*: such a container created ahead;
 *   - create/destroy/alive/pid/image/env/exec: a held container (a
 *     session) and commands in it;
 *   - the file primitives of a held container (struct sr_fs_ops, files.h:
 *     read, write, walk, open), which must confine every path to that
 *     container's tree; the file tools are written once over them.
 * The ops of one state may be called from several threads at once for
 * different runs or boxes; one box serves one thread at a time.  */
#ifndef SR_SANDBOX_BACKEND_H
#define SR_SANDBOX_BACKEND_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/error.h"
#include "common/run-result.h"
#include "sandbox/files.h"

struct sr_store;
struct cJSON;
struct sr_code_stage;           /* sandbox/code-internal.h */
struct sr_policy_ids;           /* sandbox/policy.h */

/* One run_code's image, as a backend keeps it between its stages.  */
struct sr_backend_run;
/* A container created ahead for a language's run stage (keeps_warm).  */
struct sr_backend_warm;
/* One held container (a session's), as a backend keeps it.  */
struct sr_backend_box;

/* What env's Docker actions do to a box (the control op).  */
enum sr_box_action
{
  SR_BOX_STATE,     /* out: state ("running", "exited", ...) */
  SR_BOX_STOP,      /* out: state; commands are refused until start */
  SR_BOX_START,
  SR_BOX_RESTART,
  SR_BOX_INSPECT,   /* out: a curated description, no host paths */
  SR_BOX_LOGS,      /* out: stdout, stderr, truncated of its init's last tail lines */
  SR_BOX_STATS,     /* out: one sample of memory, cpu, pids */
};

/* What a manager opens a backend for: its state differs (a session's
 * container has a data directory and the longest timeout as its CPU
 * backstop; a sessions manager removes what dead runners left).  */
enum sr_backend_use
{
  SR_BACKEND_RUNS,
  SR_BACKEND_SESSIONS,
};

struct sr_backend
{
  enum sr_backend_kind kind;     /* its name: sr_backend_kind_name (kind) */

  /* Capabilities.  */
  /* Containers can be created ahead and started later (the warm_* ops):
   * the warm pool keeps some ready per one-stage language.  */
  bool keeps_warm;
  /* A persistent shell (sandbox/shell.c) is a command whose stdin is a
   * host terminal; its stdout and stderr come back as one stream (a
   * terminal of the container's own, as Docker's exec gives), not as two
   * pipes.  */
  bool shell_one_stream;
  /* Its run_code containers run under the ids of sr_policy_ids_take (a
   * uid range of the host leased to one container); without it they run
   * as a user of the backend's own (Docker's policy user), and a run
   * takes no lease.  */
  bool takes_ids;
  /* Its containers are made in the runner's own mount namespace, so a
   * mount the runner makes (a code dir's tmpfs) is what they bind.  A
   * daemon's (dockerd's) may be another namespace, as a service unit's
   * private one is: it would bind the empty directory beneath.  */
  bool shares_mounts;

  /* The backend's state for one manager (the policy translated once, a
   * daemon connection); cfg and store outlive it.  */
  int (*open) (const struct sr_config *cfg, struct sr_store *store, enum sr_backend_use use,
               void **ret_state, sr_error_t *err);
  void (*close) (void *state);

  /* Hands a code directory (made by sr_code_make_dir: owned by the
   * container's root as the host sees it, *uid and *gid) to the user
   * commands run as, and sets *uid, *gid to the owner that files put
   * there must have.  */
  int (*code_dir) (void *state, const char *dir, int dirfd, uid_t *uid, gid_t *gid,
                   sr_error_t *err);

  /* run_code.  run_begin finds the image of language l (code
   * image_missing, errnum ENOENT, when there is none); run_stage runs one
   * stage (sandbox/policy.h) in a fresh container of it with
   * code_dir bound at SR_CODE_DIR; run_end releases the run (accepts
   * NULL).  */
  int (*run_begin) (void *state, const struct sr_language *l, struct sr_backend_run **ret,
                    sr_error_t *err);
  int (*run_stage) (struct sr_backend_run *run, const char *code_dir, struct sr_code_stage *st,
                    struct sr_run_result *res, sr_error_t *err);
  void (*run_end) (struct sr_backend_run *run);
  /* The content digest of the run's image, which the compile cache's key
   * takes (sandbox/compile-cache.h); NULL (or no op): not known, so no
   * cache.  */
  const char *(*run_image_id) (struct sr_backend_run *run);
  /* takes_ids only: the ids inside the run's image of the user setting
   * (common/image-user.h), which its containers run as; run_begin
   * fails (invalid_config) when the image lacks the user it names.  */
  void (*run_user) (struct sr_backend_run *run, uid_t *uid, gid_t *gid);

  /* keeps_warm only (NULL otherwise).  warm_new creates what run_stage
   * would for l's run stage, with ids (sandbox/policy.h), code_dir
   * bound read-only, and leaves it waiting for its one command (labelled
   * for ps as a pool's, "warm: " and the run command, or as one run's
   * stage, the run command alone, when for_run); with
   * prestart (l has a warm_start), it starts l's interpreter in it ahead
   * instead (sandbox/prestart.h: the bootstrap is in code_dir already);
   * warm_current says whether it may still serve (alive, and its image
   * still the store's for l); warm_stage runs the stage in it, once (on
   * the interpreter, setting st->prestarted, when it has one); warm_free
   * destroys it (accepts NULL).  */
  int (*warm_new) (void *state, const struct sr_language *l, const char *code_dir,
                   const struct sr_policy_ids *ids, bool prestart, bool for_run,
                   struct sr_backend_warm **ret, sr_error_t *err);
  bool (*warm_current) (void *state, struct sr_backend_warm *w);
  int (*warm_stage) (struct sr_backend_warm *w, struct sr_code_stage *st,
                     struct sr_run_result *res, sr_error_t *err);
  void (*warm_free) (struct sr_backend_warm *w);

  /* A held container of image_ref for session id, with a tmpfs of its
   * own at SR_CODE_DIR (cfg->session_scratch_size, nosuid, nodev; no
   * host directory: the code goes in through *fs) and a persistent
   * SR_DATA_DIR of cfg->session_data_size; ids are who it is on the host
   * (sandbox/policy.h), the session's for its life.  *fs gets its file
   * primitives, valid until destroy.  Fails with code image_missing when
   * the image is not there.  Runs on the manager's own thread (a native
   * container's init dies with the thread that cloned it).  */
  int (*create) (void *state, const char *id, const char *image_ref,
                 const struct sr_policy_ids *ids, struct sr_backend_box **ret,
                 struct sr_fsroot *fs, sr_error_t *err);
  /* Kills and removes the container; accepts NULL.  */
  void (*destroy) (struct sr_backend_box *b);
  bool (*alive) (struct sr_backend_box *b);
  /* The container's init on the host (0 when not known).  */
  pid_t (*pid) (const struct sr_backend_box *b);
  /* The image's name as the user knows it.  */
  const char *(*image) (const struct sr_backend_box *b);
  /* The environment of a command that gives none (allocated).  */
  char **(*env) (const struct sr_backend_box *b);
  /* One command, as sr_container_exec: cwd set, env set.  */
  int (*exec) (struct sr_backend_box *b, const struct sr_exec_spec *spec,
               const struct sr_run_options *opts, struct sr_run_result *res, sr_error_t *err);
  /* The container's lifecycle (enum sr_box_action), its report added to
   * out (a JSON object); tail and max_output bound SR_BOX_LOGS.  NULL: the
   * backend has none (the manager says docker_unavailable).  A stopped
   * box stays alive for the manager and refuses exec (code
   * machine_stopped) until started.  */
  int (*control) (struct sr_backend_box *b, enum sr_box_action a, unsigned tail,
                  size_t max_output, struct cJSON *out, sr_error_t *err);
};

/* The backends of this binary.  main registers them before dispatching a
 * command, one per kind (a second one of a kind replaces the first).  */
void sr_backend_register (const struct sr_backend *be);

/* The backend of kind, or NULL when this binary has none.  */
const struct sr_backend *sr_backend_find (enum sr_backend_kind kind);

/* The backend cfg->backend_kind names; when this binary has none, an
 * error saying which binary does ("backend docker: this binary has no
 * Docker client; run it through sandbox-runner-full").  */
const struct sr_backend *sr_backend_get (const struct sr_config *cfg, sr_error_t *err);

/* The backends this tree has.  */
extern const struct sr_backend sr_native_backend;
extern const struct sr_backend sr_docker_backend;  /* sandbox-runner-full only */
/* Machines only: create (image_ref is the machine's NAME), exec, files,
 * shells; run_begin and code_dir refuse (not_a_sandbox), its boxes'
 * paths are the remote account's, unconfined.  Needs only the ssh client
 * at run time, so every binary carries it.  */
extern const struct sr_backend sr_ssh_backend;

#endif
