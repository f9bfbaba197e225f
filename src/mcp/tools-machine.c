/* Machines, the places shells and file tools act on (sandbox/session.h):
 * machine_list, default_set, and env, the one tool an agent can discover
 * the rest from (help, status, list_targets, connect, close).  */
#include "config.h"

#include "mcp/tools-internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/service.h"
#include "sandbox/session.h"

/* What each kind of machine is for, in machine_list and env status.  */
#define PURPOSE_SANDBOX "sandbox session: an isolated container of image %s"
#define PURPOSE_SSH                                                                        \
  "SSH host, NOT a sandbox: commands and file tools act there with the remote account's " \
  "rights"

/* The machines the caller may see, as machine_list gives them, and the
 * caller's defaults.  */
static cJSON *
machines_json (const struct sr_mcp_tool_ctx *ctx, cJSON *o)
{
  struct sr_session_info *v = NULL;
  size_t n = 0;
  _cleanup_free_ char *def = NULL, *def_shell = NULL;
  cJSON *list;

  sr_sessions_default_get (ctx->sessions, ctx->owner, &def, &def_shell);
  sr_sessions_list (ctx->sessions, ctx->owner, &v, &n);
  list = cJSON_AddArrayToObject (o, "machines");
  for (size_t i = 0; i < n; i++)
    {
      cJSON *e = cJSON_CreateObject ();
      _cleanup_free_ char *purpose = v[i].sandbox ? sr_xasprintf (PURPOSE_SANDBOX, v[i].image)
                                                  : sr_xstrdup (PURPOSE_SSH);

      cJSON_AddStringToObject (e, "name", v[i].id);
      cJSON_AddStringToObject (e, "backend", v[i].backend);
      cJSON_AddStringToObject (e, "status", v[i].busy ? "busy" : "ready");
      cJSON_AddStringToObject (e, "purpose", purpose);
      cJSON_AddNumberToObject (e, "shells", (double) v[i].n_shells);
      cJSON_AddBoolToObject (e, "sandbox", v[i].sandbox);
      cJSON_AddBoolToObject (e, "default", def && strcmp (def, v[i].id) == 0);
      cJSON_AddItemToArray (list, e);
    }
  sr_session_infos_free (v, n);
  cJSON_AddStringToObject (o, "default_machine", def ? def : "");
  cJSON_AddStringToObject (o, "default_shell", def_shell ? def_shell : "");
  return o;
}

cJSON *
sr_mcp_call_machine_list (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                          bool *ret_cancelled)
{
  (void) args, (void) ret_cancelled;
  return sr_mcp_tool_result (machines_json (ctx, cJSON_CreateObject ()), false);
}

cJSON *
sr_mcp_call_default_set (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                         bool *ret_cancelled)
{
  sr_error_t err = NULL;
  _cleanup_free_ char *def = NULL, *def_shell = NULL;
  cJSON *o;

  (void) ret_cancelled;
  if (sr_sessions_default_set (ctx->sessions, ctx->owner, sr_mcp_arg_string (args, "machine"),
                               sr_mcp_arg_string (args, "shell_id"), &err)
      < 0)
    return sr_mcp_tool_refusal (&err);
  sr_sessions_default_get (ctx->sessions, ctx->owner, &def, &def_shell);
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "default_machine", def ? def : "");
  cJSON_AddStringToObject (o, "default_shell", def_shell ? def_shell : "");
  return sr_mcp_tool_result (o, false);
}

/* --- env --- */

/* What every Docker action's help ends with.  */
#define DOCKER_NEEDS                                                                       \
  "Needs a server on the Docker backend (backend = docker, SANDBOX_BACKEND=docker, in "    \
  "sandbox-runner-full) with dockerd reachable; otherwise docker_unavailable."
/* Lines env(action="logs") gives without tail.  */
#define LOGS_TAIL 100
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_ (x)

