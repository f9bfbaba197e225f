#include "config.h"

#include "mcp/session-tools.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/utf8.h"
#include "common/util.h"
#include "mcp/tools-internal.h"
#include "sandbox/files.h"
#include "sandbox/session.h"

#define SESSION_ID_PROP                                                                 \
  "\"session_id\":{\"type\":\"string\",\"description\":\"The session, as create_session, " \
  "upload_file or run_code returned it\"}"
#define PATH_PROP(what)                                                                 \
  "\"path\":{\"type\":\"string\",\"description\":\"" what "\"}"

#define SHELL_OUTPUT_SCHEMA                                                             \
  "{\"type\":\"object\",\"properties\":{\"shell_id\":{\"type\":\"string\"},"                 \
  "\"output\":{\"type\":\"string\"},\"output_encoding\":{\"type\":\"string\","               \
  "\"enum\":[\"utf-8\",\"base64\"]},\"truncated\":{\"type\":\"boolean\"},"                   \
  "\"state\":{\"type\":\"string\",\"enum\":[\"init\",\"ready\",\"waiting\",\"terminated\"]}," \
  "\"exit_code\":{\"type\":\"integer\"},\"timed_out\":{\"type\":\"boolean\"}},"              \
  "\"required\":[\"shell_id\",\"output\",\"state\"]}"

