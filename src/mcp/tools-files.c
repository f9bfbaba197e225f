/* The file tools of sessions: file_read, file_write, file_patch and
 * file_search.  Their refusals carry the codes of sandbox/files.h.  Each
 * result has "warnings": advisory lines for the paths it touched that
 * look like secrets (sr_files_sensitive).  */
#include "config.h"

#include "mcp/tools-internal.h"

#include <string.h>

#include "common/utf8.h"
#include "common/util.h"
#include "sandbox/files.h"
#include "sandbox/session.h"

#define FILE_READ_DEFAULT_LINES 2000u
#define FILE_SEARCH_MAX_MATCHES 1000u
/* How long one file_search may take: a pattern that is slow on long
 * lines (x*[yz] is quadratic in a line's length) gives up rather than
 * hold a server thread.  */
#define FILE_SEARCH_MAX_MS      10000u
/* The most of one matching line file_search returns (a minified file is
 * one line).  */
#define FILE_SEARCH_MAX_LINE 500u

/* Adds to warnings (once) the advisory line of a path that looks like a
 * secret.  */
static void
warn_sensitive (cJSON *warnings, const char *path)
{
  const char *what = sr_files_sensitive (path);
  _cleanup_free_ char *msg = NULL, *clean = NULL;
  const cJSON *w;
  size_t len;

  if (what == NULL)
    return;
  msg = sr_xasprintf ("sensitive path: %s looks like %s; take care what is read from it or "
                      "written to it",
                      path, what);
  clean = sr_utf8_sanitize (msg, strlen (msg), &len);
  cJSON_ArrayForEach (w, warnings)
    if (strcmp (w->valuestring, clean) == 0)
      return;
  cJSON_AddItemToArray (warnings, cJSON_CreateString (clean));
}

/* "warnings" on o, with the one of path.  */
static cJSON *
add_warnings (cJSON *o, const char *path)
{
  cJSON *warnings = cJSON_AddArrayToObject (o, "warnings");

  warn_sensitive (warnings, path);
  return warnings;
}

/* On an SSH machine, a relative path (or none, for file_search) starts at
 * the remote account's home (sandbox/session.h): *own, the caller's path
 * argument, becomes the absolute one.  Returns the path to use.  */
static const char *
machine_path (struct sr_session *s, char **own)
{
  const char *home = sr_session_home (s);
  char *abs;

  if (home == NULL || (*own && **own == '/'))
    return *own;
  abs = *own && **own ? sr_xasprintf ("%s/%s", home, *own) : sr_xstrdup (home);
  free (*own);
  *own = abs;
  return abs;
}

struct file_read
{
  char **own;              /* the path argument (machine_path) */
  const char *path;
  uint64_t offset, limit, total;
  char *text;
};

static int
file_read_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                sr_error_t *err)
{
  struct file_read *f = data;

  f->path = machine_path (s, f->own);
  return sr_files_read_lines (sr_session_fs (s), f->path, f->offset, f->limit,
                              ctx->cfg->max_artifact_size, &f->text, &f->total, err);
}

/* Cuts text (the numbered lines from line offset on) to cap bytes at a
 * line's end, adding truncated, next_offset and a hint to o; a first
 * line longer than cap is cut inside, with a hint to read it otherwise.  */
static void
cap_lines (cJSON *o, char *text, size_t *len, uint64_t offset, uint64_t total, uint64_t cap)
{
  char *end;
  uint64_t lines = 0;
  _cleanup_free_ char *hint = NULL;

  if (*len <= cap)
    {
      cJSON_AddBoolToObject (o, "truncated", false);
      return;
    }
  end = memrchr (text, '\n', cap);
  if (end)
    {
      *len = (size_t) (end - text) + 1;
      for (char *p = text; p < text + *len; p++)
        lines += *p == '\n';
      hint = sr_xasprintf ("output capped at %llu bytes (max_read_size): lines %llu-%llu of %llu "
                           "shown; call file_read with offset=%llu to read on",
                           (unsigned long long) cap, (unsigned long long) offset,
                           (unsigned long long) (offset + lines - 1), (unsigned long long) total,
                           (unsigned long long) (offset + lines));
    }
  else
    {
      *len = sr_mcp_utf8_cut (text, cap);
      lines = 1;
      hint = sr_xasprintf ("line %llu alone is over the %llu-byte cap (max_read_size): its first "
                           "bytes are shown; read the whole file with read_artifact, or parts "
                           "of it with shell_exec (cut -c, head -c)",
                           (unsigned long long) offset, (unsigned long long) cap);
    }
  text[*len] = '\0';
  cJSON_AddBoolToObject (o, "truncated", true);
  if (offset + lines <= total)
    cJSON_AddNumberToObject (o, "next_offset", (double) (offset + lines));
  cJSON_AddStringToObject (o, "hint", hint);
}

