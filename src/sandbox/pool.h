/* Warm containers for one-shot runs.
 *
 * A server keeps warm_containers created containers ready for each
 * language without a compile stage, so that a run_code there pays only for
 * starting its command: the clone, id maps, mounts, pivot_root and cgroups
 * (on cgroup v1, attaching a process waits for an RCU grace period) are
 * done before the request comes.
 *
 * A warm container is exactly what sr_code_run creates for the language's
 * run stage with the default timeout: its code directory, still empty, is
 * bound read-only at SR_CODE_DIR, and its init waits for its command.  A
 * run takes one, writes the code into its directory and starts it; the
 * container is destroyed after that one command, never reused, and the
 * pool's thread makes the next.
 *
 * For a language with a warm_start, once a run has asked for it, a warm
 * container also has the language's interpreter started, its preloads
 * imported, waiting for the code (sandbox/prestart.h); until then, and for
 * the other languages, it waits for its command.  A run that finds no
 * container ready never waits for one: it makes its own.
 *
 * Containers are created on the pool's own thread, which lives as long as
 * the pool: an init dies with the thread that cloned it (PR_SET_PDEATHSIG),
 * and a request's thread ends with the request.  (A server's spawner
 * clones them for the thread that started it, which outlives the pool;
 * without one, runtime/spawner.h, the thread clones them itself.)
 *
 * Only a backend that keeps_warm (sandbox/backend.h) has warm containers;
 * its state, and so the policy with its seccomp filter, is opened once by
 * sr_code_pool_new for every run of the pool, warm or not.  On any other
 * backend each run is an sr_code_run.  */
#ifndef SR_SANDBOX_POOL_H
#define SR_SANDBOX_POOL_H

#include "common/config.h"
#include "common/error.h"
#include "image/store.h"
#include "sandbox/code.h"

struct sr_code_pool;

/* Fails only when this binary has no backend of cfg->backend_kind, or
 * its state (the policy) cannot be opened.  cfg and store must outlive
 * the pool.  */
int sr_code_pool_new (const struct sr_config *cfg, struct sr_store *store,
                      struct sr_code_pool **ret, sr_error_t *err);
/* Destroys the warm containers.  Accepts NULL.  */
void sr_code_pool_free (struct sr_code_pool *p);

/* sr_code_run, on a warm container when one fits the request (a language
 * without a compile stage, the default timeout, a backend that
 * keeps_warm, an image the store still names), else on a new container.  Thread-safe.  */
int sr_code_pool_run (struct sr_code_pool *p, const struct sr_code_request *req,
                      struct sr_code_result *res, sr_error_t *err);

#endif