/* env's actions: the one list help gives and the schema's enum names
 * (tests/integration/mcp-machines.sh checks they agree).  */
static const struct
{
  const char *action, *summary, *doc;
} actions[] = {
  { "help", "lists these actions; with topic=ACTION, documents one",
    "env(action=\"help\") lists the actions; env(action=\"help\", topic=\"connect\") documents "
    "one. Topics are the actions, and \"machines\": a machine is where shell_new, shell_exec and "
    "the file tools act. A sandbox session (create_session) is a machine named by its "
    "session_id; a connected SSH host is one named by its NAME. Pass machine=NAME (or "
    "session_id) to those tools, or set a default with default_set and pass neither." },
  { "status", "your default machine and shell, your machines and their shells",
    "env(action=\"status\") gives default_machine, default_shell, machines (name, backend, "
    "status, purpose, shells, sandbox, default) and shells (shell_id, machine, state)." },
  { "list_targets", "the SSH hosts this server is configured to reach",
    "env(action=\"list_targets\") lists the ssh.NAME entries of the configuration (name, host, "
    "port, user, connected). A Host of the server's OpenSSH configuration (~/.ssh/config, or "
    "the ssh_config setting) can be connected by its name too, without an entry." },
  { "connect", "connects SSH host name as a machine",
    "env(action=\"connect\", name=NAME) opens one connection (OpenSSH, BatchMode, known_hosts "
    "checked: an unknown or changed host key is refused) and makes NAME a machine; home is the "
    "remote account's home, where its commands and relative paths start. An SSH machine is "
    "NOT a sandbox: whatever runs there runs with that account's rights, on anything it can "
    "reach, and run_code refuses it (not_a_sandbox). Connecting a connected NAME again is "
    "harmless." },
  { "close", "closes machine name (an SSH connection, or a sandbox session)",
    "env(action=\"close\", name=NAME) ends the machine's shells and closes it: an SSH "
    "connection ends, a sandbox session is destroyed with its files (as close_session)." },
  /* The Docker lifecycle: only the caller's own sandbox sessions on the
   * Docker backend, never a container this server did not make.  */
  { "run", "Docker: starts a new sandbox machine (a session's container) of image",
    "env(action=\"run\", image=IMAGE) makes a new sandbox session on the Docker backend, with "
    "the full policy (limits, no capabilities, seccomp, no network unless the policy allows "
    "it), and returns its machine name (its session_id). IMAGE is a language name "
    "(list_languages) or the server's session image; no other image is taken "
    "(image_not_allowed). Its name is chosen by the server. " DOCKER_NEEDS },
  { "ps", "Docker: your sandbox machines' containers and their state",
    "env(action=\"ps\") lists your sandbox sessions on the Docker backend: machine, image, "
    "state (running, exited, ...), shells. Containers this server did not make for you are "
    "not listed. " DOCKER_NEEDS },
  { "stop", "Docker: stops machine name; its shells and files go",
    "env(action=\"stop\", name=NAME) stops the machine's container: its shells end "
    "(shells_ended), its processes are killed, and its files go with the memory they "
    "used: every writable directory of a session (" SR_CODE_DIR ", " SR_DATA_DIR ", "
    SR_SCRATCH_DIR ", /tmp) is a tmpfs, never a host directory, and starts empty again. "
    "Commands and file tools are refused (machine_stopped) until start. A stopped machine "
    "keeps its name, image and limits, and is still closed after session_idle_timeout. "
    DOCKER_NEEDS },
  { "start", "Docker: starts stopped machine name again",
    "env(action=\"start\", name=NAME) starts a stopped machine's container again, its "
    "directories empty; start a shell again with shell_new. " DOCKER_NEEDS },
  { "restart", "Docker: restarts machine name (its shells and files go)",
    "env(action=\"restart\", name=NAME) is stop then start: its shells and processes end, "
    "its directories start empty. " DOCKER_NEEDS },
  { "remove", "Docker: removes machine name and all its files (as close)",
    "env(action=\"remove\", name=NAME) closes the sandbox session: its container is "
    "removed with every file, nothing is left. " DOCKER_NEEDS },
  { "inspect", "Docker: machine name's container: id, image, state, created, limits",
    "env(action=\"inspect\", name=NAME) describes the machine's container: container_id, "
    "container_name, image, state, created, started_at, limits (memory_bytes, cpus, pids; 0: "
    "unlimited). " DOCKER_NEEDS },
  { "logs", "Docker: the last lines machine name's container wrote",
    "env(action=\"logs\", name=NAME, tail=N) gives the last N (default "
    STRINGIFY (LOGS_TAIL) ") lines its init wrote to stdout and stderr, each cut at "
    "max_output bytes. What shell_exec and run_code print is in their own results, not "
    "here. " DOCKER_NEEDS },
  { "stats", "Docker: one sample of machine name's memory, CPU time and processes",
    "env(action=\"stats\", name=NAME) gives memory_bytes, memory_limit_bytes, cpu_seconds "
    "(used since it started), pids and pids_limit, sampled once. " DOCKER_NEEDS },
};