static const char session_tool_definitions[] =
  "["
  "{\"name\":\"create_session\",\"title\":\"Create a session\","
  "\"description\":\"Creates a persistent sandbox session: a container that stays between calls, "
  "with a writable /mnt/data whose files persist (limited in size), no network. Use it when you "
  "need several steps on the same files: upload data, run code on it (run_code with session_id), "
  "read back the charts or files it made. Sessions close after a period without calls; close "
  "them with close_session when done.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
  "\"image\":{\"type\":\"string\",\"description\":\"The image to run (default: the server's "
  "session image, with Python, pandas and matplotlib)\"}},\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\"},"
  "\"image\":{\"type\":\"string\"},\"data_dir\":{\"type\":\"string\"},"
  "\"data_size\":{\"type\":\"integer\"},\"idle_timeout_seconds\":{\"type\":\"number\"}},"
  "\"required\":[\"session_id\",\"image\",\"data_dir\"]},"
  "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":false,\"idempotentHint\":false,"
  "\"openWorldHint\":false}},"

  "{\"name\":\"close_session\",\"title\":\"Close a session\","
  "\"description\":\"Closes a session: its container and every file in its /mnt/data are "
  "destroyed. Read back what you need first.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{" SESSION_ID_PROP "},"
  "\"required\":[\"session_id\"],\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\"},"
  "\"closed\":{\"type\":\"boolean\"}},\"required\":[\"session_id\",\"closed\"]},"
  "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":true,\"idempotentHint\":false,"
  "\"openWorldHint\":false}},"

  "{\"name\":\"list_sessions\",\"title\":\"List sessions\","
  "\"description\":\"Lists the open sessions: id, image, creation time, idle time and whether a "
  "call is running in it.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"sessions\":{\"type\":\"array\","
  "\"items\":{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\"},"
  "\"image\":{\"type\":\"string\"},\"created\":{\"type\":\"string\"},"
  "\"idle_seconds\":{\"type\":\"number\"},\"busy\":{\"type\":\"boolean\"}}}}},"
  "\"required\":[\"sessions\"]},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}},"

  "{\"name\":\"upload_file\",\"title\":\"Upload a file\","
  "\"description\":\"Writes a file into a session's /mnt/data (creating a session when none is "
  "given; its id is in the result), for code run later in that session to read. Refuses to "
  "replace an existing file unless overwrite is true.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{" SESSION_ID_PROP ","
  "\"filename\":{\"type\":\"string\",\"description\":\"Path inside /mnt/data, such as data.csv "
  "or in/data.csv\"},"
  "\"content_base64\":{\"type\":\"string\",\"description\":\"The file's bytes, base64\"},"
  "\"overwrite\":{\"type\":\"boolean\",\"description\":\"Replace an existing file\"}},"
  "\"required\":[\"filename\",\"content_base64\"],\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\"},"
  "\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}},"
  "\"required\":[\"session_id\",\"path\",\"size\"]},"
  "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":false,\"idempotentHint\":false,"
  "\"openWorldHint\":false}},"

  "{\"name\":\"list_artifacts\",\"title\":\"List artifacts\","
  "\"description\":\"Lists the files in a session's /mnt/data (what uploads and runs left "
  "there): path, size, modification time and MIME type.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{" SESSION_ID_PROP "},"
  "\"required\":[\"session_id\"],\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"session_id\":{\"type\":\"string\"},"
  "\"artifacts\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
  "\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},\"mtime\":{\"type\":\"string\"},"
  "\"mime_type\":{\"type\":\"string\"},\"download_url\":{\"type\":\"string\"}}}},"
  "\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"session_id\",\"artifacts\"]},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}},"

  "{\"name\":\"read_artifact\",\"title\":\"Read an artifact\","
  "\"description\":\"Returns a file of a session's /mnt/data (a chart, a PDF, a data file) as "
  "base64 with its MIME type. Files over the server's size limit are refused.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{" SESSION_ID_PROP ","
  PATH_PROP ("Path inside /mnt/data, such as chart.png") "},"
  "\"required\":[\"session_id\",\"path\"],\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
  "\"content_base64\":{\"type\":\"string\"},\"mime_type\":{\"type\":\"string\"},"
  "\"size\":{\"type\":\"integer\"}},\"required\":[\"path\",\"content_base64\",\"mime_type\","
  "\"size\"]},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}},"

  "{\"name\":\"shell_new\",\"title\":\"Start a persistent shell\","
  "\"description\":\"Starts a bash shell that stays, in a session (a new one when none is "
  "given), so later shell_exec calls keep its state: working directory, environment "
  "variables, an activated virtualenv. Returns the shell_id.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{" SESSION_ID_PROP "},"
  "\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"shell_id\":{\"type\":\"string\"},"
  "\"session_id\":{\"type\":\"string\"},\"state\":{\"type\":\"string\"}},"
  "\"required\":[\"shell_id\",\"session_id\",\"state\"]},"
  "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":false,\"idempotentHint\":false,"
  "\"openWorldHint\":false}},"

  "{\"name\":\"shell_exec\",\"title\":\"Run a shell command\","
  "\"description\":\"Runs a command line (any length, several lines allowed) in a persistent "
  "shell and returns its output (stdout and stderr together, as a terminal shows them) and "
  "exit code. With wait=false it returns at once and shell_read collects the output. A "
  "command still running at the timeout is interrupted with Ctrl-C.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{"
  "\"shell_id\":{\"type\":\"string\"},\"command\":{\"type\":\"string\"},"
  "\"wait\":{\"type\":\"boolean\",\"description\":\"Wait for the command to end "
  "(default true)\"},"
  "\"timeout_seconds\":{\"type\":\"number\",\"exclusiveMinimum\":0,"
  "\"description\":\"How long to wait (default: the run timeout)\"}},"
  "\"required\":[\"shell_id\",\"command\"],\"additionalProperties\":false},"
  "\"outputSchema\":" SHELL_OUTPUT_SCHEMA ","
  "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":true,\"idempotentHint\":false,"
  "\"openWorldHint\":false}},"

  "{\"name\":\"shell_read\",\"title\":\"Read a shell's output\","
  "\"description\":\"Returns what a persistent shell printed since the last shell_exec or "
  "shell_read, its state (init, ready, waiting, terminated) and, once the command ended, its "
  "exit code.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"shell_id\":{\"type\":\"string\"}},"
  "\"required\":[\"shell_id\"],\"additionalProperties\":false},"
  "\"outputSchema\":" SHELL_OUTPUT_SCHEMA ","
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}},"

  "{\"name\":\"write_stdin\",\"title\":\"Type into a shell\","
  "\"description\":\"Sends input to the command running in a persistent shell, as if typed "
  "at its terminal (end lines with \\\\n). Ctrl-C (the byte 0x03, or the text \\\\x03) "
  "interrupts the running command; \\\\xHH escapes are decoded, \\\\\\\\ is a backslash.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"shell_id\":{\"type\":\"string\"},"
  "\"data\":{\"type\":\"string\"}},\"required\":[\"shell_id\",\"data\"],"
  "\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"shell_id\":{\"type\":\"string\"},"
  "\"bytes\":{\"type\":\"integer\"}},\"required\":[\"shell_id\",\"bytes\"]},"
  "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":true,\"idempotentHint\":false,"
  "\"openWorldHint\":false}},"

  "{\"name\":\"shell_list\",\"title\":\"List shells\","
  "\"description\":\"Lists the persistent shells: shell_id, session_id and state.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"shells\":{\"type\":\"array\","
  "\"items\":{\"type\":\"object\",\"properties\":{\"shell_id\":{\"type\":\"string\"},"
  "\"session_id\":{\"type\":\"string\"},\"state\":{\"type\":\"string\"}}}}},"
  "\"required\":[\"shells\"]},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}},"

  "{\"name\":\"shell_remove\",\"title\":\"Remove a shell\","
  "\"description\":\"Kills a persistent shell and what runs in its terminal. The session "
  "and its files stay.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"shell_id\":{\"type\":\"string\"}},"
  "\"required\":[\"shell_id\"],\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"shell_id\":{\"type\":\"string\"},"
  "\"removed\":{\"type\":\"boolean\"}},\"required\":[\"shell_id\",\"removed\"]},"
  "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":true,\"idempotentHint\":false,"
  "\"openWorldHint\":false}},"

  "{\"name\":\"file_read\",\"title\":\"Read a text file\","
  "\"description\":\"Reads lines of a text file in a session, numbered like cat -n. A relative "
  "path is relative to /mnt/data; absolute paths reach the whole container.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{" SESSION_ID_PROP ","
  PATH_PROP ("The file") ","
  "\"offset\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"First line (default 1)\"},"
  "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"description\":\"How many lines (default "
  "2000)\"}},"
  "\"required\":[\"session_id\",\"path\"],\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
  "\"content\":{\"type\":\"string\"},\"total_lines\":{\"type\":\"integer\"}},"
  "\"required\":[\"path\",\"content\",\"total_lines\"]},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}},"

  "{\"name\":\"file_write\",\"title\":\"Write a text file\","
  "\"description\":\"Writes a whole file in a session atomically, creating parent directories "
  "and replacing what was there. Writable places: /mnt/data (relative paths), /tmp, /work.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{" SESSION_ID_PROP ","
  PATH_PROP ("The file") ",\"content\":{\"type\":\"string\"}},"
  "\"required\":[\"session_id\",\"path\",\"content\"],\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
  "\"size\":{\"type\":\"integer\"}},\"required\":[\"path\",\"size\"]},"
  "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":true,\"idempotentHint\":true,"
  "\"openWorldHint\":false}},"

  "{\"name\":\"file_patch\",\"title\":\"Edit a file\","
  "\"description\":\"Edits a file in a session: replaces old_string (which must occur exactly "
  "once, unless replace_all) by new_string, or applies a unified diff given as diff.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{" SESSION_ID_PROP ","
  PATH_PROP ("The file") ","
  "\"old_string\":{\"type\":\"string\"},\"new_string\":{\"type\":\"string\"},"
  "\"replace_all\":{\"type\":\"boolean\"},"
  "\"diff\":{\"type\":\"string\",\"description\":\"A unified diff of the file (instead of "
  "old_string and new_string)\"}},"
  "\"required\":[\"session_id\",\"path\"],\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
  "\"replacements\":{\"type\":\"integer\"}},\"required\":[\"path\",\"replacements\"]},"
  "\"annotations\":{\"readOnlyHint\":false,\"destructiveHint\":true,\"idempotentHint\":false,"
  "\"openWorldHint\":false}},"

  "{\"name\":\"file_search\",\"title\":\"Search files\","
  "\"description\":\"Searches the text files under a directory of a session (default "
  "/mnt/data) for lines matching a POSIX extended regular expression, optionally only files "
  "whose name matches a glob such as *.py.\","
  "\"inputSchema\":{\"type\":\"object\",\"properties\":{" SESSION_ID_PROP ","
  "\"pattern\":{\"type\":\"string\"},\"glob\":{\"type\":\"string\"},"
  PATH_PROP ("The directory to search (default /mnt/data)") "},"
  "\"required\":[\"session_id\",\"pattern\"],\"additionalProperties\":false},"
  "\"outputSchema\":{\"type\":\"object\",\"properties\":{\"matches\":{\"type\":\"array\","
  "\"items\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},"
  "\"line\":{\"type\":\"integer\"},\"text\":{\"type\":\"string\"}}}},"
  "\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"matches\",\"truncated\"]},"
  "\"annotations\":{\"readOnlyHint\":true,\"openWorldHint\":false}}"
  "]";

