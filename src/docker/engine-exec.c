/* A command in a held container, through the exec API, and the end of
 * what it leaves running: its group and session are killed from the host
 * when we may, else from inside the container.  */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/curlbuf.h"
#include "common/defaults.h"
#include "common/json.h"
#include "common/util.h"
#include "docker/engine-internal.h"

/* After the stream ends, how long an exec may still report Running.  */
#define EXEC_SETTLE_MS 2000u

/* Whether leader leads the process group or the session of pid (fields 5
 * and 6 of /proc/PID/stat).  */
static bool
proc_led_by (const char *pid, int leader)
{
  _cleanup_free_ char *path = sr_xasprintf ("/proc/%s/stat", pid), *stat = NULL;
  const char *p;
  int pgrp = -1, sid = -1;

  if (sr_read_file (path, &stat, NULL, NULL) < 0)
    return false;
  p = strrchr (stat, ')');
  if (p == NULL || sscanf (p + 1, " %*c %*d %d %d", &pgrp, &sid) != 2)
    return false;
  return pgrp == leader || sid == leader;
}

static bool
proc_in_container (const char *pid, const char *id)
{
  _cleanup_free_ char *path = sr_xasprintf ("/proc/%s/cgroup", pid), *cg = NULL;

  return sr_read_file (path, &cg, NULL, NULL) == 0 && strstr (cg, id) != NULL;
}

/* The last NSpgid of pid: its process group as the container sees it.  */
static int
proc_ns_pgrp (const char *pid)
{
  _cleanup_free_ char *path = sr_xasprintf ("/proc/%s/status", pid), *st = NULL;
  const char *p;
  int v = -1;

  if (sr_read_file (path, &st, NULL, NULL) < 0 || (p = strstr (st, "\nNSpgid:")) == NULL)
    return -1;
  p += 8;
  for (;;)
    {
      char *end;
      long n = strtol (p, &end, 10);

      if (end == p)
        break;
      v = (int) n;
      p = end;
    }
  return v;
}

/* Runs `kill -KILL -- -PGRP` inside the container, as its user: for a
 * runner that may not signal the container's processes from outside.  */
static void
kill_group_inside (struct sr_docker_container *c, int ns_pgrp)
{
  _cleanup_free_ char *cmd = sr_xasprintf ("kill -KILL -- -%d", ns_pgrp);
  char *argv[] = { (char *) "sh", (char *) "-c", cmd, NULL };
  _cleanup_json_ cJSON *body = cJSON_CreateObject (), *resp_json = NULL, *start = NULL;
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/exec", c->id), *spath = NULL;
  struct sr_buf resp = { 0 };
  const cJSON *id;

  sr_docker_add_strv_ (body, "Cmd", argv);
  if (*c->user)
    cJSON_AddStringToObject (body, "User", c->user);
  if (sr_docker_request_ (c->d, "POST", path, body, CONTROL_TIMEOUT_MS, &resp, NULL) != 201)
    goto out;
  resp_json = cJSON_Parse (resp.data ? resp.data : "");
  id = cJSON_GetObjectItemCaseSensitive (resp_json, "Id");
  if (!cJSON_IsString (id))
    goto out;
  sr_buf_done (&resp);
  spath = sr_xasprintf ("/exec/%s/start", id->valuestring);
  start = cJSON_CreateObject ();
  cJSON_AddBoolToObject (start, "Detach", true);
  (void) sr_docker_request_ (c->d, "POST", spath, start, CONTROL_TIMEOUT_MS, &resp, NULL);
out:
  sr_buf_done (&resp);
}

/* Kills every process of the group and the session led by the exec's
 * process (host pid leader): runc makes each exec'd process a session and
 * group leader, so this is the command and everything it started that did
 * not leave its session (an interactive shell's jobs have groups of their
 * own).  Only processes in this container's cgroup are touched, which
 * guards against a reused pid.  Returns how many processes were found.  */
