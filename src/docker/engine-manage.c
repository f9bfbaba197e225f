/* A held container's lifecycle after sr_docker_hold, for the env tool's
 * Docker actions: stop, start, restart, a curated inspect, its logs and
 * one sample of its stats.  Each acts on a container we hold (struct
 * sr_docker_container), never on an id a caller names, so nothing here
 * can reach a container sandbox-runner did not make.  */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "docker/engine-internal.h"

/* How long stop and restart give the container's init to end before the
 * daemon kills it: a held container runs nothing that saves state.  */
#define STOP_GRACE_S 2
/* The daemon waits the grace, then kills, then answers.  */
#define STOP_TIMEOUT_MS (CONTROL_TIMEOUT_MS + STOP_GRACE_S * 1000L)

/* POST /containers/ID/ACTION.  304 (already so) is success: stopping a
 * stopped container, starting a running one.  */
static int
post_action (struct sr_docker_container *c, const char *action, const char *query,
             sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/%s%s", c->id, action, query);
  struct sr_buf resp = { 0 };
  long status = sr_docker_request_ (c->d, "POST", path, NULL, STOP_TIMEOUT_MS, &resp, err);

  if (status < 0)
    return sr_error_wrap (err, "%s the container", action);
  if (status != 204 && status != 304)
    {
      sr_docker_status_error_ (status, &resp, action, err);
      sr_buf_done (&resp);
      return sr_error_wrap (err, "%s the container", action);
    }
  sr_buf_done (&resp);
  return 0;
}

static int
inspect_json (struct sr_docker_container *c, cJSON **ret, sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/json", c->id);

  return sr_docker_get_json_ (c->d, path, "inspect the container", ret, err);
}

/* A started container has a new init: execs and the session's pid need
 * it.  */
static int
refresh_pid (struct sr_docker_container *c, sr_error_t *err)
{
  _cleanup_json_ cJSON *info = NULL;

  if (inspect_json (c, &info, err) < 0)
    return -1;
  c->init_pid = sr_docker_json_int_ (cJSON_GetObjectItemCaseSensitive (info, "State"), "Pid", 0);
  return 0;
}

int
sr_docker_container_stop (struct sr_docker_container *c, sr_error_t *err)
{
  _cleanup_free_ char *q = sr_xasprintf ("?t=%d", STOP_GRACE_S);

  if (post_action (c, "stop", q, err) < 0)
    return -1;
  c->init_pid = 0;
  return 0;
}

int
sr_docker_container_start (struct sr_docker_container *c, sr_error_t *err)
{
  if (post_action (c, "start", "", err) < 0)
    return -1;
  return refresh_pid (c, err);
}

int
sr_docker_container_restart (struct sr_docker_container *c, sr_error_t *err)
{
  _cleanup_free_ char *q = sr_xasprintf ("?t=%d", STOP_GRACE_S);

  if (post_action (c, "restart", q, err) < 0)
    return -1;
  return refresh_pid (c, err);
}

static char *
json_str (const cJSON *obj, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);

  return sr_xstrdup (cJSON_IsString (v) ? v->valuestring : "");
}

static uint64_t
json_u64 (const cJSON *obj, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);

  return cJSON_IsNumber (v) && v->valuedouble > 0 ? (uint64_t) v->valuedouble : 0;
}

int
sr_docker_container_inspect (struct sr_docker_container *c, struct sr_docker_inspect *ret,
                             sr_error_t *err)
{
  _cleanup_json_ cJSON *info = NULL;
  const cJSON *state, *config, *hc;
  char *name;

  memset (ret, 0, sizeof *ret);
  if (inspect_json (c, &info, err) < 0)
    return -1;
  state = cJSON_GetObjectItemCaseSensitive (info, "State");
  config = cJSON_GetObjectItemCaseSensitive (info, "Config");
  hc = cJSON_GetObjectItemCaseSensitive (info, "HostConfig");
  ret->id = json_str (info, "Id");
  name = json_str (info, "Name");
  /* The daemon's names start with '/'.  */
  ret->name = sr_xstrdup (name[0] == '/' ? name + 1 : name);
  free (name);
  ret->image = json_str (config, "Image");
  ret->state = json_str (state, "Status");
  ret->created = json_str (info, "Created");
  ret->started_at = json_str (state, "StartedAt");
  ret->running = sr_docker_json_bool_ (state, "Running");
  ret->memory = json_u64 (hc, "Memory");
  ret->nano_cpus = json_u64 (hc, "NanoCpus");
  ret->pids_limit = json_u64 (hc, "PidsLimit");
  return 0;
}

void
sr_docker_inspect_done (struct sr_docker_inspect *i)
{
  free (i->id);
  free (i->name);
  free (i->image);
  free (i->state);
  free (i->created);
  free (i->started_at);
  memset (i, 0, sizeof *i);
}

int
sr_docker_container_logs (struct sr_docker_container *c, unsigned tail, size_t max,
                          struct sr_captured *ret_stdout, struct sr_captured *ret_stderr,
                          sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/logs?stdout=1&stderr=1&tail=%u",
                                            c->id, tail);
  struct sr_buf resp = { 0 };
  long status = sr_docker_request_ (c->d, "GET", path, NULL, CONTROL_TIMEOUT_MS, &resp, err);
  /* The logs of a container without a terminal come in the frames of a
   * run's output stream: the same decoder and captures.  */
  struct sr_run_options none = { .stdin_fd = -1, .cancel_fd = -1 };
  struct stream s = { .opts = &none, .status = 200, .out.cap = max, .err.cap = max };

  if (status < 0)
    return sr_error_wrap (err, "read the container's logs");
  if (status != 200)
    {
      sr_docker_status_error_ (status, &resp, "logs", err);
      sr_buf_done (&resp);
      return sr_error_wrap (err, "read the container's logs");
    }
  if (resp.len)
    sr_docker_on_stream_data_ (resp.data, 1, resp.len, &s);
  sr_buf_done (&resp);
  *ret_stdout = sr_capture_finish (&s.out);
  *ret_stderr = sr_capture_finish (&s.err);
  return 0;
}

int
sr_docker_container_stats (struct sr_docker_container *c, struct sr_docker_stats *ret,
                           sr_error_t *err)
{
  /* one-shot: one sample at once, without the second one the daemon
   * otherwise waits for to compute a CPU share.  */
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/stats?stream=false&one-shot=true",
                                            c->id);
  _cleanup_json_ cJSON *st = NULL;
  const cJSON *mem, *cpu, *pids;

  memset (ret, 0, sizeof *ret);
  if (sr_docker_get_json_ (c->d, path, "read the container's stats", &st, err) < 0)
    return -1;
  mem = cJSON_GetObjectItemCaseSensitive (st, "memory_stats");
  cpu = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (st, "cpu_stats"),
                                          "cpu_usage");
  pids = cJSON_GetObjectItemCaseSensitive (st, "pids_stats");
  ret->memory_usage = json_u64 (mem, "usage");
  ret->memory_limit = json_u64 (mem, "limit");
  ret->cpu_total_ns = json_u64 (cpu, "total_usage");
  ret->pids = json_u64 (pids, "current");
  ret->pids_limit = json_u64 (pids, "limit");
  return 0;
}
