/* What the files of `sandbox-runner session` share, and nobody else:
 *
 *   session_client.c    the command line: options, the table of
 *                       subcommands, help, the entry point
 *   session_mcp.c       the MCP client over Streamable HTTP (libcurl)
 *   session_commands.c  what the subcommands have in common (one tool
 *                       call, its result shown) and the session ones
 *   session_shell.c     the persistent shells' subcommands
 *   session_files.c     the file tools' subcommands
 *   session_download.c  download, streamed over GET /files/...  */
#ifndef SR_CLI_SESSION_CLIENT_H
#define SR_CLI_SESSION_CLIENT_H

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/curlbuf.h"

#define SR_CLIENT_URL_ENV "SANDBOX_RUNNER_URL"
/* Said after a refusal with HTTP status 401.  */
#define SR_CLIENT_TOKEN_HINT "(give a token the server accepts with --token-file FILE)"

/* One MCP session with the server, for the length of this command.  */
struct client
{
  CURL *curl;
  char *url;             /* the MCP endpoint */
  char *token;           /* NULL: no Authorization header */
  char *session_id;      /* Mcp-Session-Id, once initialized */
  char *protocol;        /* negotiated at initialize */
  int state_dir;         /* where the MCP session is kept between commands; -1: not kept */
  char state_name[33];   /* its file there, named for the server's URL */
  int next_id;
};

/* What one HTTP exchange brought back.  */
struct reply
{
  long status;
  struct sr_buf body;
  char *content_type;
  char *session_id;
};

/* A subcommand's options and arguments, as parse_args left them.  */
struct args
{
  const char *server, *token_file;
  bool json, help;
  const char *session, *shell, *language, *image, *output, *old_s, *new_s, *diff, *glob, *path;
  double timeout;
  bool overwrite, no_wait, all;
  uint64_t offset, limit;
  int argc;             /* the positional arguments */
  char **argv;
};

/* Prints "sandbox-runner: session: " and the message to stderr: every
 * message of this command starts the same way.  */
void sr_client_fail (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* --- session_mcp.c: the transport --- */

/* Frees what the reply holds and zeroes it.  */
void sr_client_reply_done (struct reply *r);
/* Resets c's curl handle for a GET of url (the caller may make it
 * another method), with our timeouts, errbuf (CURL_ERROR_SIZE bytes) for
 * the error and the body written by write_fn to write_data.  Returns the
 * headers every request carries (Authorization, Mcp-Session-Id,
 * MCP-Protocol-Version), for the caller to add to, set and free.  */
struct curl_slist *sr_client_start (struct client *c, const char *url, char *errbuf,
                                    curl_write_callback write_fn, void *write_data);
/* Prints why a transfer got no HTTP answer at all.  */
void sr_client_transport_failed (const struct client *c, CURLcode rc, const char *errbuf);
/* The message of a JSON-RPC error body (the transport's refusals carry
 * one), else the status line's meaning; owned by the caller.  */
char *sr_client_http_error_message (const struct reply *r);
/* Calls a tool (initializing the MCP session first when there is none;
 * takes args).  Returns its structuredContent (owned by the caller), or
 * NULL with the refusal printed as "<code>: <message>".  */
cJSON *sr_client_call_tool (struct client *c, const char *name, cJSON *args);
/* The MCP session a previous command kept for this server, if any: the
 * server's sandbox sessions belong to the MCP session that made them
 * when it has no bearer tokens, so one command after another must speak
 * as the same MCP session.  A kept one the server has forgotten is
 * answered 404, and initialize makes a new one.  */
void sr_client_resume (struct client *c);
/* Keeps the MCP session for the next command (the server forgets it
 * after http_session_idle_timeout without use); ends it (DELETE) when it
 * cannot be kept.  */
void sr_client_keep (struct client *c);

/* --- session_commands.c: what the subcommands share --- */

/* The string, number (else dflt) or true of a tool result's member key;
 * the string stays o's.  */
static inline const char *
get_string (const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);

  return cJSON_IsString (v) ? v->valuestring : NULL;
}

static inline double
get_number (const cJSON *o, const char *key, double dflt)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);

  return cJSON_IsNumber (v) ? v->valuedouble : dflt;
}

static inline bool
get_bool (const cJSON *o, const char *key)
{
  return cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (o, key));
}

/* A subcommand's way of showing its tool's result as text, when there is
 * no --json.  */
typedef void print_fn (const struct args *a, const cJSON *o);
/* A subcommand's exit status for its tool's result, --json or not.  */
typedef int status_fn (const struct args *a, const cJSON *o);

/* What most subcommands are: one tool call, its result shown as JSON
 * with --json, else by print (NULL: nothing).  Takes args.  Returns
 * status's exit status (NULL: 0), or SR_EXIT_RUNNER when the call
 * failed (the refusal printed).  */
int sr_client_call_and_show (struct client *c, const struct args *a, const char *tool,
                             cJSON *args, print_fn *print, status_fn *status);
/* The arguments of a tool on a session: session_id, when one was given
 * (the subcommands that need one are not run without it).  */
cJSON *sr_client_session_args (const struct args *a);
/* A local file, or stdin for "-" (NULL: "-"), into *ret (owned by the
 * caller); over our bound, refused.  Prints its errors.  */
int sr_client_read_input (const char *path, char **ret, size_t *ret_len);
/* The same for a text, which a JSON string carries only without NUL
 * bytes: one in it is refused with nul_message.  */
int sr_client_read_text (const char *path, const char *nul_message, char **ret);
/* Prints o as one line of JSON.  */
void sr_client_print_json (const cJSON *o);
/* Writes an output field (utf-8 as it is, base64 decoded) to fd.  */
void sr_client_write_output (int fd, const cJSON *o, const char *key, const char *encoding_key);
/* Tells how the server created a session for this call, so that the
 * next call can name it.  */
void sr_client_note_new_session (const struct args *a, const cJSON *o);
/* upload's and file-write's print_fn: the file's path.  */
void sr_client_print_path (const struct args *a, const cJSON *o);
/* The last component of path.  */
const char *sr_client_base_name (const char *path);

/* --- the subcommands, one each: print their result, return the exit
 * status (SR_EXIT_RUNNER when refused) --- */

int sr_client_cmd_new (struct client *c, struct args *a);
int sr_client_cmd_list (struct client *c, struct args *a);
int sr_client_cmd_close (struct client *c, struct args *a);
int sr_client_cmd_run (struct client *c, struct args *a);
int sr_client_cmd_upload (struct client *c, struct args *a);
int sr_client_cmd_ls (struct client *c, struct args *a);
int sr_client_cmd_download (struct client *c, struct args *a);
int sr_client_cmd_shell_new (struct client *c, struct args *a);
int sr_client_cmd_shell_exec (struct client *c, struct args *a);
int sr_client_cmd_shell_read (struct client *c, struct args *a);
int sr_client_cmd_shell_write (struct client *c, struct args *a);
int sr_client_cmd_shell_ls (struct client *c, struct args *a);
int sr_client_cmd_shell_rm (struct client *c, struct args *a);
int sr_client_cmd_file_read (struct client *c, struct args *a);
int sr_client_cmd_file_write (struct client *c, struct args *a);
int sr_client_cmd_file_patch (struct client *c, struct args *a);
int sr_client_cmd_file_search (struct client *c, struct args *a);

#endif
