/* Sessions on the Docker backend (backend = docker), and the backend's
 * table (sandbox/backend.h; its state and run_code are docker-run.c's):
 * each session is one held container (docker/engine.h sr_docker_hold)
 * with the policy of a Docker run_code plus a persistent, size-capped
 * tmpfs at SR_DATA_DIR and another at SR_CODE_DIR, where the code goes
 * through the file primitives (no host directory).  Commands run through the exec API; the files of
 * sandbox/files.h go through small commands of the image's own shell and
 * coreutils run in the container as its user (files-script.h), never
 * through the host's /proc/<pid>/root, which a runner in the docker group
 * may not open (and which a remote daemon does not have).
 *
 * Persistent shells run through an exec with its stdin attached: the
 * host terminal shell.c hands over is relayed raw to a terminal of the
 * exec's own (docker/engine.h), so ^C is interpreted in the container.
 *
 * Only sandbox-runner-full links this file: it registers
 * sr_docker_backend (cli/main-full.c).  */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/defaults.h"
#include "common/util.h"
#include "docker/engine.h"
#include "sandbox/backend.h"
#include "sandbox/code-internal.h"
#include "sandbox/docker-run.h"
#include "sandbox/files-script.h"

/* Raw bytes of one argument of a file write: their base64 stays well
 * under the kernel's MAX_ARG_STRLEN (128 KiB), and CHUNKS_PER_EXEC of
 * them under ARG_MAX.  */
#define CHUNK_RAW (72u * 1024u)
#define CHUNKS_PER_EXEC 8u

/* How long the daemon's word that a container runs is taken as still
 * true: the manager asks under its lock, for every session, every
 * second.  */
#define ALIVE_CACHE_NS 2000000000ull

struct sr_backend_box
{
  struct sr_docker_state *ds;
  struct sr_docker_container *c;
  char *image;
  uint64_t alive_at;   /* when the daemon last said it runs; 0: never */
  bool stopped;        /* by env(action="stop"): alive for the manager, no commands */
  struct sr_fs_script fs;  /* its files, through run_script */
};

static void
docker_destroy (struct sr_backend_box *b)
{
  if (b == NULL)
    return;
  sr_docker_destroy (b->c);
  free (b->image);
  free (b);
}

/* The manager calls this under its lock (one call at a time).  A dead
 * container stays dead, so only "alive" is cached.  */
static bool
docker_alive (struct sr_backend_box *b)
{
  uint64_t now = sr_now_ns ();

  /* Stopped on purpose: the session stays, to be started again.  */
  if (b->stopped)
    return true;
  if (b->alive_at && now - b->alive_at < ALIVE_CACHE_NS)
    return true;
  if (!sr_docker_container_alive (b->c))
    return false;
  b->alive_at = now;
  return true;
}

static pid_t
docker_pid (const struct sr_backend_box *b)
{
  return (pid_t) sr_docker_container_pid (b->c);
}

static const char *
docker_image (const struct sr_backend_box *b)
{
  return b->image;
}

/* What native sets; an imported image may carry no Env at all.  */
static char **
docker_env (const struct sr_backend_box *b)
{
  return sr_policy_env (b->ds->policy, NULL);
}

static int
docker_exec (struct sr_backend_box *b, const struct sr_exec_spec *spec,
             const struct sr_run_options *opts, struct sr_run_result *res, sr_error_t *err)
{
  if (b->stopped)
    return sr_error_set_code (err, "machine_stopped", 0,
                              "the machine is stopped; env(action=\"start\", name=...) "
                              "starts it again");
  return sr_docker_exec (b->c, spec, opts, res, err);
}

/* How the file primitives run their scripts (struct sr_fs_script): in
 * the container, as its user.  */
static int
run_script (void *ctx, char *const *argv, uint64_t timeout_ms, size_t max_out, int cancel_fd,
            struct sr_run_result *res, sr_error_t *err)
{
  struct sr_backend_box *b = ctx;
  _cleanup_strv_ char **env = docker_env (b);
  struct sr_run_options opts = {
    .timeout_ms = timeout_ms, .max_output = max_out, .stdin_fd = -1, .cancel_fd = cancel_fd,
  };
  struct sr_exec_spec spec = { .argv = argv, .env = env, .cwd = "/" };

  return docker_exec (b, &spec, &opts, res, err);
}

/* --- env's Docker actions (the control op) --- */

static int
add_inspect (struct sr_backend_box *b, cJSON *out, sr_error_t *err)
{
  struct sr_docker_inspect i;
  cJSON *limits;

  if (sr_docker_container_inspect (b->c, &i, err) < 0)
    return -1;
  cJSON_AddStringToObject (out, "container_id", i.id);
  cJSON_AddStringToObject (out, "container_name", i.name);
  /* The image as the session was asked for it, which is what the daemon
   * knows it by too.  */
  cJSON_AddStringToObject (out, "image", i.image);
  cJSON_AddStringToObject (out, "state", i.state);
  cJSON_AddStringToObject (out, "created", i.created);
  cJSON_AddStringToObject (out, "started_at", i.started_at);
  limits = cJSON_AddObjectToObject (out, "limits");
  cJSON_AddNumberToObject (limits, "memory_bytes", (double) i.memory);
  cJSON_AddNumberToObject (limits, "cpus", (double) i.nano_cpus / 1e9);
  cJSON_AddNumberToObject (limits, "pids", (double) i.pids_limit);
  sr_docker_inspect_done (&i);
  return 0;
}

