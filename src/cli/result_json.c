#include <config.h>

#include <string.h>

#include "cli/result_json.h"
#include "common/utf8.h"
#include "common/util.h"

static void
add_text (cJSON *o, const char *key, const struct sr_captured *c)
{
  _cleanup_free_ char *clean = sr_utf8_sanitize (c->data ? c->data : "", c->len, NULL);

  cJSON_AddStringToObject (o, key, clean);
}

static void
add_limits (cJSON *o, const struct sr_run_result *r)
{
  cJSON *l = cJSON_AddObjectToObject (o, "limits");

  cJSON_AddStringToObject (l, "memory", sr_limit_mechanism_name (r->limits.memory));
  cJSON_AddStringToObject (l, "cpu", sr_limit_mechanism_name (r->limits.cpu));
  cJSON_AddStringToObject (l, "pids", sr_limit_mechanism_name (r->limits.pids));
}

static double
ms_between (const struct sr_run_result *r, enum sr_mark from, enum sr_mark to)
{
  if (r->marks[from] == 0 || r->marks[to] == 0 || r->marks[to] < r->marks[from])
    return 0;
  return (double) (r->marks[to] - r->marks[from]) / 1e6;
}

/* The setup path step by step, from the runtime's own timing points.  */
static void
add_setup (cJSON *o, const struct sr_run_result *r)
{
  static const struct { const char *name; enum sr_mark from, to; } steps[] = {
    { "cgroup", SR_MARK_LIMITS, SR_MARK_CLONE },
    { "clone", SR_MARK_CLONE, SR_MARK_CHILD_START },
    { "cgroup_attach", SR_MARK_CHILD_START, SR_MARK_ATTACHED },
    { "idmap", SR_MARK_ATTACHED, SR_MARK_IDMAP },
    { "mounts", SR_MARK_IDMAP, SR_MARK_MOUNTS },
    { "pivot_root", SR_MARK_MOUNTS, SR_MARK_PIVOT },
    { "net", SR_MARK_PIVOT, SR_MARK_NET },
    { "ready", SR_MARK_NET, SR_MARK_READY },
    { "start", SR_MARK_READY, SR_MARK_START },
    { "policy", SR_MARK_START, SR_MARK_CAPS },
    { "seccomp", SR_MARK_CAPS, SR_MARK_SECCOMP },
    { "exec", SR_MARK_SECCOMP, SR_MARK_EXEC },
  };
  cJSON *s = cJSON_AddObjectToObject (o, "setup_ms");
  int first = 0;

  for (size_t i = 0; i < SR_ARRAY_SIZE (steps); i++)
    cJSON_AddNumberToObject (s, steps[i].name, ms_between (r, steps[i].from, steps[i].to));
  /* The total runs from the first timing point reached: a command in a
   * held container makes no cgroup and starts at clone.  */
  while (first < SR_MARK_EXEC && r->marks[first] == 0)
    first++;
  cJSON_AddNumberToObject (s, "total", ms_between (r, (enum sr_mark) first, SR_MARK_EXEC));
}

cJSON *
sr_result_to_json (const struct sr_run_result *r)
{
  cJSON *o = cJSON_CreateObject ();

  cJSON_AddStringToObject (o, "status", sr_run_status_name (r->status));
  cJSON_AddNumberToObject (o, "exit_code", r->signal ? 128 + r->signal : r->exit_code);
  if (r->signal)
    cJSON_AddNumberToObject (o, "signal", r->signal);
  else
    cJSON_AddNullToObject (o, "signal");
  add_text (o, "stdout", &r->out);
  add_text (o, "stderr", &r->err);
  cJSON_AddBoolToObject (o, "stdout_truncated", r->out.truncated);
  cJSON_AddBoolToObject (o, "stderr_truncated", r->err.truncated);
  cJSON_AddNumberToObject (o, "stdout_bytes", (double) r->out.total);
  cJSON_AddNumberToObject (o, "stderr_bytes", (double) r->err.total);
  cJSON_AddNumberToObject (o, "duration_ms", (double) r->duration_ns / 1e6);
  cJSON_AddNumberToObject (o, "cpu_ms", (double) r->cpu_ns / 1e6);
  add_limits (o, r);
  if (r->memory_limit)
    cJSON_AddNumberToObject (o, "memory_limit_bytes", (double) r->memory_limit);
  if (r->memory_peak)
    cJSON_AddNumberToObject (o, "memory_peak_bytes", (double) r->memory_peak);
  add_setup (o, r);
  return o;
}

cJSON *
sr_setup_error_to_json (const struct sr_run_result *r, const char *message)
{
  cJSON *o = cJSON_CreateObject ();
  _cleanup_free_ char *clean = sr_utf8_sanitize (message, strlen (message), NULL);

  cJSON_AddStringToObject (o, "status", "error");
  cJSON_AddNumberToObject (o, "exit_code", r->exit_code ? r->exit_code : 125);
  cJSON_AddNullToObject (o, "signal");
  cJSON_AddStringToObject (o, "error", clean);
  cJSON_AddStringToObject (o, "stdout", "");
  cJSON_AddStringToObject (o, "stderr", "");
  cJSON_AddBoolToObject (o, "stdout_truncated", false);
  cJSON_AddBoolToObject (o, "stderr_truncated", false);
  cJSON_AddNumberToObject (o, "duration_ms", 0);
  add_limits (o, r);
  return o;
}