#define FILE_READ_DEFAULT_LINES 2000u
#define FILE_SEARCH_MAX_MATCHES 1000u

void
sr_mcp_session_tools_add (cJSON *tools)
{
  cJSON *defs = cJSON_Parse (session_tool_definitions), *t;

  if (defs == NULL)
    sr_oom ();
  while ((t = cJSON_DetachItemFromArray (defs, 0)) != NULL)
    cJSON_AddItemToArray (tools, t);
  cJSON_Delete (defs);
}

static const cJSON *
arg (const cJSON *args, const char *name)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive (args, name);

  return cJSON_IsNull (a) ? NULL : a;
}

static cJSON *
no_sessions (void)
{
  return sr_mcp_tool_error ("sessions_unavailable", "this server has no session support");
}

/* A string argument that must be given.  */
static cJSON *
need_string (const cJSON *args, const char *name, const char **ret)
{
  const cJSON *a = arg (args, name);

  if (!cJSON_IsString (a))
    return sr_mcp_tool_error ("invalid_arguments", "%s is required and must be a string", name);
  *ret = a->valuestring;
  return NULL;
}

static cJSON *
optional_string (const cJSON *args, const char *name, const char **ret)
{
  const cJSON *a = arg (args, name);

  *ret = NULL;
  if (a == NULL)
    return NULL;
  if (!cJSON_IsString (a))
    return sr_mcp_tool_error ("invalid_arguments", "%s must be a string", name);
  *ret = a->valuestring;
  return NULL;
}

static cJSON *
optional_bool (const cJSON *args, const char *name, bool *ret)
{
  const cJSON *a = arg (args, name);

  *ret = false;
  if (a == NULL)
    return NULL;
  if (!cJSON_IsBool (a))
    return sr_mcp_tool_error ("invalid_arguments", "%s must be true or false", name);
  *ret = cJSON_IsTrue (a);
  return NULL;
}