static const char *
action_doc (const char *topic)
{
  for (size_t i = 0; i < SR_ARRAY_SIZE (actions); i++)
    if (strcmp (actions[i].action, topic) == 0)
      return actions[i].doc;
  return strcmp (topic, "machines") == 0 ? actions[0].doc : NULL;
}

static cJSON *
env_help (const cJSON *args, cJSON *o)
{
  const char *topic = sr_mcp_arg_string (args, "topic");
  cJSON *list;

  if (topic)
    {
      const char *doc = action_doc (topic);

      if (doc == NULL)
        {
          cJSON_Delete (o);
          return sr_mcp_tool_error ("invalid_arguments",
                                    "no help topic '%s'; env(action=\"help\") lists them",
                                    topic);
        }
      cJSON_AddStringToObject (o, "topic", topic);
      cJSON_AddStringToObject (o, "text", doc);
      return sr_mcp_tool_result (o, false);
    }
  list = cJSON_AddArrayToObject (o, "actions");
  for (size_t i = 0; i < SR_ARRAY_SIZE (actions); i++)
    {
      cJSON *e = cJSON_CreateObject ();

      cJSON_AddStringToObject (e, "action", actions[i].action);
      cJSON_AddStringToObject (e, "summary", actions[i].summary);
      cJSON_AddItemToArray (list, e);
    }
  return sr_mcp_tool_result (o, false);
}

static cJSON *
env_status (const struct sr_mcp_tool_ctx *ctx, cJSON *o)
{
  machines_json (ctx, o);
  sr_mcp_add_shells (ctx, o, "machine");
  return sr_mcp_tool_result (o, false);
}

static cJSON *
env_targets (const struct sr_mcp_tool_ctx *ctx, cJSON *o)
{
  const struct sr_config *cfg = ctx->cfg;
  struct sr_session_info *v = NULL;
  size_t n = 0;
  cJSON *list = cJSON_AddArrayToObject (o, "targets");

  sr_sessions_list (ctx->sessions, ctx->owner, &v, &n);
  for (size_t i = 0; i < cfg->n_ssh_targets; i++)
    {
      const struct sr_ssh_target *t = &cfg->ssh_targets[i];
      cJSON *e = cJSON_CreateObject ();
      bool connected = false;

      for (size_t j = 0; j < n; j++)
        connected |= !v[j].sandbox && strcmp (v[j].id, t->name) == 0;
      cJSON_AddStringToObject (e, "name", t->name);
      cJSON_AddStringToObject (e, "host", *t->host ? t->host : t->name);
      cJSON_AddNumberToObject (e, "port", t->port ? t->port : 22);
      cJSON_AddStringToObject (e, "user", t->user);
      cJSON_AddBoolToObject (e, "connected", connected);
      cJSON_AddItemToArray (list, e);
    }
  sr_session_infos_free (v, n);
  return sr_mcp_tool_result (o, false);
}

