/* What run_code (code.c), the warm pool, sessions and the backends share:
 * the command a language runs, its stages, and the private directory that
 * holds the code.  The container's policy is sandbox/policy.h's; where
 * the containers run, sandbox/backend.h's.  */
#ifndef SR_SANDBOX_CODE_INTERNAL_H
#define SR_SANDBOX_CODE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/error.h"
#include "image/store.h"
#include "runtime/container.h"
#include "sandbox/code.h"
#include "sandbox/code-dir.h"
#include "sandbox/policy.h"

/* One stage of a run_code, as a backend runs it.  */
struct sr_code_stage
{
  const char *name;         /* "compile" or "run" */
  const char *command;      /* the language's, for labels */
  char **argv;              /* what runs: the command, then the sources it compiles or the args */
  bool takes_stdin;         /* the request's stdin (the run stage), else empty */
  bool code_writable;       /* SR_CODE_DIR writable (compile) or read-only (run) */
  const struct sr_policy_ids *ids; /* a fresh container's ids; NULL in a session's */
  uint64_t timeout_ms;
  double cpus;              /* the compile stage's sr_policy_compile_cpus; 0: the policy's */
  const struct sr_code_request *req;
  uint64_t output_bytes;
  bool prestarted;          /* out: ran in an interpreter started ahead (prestart.h) */
  /* Set: a backend whose stage ran in a container of its own may leave
   * it here, ended, for the caller to sr_container_destroy when it can
   * wait (NULL: it destroyed it already).  */
  struct sr_container **leave;
};
typedef int (*sr_code_stage_fn) (void *ctx, struct sr_code_stage *st, struct sr_run_result *res,
                                 sr_error_t *err);

/* "g++ -O2 -o x y" -> argv (a strv, allocated).  */
char **sr_code_split_command (const char *cmd);

/* The stdin of the stage's command: *ret_fd gets a file holding the
 * request's stdin (a memfd at its start, or its stdin_pipe's read end;
 * the caller's to close), or -1 when it has none (empty stdin,
 * /dev/null).  */
int sr_code_stage_stdin (const struct sr_code_stage *st, int *ret_fd, sr_error_t *err);

/* When the request wants progress: reports the stage's start and points
 * opts at a counter of its output.  */
void sr_code_stage_progress (struct sr_code_stage *st, struct sr_run_options *opts);

/* The bytes a stage captures per stream: the request's max_output, else
 * configured (the backend's policy or configuration).  */
uint64_t sr_code_stage_max_output (const struct sr_code_stage *st, uint64_t configured);

/* The compile stage (when the language has one) then the run stage,
 * each through run_stage; fills res as sr_code_run documents.  */
int sr_code_run_stages (const struct sr_config *cfg, const struct sr_language *l,
                        const struct sr_code_request *req, const struct sr_policy_ids *ids,
                        sr_code_stage_fn run_stage, void *ctx, struct sr_code_result *res,
                        sr_error_t *err);

struct sr_fsroot;
/* Puts files (each named relative to SR_CODE_DIR, its missing parents
 * made) in a held container's SR_CODE_DIR through its file primitives
 * (files.h), so the host never writes there through a directory of its
 * own: a symlink the container left at a name is replaced, one on the
 * way resolves inside the container; quota_exceeded when its tmpfs is
 * full.  */
int sr_code_put_files (const struct sr_fsroot *fs, const struct sr_code_file *files, size_t n,
                       sr_error_t *err);



/* The language's image from the store; a missing one fails with code
 * image_missing (errnum ENOENT) and says how to get it.  */
int sr_code_use_image (struct sr_store *store, const struct sr_language *l,
                       struct sr_image_use *image, sr_error_t *err);

struct sr_backend;

/* sr_code_run of a validated request for language l on backend be, whose
 * state (opened for SR_BACKEND_RUNS) may serve several runs at once: the
 * image, a code directory with the source, then the stages.
 * res->language is the caller's to set first.  */
int sr_code_run_on (const struct sr_backend *be, void *state, const struct sr_config *cfg,
                    const struct sr_language *l, const struct sr_code_request *req,
                    struct sr_code_result *res, sr_error_t *err);

#endif