static cJSON *
optional_count (const cJSON *args, const char *name, uint64_t *ret)
{
  const cJSON *a = arg (args, name);

  *ret = 0;
  if (a == NULL)
    return NULL;
  if (!cJSON_IsNumber (a) || a->valuedouble != floor (a->valuedouble) || a->valuedouble < 1
      || a->valuedouble > 1e15)
    return sr_mcp_tool_error ("invalid_arguments", "%s must be an integer of at least 1", name);
  *ret = (uint64_t) a->valuedouble;
  return NULL;
}

/* The session of session_id, busy until sr_session_release.  */
static cJSON *
take_session (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, bool create,
              struct sr_session **ret)
{
  const char *id = NULL;
  sr_error_t err = NULL;
  cJSON *bad;

  if (ctx->sessions == NULL)
    return no_sessions ();
  if (create)
    bad = optional_string (args, "session_id", &id);
  else
    bad = need_string (args, "session_id", &id);
  if (bad)
    return bad;
  if (!create && *id == '\0')
    return sr_mcp_tool_error ("invalid_arguments", "session_id must not be empty");
  if (sr_sessions_acquire (ctx->sessions, id, NULL, ctx->cancel_fd, ret, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  return NULL;
}

/* The work of a tool inside its session, between acquire and release:
 * 0, or -1 with *err set (its code: sr_mcp_tool_refusal).  data is the
 * tool's own: its inputs and what it brings out.  */
typedef int (*session_work_fn) (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s,
                                void *data, sr_error_t *err);

/* Takes the session of args (a new one when create and no session_id is
 * given), runs work in it and releases it.  NULL on success, else the
 * refusal to return.  */
static cJSON *
with_session (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, bool create,
              session_work_fn work, void *data)
{
  struct sr_session *s = NULL;
  sr_error_t err = NULL;
  cJSON *bad;
  int r;

  if ((bad = take_session (ctx, args, create, &s)))
    return bad;
  r = work (ctx, s, data, &err);
  sr_session_release (s);
  return r < 0 ? sr_mcp_tool_refusal (&err) : NULL;
}

/* Percent-encodes what a URL path may not hold as it is.  */
static char *
url_path (const char *p)
{
  static const char hex[] = "0123456789ABCDEF";
  char *out = sr_xmalloc (3 * strlen (p) + 1), *o = out;

  for (; *p; p++)
    {
      unsigned char ch = (unsigned char) *p;

      if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
          || strchr ("-._~/", ch))
        *o++ = (char) ch;
      else
        {
          *o++ = '%';
          *o++ = hex[ch >> 4];
          *o++ = hex[ch & 15];
        }
    }
  *o = '\0';
  return out;
}

void
sr_mcp_add_artifacts (cJSON *o, const struct sr_mcp_tool_ctx *ctx, const char *session_id,
                      const struct sr_artifact *v, size_t n)
{
  cJSON *list = cJSON_AddArrayToObject (o, "artifacts");

  for (size_t i = 0; i < n; i++)
    {
      cJSON *e = cJSON_CreateObject ();
      _cleanup_free_ char *when = sr_history_format_time (v[i].mtime_ns / 1000000);

      cJSON_AddStringToObject (e, "path", v[i].path);
      cJSON_AddNumberToObject (e, "size", (double) v[i].size);
      cJSON_AddStringToObject (e, "mtime", when);
      if (v[i].mime_type)
        cJSON_AddStringToObject (e, "mime_type", v[i].mime_type);
      if (ctx->files_url)
        {
          _cleanup_free_ char *path = url_path (v[i].path);
          _cleanup_free_ char *url = sr_xasprintf ("%s/files/%s/%s", ctx->files_url, session_id,
                                                   path);

          cJSON_AddStringToObject (e, "download_url", url);
        }
      cJSON_AddItemToArray (list, e);
    }
}

static cJSON *
call_create_session (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "image", NULL };
  struct sr_session *s = NULL;
  const char *image;
  sr_error_t err = NULL;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = optional_string (args, "image", &image)))
    return bad;
  if (ctx->sessions == NULL)
    return no_sessions ();
  if (sr_sessions_acquire (ctx->sessions, NULL, image, ctx->cancel_fd, &s, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "session_id", sr_session_id (s));
  cJSON_AddStringToObject (o, "image", sr_session_image (s));
  cJSON_AddStringToObject (o, "data_dir", SR_DATA_DIR);
  cJSON_AddNumberToObject (o, "data_size", (double) ctx->cfg->session_data_size);
  cJSON_AddNumberToObject (o, "idle_timeout_seconds", (double) ctx->cfg->session_idle_ms / 1000);
  sr_session_release (s);
  return sr_mcp_tool_result (o, false);
}

static cJSON *
call_close_session (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "session_id", NULL };
  const char *id;
  sr_error_t err = NULL;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = need_string (args, "session_id", &id)))
    return bad;
  if (ctx->sessions == NULL)
    return no_sessions ();
  if (sr_sessions_close (ctx->sessions, id, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "session_id", id);
  cJSON_AddBoolToObject (o, "closed", true);
  return sr_mcp_tool_result (o, false);
}