/* The name argument of connect and close.  */
static const char *
env_name (const cJSON *args, const char *action, cJSON **ret_bad)
{
  const char *name = sr_mcp_arg_string (args, "name");

  *ret_bad = NULL;
  if (name == NULL || *name == '\0')
    *ret_bad = sr_mcp_tool_error ("invalid_arguments",
                                  "env(action=\"%s\") needs name: the machine "
                                  "(env(action=\"list_targets\") lists the SSH targets)",
                                  action);
  return name;
}

static cJSON *
env_connect (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, cJSON *o)
{
  cJSON *bad;
  const char *name = env_name (args, "connect", &bad);
  _cleanup_free_ char *home = NULL;
  sr_error_t err = NULL;
  bool fresh;

  if (bad || sr_sessions_connect (ctx->sessions, ctx->owner, name, &fresh, &home, &err) < 0)
    {
      cJSON_Delete (o);
      return bad ? bad : sr_mcp_tool_refusal (&err);
    }
  cJSON_AddStringToObject (o, "machine", name);
  cJSON_AddBoolToObject (o, "connected", true);
  cJSON_AddBoolToObject (o, "new", fresh);
  cJSON_AddStringToObject (o, "home", home);
  cJSON_AddBoolToObject (o, "sandbox", false);
  cJSON_AddStringToObject (o, "purpose", PURPOSE_SSH);
  return sr_mcp_tool_result (o, false);
}

static cJSON *
env_close (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, cJSON *o)
{
  cJSON *bad;
  const char *name = env_name (args, "close", &bad);
  sr_error_t err = NULL;

  if (bad || sr_sessions_close (ctx->sessions, ctx->owner, name, &err) < 0)
    {
      cJSON_Delete (o);
      return bad ? bad : sr_mcp_tool_refusal (&err);
    }
  cJSON_AddStringToObject (o, "machine", name);
  cJSON_AddBoolToObject (o, "closed", true);
  return sr_mcp_tool_result (o, false);
}

/* --- env's Docker lifecycle --- */

/* NULL when this server's sandboxes are Docker containers; else the
 * refusal, saying how to get them.  */
static cJSON *
docker_refusal (const struct sr_mcp_tool_ctx *ctx, const char *action)
{
  if (ctx->cfg->backend_kind == SR_BACKEND_DOCKER && ctx->sessions)
    return NULL;
  if (ctx->cfg->backend_kind == SR_BACKEND_DOCKER)
    {
      const char *why = ctx->service ? sr_service_sessions_problem (ctx->service) : NULL;

      return sr_mcp_tool_error ("docker_unavailable",
                                "env(action=\"%s\"): the Docker backend is not available: %s. "
                                "Start dockerd (or set docker_host to its socket) and restart "
                                "the server",
                                action, why ? why : "this server has no session support");
    }
  return sr_mcp_tool_error ("docker_unavailable",
                            "env(action=\"%s\") needs the Docker backend; this server's "
                            "sandboxes run on the %s backend. Start it as sandbox-runner-full "
                            "with backend = docker (SANDBOX_BACKEND=docker) and dockerd "
                            "reachable",
                            action, sr_backend_kind_name (ctx->cfg->backend_kind));
}

/* The images run may start: what the server imports into dockerd for
 * itself (a language's, or the session image), never any image the
 * daemon happens to have.  */
static bool
image_allowed (const struct sr_config *cfg, const char *image)
{
  if (strcmp (image, cfg->session_image) == 0 || sr_config_language (cfg, image))
    return true;
  for (size_t i = 0; i < cfg->n_languages; i++)
    if (strcmp (cfg->languages[i].docker_image, image) == 0)
      return true;
  return false;
}