static unsigned
kill_exec_group (struct sr_docker_container *c, int leader)
{
  unsigned found = 0;
  int inside = -1;

  if (leader <= 0)
    return 0;
  /* A few rounds: a process may fork while we look.  */
  for (int round = 0; round < 5; round++)
    {
      DIR *dir = opendir ("/proc");
      struct dirent *e;
      unsigned this_round = 0;

      if (dir == NULL)
        return found;
      while ((e = readdir (dir)))
        {
          if (!isdigit ((unsigned char) e->d_name[0]) || !proc_led_by (e->d_name, leader)
              || !proc_in_container (e->d_name, c->id))
            continue;
          this_round++;
          if (kill ((pid_t) atoi (e->d_name), SIGKILL) < 0 && errno == EPERM && inside < 0)
            inside = proc_ns_pgrp (e->d_name);
        }
      closedir (dir);
      found += this_round;
      if (this_round == 0)
        break;
      if (inside > 0)
        {
          kill_group_inside (c, inside);
          inside = 0;
        }
      usleep (20000);
    }
  return found;
}

struct exec_ctx
{
  struct sr_docker_container *c;
  const char *exec_id;
  int pid;              /* the exec's process on the host, once known */
};

static int
exec_inspect (struct sr_docker_container *c, const char *exec_id, cJSON **ret, sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("/exec/%s/json", exec_id);

  return sr_docker_get_json_ (c->d, path, "inspect the exec", ret, err);
}

static void
kill_exec (void *ctx)
{
  struct exec_ctx *ec = ctx;

  if (ec->pid <= 0)
    {
      _cleanup_json_ cJSON *info = NULL;

      if (exec_inspect (ec->c, ec->exec_id, &info, NULL) == 0)
        ec->pid = sr_docker_json_int_ (info, "Pid", 0);
    }
  /* A daemon whose processes we cannot see (another pid namespace): the
   * only way to stop the command is to stop the session.  */
  if (kill_exec_group (ec->c, ec->pid) == 0)
    {
      _cleanup_json_ cJSON *info = NULL;

      if (exec_inspect (ec->c, ec->exec_id, &info, NULL) < 0
          || sr_docker_json_bool_ (info, "Running"))
        sr_docker_kill_container_ (ec->c->d, ec->c->id);
    }
}

/* How long after an exec's end its OOM event may still be on its way:
 * the daemon learns of the kill from containerd, asynchronously.  */
#define OOM_EVENT_WAIT_S 1

/* Whether the daemon has an "oom" event of the container since t0: the
 * events API with until in the near future answers what it has in the
 * window, then ends.  */
static bool
oom_event_since (struct sr_docker_container *c, struct timespec t0)
{
  _cleanup_free_ char *filter = NULL, *esc = NULL, *path = NULL;
  struct sr_buf resp = { 0 };
  long status;
  bool oom;

  filter = sr_xasprintf ("{\"container\":[\"%s\"],\"event\":[\"oom\"]}", c->id);
  esc = sr_docker_escape_ (filter);
  /* A second early: since is inclusive but the event's time is the
   * daemon's clock, which may lag ours on another host.  */
  path = sr_xasprintf ("/events?since=%lld&until=%lld&filters=%s", (long long) t0.tv_sec - 1,
                       (long long) time (NULL) + OOM_EVENT_WAIT_S, esc);
  status = sr_docker_request_ (c->d, "GET", path, NULL, CONTROL_TIMEOUT_MS, &resp, NULL);
  oom = status == 200 && resp.data && strstr (resp.data, "\"oom\"") != NULL;
  sr_buf_done (&resp);
  return oom;
}

