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
#include "runtime/seccomp.h"
#include "sandbox/code-internal.h"

/* The user SR_DOCKER_DEFAULT_USER names, which must own the scratch
 * directory to write the compiler's output there.  */
#define CODE_UID 65534
#define CODE_GID 65534

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

/* The profile as JSON text for Docker: seccomp_profile's file, "unconfined",
 * or the built-in default.  */
static int
seccomp_json (const struct sr_config *cfg, char **ret, sr_error_t *err)
{
  const char *path = cfg->seccomp_profile;
  size_t len;

  *ret = NULL;
  if (path && strcmp (path, "unconfined") == 0)
    {
      *ret = sr_xstrdup ("unconfined");
      return 0;
    }
  if (path == NULL || *path == '\0')
    {
      const char *text = sr_seccomp_default_json (&len);

      *ret = sr_xasprintf ("%.*s", (int) len, text);
      return 0;
    }
  if (sr_read_file (path, ret, &len, err) < 0)
    return sr_error_wrap (err, "seccomp profile");
  return 0;
}

/* cap_keep ("CHOWN, SETUID") as Docker's CapAdd.  */
static char **
cap_add_of (const char *list)
{
  char **v = NULL;
  const char *p = list;

  while (p && *p)
    {
      size_t n;

      p += strspn (p, ", \t");
      n = strcspn (p, ", \t");
      if (n)
        {
          _cleanup_free_ char *word = sr_xasprintf ("%.*s", (int) n, p);

          sr_strv_push (&v, word);
        }
      p += n;
    }
  return v;
}

int
sr_docker_policy_init (const struct sr_config *cfg, struct sr_docker_policy *p, sr_error_t *err)
{
  memset (p, 0, sizeof *p);
  if (seccomp_json (cfg, &p->seccomp, err) < 0)
    return -1;
  p->cap_add = cap_add_of (cfg->cap_keep);
  p->dc = (struct sr_docker_config){
    .memory = cfg->memory,
    /* No swap beyond the memory limit, as native's memory.swap.max = 0.  */
    .memory_swap = cfg->memory,
    .nano_cpus = (uint64_t) (cfg->cpus * 1e9),
    .pids_limit = (uint32_t) cfg->pids,
    .shm_size = SR_DEFAULT_DEV_SHM_SIZE,
    .readonly_root = true,
    .user = SR_DOCKER_DEFAULT_USER,
    .max_file_size = cfg->scratch_size > cfg->tmp_size ? cfg->scratch_size : cfg->tmp_size,
    .max_open_files = SR_DEFAULT_MAX_OPEN_FILES,
    .seccomp_json = p->seccomp,
    .cap_add = p->cap_add,
  };
  return 0;
}

void
sr_docker_policy_done (struct sr_docker_policy *p)
{
  free (p->seccomp);
  sr_strv_free (p->cap_add);
  memset (p, 0, sizeof *p);
}

/* What a Docker stage runs on.  */
struct docker_stage
{
  struct sr_docker *d;
  const struct sr_config *cfg;
  struct sr_docker_config dc;
  const char *scratch;
};

static int
run_docker_stage (void *ctx, struct sr_code_stage *st, struct sr_run_result *res,
                  sr_error_t *err)
{
  const struct docker_stage *ds = ctx;
  const struct sr_config *cfg = ds->cfg;
  struct sr_docker_config dc = ds->dc;
  const char *scratch = ds->scratch;
  _cleanup_strv_ char **argv = sr_code_split_command (st->command), **env = NULL;
  struct sr_docker_bind bind = {
    .source = scratch, .target = SR_CODE_DIR, .readonly = !st->code_writable,
  };
  struct sr_exec_spec spec = { 0 };
  struct sr_run_options opts = {
    .timeout_ms = st->timeout_ms, .max_output = cfg->max_output, .stdin_fd = -1,
    .cancel_fd = st->req->cancel_fd,
  };

  if (argv[0] == NULL)
    return sr_error_set (err, 0, "empty command");
  /* What native sets; an imported image may carry no Env at all.  */
  sr_env_set (&env, "PATH=" SR_DEFAULT_PATH);
  sr_env_set (&env, "HOME=" SR_DEFAULT_HOME);
  sr_env_set (&env, "LANG=" SR_DEFAULT_LANG);
  dc.binds = &bind;
  dc.n_binds = 1;
  /* As native: the CPU-time rlimit backs the wall-clock timeout.  */
  dc.max_cpu_seconds = (uint32_t) ((st->timeout_ms + 999) / 1000 + 1);
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
  struct sr_docker_tmpfs tmpfs[] = {
    { .path = "/tmp", .size = cfg->tmp_size, .exec = false, .mode = 01777 },
    { .path = SR_SCRATCH_DIR, .size = cfg->scratch_size, .exec = true, .mode = 0755 },
  };
  struct sr_docker_policy pol = { 0 };
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
  if (sr_docker_policy_init (cfg, &pol, err) < 0)
    goto out;
  dc = pol.dc;
  dc.image = image;
  dc.tmpfs = tmpfs;
  dc.n_tmpfs = sizeof tmpfs / sizeof tmpfs[0];

  if (sr_code_make_dir (cfg, &scratch, &scratch_fd, &unused_uid, &unused_gid, err) < 0)
    goto out;
  /* The containers run as CODE_UID, not as a mapped root: the directory
   * must be theirs (or, for a non-root runner in the docker group, open
   * to all) for the compiler to write its output.  */
  if (geteuid () == 0 ? fchown (scratch_fd, CODE_UID, CODE_GID) < 0
                      : fchmod (scratch_fd, 0777) < 0)
    {
      sr_error_set (err, errno, "chown %s", scratch);
      goto out;
    }
  if (sr_code_write_source (scratch_fd, l->source, req->code, req->code_len, CODE_UID, CODE_GID,
                            err)
      < 0)
    goto out;

  {
    struct docker_stage ds = { .d = d, .cfg = cfg, .dc = dc, .scratch = scratch };

    r = sr_code_run_stages (cfg, l, req, run_docker_stage, &ds, res, err);
  }

out:
  if (scratch)
    (void) sr_rm_rf_at (AT_FDCWD, scratch, NULL);
  sr_docker_close (d);
  sr_docker_policy_done (&pol);
  return r;
}