static int
add_state (struct sr_backend_box *b, cJSON *out, sr_error_t *err)
{
  struct sr_docker_inspect i;

  if (sr_docker_container_inspect (b->c, &i, err) < 0)
    return -1;
  cJSON_AddStringToObject (out, "state", i.state);
  sr_docker_inspect_done (&i);
  return 0;
}

static int
add_logs (struct sr_backend_box *b, unsigned tail, size_t max, cJSON *out, sr_error_t *err)
{
  struct sr_captured o, e;

  if (sr_docker_container_logs (b->c, tail, max, &o, &e, err) < 0)
    return -1;
  cJSON_AddStringToObject (out, "stdout", o.data);
  cJSON_AddStringToObject (out, "stderr", e.data);
  cJSON_AddBoolToObject (out, "truncated", o.truncated || e.truncated);
  sr_captured_done (&o);
  sr_captured_done (&e);
  return 0;
}

static int
add_stats (struct sr_backend_box *b, cJSON *out, sr_error_t *err)
{
  struct sr_docker_stats st;

  if (b->stopped)
    return sr_error_set_code (err, "machine_stopped", 0,
                              "a stopped machine uses nothing; env(action=\"start\") first");
  if (sr_docker_container_stats (b->c, &st, err) < 0)
    return -1;
  cJSON_AddNumberToObject (out, "memory_bytes", (double) st.memory_usage);
  cJSON_AddNumberToObject (out, "memory_limit_bytes", (double) st.memory_limit);
  cJSON_AddNumberToObject (out, "cpu_seconds", (double) st.cpu_total_ns / 1e9);
  cJSON_AddNumberToObject (out, "pids", (double) st.pids);
  cJSON_AddNumberToObject (out, "pids_limit", (double) st.pids_limit);
  return 0;
}

static int
docker_control (struct sr_backend_box *b, enum sr_box_action a, unsigned tail,
                size_t max_output, cJSON *out, sr_error_t *err)
{
  int r = 0;

  switch (a)
    {
    case SR_BOX_STATE:
      return add_state (b, out, err);
    case SR_BOX_STOP:
      r = sr_docker_container_stop (b->c, err);
      b->stopped |= r == 0;
      break;
    case SR_BOX_START:
      r = sr_docker_container_start (b->c, err);
      break;
    case SR_BOX_RESTART:
      r = sr_docker_container_restart (b->c, err);
      break;
    case SR_BOX_INSPECT:
      return add_inspect (b, out, err);
    case SR_BOX_LOGS:
      return add_logs (b, tail, max_output, out, err);
    case SR_BOX_STATS:
      return add_stats (b, out, err);
    }
  if (r < 0)
    return -1;
  if (a != SR_BOX_STOP)
    {
      b->stopped = false;
      b->alive_at = 0;
    }
  return add_state (b, out, err);
}

static int
docker_create (void *state, const char *id, const char *image_ref,
               const struct sr_policy_ids *ids, struct sr_backend_box **ret,
               struct sr_fsroot *fs, sr_error_t *err)
{
  struct sr_docker_state *ds = state;
  struct sr_backend_box *b = sr_xcalloc (1, sizeof *b);
  struct sr_docker_tmpfs tmpfs[SR_POLICY_DOCKER_TMPFS];
  struct sr_docker_label labels[] = { { "org.sandbox-runner.session", id } };
  struct sr_docker_config dc;
  sr_error_t e = NULL;
  char *image;

  b->ds = ds;
  /* A language's name ("python") means its Docker image, as run_code's
   * backend maps it; anything else is a Docker image reference.  */
  image = sr_docker_code_image (ds->cfg, image_ref);
  b->image = image ? image : sr_xstrdup (image_ref);
  if (sr_docker_image_exists (ds->d, b->image, NULL, &e) < 0)
    {
      sr_error_recode (&e, e->errnum == ENOENT ? "image_missing" : "sandbox_error");
      sr_error_move (err, &e);
      sr_error_wrap (err, "session image %s", image_ref);
      goto fail;
    }
  /* Files are made in the container, as its user: the host's ids of its
   * root do not matter here.  */
  (void) ids;

  sr_policy_to_docker (ds->policy, tmpfs, &dc);
  dc.image = b->image;
  dc.labels = labels;
  dc.n_labels = sizeof labels / sizeof labels[0];
  if (sr_docker_hold (ds->d, &dc, &b->c, err) < 0)
    {
      sr_error_wrap (err, "create the session's container");
      goto fail;
    }
  b->fs = (struct sr_fs_script){ .run = run_script, .ctx = b, .chunk_raw = CHUNK_RAW,
                                 .chunks_per_run = CHUNKS_PER_EXEC };
  *fs = (struct sr_fsroot){ .ops = &sr_fs_script_ops, .ctx = &b->fs };
  *ret = b;
  return 0;

fail:
  docker_destroy (b);
  return -1;
}

const struct sr_backend sr_docker_backend = {
  .kind = SR_BACKEND_DOCKER,
  .keeps_warm = false,
  .shell_one_stream = true,
  .takes_ids = false,
  .shares_mounts = false,
  .open = sr_docker_state_open,
  .close = sr_docker_state_close,
  .code_dir = sr_docker_code_dir,
  .run_begin = sr_docker_run_begin,
  .run_stage = sr_docker_run_stage,
  .run_end = sr_docker_run_end,
  .run_image_id = sr_docker_run_image_id,
  .create = docker_create,
  .destroy = docker_destroy,
  .alive = docker_alive,
  .pid = docker_pid,
  .image = docker_image,
  .env = docker_env,
  .exec = docker_exec,
  .control = docker_control,
};
