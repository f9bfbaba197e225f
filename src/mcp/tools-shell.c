/* The persistent shells of sessions: shell_new, shell_exec, shell_read,
 * write_stdin, shell_list and shell_remove.  */
#include "config.h"

#include "mcp/tools-internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "sandbox/session.h"

/* \xHH escapes and \\ of write_stdin's data, decoded in place.  */
static size_t
decode_escapes (char *s)
{
  char *o = s;

  for (const char *p = s; *p; p++)
    {
      if (p[0] == '\\' && p[1] == '\\')
        {
          *o++ = '\\';
          p++;
        }
      else if (p[0] == '\\' && p[1] == 'x' && isxdigit ((unsigned char) p[2])
               && isxdigit ((unsigned char) p[3]))
        {
          char hex[3] = { p[2], p[3], '\0' };

          *o++ = (char) strtol (hex, NULL, 16);
          p += 3;
        }
      else
        *o++ = *p;
    }
  return (size_t) (o - s);
}

/* The result of output, its newest max_output bytes.  */
static cJSON *
shell_result (const char *shell_id, struct sr_shell_output *out, uint64_t max_output)
{
  cJSON *o = cJSON_CreateObject ();
  struct sr_captured c;

  if (out->data)
    sr_mcp_fit_tail (out->data, &out->len, max_output, &out->truncated);
  c = (struct sr_captured) { .data = out->data, .len = out->len };
  cJSON_AddStringToObject (o, "shell_id", shell_id);
  sr_mcp_add_output (o, "output", "output_encoding", &c);
  cJSON_AddBoolToObject (o, "truncated", out->truncated);
  cJSON_AddNumberToObject (o, "max_output", (double) max_output);
  cJSON_AddStringToObject (o, "state", sr_shell_state_name (out->state));
  if (out->finished)
    cJSON_AddNumberToObject (o, "exit_code", out->exit_code);
  if (out->timed_out)
    cJSON_AddBoolToObject (o, "timed_out", true);
  sr_shell_output_done (out);
  return sr_mcp_tool_result (o, false);
}

cJSON *
sr_mcp_call_shell_new (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                       bool *ret_cancelled)
{
  _cleanup_free_ char *shell_id = NULL, *session_id = NULL, *def = NULL, *def_shell = NULL;
  const char *machine = sr_mcp_arg_string (args, "session_id");
  sr_error_t err = NULL;
  cJSON *o;

  if (machine == NULL)
    {
      sr_sessions_default_get (ctx->sessions, ctx->owner, &def, &def_shell);
      machine = def;
    }
  if (sr_sessions_shell_new (ctx->sessions, ctx->owner, machine, &shell_id, &session_id, &err)
      < 0)
    return sr_mcp_tool_refusal (&err);
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "shell_id", shell_id);
  cJSON_AddStringToObject (o, "session_id", session_id);
  cJSON_AddStringToObject (o, "state", "ready");
  return sr_mcp_tool_result (o, false);
}

/* The work of a tool on a shell it holds: 0, or -1 with *err set (its
 * code: sr_mcp_tool_refusal).  */
typedef int (*shell_work_fn) (struct sr_shell *sh, void *data, sr_error_t *err);

/* Takes shell id, runs work on it and puts it back.  NULL on success,
 * else the refusal to return.  */