static cJSON *
call_list_sessions (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { NULL };
  struct sr_session_info *v = NULL;
  size_t n = 0;
  cJSON *o, *list, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)))
    return bad;
  if (ctx->sessions == NULL)
    return no_sessions ();
  sr_sessions_list (ctx->sessions, &v, &n);
  o = cJSON_CreateObject ();
  list = cJSON_AddArrayToObject (o, "sessions");
  for (size_t i = 0; i < n; i++)
    {
      cJSON *e = cJSON_CreateObject ();
      _cleanup_free_ char *when = sr_history_format_time (v[i].created * 1000);

      cJSON_AddStringToObject (e, "session_id", v[i].id);
      cJSON_AddStringToObject (e, "image", v[i].image);
      cJSON_AddStringToObject (e, "created", when);
      cJSON_AddNumberToObject (e, "idle_seconds", (double) v[i].idle_ms / 1000);
      cJSON_AddBoolToObject (e, "busy", v[i].busy);
      cJSON_AddItemToArray (list, e);
    }
  sr_session_infos_free (v, n);
  return sr_mcp_tool_result (o, false);
}

struct upload
{
  const char *filename;
  const char *data;
  size_t len;
  bool overwrite;
  char *path;
  char *session_id;
};

static int
upload_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
             sr_error_t *err)
{
  struct upload *u = data;

  (void) ctx;
  /* Known even when the upload fails: the session may be new.  */
  u->session_id = sr_xstrdup (sr_session_id (s));
  return sr_files_upload (sr_session_fs (s), u->filename, u->data, u->len, u->overwrite,
                          &u->path, err);
}

static cJSON *
call_upload_file (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "session_id", "filename", "content_base64", "overwrite",
                                       NULL };
  const char *filename, *content;
  _cleanup_free_ char *data = NULL;
  struct upload u = { 0 };
  size_t len;
  bool overwrite;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = need_string (args, "filename", &filename))
      || (bad = need_string (args, "content_base64", &content))
      || (bad = optional_bool (args, "overwrite", &overwrite)))
    return bad;
  /* Refused before any session is made for it.  */
  if (strlen (content) / 4 * 3 > ctx->cfg->max_upload_size + 3)
    return sr_mcp_tool_error ("file_too_large", "the file is over the upload limit of %llu bytes",
                              (unsigned long long) ctx->cfg->max_upload_size);
  if (sr_base64_decode (content, strlen (content), &data, &len) < 0)
    return sr_mcp_tool_error ("invalid_arguments", "content_base64 is not valid base64");
  if (len > ctx->cfg->max_upload_size)
    return sr_mcp_tool_error ("file_too_large",
                              "the file is %zu bytes, over the upload limit of %llu bytes", len,
                              (unsigned long long) ctx->cfg->max_upload_size);
  u = (struct upload) { .filename = filename, .data = data, .len = len, .overwrite = overwrite };
  if ((bad = with_session (ctx, args, true, upload_work, &u)))
    o = bad;
  else
    {
      o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "session_id", u.session_id);
      cJSON_AddStringToObject (o, "path", u.path);
      cJSON_AddNumberToObject (o, "size", (double) len);
      o = sr_mcp_tool_result (o, false);
    }
  free (u.path);
  free (u.session_id);
  return o;
}

/* The result is made in the session: it names it.  */
static int
list_artifacts_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                     sr_error_t *err)
{
  cJSON **ret = data;
  struct sr_artifact *v = NULL;
  size_t n = 0;
  bool truncated = false;

  if (sr_files_list (sr_session_fs (s), true, &v, &n, &truncated, err) < 0)
    return -1;
  *ret = cJSON_CreateObject ();
  cJSON_AddStringToObject (*ret, "session_id", sr_session_id (s));
  sr_mcp_add_artifacts (*ret, ctx, sr_session_id (s), v, n);
  cJSON_AddBoolToObject (*ret, "truncated", truncated);
  sr_artifacts_free (v, n);
  return 0;
}

static cJSON *
call_list_artifacts (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "session_id", NULL };
  cJSON *o = NULL, *bad;

  if ((bad = sr_mcp_check_arguments (args, known))
      || (bad = with_session (ctx, args, false, list_artifacts_work, &o)))
    return bad;
  return sr_mcp_tool_result (o, false);
}

struct read_artifact
{
  const char *path;
  char *data, *mime;
  size_t len;
};

static int
read_artifact_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                    sr_error_t *err)
{
  struct read_artifact *a = data;

  return sr_files_read_artifact (sr_session_fs (s), a->path, ctx->cfg->max_artifact_size,
                                 &a->data, &a->len, &a->mime, err);
}

static cJSON *
call_read_artifact (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "session_id", "path", NULL };
  _cleanup_free_ char *data = NULL, *mime = NULL, *b64 = NULL;
  struct read_artifact a = { 0 };
  const char *path;
  size_t len;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = need_string (args, "path", &path)))
    return bad;
  a.path = path;
  bad = with_session (ctx, args, false, read_artifact_work, &a);
  data = a.data;
  mime = a.mime;
  len = a.len;
  if (bad)
    return bad;
  b64 = sr_base64_encode (data, len);
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "path", path);
  cJSON_AddStringToObject (o, "content_base64", b64);
  cJSON_AddStringToObject (o, "mime_type", mime);
  cJSON_AddNumberToObject (o, "size", (double) len);
  return sr_mcp_tool_result (o, false);
}