cJSON *
sr_mcp_call_file_read (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                       bool *ret_cancelled)
{
  _cleanup_free_ char *text = NULL, *clean = NULL, *path = NULL;
  struct file_read f = {
    .offset = sr_mcp_arg_count (args, "offset", 1),
    .limit = sr_mcp_arg_count (args, "limit", FILE_READ_DEFAULT_LINES),
  };
  size_t clean_len;
  cJSON *o, *bad;

  if ((bad = sr_mcp_path_arg (args, "path", &path)))
    return bad;
  f.own = &path;
  bad = sr_mcp_with_session (ctx, args, false, file_read_work, &f);
  text = f.text;
  if (bad)
    return bad;
  clean = sr_utf8_sanitize (text, strlen (text), &clean_len);
  o = cJSON_CreateObject ();
  sr_utf8_add_name (o, "path", f.path);
  cap_lines (o, clean, &clean_len, f.offset, f.total, ctx->cfg->max_read_size);
  cJSON_AddStringToObject (o, "content", clean);
  cJSON_AddNumberToObject (o, "total_lines", (double) f.total);
  add_warnings (o, f.path);
  return sr_mcp_tool_result (o, false);
}

struct file_write
{
  char **own;
  const char *path, *content;
  size_t len;
  char *written;
};

static int
file_write_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                 sr_error_t *err)
{
  struct file_write *f = data;

  (void) ctx;
  f->path = machine_path (s, f->own);
  if (sr_files_lint (sr_session_fs (s), f->path, f->content, f->len, err) < 0)
    return -1;
  return sr_files_write (sr_session_fs (s), f->path, f->content, f->len, &f->written, err);
}

cJSON *
sr_mcp_call_file_write (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                        bool *ret_cancelled)
{
  _cleanup_free_ char *written = NULL, *path = NULL, *decoded = NULL;
  const char *encoding = sr_mcp_arg_string (args, "encoding");
  struct file_write f = { .content = sr_mcp_arg_string (args, "content") };
  cJSON *o, *bad;

  if ((bad = sr_mcp_path_arg (args, "path", &path)))
    return bad;
  f.own = &path;
  f.len = strlen (f.content);
  /* Binary content comes as base64: a JSON string holding a NUL would
   * reach us cut there (the registry refuses one, binary_content).  */
  if (encoding && strcmp (encoding, "base64") == 0)
    {
      if (f.len / 4 * 3 > ctx->cfg->max_upload_size + 3)
        f.len = ctx->cfg->max_upload_size + 1;
      else if (sr_base64_decode (f.content, f.len, &decoded, &f.len) < 0)
        return sr_mcp_tool_error ("invalid_arguments", "content is not valid base64 (encoding "
                                  "\"base64\")");
      else
        f.content = decoded;
    }
  if (f.len > ctx->cfg->max_upload_size)
    return sr_mcp_tool_error ("file_too_large", "the content is over the upload limit of %llu "
                              "bytes", (unsigned long long) ctx->cfg->max_upload_size);
  bad = sr_mcp_with_session (ctx, args, false, file_write_work, &f);
  written = f.written;
  if (bad)
    return bad;
  o = cJSON_CreateObject ();
  sr_utf8_add_name (o, "path", written);
  cJSON_AddNumberToObject (o, "size", (double) f.len);
  add_warnings (o, written);
  return sr_mcp_tool_result (o, false);
}

struct file_patch
{
  char **own;
  const char *path;
  struct sr_patch p;
};

static int
file_patch_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                 sr_error_t *err)
{
  struct file_patch *f = data;

  f->path = machine_path (s, f->own);
  f->p.max_size = ctx->cfg->max_artifact_size;
  return sr_files_patch (sr_session_fs (s), f->path, &f->p, err);
}

