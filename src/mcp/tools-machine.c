/* Machines, the places shells and file tools act on (sandbox/session.h):
 * machine_list, default_set, and env, the one tool an agent can discover
 * the rest from (help, status, list_targets, connect, close).  */
#include "config.h"

#include "mcp/tools-internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
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

cJSON *
sr_mcp_call_env (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, bool *ret_cancelled)
{
  const char *action = sr_mcp_arg_string (args, "action");
  cJSON *o = cJSON_CreateObject ();

  (void) ret_cancelled;
  cJSON_AddStringToObject (o, "action", action);
  if (strcmp (action, "help") == 0)
    return env_help (args, o);
  if (strcmp (action, "status") == 0)
    return env_status (ctx, o);
  if (strcmp (action, "list_targets") == 0)
    return env_targets (ctx, o);
  if (strcmp (action, "connect") == 0)
    return env_connect (ctx, args, o);
  /* The schema's enum leaves only close.  */
  return env_close (ctx, args, o);
}