struct file_read
{
  const char *path;
  uint64_t offset, limit, total;
  char *text;
};

static int
file_read_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                sr_error_t *err)
{
  struct file_read *f = data;

  return sr_files_read_lines (sr_session_fs (s), f->path, f->offset ? f->offset : 1,
                              f->limit ? f->limit : FILE_READ_DEFAULT_LINES,
                              ctx->cfg->max_artifact_size, &f->text, &f->total, err);
}

static cJSON *
call_file_read (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "session_id", "path", "offset", "limit", NULL };
  _cleanup_free_ char *text = NULL;
  struct file_read f = { 0 };
  const char *path;
  uint64_t offset, limit, total = 0;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = need_string (args, "path", &path))
      || (bad = optional_count (args, "offset", &offset))
      || (bad = optional_count (args, "limit", &limit)))
    return bad;
  f = (struct file_read) { .path = path, .offset = offset, .limit = limit };
  bad = with_session (ctx, args, false, file_read_work, &f);
  text = f.text;
  total = f.total;
  if (bad)
    return bad;
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "path", path);
  {
    size_t clean_len;
    _cleanup_free_ char *clean = sr_utf8_sanitize (text, strlen (text), &clean_len);

    cJSON_AddStringToObject (o, "content", clean);
  }
  cJSON_AddNumberToObject (o, "total_lines", (double) total);
  return sr_mcp_tool_result (o, false);
}

struct file_write
{
  const char *path, *content;
  char *written;
};

static int
file_write_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                 sr_error_t *err)
{
  struct file_write *f = data;

  (void) ctx;
  return sr_files_write (sr_session_fs (s), f->path, f->content, strlen (f->content),
                         &f->written, err);
}

static cJSON *
call_file_write (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "session_id", "path", "content", NULL };
  _cleanup_free_ char *written = NULL;
  struct file_write f = { 0 };
  const char *path, *content;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = need_string (args, "path", &path))
      || (bad = need_string (args, "content", &content)))
    return bad;
  if (strlen (content) > ctx->cfg->max_upload_size)
    return sr_mcp_tool_error ("file_too_large", "the content is over the upload limit of %llu "
                              "bytes", (unsigned long long) ctx->cfg->max_upload_size);
  f = (struct file_write) { .path = path, .content = content };
  bad = with_session (ctx, args, false, file_write_work, &f);
  written = f.written;
  if (bad)
    return bad;
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "path", written);
  cJSON_AddNumberToObject (o, "size", (double) strlen (content));
  return sr_mcp_tool_result (o, false);
}

struct file_patch
{
  const char *path, *old_s, *new_s, *diff;
  bool all;
  unsigned replaced;
};

static int
file_patch_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                 sr_error_t *err)
{
  struct file_patch *f = data;

  return sr_files_patch (sr_session_fs (s), f->path, f->old_s, f->new_s, f->all, f->diff,
                         ctx->cfg->max_artifact_size, &f->replaced, err);
}

static cJSON *
call_file_patch (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "session_id", "path", "old_string", "new_string",
                                       "replace_all", "diff", NULL };
  struct file_patch f = { 0 };
  const char *path, *old_s, *new_s, *diff;
  bool all;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = need_string (args, "path", &path))
      || (bad = optional_string (args, "old_string", &old_s))
      || (bad = optional_string (args, "new_string", &new_s))
      || (bad = optional_string (args, "diff", &diff))
      || (bad = optional_bool (args, "replace_all", &all)))
    return bad;
  if (diff ? old_s || new_s : !old_s || !new_s)
    return sr_mcp_tool_error ("invalid_arguments",
                              "give either old_string and new_string, or diff");
  if (old_s && *old_s == '\0')
    return sr_mcp_tool_error ("invalid_arguments", "old_string must not be empty");
  f = (struct file_patch) { .path = path, .old_s = old_s, .new_s = new_s, .diff = diff,
                            .all = all };
  if ((bad = with_session (ctx, args, false, file_patch_work, &f)))
    return bad;
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "path", path);
  cJSON_AddNumberToObject (o, "replacements", f.replaced);
  return sr_mcp_tool_result (o, false);
}

struct file_search
{
  const char *pattern, *glob, *path;
  struct sr_file_match *v;
  size_t n;
  bool truncated;
};

static int
file_search_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                  sr_error_t *err)
{
  struct file_search *f = data;

  return sr_files_search (sr_session_fs (s), f->pattern, f->glob, f->path,
                          ctx->cfg->max_artifact_size, FILE_SEARCH_MAX_MATCHES, &f->v, &f->n,
                          &f->truncated, err);
}