cJSON *
sr_mcp_call_file_patch (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                        bool *ret_cancelled)
{
  _cleanup_free_ char *path = NULL;
  struct file_patch f = {
    .p = {
      .old_string = sr_mcp_arg_string (args, "old_string"),
      .new_string = sr_mcp_arg_string (args, "new_string"),
      .diff = sr_mcp_arg_string (args, "diff"),
      .replace_all = sr_mcp_arg_bool (args, "replace_all", false),
      .lint = true,
    },
  };
  cJSON *o, *bad;

  if (f.p.diff ? f.p.old_string || f.p.new_string : !f.p.old_string || !f.p.new_string)
    return sr_mcp_tool_error ("invalid_arguments",
                              "give either old_string and new_string, or diff");
  if (f.p.old_string && *f.p.old_string == '\0')
    return sr_mcp_tool_error ("invalid_arguments", "old_string must not be empty");
  if ((bad = sr_mcp_path_arg (args, "path", &path)))
    return bad;
  f.own = &path;
  if ((bad = sr_mcp_with_session (ctx, args, false, file_patch_work, &f)))
    return bad;
  o = cJSON_CreateObject ();
  sr_utf8_add_name (o, "path", f.path);
  cJSON_AddNumberToObject (o, "replacements", f.p.replacements);
  cJSON_AddStringToObject (o, "match", f.p.fuzzy ? "fuzzy" : "exact");
  add_warnings (o, f.path);
  return sr_mcp_tool_result (o, false);
}

struct file_search
{
  char **own;
  const char *pattern, *glob, *path;
  size_t limit;
  struct sr_search_result res;
};

static int
file_search_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                  sr_error_t *err)
{
  struct file_search *f = data;
  const struct sr_search_limits lim = {
    .max_size = ctx->cfg->max_artifact_size, .max_matches = f->limit,
    .max_bytes = ctx->cfg->max_search_bytes, .cancel_fd = ctx->cancel_fd,
    .max_ms = FILE_SEARCH_MAX_MS,
  };

  f->path = machine_path (s, f->own);
  return sr_files_search (sr_session_fs (s), f->pattern, f->glob, f->path, &lim, &f->res, err);
}

cJSON *
sr_mcp_call_file_search (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                         bool *ret_cancelled)
{
  _cleanup_free_ char *path = NULL;
  struct file_search f = {
    .pattern = sr_mcp_arg_string (args, "pattern"),
    .glob = sr_mcp_arg_string (args, "glob"),
    .limit = sr_mcp_arg_count (args, "limit", FILE_SEARCH_MAX_MATCHES),
  };
  size_t used = 0, omitted = 0;
  cJSON *o, *list, *warnings, *bad;

  if ((bad = sr_mcp_path_arg (args, "path", &path)))
    return bad;
  f.own = &path;
  if ((bad = sr_mcp_with_session (ctx, args, false, file_search_work, &f)))
    return bad;
  o = cJSON_CreateObject ();
  list = cJSON_AddArrayToObject (o, "matches");
  warnings = add_warnings (o, f.path);
  for (size_t i = 0; i < f.res.n; i++)
    {
      const struct sr_file_match *m = &f.res.v[i];
      cJSON *e;
      size_t clean_len, line_len = strlen (m->text);
      _cleanup_free_ char *clean = NULL;
      _cleanup_free_ char *mtime = sr_history_format_time (m->mtime_ns / 1000000);

      if (line_len > FILE_SEARCH_MAX_LINE)
        line_len = sr_mcp_utf8_cut (m->text, FILE_SEARCH_MAX_LINE);
      /* A match's share of the cap: its text, its path and some room for
       * the line number and punctuation.  */
      used += line_len + strlen (m->path) + 16;
      if (used > ctx->cfg->max_read_size)
        {
          omitted = f.res.n - i;
          break;
        }
      clean = sr_utf8_sanitize (m->text, line_len, &clean_len);
      e = cJSON_CreateObject ();
      sr_utf8_add_name (e, "path", m->path);
      cJSON_AddStringToObject (e, "mtime", mtime);
      cJSON_AddNumberToObject (e, "line", (double) m->line);
      cJSON_AddStringToObject (e, "text", clean);
      if (line_len < strlen (m->text))
        cJSON_AddBoolToObject (e, "text_truncated", true);
      cJSON_AddItemToArray (list, e);
      warn_sensitive (warnings, m->path);
    }
  cJSON_AddBoolToObject (o, "truncated", f.res.truncated);
  cJSON_AddNumberToObject (o, "omitted", (double) omitted);
  if (omitted)
    {
      _cleanup_free_ char *hint = sr_xasprintf (
        "%zu more match%s left out over the %llu-byte cap (max_read_size); narrow the pattern, "
        "glob or path", omitted, omitted == 1 ? "" : "es",
        (unsigned long long) ctx->cfg->max_read_size);

      cJSON_AddStringToObject (o, "hint", hint);
    }
  cJSON_AddNumberToObject (o, "files_read", (double) f.res.files_read);
  cJSON_AddNumberToObject (o, "bytes_read", (double) f.res.bytes_read);
  sr_file_matches_free (f.res.v, f.res.n);
  return sr_mcp_tool_result (o, false);
}
