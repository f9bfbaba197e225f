/* run_code: a snippet in one of the configured languages, run in a fresh
 * container of the language's image, in one or two stages.
 *
 * The code is written to a private scratch directory bound at
 * SR_CODE_DIR.  A language with a compile command compiles there first,
 * in a container of its own with SR_CODE_DIR writable and the compile
 * ceiling as its timeout; a failure there is status compile_error with the
 * compiler's output.  The run stage then gets SR_CODE_DIR read-only, a
 * fresh /work and the request's timeout; on a backend that keeps
 * containers warm its container is made while the compile stage runs
 * (run_ahead in code.c).  Nothing of either container, nor the scratch
 * directory, is left afterwards.
 *
 * Beside the code a request may bring the program's other files (written
 * under their names beside the language's source file, its entry point;
 * the compile stage compiles those its sources patterns match), its
 * arguments (after the run command's own) and its stdin.  The compile
 * stage reads none of them but the files: its stdin is empty.  */
#ifndef SR_SANDBOX_CODE_H
#define SR_SANDBOX_CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/error.h"
#include "common/run-result.h"
#include "image/store.h"
#include "runtime/container.h"
#include "sandbox/code-request.h"

struct sr_code_result
{
  enum sr_code_status status;
  char *language;
  /* The stage that decided the outcome: the compile stage when it
   * failed, else the run stage.  */
  struct sr_run_result run;
  bool compiled;         /* the language compiles: a compile stage ran, or the cache answered */
  bool compile_cached;   /* the compile cache answered: no compile stage ran */
  uint64_t compile_ms;   /* the compile stage's, or the cache's */
  uint64_t duration_ms;  /* the run stage (the compile stage when it failed) */
  bool prestarted;       /* the run stage's interpreter was started ahead (a warm one) */
};
void sr_code_result_done (struct sr_code_result *r);

/* Checks a request without running it.  On failure the error's code
 * names the problem for machines: unknown_language, empty_code,
 * code_too_large, timeout_too_large, stdin_too_large (over
 * max_stdin_size), too_many_args or args_too_large (SR_MAX_CODE_ARGS,
 * SR_MAX_CODE_ARGS_SIZE bytes of them all), too_many_files
 * (SR_MAX_CODE_FILES), file_too_large (one over max_code_file_size),
 * files_too_large (all over max_code_files_size), invalid_file_name (an
 * empty, absolute or too long name, a '.' or '..' or empty component, the
 * entry point's name, or a name given twice or under another file's);
 * its message says it for people (errnum EINVAL).  *ret_language gets the
 * table entry.  */
int sr_code_validate (const struct sr_config *cfg, const struct sr_code_request *req,
                      const struct sr_language **ret_language, sr_error_t *err);

/* Removes what runners that died left in the runtime dir: their
 * containers' state entries (killing what still runs in them and removing
 * their cgroups) and their scratch directories.  For the start of every
 * runner that runs code (sr_service_open).  */
void sr_code_reclaim (const struct sr_config *cfg);

/* Runs the request.  Returns -1 without running anything when the request
 * is invalid (errnum EINVAL and sr_code_validate's codes) or the language's image is not in the store (ENOENT, code
 * image_missing), and when a container could not be set up (no code: a
 * sandbox_error).  */
int sr_code_run (const struct sr_config *cfg, struct sr_store *store,
                 const struct sr_code_request *req, struct sr_code_result *res, sr_error_t *err);

/* Runs `true` instead of l's commands, in a fresh container of l's image
 * through the configured backend, with a run stage's policy: what
 * `sandbox-runner doctor` tries for each image.  Fails as sr_code_run
 * when the container could not be made; else res says how `true` ended.  */
int sr_code_try (const struct sr_config *cfg, struct sr_store *store, const struct sr_language *l,
                 struct sr_code_result *res, sr_error_t *err);

#endif