static cJSON *
call_file_search (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "session_id", "pattern", "glob", "path", NULL };
  struct file_search f = { 0 };
  struct sr_file_match *v;
  const char *pattern, *glob, *path;
  size_t n;
  bool truncated;
  cJSON *o, *list, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = need_string (args, "pattern", &pattern))
      || (bad = optional_string (args, "glob", &glob))
      || (bad = optional_string (args, "path", &path)))
    return bad;
  f = (struct file_search) { .pattern = pattern, .glob = glob, .path = path };
  if ((bad = with_session (ctx, args, false, file_search_work, &f)))
    return bad;
  v = f.v;
  n = f.n;
  truncated = f.truncated;
  o = cJSON_CreateObject ();
  list = cJSON_AddArrayToObject (o, "matches");
  for (size_t i = 0; i < n; i++)
    {
      cJSON *e = cJSON_CreateObject ();
      size_t clean_len;
      _cleanup_free_ char *clean = sr_utf8_sanitize (v[i].text, strlen (v[i].text), &clean_len);

      cJSON_AddStringToObject (e, "path", v[i].path);
      cJSON_AddNumberToObject (e, "line", (double) v[i].line);
      cJSON_AddStringToObject (e, "text", clean);
      cJSON_AddItemToArray (list, e);
    }
  cJSON_AddBoolToObject (o, "truncated", truncated);
  sr_file_matches_free (v, n);
  return sr_mcp_tool_result (o, false);
}

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

static cJSON *
shell_result (const char *shell_id, struct sr_shell_output *out)
{
  cJSON *o = cJSON_CreateObject ();
  struct sr_captured c = { .data = out->data, .len = out->len };

  cJSON_AddStringToObject (o, "shell_id", shell_id);
  sr_mcp_add_output (o, "output", "output_encoding", &c);
  cJSON_AddBoolToObject (o, "truncated", out->truncated);
  cJSON_AddStringToObject (o, "state", sr_shell_state_name (out->state));
  if (out->finished)
    cJSON_AddNumberToObject (o, "exit_code", out->exit_code);
  if (out->timed_out)
    cJSON_AddBoolToObject (o, "timed_out", true);
  sr_shell_output_done (out);
  return sr_mcp_tool_result (o, false);
}

static cJSON *
call_shell_new (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "session_id", NULL };
  _cleanup_free_ char *shell_id = NULL, *session_id = NULL;
  const char *sid;
  sr_error_t err = NULL;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = optional_string (args, "session_id", &sid)))
    return bad;
  if (ctx->sessions == NULL)
    return no_sessions ();
  if (sr_sessions_shell_new (ctx->sessions, sid, &shell_id, &session_id, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "shell_id", shell_id);
  cJSON_AddStringToObject (o, "session_id", session_id);
  cJSON_AddStringToObject (o, "state", "ready");
  return sr_mcp_tool_result (o, false);
}

static cJSON *
take_shell (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, const char **ret_id,
            struct sr_shell **ret)
{
  sr_error_t err = NULL;
  cJSON *bad;

  if ((bad = need_string (args, "shell_id", ret_id)))
    return bad;
  if (ctx->sessions == NULL)
    return no_sessions ();
  if (sr_sessions_shell_get (ctx->sessions, *ret_id, ret, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  return NULL;
}

/* The work of a tool on a shell it holds, as session_work_fn.  */
typedef int (*shell_work_fn) (struct sr_shell *sh, void *data, sr_error_t *err);

/* Takes the shell of args (its id in *ret_id), runs work on it and puts
 * it back.  NULL on success, else the refusal to return.  */
static cJSON *
with_shell (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, const char **ret_id,
            shell_work_fn work, void *data)
{
  struct sr_shell *sh;
  sr_error_t err = NULL;
  cJSON *bad;
  int r;

  if ((bad = take_shell (ctx, args, ret_id, &sh)))
    return bad;
  r = work (sh, data, &err);
  sr_sessions_shell_put (ctx->sessions, sh);
  return r < 0 ? sr_mcp_tool_refusal (&err) : NULL;
}

struct shell_exec
{
  const char *command;
  bool wait;
  uint64_t timeout_ms;
  struct sr_shell_output out;
};

static int
shell_exec_work (struct sr_shell *sh, void *data, sr_error_t *err)
{
  struct shell_exec *x = data;

  return sr_shell_exec (sh, x->command, x->wait, x->timeout_ms, &x->out, err);
}

static cJSON *
call_shell_exec (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "shell_id", "command", "wait", "timeout_seconds", NULL };
  const cJSON *wait = arg (args, "wait"), *timeout = arg (args, "timeout_seconds");
  struct shell_exec x;
  const char *id, *command;
  uint64_t timeout_ms = ctx->cfg->timeout_ms;
  cJSON *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = need_string (args, "command", &command)))
    return bad;
  if (wait && !cJSON_IsBool (wait))
    return sr_mcp_tool_error ("invalid_arguments", "wait must be true or false");
  if (timeout)
    {
      if (!cJSON_IsNumber (timeout) || !isfinite (timeout->valuedouble) || timeout->valuedouble <= 0)
        return sr_mcp_tool_error ("invalid_arguments", "timeout_seconds must be a number above 0");
      if (timeout->valuedouble * 1000 > (double) ctx->cfg->max_timeout_ms)
        return sr_mcp_tool_error ("timeout_too_large", "timeout %g s is over the ceiling of %g s",
                                  timeout->valuedouble, (double) ctx->cfg->max_timeout_ms / 1000);
      timeout_ms = (uint64_t) ceil (timeout->valuedouble * 1000);
    }
  if (strlen (command) > ctx->cfg->max_code_size)
    return sr_mcp_tool_error ("code_too_large", "the command is over the limit of %llu bytes",
                              (unsigned long long) ctx->cfg->max_code_size);
  x = (struct shell_exec) { .command = command, .wait = wait == NULL || cJSON_IsTrue (wait),
                            .timeout_ms = timeout_ms };
  if ((bad = with_shell (ctx, args, &id, shell_exec_work, &x)))
    return bad;
  return shell_result (id, &x.out);
}

