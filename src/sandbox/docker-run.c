#include "config.h"

#include "sandbox/docker-run.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "docker/engine.h"
#include "sandbox/code-internal.h"

static const struct
{
  const char *language, *image;
} default_images[] = { SR_DEFAULT_DOCKER_IMAGES };

/* "c++" -> "SANDBOX_DOCKER_IMAGE_C__".  */
static char *
image_variable (const char *language)
{
  char *var = sr_xasprintf ("SANDBOX_DOCKER_IMAGE_%s", language);

  for (char *p = var + strlen ("SANDBOX_DOCKER_IMAGE_"); *p; p++)
    *p = isalnum ((unsigned char) *p) ? (char) toupper ((unsigned char) *p) : '_';
  return var;
}

char *
sr_docker_code_image (const char *language)
{
  _cleanup_free_ char *var = image_variable (language);
  const char *v;

  v = getenv (var);
  if (v && *v)
    return sr_xstrdup (v);
  for (size_t i = 0; i < sizeof default_images / sizeof default_images[0]; i++)
    if (strcmp (default_images[i].language, language) == 0)
      return sr_xstrdup (default_images[i].image);
  return NULL;
}

/* What a Docker stage runs on.  */
struct docker_stage
{
  struct sr_docker *d;
  const struct sr_policy *policy;
  struct sr_docker_config dc;
  const char *scratch;
};

static int
run_docker_stage (void *ctx, struct sr_code_stage *st, struct sr_run_result *res,
                  sr_error_t *err)
{
  const struct docker_stage *ds = ctx;
  struct sr_docker_config dc = ds->dc;
  const char *scratch = ds->scratch;
  _cleanup_strv_ char **argv = sr_code_split_command (st->command), **env = NULL;
  struct sr_docker_bind bind = {
    .source = scratch, .target = SR_CODE_DIR, .readonly = !st->code_writable,
  };
  struct sr_exec_spec spec = { 0 };
  struct sr_run_options opts = {
    .timeout_ms = st->timeout_ms, .max_output = ds->policy->max_output, .stdin_fd = -1,
    .cancel_fd = st->req->cancel_fd,
  };

  if (argv[0] == NULL)
    return sr_error_set (err, 0, "empty command");
  /* What native sets; an imported image may carry no Env at all.  */
  env = sr_policy_env (ds->policy, NULL);
  dc.binds = &bind;
  dc.n_binds = 1;
  /* As native: the CPU-time rlimit backs the stage's wall-clock timeout.  */
  dc.max_cpu_seconds = sr_policy_cpu_seconds (st->timeout_ms);
  spec.argv = argv;
  spec.env = env;
  spec.cwd = SR_DEFAULT_WORKDIR;
  sr_code_stage_progress (st, &opts);
  return sr_docker_run (ds->d, &dc, &spec, &opts, res, err);
}

int
sr_docker_code_run (const struct sr_config *cfg, const struct sr_language *l,
                    const struct sr_code_request *req, struct sr_code_result *res,
                    sr_error_t *err)
{
  _cleanup_free_ char *image = sr_docker_code_image (l->name);
  _cleanup_free_ char *scratch = NULL;
  _cleanup_close_ int scratch_fd = -1;
  struct sr_docker *d = NULL;
  struct sr_docker_tmpfs tmpfs[SR_POLICY_DOCKER_TMPFS];
  struct sr_policy *policy = NULL;
  struct sr_docker_config dc;
  uid_t unused_uid;
  gid_t unused_gid;
  sr_error_t e = NULL;
  int r = -1;

  if (image == NULL)
    {
      _cleanup_free_ char *var = image_variable (l->name);

      return sr_error_set_plain (err, "image_missing", ENOENT,
                                 "language %s has no Docker image: set %s", l->name, var);
    }
  if (sr_docker_open (cfg->docker_host && *cfg->docker_host ? cfg->docker_host : NULL, &d, err)
      < 0)
    return sr_error_wrap (err, "docker backend");
  if (sr_docker_image_exists (d, image, &e) < 0)
    {
      if (e->errnum == ENOENT)
        sr_error_recode (&e, "image_missing");
      sr_error_move (err, &e);
      sr_error_wrap (err, "language %s", l->name);
      goto out;
    }
  if (sr_policy_new (cfg, SR_POLICY_DOCKER, NULL, &policy, err) < 0)
    goto out;
  sr_policy_to_docker (policy, tmpfs, &dc);
  dc.image = image;

  if (sr_code_make_dir (cfg, &scratch, &scratch_fd, &unused_uid, &unused_gid, err) < 0)
    goto out;
  /* The containers run as the policy's user, not as a mapped root: the
   * directory must be theirs (or, for a non-root runner in the docker
   * group, open to all) for the compiler to write its output.  */
  if (geteuid () == 0 ? fchown (scratch_fd, policy->uid, policy->gid) < 0
                      : fchmod (scratch_fd, 0777) < 0)
    {
      sr_error_set (err, errno, "chown %s", scratch);
      goto out;
    }
  if (sr_code_write_source (scratch_fd, l->source, req->code, req->code_len, policy->uid,
                            policy->gid, err)
      < 0)
    goto out;

  {
    struct docker_stage ds = { .d = d, .policy = policy, .dc = dc, .scratch = scratch };

    r = sr_code_run_stages (cfg, l, req, run_docker_stage, &ds, res, err);
  }

out:
  if (scratch)
    (void) sr_rm_rf_at (AT_FDCWD, scratch, NULL);
  sr_docker_close (d);
  sr_policy_free (policy);
  return r;
}
