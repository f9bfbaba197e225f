/* A container's life: create, attach, start, wait, inspect, kill and
 * remove; a run in a fresh container, and a held one for a session.  */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <cjson/cJSON.h>

#include "common/curlbuf.h"
#include "common/defaults.h"
#include "common/json.h"
#include "common/util.h"
#include "docker/engine-internal.h"

/* open_stdin: the command's stdin is attached, and closed when the
 * attach's input ends.  */
static int
create_container (struct sr_docker *d, const struct sr_docker_config *cfg, char *const *argv,
                  char *const *env, const char *cwd, bool held, bool open_stdin, char **ret_id,
                  sr_error_t *err)
{
  _cleanup_json_ cJSON *body = NULL, *resp_json = NULL;
  _cleanup_free_ char *path = NULL;
  struct sr_buf resp = { 0 };
  unsigned char rnd[6] = { 0 };
  const cJSON *id;
  long status;

  if (sr_docker_container_json_ (d, cfg, argv, env, cwd, held, &body, err) < 0)
    return -1;
  if (open_stdin)
    {
      cJSON_ReplaceItemInObjectCaseSensitive (body, "AttachStdin", cJSON_CreateTrue ());
      cJSON_ReplaceItemInObjectCaseSensitive (body, "OpenStdin", cJSON_CreateTrue ());
      cJSON_AddBoolToObject (body, "StdinOnce", true);
    }
  if (getrandom (rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd)
    for (size_t i = 0; i < sizeof rnd; i++)
      rnd[i] = (unsigned char) (sr_now_ns () >> (i * 8));
  path = sr_xasprintf ("/containers/create?name=sandbox-runner-%02x%02x%02x%02x%02x%02x", rnd[0],
                       rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
  status = sr_docker_request_ (d, "POST", path, body, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    return -1;
  if (status == 404)
    {
      sr_buf_done (&resp);
      return sr_docker_image_missing_ (cfg->image, err);
    }
  if (status != 201)
    {
      sr_docker_status_error_ (status, &resp, "create a container", err);
      sr_buf_done (&resp);
      return -1;
    }
  resp_json = cJSON_Parse (resp.data ? resp.data : "");
  sr_buf_done (&resp);
  id = cJSON_GetObjectItemCaseSensitive (resp_json, "Id");
  if (!cJSON_IsString (id) || strspn (id->valuestring, "0123456789abcdef") != strlen (id->valuestring))
    return sr_error_set (err, EPROTO, "create a container: the daemon's answer has no Id");
  *ret_id = sr_xstrdup (id->valuestring);
  return 0;
}

void
sr_docker_remove_container_ (struct sr_docker *d, const char *id)
{
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s?force=1&v=1", id);
  struct sr_buf resp = { 0 };

  (void) sr_docker_request_ (d, "DELETE", path, NULL, CONTROL_TIMEOUT_MS, &resp, NULL);
  sr_buf_done (&resp);
}

void
sr_docker_kill_container_ (struct sr_docker *d, const char *id)
{
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/kill?signal=KILL", id);
  struct sr_buf resp = { 0 };

  /* 409: it is not running any more, which is what we wanted.  */
  (void) sr_docker_request_ (d, "POST", path, NULL, CONTROL_TIMEOUT_MS, &resp, NULL);
  sr_buf_done (&resp);
}

static struct limits
limits_of (const struct sr_docker_config *cfg)
{
  return (struct limits){ cfg->memory, cfg->nano_cpus, cfg->pids_limit };
}

/* A start that failed at exec: 127 for a command that is not there, 126
 * for one that cannot run, as native and shells say.  */
static void
exec_failure_code (const char *msg, struct sr_run_result *r)
{
  if (strstr (msg, "executable file not found") || strstr (msg, "no such file or directory"))
    r->exit_code = 127;
  else if (strstr (msg, "permission denied") || strstr (msg, "exec format error"))
    r->exit_code = 126;
}

struct run_ctx
{
  struct sr_docker *d;
  const char *id;
  struct supervise *sv;
  struct sr_run_result *result;
};

static void
kill_run (void *ctx)
{
  struct run_ctx *rc = ctx;

  sr_docker_kill_container_ (rc->d, rc->id);
}

/* Starts the container, the command's clock with it.  */
static int
start_run (void *ctx, sr_error_t *err)
{
  struct run_ctx *rc = ctx;
  _cleanup_free_ char *start = sr_xasprintf ("/containers/%s/start", rc->id);
  struct sr_buf resp = { 0 };
  long status;

  rc->sv->t0 = sr_now_ns ();
  status = sr_docker_request_ (rc->d, "POST", start, NULL, CONTROL_TIMEOUT_MS, &resp, err);
  if (status >= 0 && status != 204 && status != 304)
    {
      sr_docker_status_error_ (status, &resp, "start the container", err);
      if (err && *err)
        exec_failure_code ((*err)->msg, rc->result);
      status = -1;
    }
  sr_buf_done (&resp);
  return status < 0 ? -1 : 0;
}

int
sr_docker_run (struct sr_docker *d, const struct sr_docker_config *cfg,
               const struct sr_exec_spec *spec, const struct sr_run_options *opts,
               struct sr_run_result *result, sr_error_t *err)
{
  _cleanup_free_ char *id = NULL, *attach = NULL, *wait = NULL, *inspect = NULL;
  struct stream s = { .opts = opts };
  struct xfer x = { 0 };
  struct supervise sv = { .kill = kill_run };
  struct run_ctx rc = { .d = d, .sv = &sv, .result = result };
  struct sr_buf resp = { 0 };
  _cleanup_json_ cJSON *info = NULL;
  size_t cap = opts->max_output ? opts->max_output : SR_DEFAULT_MAX_OUTPUT;
  long status;
  int r = -1;

  sr_docker_result_init_ (d, result, limits_of (cfg));
  s.out.cap = s.err.cap = cap;
  sv.kill_ctx = &rc;
  if (create_container (d, cfg, spec->argv, spec->env, spec->cwd, false, opts->stdin_fd >= 0,
                        &id, err)
      < 0)
    return -1;
  rc.id = id;

  /* Attach first: what the command writes before we listen is lost.  A
   * stdin needs both ways of one connection, which the daemon hijacks.  */
  if (opts->stdin_fd >= 0)
    {
      /* x stays unused, never done: the container is killed below
       * whether or not its output ended.  */
      if (sr_docker_relay_attach_ (d, id, start_run, &rc, opts, &s, &sv, err) < 0)
        goto out;
    }
  else
    {
      attach = sr_xasprintf ("/containers/%s/attach?stream=1&stdout=1&stderr=1", id);
      sr_docker_xfer_start_ (d, &x, attach, NULL, &s);
      if (sr_docker_xfer_until_headers_ (d, &x, &s, "attach to the container", err) < 0
          || start_run (&rc, err) < 0
          || sr_docker_supervise_stream_ (d, &x, opts, &sv, err) < 0)
        goto out;
    }
  result->duration_ns = sr_now_ns () - sv.t0;
  if (!x.done)
    /* The grace after a kill ran out: the container must not outlive us
     * however it got stuck.  */
    sr_docker_kill_container_ (d, id);

  wait = sr_xasprintf ("/containers/%s/wait?condition=not-running", id);
  status = sr_docker_request_ (d, "POST", wait, NULL, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    goto out;
  if (status != 200)
    {
      sr_docker_status_error_ (status, &resp, "wait for the container", err);
      goto out;
    }
  sr_buf_done (&resp);
  /* The exit code and the OOM flag both from the final state.  */
  inspect = sr_xasprintf ("/containers/%s/json", id);
  if (sr_docker_get_json_ (d, inspect, "inspect the container", &info, err) < 0)
    goto out;
  {
    const cJSON *state = cJSON_GetObjectItemCaseSensitive (info, "State");

    sr_docker_set_exit_ (result, sr_docker_json_int_ (state, "ExitCode", -1));
    sr_docker_set_status_ (result, &sv, sr_docker_json_bool_ (state, "OOMKilled"));
  }
  r = 0;

out:
  sr_buf_done (&resp);
  sr_docker_stream_finish_ (&x, &s, result);
  sr_docker_remove_container_ (d, id);
  return r;
}

/* --- sessions --- */

int
sr_docker_hold (struct sr_docker *d, const struct sr_docker_config *cfg,
                struct sr_docker_container **ret, sr_error_t *err)
{
  static char *const sleep_forever[] = { (char *) "sleep", (char *) "infinity", NULL };
  struct sr_docker_container *c = sr_xcalloc (1, sizeof *c);
  _cleanup_free_ char *start = NULL, *inspect = NULL;
  _cleanup_json_ cJSON *info = NULL;
  struct sr_buf resp = { 0 };
  const cJSON *state;
  long status;

  c->d = d;
  c->user = sr_xstrdup (sr_docker_user_of_ (cfg));
  c->limits = limits_of (cfg);
  if (create_container (d, cfg, cfg->hold_command ? cfg->hold_command : sleep_forever, NULL,
                        NULL, true, false, &c->id, err) < 0)
    goto fail;
  start = sr_xasprintf ("/containers/%s/start", c->id);
  status = sr_docker_request_ (d, "POST", start, NULL, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    goto fail;
  if (status != 204 && status != 304)
    {
      sr_docker_status_error_ (status, &resp, "start the session's container", err);
      goto fail;
    }
  inspect = sr_xasprintf ("/containers/%s/json", c->id);
  if (sr_docker_get_json_ (d, inspect, "inspect the session's container", &info, err) < 0)
    goto fail;
  state = cJSON_GetObjectItemCaseSensitive (info, "State");
  if (!sr_docker_json_bool_ (state, "Running"))
    {
      sr_error_set (err, ESRCH, "the session's container exited at once (exit code %d): does "
                    "the image have the hold command?",
                    sr_docker_json_int_ (state, "ExitCode", -1));
      goto fail;
    }
  c->init_pid = sr_docker_json_int_ (state, "Pid", 0);
  sr_buf_done (&resp);
  *ret = c;
  return 0;

fail:
  sr_buf_done (&resp);
  sr_docker_destroy (c);
  return -1;
}

void
sr_docker_destroy (struct sr_docker_container *c)
{
  if (c == NULL)
    return;
  if (c->id)
    sr_docker_remove_container_ (c->d, c->id);
  free (c->id);
  free (c->user);
  free (c);
}

const char *
sr_docker_container_id (const struct sr_docker_container *c)
{
  return c->id;
}

int
sr_docker_container_pid (const struct sr_docker_container *c)
{
  return c->init_pid;
}

bool
sr_docker_container_alive (struct sr_docker_container *c)
{
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/json", c->id);

  return sr_docker_running_ (c->d, path, true, "inspect the session's container") == 1;
}