static cJSON *
env_run (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, cJSON *o)
{
  const char *image = sr_mcp_arg_string (args, "image");
  struct sr_session *s;
  sr_error_t err = NULL;

  if (image == NULL || *image == '\0')
    image = ctx->cfg->session_image;
  if (sr_mcp_arg_string (args, "name"))
    {
      cJSON_Delete (o);
      return sr_mcp_tool_error ("invalid_arguments",
                                "env(action=\"run\") takes no name: the server names the new "
                                "machine (its session_id) in the result");
    }
  if (!image_allowed (ctx->cfg, image))
    {
      cJSON_Delete (o);
      return sr_mcp_tool_error ("image_not_allowed",
                                "env(action=\"run\") starts only the server's images: a "
                                "language name (list_languages) or the session image %s, not "
                                "'%s'",
                                ctx->cfg->session_image, image);
    }
  if (sr_sessions_acquire (ctx->sessions, ctx->owner, NULL, image, ctx->cancel_fd, &s, &err)
      < 0)
    {
      cJSON_Delete (o);
      return sr_mcp_tool_refusal (&err);
    }
  cJSON_AddStringToObject (o, "machine", sr_session_id (s));
  cJSON_AddStringToObject (o, "image", sr_session_image (s));
  sr_session_release (s);
  if (sr_sessions_control (ctx->sessions, ctx->owner, cJSON_GetStringValue (
                               cJSON_GetObjectItemCaseSensitive (o, "machine")),
                           SR_BOX_STATE, 0, 0, o, &err)
      < 0)
    {
      cJSON_Delete (o);
      return sr_mcp_tool_refusal (&err);
    }
  cJSON_AddBoolToObject (o, "sandbox", true);
  return sr_mcp_tool_result (o, false);
}

static cJSON *
env_ps (const struct sr_mcp_tool_ctx *ctx, cJSON *o)
{
  struct sr_session_info *v = NULL;
  size_t n = 0;
  cJSON *list = cJSON_AddArrayToObject (o, "containers");

  sr_sessions_list (ctx->sessions, ctx->owner, &v, &n);
  for (size_t i = 0; i < n; i++)
    {
      cJSON *e;
      sr_error_t err = NULL;

      if (!v[i].sandbox || strcmp (v[i].backend, sr_backend_kind_name (SR_BACKEND_DOCKER)) != 0)
        continue;
      e = cJSON_CreateObject ();
      cJSON_AddStringToObject (e, "machine", v[i].id);
      cJSON_AddStringToObject (e, "image", v[i].image);
      /* A call in flight holds the session: it runs.  */
      if (v[i].busy
          || sr_sessions_control (ctx->sessions, ctx->owner, v[i].id, SR_BOX_STATE, 0, 0, e,
                                  &err)
                 < 0)
        {
          cJSON_AddStringToObject (e, "state", v[i].busy ? "running (busy)" : "unknown");
          sr_error_free (&err);
        }
      cJSON_AddNumberToObject (e, "shells", (double) v[i].n_shells);
      cJSON_AddItemToArray (list, e);
    }
  sr_session_infos_free (v, n);
  return sr_mcp_tool_result (o, false);
}

/* stop, start, restart, inspect, logs, stats: on the caller's session
 * name, through the session manager (only the caller's, only Docker's).  */
static cJSON *
env_control (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, const char *action,
             enum sr_box_action a, cJSON *o)
{
  cJSON *bad;
  const char *name = env_name (args, action, &bad);
  sr_error_t err = NULL;
  uint64_t tail = sr_mcp_arg_count (args, "tail", LOGS_TAIL);