static cJSON *
with_shell (const struct sr_mcp_tool_ctx *ctx, const char *id, shell_work_fn work, void *data)
{
  struct sr_shell *sh;
  sr_error_t err = NULL;
  int r;

  if (sr_sessions_shell_get (ctx->sessions, ctx->owner, id, &sh, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  r = work (sh, data, &err);
  sr_sessions_shell_put (ctx->sessions, sh);
  return r < 0 ? sr_mcp_tool_refusal (&err) : NULL;
}

struct shell_exec
{
  const struct sr_mcp_tool_ctx *ctx;
  const char *command;
  bool wait;
  uint64_t timeout_ms;
  uint64_t output_bytes;
  struct sr_shell_output out;
};

/* The command's output as it comes, as progress.  */
static void
shell_live (const char *buf, size_t len, void *data)
{
  struct shell_exec *x = data;

  x->output_bytes += len;
  x->ctx->on_progress ("shell", x->output_bytes, "output", buf, len, x->ctx->userdata);
}

static int
shell_exec_work (struct sr_shell *sh, void *data, sr_error_t *err)
{
  struct shell_exec *x = data;
  bool told = x->wait && x->ctx->on_shell;
  int r;

  if (told)
    x->ctx->on_shell (sh, x->ctx->userdata);
  r = sr_shell_exec (sh, x->command, x->wait, x->timeout_ms, x->ctx->cancel_fd,
                     x->ctx->on_progress ? shell_live : NULL, x, &x->out, err);
  if (told)
    x->ctx->on_shell (NULL, x->ctx->userdata);
  return r;
}

/* shell_exec's shell: shell_id, else the default shell when it is on
 * machine (or machine is not given), in *ret_id (the caller frees it).
 * NULL, or the refusal to return.  */
static cJSON *
shell_arg (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, char **ret_id)
{
  const char *id = sr_mcp_arg_string (args, "shell_id");
  const char *machine = sr_mcp_arg_string (args, "machine");
  _cleanup_free_ char *def = NULL, *def_shell = NULL;

  if (id)
    {
      _cleanup_free_ char *on = sr_session_of_shell (id);

      if (machine && on && strcmp (on, machine) != 0)
        return sr_mcp_tool_error ("invalid_arguments", "shell %s is not on machine %s", id,
                                  machine);
      *ret_id = sr_xstrdup (id);
      return NULL;
    }
  sr_sessions_default_get (ctx->sessions, ctx->owner, &def, &def_shell);
  if (def_shell == NULL || (machine && strcmp (machine, def) != 0))
    return sr_mcp_tool_error ("invalid_arguments",
                              "name the shell: shell_id (shell_new starts one on a machine), "
                              "or set a default shell with default_set");
  *ret_id = TAKE_PTR (def_shell);
  return NULL;
}

cJSON *
sr_mcp_call_shell_exec (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                        bool *ret_cancelled)
{
  struct shell_exec x = { .ctx = ctx, .command = sr_mcp_arg_string (args, "command"),
                          .wait = sr_mcp_arg_bool (args, "wait", true) };
  _cleanup_free_ char *id = NULL;
  cJSON *bad;

  if ((bad = sr_mcp_timeout_arg (ctx, args, "timeout_seconds", ctx->cfg->timeout_ms,
                                 &x.timeout_ms)))
    return bad;
  if (strlen (x.command) > ctx->cfg->max_code_size)
    return sr_mcp_tool_error ("code_too_large", "the command is over the limit of %llu bytes",
                              (unsigned long long) ctx->cfg->max_code_size);
  if ((bad = shell_arg (ctx, args, &id)) || (bad = with_shell (ctx, id, shell_exec_work, &x)))
    return bad;
  return shell_result (id, &x.out, sr_mcp_max_output_arg (ctx, args));
}

static int
shell_read_work (struct sr_shell *sh, void *data, sr_error_t *err)
{
  (void) err;
  sr_shell_read (sh, data);
  return 0;
}

cJSON *
sr_mcp_call_shell_read (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                        bool *ret_cancelled)
{
  struct sr_shell_output out;
  cJSON *bad;

  if ((bad = with_shell (ctx, sr_mcp_arg_string (args, "shell_id"), shell_read_work, &out)))
    return bad;
  return shell_result (sr_mcp_arg_string (args, "shell_id"), &out,
                       sr_mcp_max_output_arg (ctx, NULL));
}

struct write_stdin
{
  const char *data;
  size_t len;
  enum sr_shell_state state;
};

static int
write_stdin_work (struct sr_shell *sh, void *data, sr_error_t *err)
{
  struct write_stdin *w = data;

  return sr_shell_write (sh, w->data, w->len, &w->state, err);
}

cJSON *
sr_mcp_call_write_stdin (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                         bool *ret_cancelled)
{
  _cleanup_free_ char *data = sr_xstrdup (sr_mcp_arg_string (args, "data"));
  struct write_stdin w = { .data = data, .len = decode_escapes (data) };
  cJSON *o, *bad;

  if ((bad = with_shell (ctx, sr_mcp_arg_string (args, "shell_id"), write_stdin_work, &w)))
    return bad;
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "shell_id", sr_mcp_arg_string (args, "shell_id"));
  cJSON_AddNumberToObject (o, "bytes", (double) w.len);
  cJSON_AddStringToObject (o, "state", sr_shell_state_name (w.state));
  return sr_mcp_tool_result (o, false);
}

void
sr_mcp_add_shells (const struct sr_mcp_tool_ctx *ctx, cJSON *o, const char *machine_key)
{
  struct sr_shell_info *v = NULL;
  size_t n = 0;
  cJSON *list = cJSON_AddArrayToObject (o, "shells");

  sr_sessions_shell_list (ctx->sessions, ctx->owner, &v, &n);
  for (size_t i = 0; i < n; i++)
    {
      cJSON *e = cJSON_CreateObject ();

      cJSON_AddStringToObject (e, "shell_id", v[i].shell_id);
      cJSON_AddStringToObject (e, machine_key, v[i].session_id);
      cJSON_AddStringToObject (e, "state", sr_shell_state_name (v[i].state));
      cJSON_AddItemToArray (list, e);
    }
  sr_shell_infos_free (v, n);
}

cJSON *
sr_mcp_call_shell_list (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                        bool *ret_cancelled)
{
  cJSON *o = cJSON_CreateObject ();

  sr_mcp_add_shells (ctx, o, "session_id");
  return sr_mcp_tool_result (o, false);
}

cJSON *
sr_mcp_call_shell_remove (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                          bool *ret_cancelled)
{
  const char *id = sr_mcp_arg_string (args, "shell_id");
  sr_error_t err = NULL;
  cJSON *o;

  if (sr_sessions_shell_remove (ctx->sessions, ctx->owner, id, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "shell_id", id);
  cJSON_AddBoolToObject (o, "removed", true);
  return sr_mcp_tool_result (o, false);
}
