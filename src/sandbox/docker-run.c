#include "config.h"

#include "sandbox/docker-run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/image-user.h"
#include "common/util.h"
#include "docker/engine.h"
#include "sandbox/code-internal.h"

char *
sr_docker_code_image (const struct sr_config *cfg, const char *language)
{
  const struct sr_language *l = sr_config_language (cfg, language);

  return l && *l->docker_image ? sr_xstrdup (l->docker_image) : NULL;
}

/* --- the backend's state --- */

/* What a session's container needs beyond a run's (policy.h).  */
static const struct sr_policy_overrides session_needs = { .session = true };

int
sr_docker_state_open (const struct sr_config *cfg, struct sr_store *store,
                      enum sr_backend_use use, void **ret, sr_error_t *err)
{
  struct sr_docker_state *ds = sr_xcalloc (1, sizeof *ds);
  static atomic_flag reaped = ATOMIC_FLAG_INIT;
  const bool sessions = use == SR_BACKEND_SESSIONS;
  unsigned removed = 0;

  (void) store;
  ds->cfg = cfg;
  if (sr_docker_open (cfg->docker_host && *cfg->docker_host ? cfg->docker_host : NULL, &ds->d,
                      err)
      < 0)
    {
      free (ds);
      /* A sessions manager says which backend it opened itself.  */
      return sessions ? -1 : sr_error_wrap (err, "docker backend");
    }
  if (sr_policy_new (cfg, SR_BACKEND_DOCKER, sessions ? &session_needs : NULL, &ds->policy, err)
      < 0)
    {
      sr_docker_close (ds->d);
      free (ds);
      return -1;
    }
  /* What a runner killed with SIGKILL left on the daemon (a run-code's
   * container mid-run, a server's session containers) is nobody's now:
   * every runner on Docker removes it before it starts its own, once per
   * process (one list request, not one per run of a server).  */
  if (!atomic_flag_test_and_set (&reaped) && sr_docker_reap_orphans (ds->d, &removed, NULL) == 0
      && removed)
    fprintf (stderr, "sandbox-runner: removed %u Docker containers of dead runners\n", removed);
  *ret = ds;
  return 0;
}

void
sr_docker_state_close (void *state)
{
  struct sr_docker_state *ds = state;

  sr_policy_free (ds->policy);
  sr_docker_close (ds->d);
  free (ds);
}

/* The containers run as the policy's user, not as a mapped root: the
 * directory must be theirs for the compiler to write its output.  A root
 * runner gives it to a user of ids; a name only dockerd resolves, in the
 * image, and a runner in the docker group that is not root cannot chown:
 * then it is open to all, and its files stay the runner's.  */
int
sr_docker_code_dir (void *state, const char *dir, int dirfd, uid_t *uid, gid_t *gid,
                    sr_error_t *err)
{
  const struct sr_docker_state *ds = state;
  uid_t user_uid;
  gid_t user_gid;

  if (geteuid () != 0 || !sr_image_user_numeric (ds->policy->user))
    return fchmod (dirfd, 0777) < 0 ? sr_error_set (err, errno, "chmod %s", dir) : 0;
  if (sr_image_user_resolve (ds->policy->user, -1, NULL, &user_uid, &user_gid, err) < 0)
    return -1;
  if (fchown (dirfd, user_uid, user_gid) < 0)
    return sr_error_set (err, errno, "chown %s", dir);
  *uid = user_uid;
  *gid = user_gid;
  return 0;
}

/* --- run_code: a fresh container per stage --- */

struct sr_backend_run
{
  struct sr_docker_state *ds;
  char *image;
  char *image_id;    /* the daemon's Id of image, or NULL */
};

const char *
sr_docker_run_image_id (struct sr_backend_run *run)
{
  return run->image_id;
}

void
sr_docker_run_end (struct sr_backend_run *run)
{
  if (run == NULL)
    return;
  free (run->image);
  free (run->image_id);
  free (run);
}

int
sr_docker_run_begin (void *state, const struct sr_language *l, struct sr_backend_run **ret,
                     sr_error_t *err)
{
  struct sr_backend_run *run = sr_xcalloc (1, sizeof *run);
  sr_error_t e = NULL;

  run->ds = state;
  run->image = *l->docker_image ? sr_xstrdup (l->docker_image) : NULL;
  if (run->image == NULL)
    {
      _cleanup_free_ char *var = sr_language_docker_variable (l->name);

      sr_docker_run_end (run);
      return sr_error_set_plain (err, "image_missing", ENOENT,
                                 "language %s has no Docker image: set language.%s.docker_image "
                                 "or %s", l->name, l->name, var);
    }
  if (sr_docker_image_exists (run->ds->d, run->image, &run->image_id, &e) < 0)
    {
      if (e->errnum == ENOENT)
        sr_error_recode (&e, "image_missing");
      sr_error_move (err, &e);
      sr_docker_run_end (run);
      return sr_error_wrap (err, "language %s", l->name);
    }
  *ret = run;
  return 0;
}

int
sr_docker_run_stage (struct sr_backend_run *run, const char *code_dir, struct sr_code_stage *st,
                     struct sr_run_result *res, sr_error_t *err)
{
  const struct sr_policy *policy = run->ds->policy;
  _cleanup_strv_ char **env = NULL;
  _cleanup_close_ int stdin_fd = -1;
  struct sr_docker_tmpfs tmpfs[SR_POLICY_DOCKER_TMPFS];
  struct sr_docker_bind bind = {
    .source = code_dir, .target = SR_CODE_DIR, .readonly = !st->code_writable,
  };
  struct sr_docker_config dc;
  struct sr_exec_spec spec = { .argv = st->argv, .cwd = SR_DEFAULT_WORKDIR };
  struct sr_run_options opts = {
    .timeout_ms = st->timeout_ms, .max_output = sr_code_stage_max_output (st, policy->max_output),
    .stdin_fd = -1, .cancel_fd = st->req->cancel_fd,
  };

  if (st->argv[0] == NULL)
    return sr_error_set (err, 0, "empty command");
  if (sr_code_stage_stdin (st, &stdin_fd, err) < 0)
    return -1;
  opts.stdin_fd = stdin_fd;
  /* What native sets; an imported image may carry no Env at all.  */
  env = sr_policy_env (policy, NULL);
  spec.env = env;
  sr_policy_to_docker (policy, tmpfs, &dc);
  dc.image = run->image;
  dc.binds = &bind;
  dc.n_binds = 1;
  /* As native: the CPU-time rlimit backs the stage's wall-clock timeout.  */
  dc.max_cpu_seconds = sr_policy_cpu_seconds (st->timeout_ms);
  if (st->cpus)
    dc.nano_cpus = (uint64_t) (st->cpus * 1e9);
  sr_code_stage_progress (st, &opts);
  return sr_docker_run (run->ds->d, &dc, &spec, &opts, res, err);
}