int
sr_docker_exec (struct sr_docker_container *c, const struct sr_exec_spec *spec,
                const struct sr_run_options *opts, struct sr_run_result *result,
                sr_error_t *err)
{
  _cleanup_json_ cJSON *body = cJSON_CreateObject (), *created = NULL, *start = NULL;
  _cleanup_json_ cJSON *info = NULL;
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/exec", c->id), *spath = NULL;
  _cleanup_free_ char *exec_id = NULL;
  struct stream s = { .opts = opts };
  struct xfer x = { 0 };
  struct exec_ctx ec = { .c = c };
  struct supervise sv = { .kill = kill_exec, .kill_ctx = &ec };
  struct sr_buf resp = { 0 };
  size_t cap = opts->max_output ? opts->max_output : SR_DEFAULT_MAX_OUTPUT;
  struct timespec t0_wall = { 0 };
  bool tty = opts->stdin_fd >= 0 && isatty (opts->stdin_fd);
  const cJSON *id;
  long status;
  int r = -1;

  sr_docker_result_init_ (c->d, result, c->limits);
  s.out.cap = s.err.cap = cap;
  if (spec->argv == NULL || spec->argv[0] == NULL)
    return sr_error_set (err, EINVAL, "no command given");
  sr_docker_add_strv_ (body, "Cmd", spec->argv);
  sr_docker_add_env_ (body, spec->env);
  cJSON_AddStringToObject (body, "WorkingDir", spec->cwd ? spec->cwd : SR_DEFAULT_WORKDIR);
  cJSON_AddBoolToObject (body, "AttachStdin", opts->stdin_fd >= 0);
  cJSON_AddBoolToObject (body, "AttachStdout", true);
  cJSON_AddBoolToObject (body, "AttachStderr", true);
  cJSON_AddBoolToObject (body, "Tty", tty);
  if (*c->user)
    cJSON_AddStringToObject (body, "User", c->user);
  status = sr_docker_request_ (c->d, "POST", path, body, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    goto out;
  if (status == 409 || status == 404)
    {
      sr_docker_api_error_ (status, &resp, ESRCH, "the session's container is gone", err);
      goto out;
    }
  if (status != 201)
    {
      sr_docker_status_error_ (status, &resp, "create an exec", err);
      goto out;
    }
  created = cJSON_Parse (resp.data ? resp.data : "");
  sr_buf_done (&resp);
  id = cJSON_GetObjectItemCaseSensitive (created, "Id");
  if (!cJSON_IsString (id))
    {
      sr_error_set (err, EPROTO, "create an exec: the daemon's answer has no Id");
      goto out;
    }
  exec_id = sr_xstrdup (id->valuestring);
  ec.exec_id = exec_id;

  spath = sr_xasprintf ("/exec/%s/start", exec_id);
  start = cJSON_CreateObject ();
  cJSON_AddBoolToObject (start, "Detach", false);
  cJSON_AddBoolToObject (start, "Tty", tty);
  sv.t0 = sr_now_ns ();
  clock_gettime (CLOCK_REALTIME, &t0_wall);
  if (opts->stdin_fd >= 0)
    {
      if (sr_docker_relay_exec_ (c, exec_id, spath, start, opts, tty, &s, &sv, err) < 0)
        goto out;
    }
  else
    {
      sr_docker_xfer_start_ (c->d, &x, spath, start, &s);
      if (sr_docker_xfer_until_headers_ (c->d, &x, &s, "start the exec", err) < 0)
        goto out;
      if (sr_docker_supervise_stream_ (c->d, &x, opts, &sv, err) < 0)
        goto out;
    }
  result->duration_ns = sr_now_ns () - sv.t0;

  /* The stream ends when the command's output closes; its exit code may
   * take a moment longer to be recorded.  */
  for (uint64_t until = sr_now_ns () + EXEC_SETTLE_MS * 1000000ull;;)
    {
      cJSON_Delete (info);
      info = NULL;
      if (exec_inspect (c, exec_id, &info, err) < 0)
        goto out;
      if (!sr_docker_json_bool_ (info, "Running") || sr_now_ns () >= until)
        break;
      usleep (10000);
    }
  ec.pid = sr_docker_json_int_ (info, "Pid", ec.pid);
  if (sr_docker_json_bool_ (info, "Running"))
    kill_exec (&ec);
  else
    /* What the command left running in its group dies with it.  */
    (void) kill_exec_group (c, ec.pid);
  if (!sr_docker_json_bool_ (info, "Running")
      && cJSON_IsNumber (cJSON_GetObjectItemCaseSensitive (info, "ExitCode")))
    sr_docker_set_exit_ (result, sr_docker_json_int_ (info, "ExitCode", -1));
  else
    result->signal = SIGKILL;
  sr_docker_set_status_ (result, &sv,
                         result->signal == SIGKILL && !sv.timed_out && !sv.cancelled
                             && oom_event_since (c, t0_wall));
  r = 0;

out:
  sr_buf_done (&resp);
  sr_docker_stream_finish_ (&x, &s, result);
  return r;
}