static int
shell_read_work (struct sr_shell *sh, void *data, sr_error_t *err)
{
  (void) err;
  sr_shell_read (sh, data);
  return 0;
}

static cJSON *
call_shell_read (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "shell_id", NULL };
  struct sr_shell_output out;
  const char *id;
  cJSON *bad;

  if ((bad = sr_mcp_check_arguments (args, known))
      || (bad = with_shell (ctx, args, &id, shell_read_work, &out)))
    return bad;
  return shell_result (id, &out);
}

struct write_stdin
{
  const char *data;
  size_t len;
};

static int
write_stdin_work (struct sr_shell *sh, void *data, sr_error_t *err)
{
  struct write_stdin *w = data;

  return sr_shell_write (sh, w->data, w->len, err);
}

static cJSON *
call_write_stdin (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "shell_id", "data", NULL };
  _cleanup_free_ char *data = NULL;
  struct write_stdin w;
  const char *id, *given;
  size_t len;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = need_string (args, "data", &given)))
    return bad;
  data = sr_xstrdup (given);
  len = decode_escapes (data);
  w = (struct write_stdin) { .data = data, .len = len };
  if ((bad = with_shell (ctx, args, &id, write_stdin_work, &w)))
    return bad;
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "shell_id", id);
  cJSON_AddNumberToObject (o, "bytes", (double) len);
  return sr_mcp_tool_result (o, false);
}

static cJSON *
call_shell_list (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { NULL };
  struct sr_shell_info *v = NULL;
  size_t n = 0;
  cJSON *o, *list, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)))
    return bad;
  if (ctx->sessions == NULL)
    return no_sessions ();
  sr_sessions_shell_list (ctx->sessions, &v, &n);
  o = cJSON_CreateObject ();
  list = cJSON_AddArrayToObject (o, "shells");
  for (size_t i = 0; i < n; i++)
    {
      cJSON *e = cJSON_CreateObject ();

      cJSON_AddStringToObject (e, "shell_id", v[i].shell_id);
      cJSON_AddStringToObject (e, "session_id", v[i].session_id);
      cJSON_AddStringToObject (e, "state", sr_shell_state_name (v[i].state));
      cJSON_AddItemToArray (list, e);
    }
  sr_shell_infos_free (v, n);
  return sr_mcp_tool_result (o, false);
}

static cJSON *
call_shell_remove (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  static const char *const known[] = { "shell_id", NULL };
  const char *id;
  sr_error_t err = NULL;
  cJSON *o, *bad;

  if ((bad = sr_mcp_check_arguments (args, known)) || (bad = need_string (args, "shell_id", &id)))
    return bad;
  if (ctx->sessions == NULL)
    return no_sessions ();
  if (sr_sessions_shell_remove (ctx->sessions, id, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "shell_id", id);
  cJSON_AddBoolToObject (o, "removed", true);
  return sr_mcp_tool_result (o, false);
}

static const struct
{
  const char *name;
  cJSON *(*call) (const struct sr_mcp_tool_ctx *ctx, const cJSON *args);
} session_tools[] = {
  { "create_session", call_create_session }, { "close_session", call_close_session },
  { "list_sessions", call_list_sessions },   { "upload_file", call_upload_file },
  { "list_artifacts", call_list_artifacts }, { "read_artifact", call_read_artifact },
  { "file_read", call_file_read },           { "file_write", call_file_write },
  { "file_patch", call_file_patch },         { "file_search", call_file_search },
  { "shell_new", call_shell_new },           { "shell_exec", call_shell_exec },
  { "shell_read", call_shell_read },         { "write_stdin", call_write_stdin },
  { "shell_list", call_shell_list },         { "shell_remove", call_shell_remove },
};

bool
sr_mcp_session_tool_exists (const char *name)
{
  for (size_t i = 0; i < SR_ARRAY_SIZE (session_tools); i++)
    if (strcmp (session_tools[i].name, name) == 0)
      return true;
  return false;
}

cJSON *
sr_mcp_session_tool_call (const struct sr_mcp_tool_ctx *ctx, const char *name, const cJSON *args)
{
  for (size_t i = 0; i < SR_ARRAY_SIZE (session_tools); i++)
    if (strcmp (session_tools[i].name, name) == 0)
      return session_tools[i].call (ctx, args);
  return NULL;
}