  if (bad == NULL && tail > UINT32_MAX)
    bad = sr_mcp_tool_error ("invalid_arguments", "tail is at most %u lines", UINT32_MAX);
  if (bad
      || sr_sessions_control (ctx->sessions, ctx->owner, name, a, (unsigned) tail,
                              (size_t) sr_mcp_max_output_arg (ctx, args), o, &err)
             < 0)
    {
      cJSON_Delete (o);
      return bad ? bad : sr_mcp_tool_refusal (&err);
    }
  cJSON_AddStringToObject (o, "machine", name);
  if (a == SR_BOX_STOP || a == SR_BOX_RESTART)
    cJSON_AddStringToObject (o, "note",
                             "its shells ended and its files are gone: " SR_CODE_DIR ", "
                             SR_DATA_DIR ", " SR_SCRATCH_DIR " and /tmp are memory (tmpfs) "
                             "and start empty");
  return sr_mcp_tool_result (o, false);
}

static const struct
{
  const char *action;
  enum sr_box_action a;
} controls[] = {
  { "stop", SR_BOX_STOP },       { "start", SR_BOX_START }, { "restart", SR_BOX_RESTART },
  { "inspect", SR_BOX_INSPECT }, { "logs", SR_BOX_LOGS },   { "stats", SR_BOX_STATS },
};

static bool
is_docker_action (const char *action)
{
  if (strcmp (action, "run") == 0 || strcmp (action, "ps") == 0
      || strcmp (action, "remove") == 0)
    return true;
  for (size_t i = 0; i < SR_ARRAY_SIZE (controls); i++)
    if (strcmp (controls[i].action, action) == 0)
      return true;
  return false;
}

static cJSON *
env_docker (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, const char *action, cJSON *o)
{
  cJSON *no = docker_refusal (ctx, action);
  cJSON *bad;

  if (no)
    {
      cJSON_Delete (o);
      return no;
    }
  if (strcmp (action, "run") == 0)
    return env_run (ctx, args, o);
  if (strcmp (action, "ps") == 0)
    return env_ps (ctx, o);
  if (strcmp (action, "remove") == 0)
    {
      const char *name = env_name (args, action, &bad);
      sr_error_t err = NULL;

      if (bad || sr_sessions_control (ctx->sessions, ctx->owner, name, SR_BOX_STATE, 0, 0, o,
                                      &err) < 0
          || sr_sessions_close (ctx->sessions, ctx->owner, name, &err) < 0)
        {
          cJSON_Delete (o);
          return bad ? bad : sr_mcp_tool_refusal (&err);
        }
      cJSON_DeleteItemFromObjectCaseSensitive (o, "state");
      cJSON_AddStringToObject (o, "machine", name);
      cJSON_AddBoolToObject (o, "removed", true);
      return sr_mcp_tool_result (o, false);
    }
  for (size_t i = 0; i < SR_ARRAY_SIZE (controls); i++)
    if (strcmp (controls[i].action, action) == 0)
      return env_control (ctx, args, action, controls[i].a, o);
  cJSON_Delete (o);
  return sr_mcp_tool_error ("invalid_arguments", "no action '%s'; env(action=\"help\") lists them",
                            action);
}

cJSON *
sr_mcp_call_env (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, bool *ret_cancelled)
{
  const char *action = sr_mcp_arg_string (args, "action");
  cJSON *o = cJSON_CreateObject ();

  (void) ret_cancelled;
  cJSON_AddStringToObject (o, "action", action);
  if (strcmp (action, "help") == 0)
    return env_help (args, o);
  if (ctx->sessions == NULL && !is_docker_action (action))
    {
      cJSON_Delete (o);
      return sr_mcp_no_sessions ();
    }
  if (strcmp (action, "status") == 0)
    return env_status (ctx, o);
  if (strcmp (action, "list_targets") == 0)
    return env_targets (ctx, o);
  if (strcmp (action, "connect") == 0)
    return env_connect (ctx, args, o);
  if (strcmp (action, "close") == 0)
    return env_close (ctx, args, o);
  /* The schema's enum leaves only the Docker actions.  */
  return env_docker (ctx, args, action, o);
}
