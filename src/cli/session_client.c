/* sandbox-runner session [--server URL] [--token-file FILE] COMMAND ...:
 * the session tools of a running `serve --transport http`, from a shell.
 *
 * Sessions live in the server (its containers stay between calls), so
 * this is a client of it: each invocation speaks MCP Streamable HTTP
 * itself (initialize, notifications/initialized, one tools/call, DELETE)
 * through libcurl, which is why it is in sandbox-runner-full only.  A
 * download does not go through MCP but through GET /files/{session}/
 * {path}, streamed to the file, so that its size is not bounded by the
 * size of one JSON-RPC message.  */
#include "config.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/curlbuf.h"
#include "common/util.h"

#define DEFAULT_URL "http://127.0.0.1:8080/mcp"
#define URL_ENV "SANDBOX_RUNNER_URL"
/* The protocol version we ask for; the server may answer an older one,
 * which we then send back in MCP-Protocol-Version.  */
#define PROTOCOL_VERSION "2025-11-25"
/* A server that does not accept the connection in this time is down.  */
#define CONNECT_TIMEOUT_S 5L
/* Local files read for upload, file-write and run are bounded by the
 * server's limits; this only keeps a mistaken argument (a disk image)
 * from filling our memory first.  */
#define MAX_LOCAL_INPUT (256u << 20)
/* The body of an HTTP error kept for its message.  */
#define MAX_ERROR_BODY (64u << 10)

/* One MCP session with the server, for the length of this command.  */
struct client
{
  CURL *curl;
  char *url;             /* the MCP endpoint */
  char *token;           /* NULL: no Authorization header */
  char *session_id;      /* Mcp-Session-Id, once initialized */
  char *protocol;        /* negotiated at initialize */
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

static void
reply_done (struct reply *r)
{
  sr_buf_done (&r->body);
  free (r->content_type);
  free (r->session_id);
  *r = (struct reply) { 0 };
}

/* Every message of this command starts the same way.  */
static void __attribute__ ((format (printf, 1, 2)))
fail (const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = sr_xvasprintf (fmt, ap);
  va_end (ap);
  sr_cli_error ("session: %s", msg);
}

/* --- HTTP --- */

static size_t
on_header (char *line, size_t size, size_t n, void *cls)
{
  struct reply *r = cls;
  size_t len = size * n;

  if (!sr_curl_header_take (line, len, "Content-Type", &r->content_type))
    sr_curl_header_take (line, len, "Mcp-Session-Id", &r->session_id);
  return len;
}

/* Explains a transfer that got no HTTP answer at all.  */
static void
transport_failed (const struct client *c, CURLcode rc, const char *errbuf)
{
  const char *why = errbuf[0] ? errbuf : curl_easy_strerror (rc);

  if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST
      || rc == CURLE_OPERATION_TIMEDOUT)
    fail ("cannot reach the server at %s: %s (is 'sandbox-runner serve --transport http' "
          "running there? see --server and " URL_ENV ")",
          c->url, why);
  else
    fail ("%s: %s", c->url, why);
}

/* The headers every request carries.  */
static struct curl_slist *
common_headers (const struct client *c, struct curl_slist *h)
{
  _cleanup_free_ char *auth = NULL, *sid = NULL, *proto = NULL;

  if (c->token)
    {
      auth = sr_xasprintf ("Authorization: Bearer %s", c->token);
      h = curl_slist_append (h, auth);
      explicit_bzero (auth, strlen (auth));
    }
  if (c->session_id)
    {
      sid = sr_xasprintf ("Mcp-Session-Id: %s", c->session_id);
      h = curl_slist_append (h, sid);
    }
  if (c->protocol)
    {
      proto = sr_xasprintf ("MCP-Protocol-Version: %s", c->protocol);
      h = curl_slist_append (h, proto);
    }
  return h;
}

/* One request to the MCP endpoint: POST with a body, or DELETE.  */
static int
exchange (struct client *c, const char *method, const char *body, struct reply *r)
{
  struct curl_slist *h = NULL;
  char errbuf[CURL_ERROR_SIZE] = "";
  CURLcode rc;

  *r = (struct reply) { 0 };
  curl_easy_reset (c->curl);
  curl_easy_setopt (c->curl, CURLOPT_URL, c->url);
  curl_easy_setopt (c->curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (c->curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
  curl_easy_setopt (c->curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (c->curl, CURLOPT_WRITEFUNCTION, sr_buf_curl_write);
  curl_easy_setopt (c->curl, CURLOPT_WRITEDATA, &r->body);
  curl_easy_setopt (c->curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt (c->curl, CURLOPT_HEADERDATA, r);
  h = common_headers (c, h);
  if (body)
    {
      h = curl_slist_append (h, "Content-Type: application/json");
      h = curl_slist_append (h, "Accept: application/json, text/event-stream");
      curl_easy_setopt (c->curl, CURLOPT_POSTFIELDS, body);
      curl_easy_setopt (c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) strlen (body));
    }
  else
    curl_easy_setopt (c->curl, CURLOPT_CUSTOMREQUEST, method);
  /* No Expect: 100-continue round trip for large uploads.  */
  h = curl_slist_append (h, "Expect:");
  curl_easy_setopt (c->curl, CURLOPT_HTTPHEADER, h);
  rc = curl_easy_perform (c->curl);
  curl_slist_free_all (h);
  if (rc != CURLE_OK)
    {
      transport_failed (c, rc, errbuf);
      reply_done (r);
      return -1;
    }
  curl_easy_getinfo (c->curl, CURLINFO_RESPONSE_CODE, &r->status);
  return 0;
}

/* The message of a JSON-RPC error body (the transport's refusals carry
 * one), else the status line's meaning.  */
static char *
http_error_message (const struct reply *r)
{
  _cleanup_free_ char *copy = NULL;
  cJSON *j;
  char *msg = NULL;

  if (r->body.data && (j = cJSON_Parse (r->body.data)))
    {
      const cJSON *e = cJSON_GetObjectItemCaseSensitive (j, "error");
      const cJSON *m = cJSON_GetObjectItemCaseSensitive (e, "message");

      if (cJSON_IsString (m))
        msg = sr_xstrdup (m->valuestring);
      cJSON_Delete (j);
    }
  if (msg == NULL)
    msg = sr_xasprintf ("HTTP status %ld", r->status);
  return msg;
}

/* Prints a refusal of the transport (401, 404, 413, ...).  */
static void
http_failed (const struct client *c, const struct reply *r)
{
  _cleanup_free_ char *msg = http_error_message (r);

  if (r->status == 401)
    fail ("%s: %s (give a token the server accepts with --token-file FILE)", c->url, msg);
  else
    fail ("%s: %s", c->url, msg);
}

/* The JSON-RPC response with this id in a reply: the body itself, or one
 * of the SSE events of a text/event-stream body (the others are the
 * request's notifications, which we do not show).  */
static cJSON *
find_response (const struct reply *r, int id)
{
  bool sse = r->content_type && strncasecmp (r->content_type, "text/event-stream", 17) == 0;
  _cleanup_free_ char *data = NULL;
  size_t data_len = 0;
  const char *p, *end;

  if (r->body.data == NULL)
    return NULL;
  if (!sse)
    return cJSON_Parse (r->body.data);
  /* Events are blocks of lines ended by an empty line; their data:
   * lines join with \n.  The end of the body ends the last event.  */
  for (p = r->body.data, end = p + r->body.len; p <= end;)
    {
      const char *nl = memchr (p, '\n', (size_t) (end - p));
      const char *line_end = nl ? nl : end;
      size_t len = (size_t) (line_end - p);

      if (len && p[len - 1] == '\r')
        len--;
      if (len == 0)
        {
          if (data_len)
            {
              cJSON *m = cJSON_ParseWithLength (data, data_len);
              const cJSON *mid = cJSON_GetObjectItemCaseSensitive (m, "id");

              if (m && cJSON_IsNumber (mid) && mid->valueint == id
                  && (cJSON_HasObjectItem (m, "result") || cJSON_HasObjectItem (m, "error")))
                return m;
              cJSON_Delete (m);
            }
          data_len = 0;
        }
      else if (len >= 5 && strncmp (p, "data:", 5) == 0)
        {
          const char *v = p + 5;
          size_t vlen = len - 5;

          if (vlen && *v == ' ')
            v++, vlen--;
          data = sr_xrealloc (data, data_len + vlen + 2);
          if (data_len)
            data[data_len++] = '\n';
          memcpy (data + data_len, v, vlen);
          data_len += vlen;
          data[data_len] = '\0';
        }
      if (nl == NULL)
        {
          if (data_len)
            {
              cJSON *m = cJSON_ParseWithLength (data, data_len);
              const cJSON *mid = cJSON_GetObjectItemCaseSensitive (m, "id");

              if (m && cJSON_IsNumber (mid) && mid->valueint == id)
                return m;
              cJSON_Delete (m);
            }
          break;
        }
      p = nl + 1;
    }
  return NULL;
}

/* Sends a request and returns its JSON-RPC response (the whole message);
 * a transport refusal or an unusable answer is printed, NULL.  *status
 * gets the HTTP status (404 for an expired MCP session).  */
static cJSON *
request (struct client *c, const char *method, cJSON *params, long *status)
{
  cJSON *msg = cJSON_CreateObject (), *resp;
  _cleanup_free_ char *text = NULL;
  struct reply r;
  int id = c->next_id++;

  cJSON_AddStringToObject (msg, "jsonrpc", "2.0");
  cJSON_AddNumberToObject (msg, "id", id);
  cJSON_AddStringToObject (msg, "method", method);
  if (params)
    cJSON_AddItemToObject (msg, "params", params);
  text = cJSON_PrintUnformatted (msg);
  cJSON_Delete (msg);
  if (text == NULL)
    sr_oom ();
  *status = 0;
  if (exchange (c, "POST", text, &r) < 0)
    return NULL;
  *status = r.status;
  if (r.status != 200)
    {
      if (!(r.status == 404 && c->session_id))
        http_failed (c, &r);
      reply_done (&r);
      return NULL;
    }
  resp = find_response (&r, id);
  if (resp == NULL)
    fail ("%s: the answer to %s is not a JSON-RPC response", c->url, method);
  else if (r.session_id && c->session_id == NULL)
    c->session_id = TAKE_PTR (r.session_id);
  reply_done (&r);
  return resp;
}

static int
notify (struct client *c, const char *method)
{
  _cleanup_free_ char *text = sr_xasprintf ("{\"jsonrpc\":\"2.0\",\"method\":\"%s\"}", method);
  struct reply r;
  int ret = 0;

  if (exchange (c, "POST", text, &r) < 0)
    return -1;
  if (r.status != 202 && r.status != 200)
    {
      http_failed (c, &r);
      ret = -1;
    }
  reply_done (&r);
  return ret;
}

/* A JSON-RPC error response, printed.  */
static bool
rpc_failed (const cJSON *resp)
{
  const cJSON *e = cJSON_GetObjectItemCaseSensitive (resp, "error");
  const cJSON *m = cJSON_GetObjectItemCaseSensitive (e, "message");
  const cJSON *code = cJSON_GetObjectItemCaseSensitive (e, "code");

  if (e == NULL)
    return false;
  fail ("server error %d: %s", cJSON_IsNumber (code) ? code->valueint : 0,
        cJSON_IsString (m) ? m->valuestring : "(no message)");
  return true;
}

static int
initialize (struct client *c)
{
  cJSON *params = cJSON_CreateObject (), *info, *resp;
  const cJSON *v;
  long status;

  free (TAKE_PTR (c->session_id));
  free (TAKE_PTR (c->protocol));
  cJSON_AddStringToObject (params, "protocolVersion", PROTOCOL_VERSION);
  cJSON_AddObjectToObject (params, "capabilities");
  info = cJSON_AddObjectToObject (params, "clientInfo");
  cJSON_AddStringToObject (info, "name", "sandbox-runner-session");
  cJSON_AddStringToObject (info, "version", PACKAGE_VERSION);
  resp = request (c, "initialize", params, &status);
  if (resp == NULL)
    return -1;
  if (rpc_failed (resp))
    {
      cJSON_Delete (resp);
      return -1;
    }
  v = cJSON_GetObjectItemCaseSensitive (cJSON_GetObjectItemCaseSensitive (resp, "result"),
                                        "protocolVersion");
  c->protocol = sr_xstrdup (cJSON_IsString (v) ? v->valuestring : PROTOCOL_VERSION);
  cJSON_Delete (resp);
  return notify (c, "notifications/initialized");
}

/* Ends the MCP session; the server's sessions (containers) stay.  A
 * server that does not allow DELETE (405) is fine by the spec.  */
static void
terminate (struct client *c)
{
  struct reply r;

  if (c->session_id == NULL)
    return;
  if (exchange (c, "DELETE", NULL, &r) == 0)
    reply_done (&r);
  free (TAKE_PTR (c->session_id));
}

/* Calls a tool.  Returns its structuredContent (owned by the caller), or
 * NULL with the refusal printed as "<code>: <message>".  */
static cJSON *
call_tool (struct client *c, const char *name, cJSON *args)
{
  cJSON *params, *resp = NULL, *result, *structured;
  long status = 0;

  for (int attempt = 0; attempt < 2; attempt++)
    {
      if (c->session_id == NULL && initialize (c) < 0)
        {
          cJSON_Delete (args);
          return NULL;
        }
      params = cJSON_CreateObject ();
      cJSON_AddStringToObject (params, "name", name);
      cJSON_AddItemToObject (params, "arguments", cJSON_Duplicate (args, true));
      resp = request (c, "tools/call", params, &status);
      /* 404: our MCP session expired (or the server restarted); the
       * spec's answer is a new initialize.  */
      if (resp || status != 404)
        break;
      free (TAKE_PTR (c->session_id));
    }
  cJSON_Delete (args);
  if (resp == NULL)
    {
      if (status == 404)
        fail ("%s: the server forgot our MCP session twice", c->url);
      return NULL;
    }
  if (rpc_failed (resp))
    {
      cJSON_Delete (resp);
      return NULL;
    }
  result = cJSON_GetObjectItemCaseSensitive (resp, "result");
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (result, "isError")))
    {
      /* The refusal's JSON is the text content: {"error":{code,message}}.  */
      const cJSON *content = cJSON_GetObjectItemCaseSensitive (result, "content");
      const cJSON *text = cJSON_GetObjectItemCaseSensitive (cJSON_GetArrayItem (content, 0),
                                                            "text");
      cJSON *j = cJSON_IsString (text) ? cJSON_Parse (text->valuestring) : NULL;
      const cJSON *e = cJSON_GetObjectItemCaseSensitive (j, "error");
      const cJSON *code = cJSON_GetObjectItemCaseSensitive (e, "code");
      const cJSON *msg = cJSON_GetObjectItemCaseSensitive (e, "message");

      if (cJSON_IsString (code) && cJSON_IsString (msg))
        fail ("%s: %s", code->valuestring, msg->valuestring);
      else
        fail ("%s: %s", name, cJSON_IsString (text) ? text->valuestring : "failed");
      cJSON_Delete (j);
      cJSON_Delete (resp);
      return NULL;
    }
  structured = cJSON_DetachItemFromObjectCaseSensitive (result, "structuredContent");
  cJSON_Delete (resp);
  if (structured == NULL)
    fail ("%s: the result has no structuredContent", name);
  return structured;
}

/* --- arguments --- */

/* The options every subcommand takes, besides its own.  */
enum
{
  OPT_SERVER = 1000,
  OPT_TOKEN_FILE,
  OPT_JSON,
  OPT_SESSION,
  OPT_SHELL,
  OPT_LANGUAGE,
  OPT_TIMEOUT,
  OPT_IMAGE,
  OPT_OVERWRITE,
  OPT_OUTPUT,
  OPT_NO_WAIT,
  OPT_OFFSET,
  OPT_LIMIT,
  OPT_OLD,
  OPT_NEW,
  OPT_ALL,
  OPT_DIFF,
  OPT_GLOB,
  OPT_PATH,
};

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

struct subcommand
{
  const char *name;
  int (*fn) (struct client *c, struct args *a);
  const char *synopsis;  /* after "sandbox-runner session NAME " */
  const char *brief;     /* one line, for the list of commands */
  const char *summary;
  const char *options;   /* its own options' help, "" for none */
  unsigned wanted;       /* its own options, as 1 << (OPT_x - OPT_SESSION) */
  int min_args, max_args;
  unsigned required;     /* of those, the ones it cannot do without */
};

#define W(opt) (1u << ((opt) - OPT_SESSION))

static const char global_options_help[] =
  "  --server URL       the server's MCP endpoint (default: $" URL_ENV ", else\n"
  "                     " DEFAULT_URL ")\n"
  "  --token-file FILE  send the first token of FILE (one a line, # comments) as\n"
  "                     the bearer token\n"
  "  --json             print the tool's structured result as JSON\n";


static int
parse_args (const struct subcommand *sc, int argc, char **argv, struct args *a)
{
  static const struct option all[] = {
    { "server", required_argument, NULL, OPT_SERVER },
    { "token-file", required_argument, NULL, OPT_TOKEN_FILE },
    { "json", no_argument, NULL, OPT_JSON },
    { "help", no_argument, NULL, 'h' },
    { "session", required_argument, NULL, OPT_SESSION },
    { "shell", required_argument, NULL, OPT_SHELL },
    { "language", required_argument, NULL, OPT_LANGUAGE },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "image", required_argument, NULL, OPT_IMAGE },
    { "overwrite", no_argument, NULL, OPT_OVERWRITE },
    { "output", required_argument, NULL, OPT_OUTPUT },
    { "no-wait", no_argument, NULL, OPT_NO_WAIT },
    { "offset", required_argument, NULL, OPT_OFFSET },
    { "limit", required_argument, NULL, OPT_LIMIT },
    { "old", required_argument, NULL, OPT_OLD },
    { "new", required_argument, NULL, OPT_NEW },
    { "all", no_argument, NULL, OPT_ALL },
    { "diff", required_argument, NULL, OPT_DIFF },
    { "glob", required_argument, NULL, OPT_GLOB },
    { "path", required_argument, NULL, OPT_PATH },
    { NULL, 0, NULL, 0 },
  };
  int ch;

  optind = 1;
  /* "+": options only before the arguments, so that shell-exec's command
   * may hold dashes of its own.  */
  while ((ch = getopt_long (argc, argv, "+hs:S:l:o:", all, NULL)) != -1)
    {
      if (ch == 's')
        ch = OPT_SESSION;
      else if (ch == 'S')
        ch = OPT_SHELL;
      else if (ch == 'l')
        ch = OPT_LANGUAGE;
      else if (ch == 'o')
        ch = OPT_OUTPUT;
      if (ch >= OPT_SESSION && !(sc->wanted & W (ch)))
        {
          fail ("%s: option '%s' does not apply here (see 'sandbox-runner session %s --help')",
                sc->name, argv[optind - 1], sc->name);
          return -1;
        }
      switch (ch)
        {
        case OPT_SERVER: a->server = optarg; break;
        case OPT_TOKEN_FILE: a->token_file = optarg; break;
        case OPT_JSON: a->json = true; break;
        case 'h': a->help = true; return 0;
        case OPT_SESSION: a->session = optarg; break;
        case OPT_SHELL: a->shell = optarg; break;
        case OPT_LANGUAGE: a->language = optarg; break;
        case OPT_IMAGE: a->image = optarg; break;
        case OPT_OVERWRITE: a->overwrite = true; break;
        case OPT_OUTPUT: a->output = optarg; break;
        case OPT_NO_WAIT: a->no_wait = true; break;
        case OPT_OLD: a->old_s = optarg; break;
        case OPT_NEW: a->new_s = optarg; break;
        case OPT_ALL: a->all = true; break;
        case OPT_DIFF: a->diff = optarg; break;
        case OPT_GLOB: a->glob = optarg; break;
        case OPT_PATH: a->path = optarg; break;
        case OPT_TIMEOUT:
          {
            char *end;

            errno = 0;
            a->timeout = strtod (optarg, &end);
            if (errno || end == optarg || *end || !isfinite (a->timeout) || a->timeout <= 0)
              {
                fail ("%s: --timeout wants seconds above 0, not '%s'", sc->name, optarg);
                return -1;
              }
            break;
          }
        case OPT_OFFSET:
          if (sr_cli_parse_uint ("--offset", optarg, 1, &a->offset) < 0)
            return -1;
          break;
        case OPT_LIMIT:
          if (sr_cli_parse_uint ("--limit", optarg, 1, &a->limit) < 0)
            return -1;
          break;
        default:
          fail ("%s: see 'sandbox-runner session %s --help'", sc->name, sc->name);
          return -1;
        }
    }
  a->argc = argc - optind;
  a->argv = argv + optind;
  if (a->argc < sc->min_args || a->argc > sc->max_args)
    {
      fail ("%s: usage: sandbox-runner session %s %s", sc->name, sc->name, sc->synopsis);
      return -1;
    }
  return 0;
}

/* Checked before the subcommand runs, so that it need not.  */
static int
check_required (const struct subcommand *sc, const struct args *a)
{
  const char *opt = NULL;

  if ((sc->required & W (OPT_SESSION)) && a->session == NULL)
    opt = "--session";
  else if ((sc->required & W (OPT_SHELL)) && a->shell == NULL)
    opt = "--shell";
  if (opt == NULL)
    return 0;
  fail ("%s: %s is required", sc->name, opt);
  return -1;
}

/* A local file, or stdin for "-" (NULL: "-").  */
static int
read_input (const char *path, char **ret, size_t *ret_len)
{
  if (sr_cli_read_input ("session", path, MAX_LOCAL_INPUT, ret, ret_len) < 0)
    return -1;
  if (*ret_len > MAX_LOCAL_INPUT)
    {
      fail ("%s is over %u MiB", path && strcmp (path, "-") != 0 ? path : "stdin",
            MAX_LOCAL_INPUT >> 20);
      free (*ret);
      *ret = NULL;
      return -1;
    }
  return 0;
}

/* --- output --- */

static void
print_json (const cJSON *o)
{
  _cleanup_free_ char *text = cJSON_PrintUnformatted (o);

  if (text == NULL)
    sr_oom ();
  puts (text);
}

static const char *
get_string (const cJSON *o, const char *key)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);

  return cJSON_IsString (v) ? v->valuestring : NULL;
}

static double
get_number (const cJSON *o, const char *key, double dflt)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (o, key);

  return cJSON_IsNumber (v) ? v->valuedouble : dflt;
}

/* Writes an output field (utf-8 as it is, base64 decoded) to fd.  */
static void
write_output (int fd, const cJSON *o, const char *key, const char *encoding_key)
{
  const char *text = get_string (o, key), *enc = get_string (o, encoding_key);

  if (text == NULL)
    return;
  if (enc && strcmp (enc, "base64") == 0)
    {
      _cleanup_free_ char *raw = NULL;
      size_t len;

      if (sr_base64_decode (text, strlen (text), &raw, &len) == 0)
        sr_write_all (fd, raw, len);
      return;
    }
  sr_write_all (fd, text, strlen (text));
}

/* Tells how the server created a session for this call, so that the
 * next call can name it.  */
static void
note_new_session (const struct args *a, const cJSON *o)
{
  const char *sid = get_string (o, "session_id");

  if (a->session == NULL && sid && !a->json)
    sr_cli_error ("session: created session %s", sid);
}

/* --- the subcommands --- */

/* A subcommand's way of showing its tool's result as text, when there is
 * no --json.  */
typedef void print_fn (const struct args *a, const cJSON *o);
/* A subcommand's exit status for its tool's result, --json or not.  */
typedef int status_fn (const struct args *a, const cJSON *o);

/* What most subcommands are: one tool call, its result shown as JSON
 * with --json, else by print (NULL: nothing).  Takes args.  Returns
 * status's exit status (NULL: 0), or SR_EXIT_RUNNER when the call
 * failed (the refusal printed).  */
static int
call_and_show (struct client *c, const struct args *a, const char *tool, cJSON *args,
               print_fn *print, status_fn *status)
{
  cJSON *o = call_tool (c, tool, args);
  int ret;

  if (o == NULL)
    return SR_EXIT_RUNNER;
  if (a->json)
    print_json (o);
  else if (print)
    print (a, o);
  ret = status ? status (a, o) : 0;
  cJSON_Delete (o);
  return ret;
}

/* The arguments of a tool on a session: session_id, when one was given
 * (the subcommands that need one are not run without it).  */
static cJSON *
session_args (const struct args *a)
{
  cJSON *args = cJSON_CreateObject ();

  if (a->session)
    cJSON_AddStringToObject (args, "session_id", a->session);
  return args;
}

/* The arguments of a tool on a persistent shell (--shell is required).  */
static cJSON *
shell_args (const struct args *a)
{
  cJSON *args = cJSON_CreateObject ();

  cJSON_AddStringToObject (args, "shell_id", a->shell);
  return args;
}

static void
print_session_id (const struct args *a, const cJSON *o)
{
  (void) a;
  puts (get_string (o, "session_id") ?: "");
}

/* upload and file-write; for file-write, whose --session is required,
 * note_new_session says nothing.  */
static void
print_path (const struct args *a, const cJSON *o)
{
  note_new_session (a, o);
  puts (get_string (o, "path") ?: "");
}

static void
print_shell_id (const struct args *a, const cJSON *o)
{
  note_new_session (a, o);
  puts (get_string (o, "shell_id") ?: "");
}

static int
cmd_new (struct client *c, struct args *a)
{
  cJSON *args = cJSON_CreateObject ();

  if (a->image)
    cJSON_AddStringToObject (args, "image", a->image);
  return call_and_show (c, a, "create_session", args, print_session_id, NULL);
}

static void
print_sessions (const struct args *a, const cJSON *o)
{
  const cJSON *e;

  (void) a;
  printf ("%-32s  %-12s  %-20s  %8s  %s\n", "SESSION", "IMAGE", "CREATED", "IDLE", "BUSY");
  cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "sessions"))
    printf ("%-32s  %-12s  %-20s  %7.0fs  %s\n", get_string (e, "session_id") ?: "",
            get_string (e, "image") ?: "", get_string (e, "created") ?: "",
            get_number (e, "idle_seconds", 0),
            cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (e, "busy")) ? "yes" : "no");
}

static int
cmd_list (struct client *c, struct args *a)
{
  return call_and_show (c, a, "list_sessions", cJSON_CreateObject (), print_sessions, NULL);
}

static int
cmd_close (struct client *c, struct args *a)
{
  return call_and_show (c, a, "close_session", session_args (a), NULL, NULL);
}

static void
print_run (const struct args *a, const cJSON *o)
{
  const char *status = get_string (o, "status") ?: "";

  (void) a;
  write_output (STDOUT_FILENO, o, "stdout", "stdout_encoding");
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (o, "stdout_truncated")))
    puts ("\n[stdout truncated]");
  fflush (stdout);
  write_output (STDERR_FILENO, o, "stderr", "stderr_encoding");
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (o, "stderr_truncated")))
    fputs ("\n[stderr truncated]\n", stderr);
  if (strcmp (status, "compile_error") == 0)
    sr_cli_error ("compile error");
  else if (strcmp (status, "timeout") == 0)
    sr_cli_error ("timed out; the run was killed");
  else if (strcmp (status, "oom") == 0)
    sr_cli_error ("out of memory: the run was killed at its memory limit");
}

/* The run's own exit status, as `sandbox-runner run` gives it.  */
static int
run_status (const struct args *a, const cJSON *o)
{
  const char *status = get_string (o, "status") ?: "";

  (void) a;
  if (strcmp (status, "compile_error") == 0)
    return 1;
  if (strcmp (status, "timeout") == 0)
    return SR_EXIT_TIMEOUT;
  return (int) get_number (o, "exit_code", 0);
}

static int
cmd_run (struct client *c, struct args *a)
{
  _cleanup_free_ char *code = NULL;
  size_t len;
  cJSON *args;

  if (read_input (a->argc ? a->argv[0] : NULL, &code, &len) < 0)
    return SR_EXIT_RUNNER;
  if (strlen (code) != len)
    {
      fail ("run: the code holds a NUL byte");
      return SR_EXIT_RUNNER;
    }
  args = session_args (a);
  cJSON_AddStringToObject (args, "code", code);
  if (a->language)
    cJSON_AddStringToObject (args, "language", a->language);
  if (a->timeout > 0)
    cJSON_AddNumberToObject (args, "timeout_seconds", a->timeout);
  return call_and_show (c, a, "run_code", args, print_run, run_status);
}

static const char *
base_name (const char *path)
{
  const char *slash = strrchr (path, '/');

  return slash ? slash + 1 : path;
}

static int
cmd_upload (struct client *c, struct args *a)
{
  _cleanup_free_ char *data = NULL, *b64 = NULL;
  const char *local = a->argv[0];
  const char *name = a->argc > 1 ? a->argv[1] : base_name (local);
  size_t len;
  cJSON *args;

  if (strcmp (local, "-") == 0 && a->argc < 2)
    {
      fail ("upload: give the NAME of a file read from stdin");
      return SR_EXIT_RUNNER;
    }
  if (*name == '\0')
    {
      fail ("upload: '%s' names no file", local);
      return SR_EXIT_RUNNER;
    }
  if (read_input (local, &data, &len) < 0)
    return SR_EXIT_RUNNER;
  b64 = sr_base64_encode (data, len);
  args = session_args (a);
  cJSON_AddStringToObject (args, "filename", name);
  cJSON_AddStringToObject (args, "content_base64", b64);
  if (a->overwrite)
    cJSON_AddBoolToObject (args, "overwrite", true);
  return call_and_show (c, a, "upload_file", args, print_path, NULL);
}

static void
print_artifacts (const struct args *a, const cJSON *o)
{
  const cJSON *e;

  (void) a;
  cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "artifacts"))
    printf ("%10.0f  %-20s  %-24s  %s\n", get_number (e, "size", 0),
            get_string (e, "mtime") ?: "", get_string (e, "mime_type") ?: "-",
            get_string (e, "path") ?: "");
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (o, "truncated")))
    sr_cli_error ("session: ls: the list is truncated");
}

static int
cmd_ls (struct client *c, struct args *a)
{
  return call_and_show (c, a, "list_artifacts", session_args (a), print_artifacts, NULL);
}

/* GET /files/... streams into the file; a refusal's body is kept for
 * its message instead.  */
struct download
{
  CURL *curl;
  int fd;
  bool checked, ok;
  uint64_t written;
  int write_errno;
  struct reply err;
};

static size_t
on_download (char *data, size_t size, size_t n, void *cls)
{
  struct download *d = cls;
  size_t len = size * n;

  if (!d->checked)
    {
      long status = 0;

      curl_easy_getinfo (d->curl, CURLINFO_RESPONSE_CODE, &status);
      d->ok = status == 200;
      d->checked = true;
    }
  if (!d->ok)
    {
      if (d->err.body.len + len > MAX_ERROR_BODY)
        return len;
      return sr_buf_curl_write (data, size, n, &d->err.body);
    }
  if (sr_write_all (d->fd, data, len) < 0)
    {
      d->write_errno = errno;
      return 0;  /* stops the transfer */
    }
  d->written += len;
  return len;
}

/* Percent-encodes a path for the URL, keeping its slashes unless it is
 * one segment (the session id).  */
static char *
url_path (const char *p, bool segment)
{
  static const char hex[] = "0123456789ABCDEF";
  char *out = sr_xmalloc (3 * strlen (p) + 1), *o = out;

  for (; *p; p++)
    {
      unsigned char ch = (unsigned char) *p;

      if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
          || strchr (segment ? "-._~" : "-._~/", ch))
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

/* The download URL of a session's file: the server's origin (from
 * --server, which is how we reach it, whatever address it listens on)
 * and /files/{session}/{path}.  */
static char *
files_url (const struct client *c, const char *session, const char *path)
{
  _cleanup_free_ char *esid = url_path (session, true), *epath = NULL, *rel = NULL;
  CURLU *u = curl_url ();
  char *out = NULL;

  while (*path == '/')
    path++;
  epath = url_path (path, false);
  rel = sr_xasprintf ("/files/%s/%s", esid, epath);
  if (u == NULL)
    sr_oom ();
  if (curl_url_set (u, CURLUPART_URL, c->url, 0) != CURLUE_OK
      || curl_url_set (u, CURLUPART_PATH, rel, 0) != CURLUE_OK
      || curl_url_set (u, CURLUPART_QUERY, NULL, 0) != CURLUE_OK
      || curl_url_get (u, CURLUPART_URL, &out, 0) != CURLUE_OK)
    out = NULL;
  curl_url_cleanup (u);
  if (out == NULL)
    return NULL;
  {
    char *copy = sr_xstrdup (out);

    curl_free (out);
    return copy;
  }
}

static int
cmd_download (struct client *c, struct args *a)
{
  const char *path = a->argv[0];
  const char *dest = a->output ? a->output : base_name (path);
  bool to_stdout = strcmp (dest, "-") == 0;
  _cleanup_free_ char *url = NULL, *tmp = NULL;
  struct download d = { .curl = c->curl, .fd = -1 };
  struct curl_slist *h = NULL;
  char errbuf[CURL_ERROR_SIZE] = "";
  CURLcode rc;
  long status = 0;
  int ret = SR_EXIT_RUNNER;

  if (*dest == '\0')
    {
      fail ("download: '%s' names no file; give --output FILE", path);
      return SR_EXIT_RUNNER;
    }
  url = files_url (c, a->session, path);
  if (url == NULL)
    {
      fail ("download: --server %s is not a URL", c->url);
      return SR_EXIT_RUNNER;
    }
  if (to_stdout)
    d.fd = STDOUT_FILENO;
  else
    {
      /* Beside the destination, renamed over it once complete: an
       * interrupted download leaves no half file under its name.  */
      tmp = sr_xasprintf ("%s.XXXXXX", dest);
      d.fd = mkostemp (tmp, O_CLOEXEC);
      if (d.fd < 0)
        {
          fail ("download: %s: %s", tmp, strerror (errno));
          return SR_EXIT_RUNNER;
        }
    }
  curl_easy_reset (c->curl);
  curl_easy_setopt (c->curl, CURLOPT_URL, url);
  curl_easy_setopt (c->curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (c->curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
  curl_easy_setopt (c->curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (c->curl, CURLOPT_WRITEFUNCTION, on_download);
  curl_easy_setopt (c->curl, CURLOPT_WRITEDATA, &d);
  h = common_headers (c, h);
  curl_easy_setopt (c->curl, CURLOPT_HTTPHEADER, h);
  rc = curl_easy_perform (c->curl);
  curl_slist_free_all (h);
  curl_easy_getinfo (c->curl, CURLINFO_RESPONSE_CODE, &status);
  if (d.write_errno)
    fail ("download: write %s: %s", to_stdout ? "stdout" : dest, strerror (d.write_errno));
  else if (rc != CURLE_OK)
    transport_failed (c, rc, errbuf);
  else if (status != 200)
    {
      /* The route's messages read "<code>: <message>" already.  */
      d.err.status = status;
      _cleanup_free_ char *msg = http_error_message (&d.err);

      if (status == 401)
        fail ("download: %s (give a token the server accepts with --token-file FILE)", msg);
      else
        fail ("%s", msg);
    }
  else if (!to_stdout && fsync (d.fd) < 0)
    fail ("download: fsync %s: %s", tmp, strerror (errno));
  else if (!to_stdout && rename (tmp, dest) < 0)
    fail ("download: rename %s to %s: %s", tmp, dest, strerror (errno));
  else
    {
      ret = 0;
      if (a->json)
        {
          cJSON *o = cJSON_CreateObject ();

          cJSON_AddStringToObject (o, "session_id", a->session);
          cJSON_AddStringToObject (o, "path", path);
          cJSON_AddStringToObject (o, "file", dest);
          cJSON_AddNumberToObject (o, "size", (double) d.written);
          print_json (o);
          cJSON_Delete (o);
        }
    }
  reply_done (&d.err);
  if (!to_stdout)
    {
      close (d.fd);
      if (ret != 0)
        unlink (tmp);
    }
  return ret;
}

static int
cmd_shell_new (struct client *c, struct args *a)
{
  return call_and_show (c, a, "shell_new", session_args (a), print_shell_id, NULL);
}

/* shell-exec and shell-read print the output.  */
static void
print_shell_output (const struct args *a, const cJSON *o)
{
  (void) a;
  write_output (STDOUT_FILENO, o, "output", "output_encoding");
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (o, "truncated")))
    sr_cli_error ("session: the output was cut; only its tail is shown");
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (o, "timed_out")))
    sr_cli_error ("session: timed out; the command was interrupted (Ctrl-C)");
}

/* shell-exec's status is the command's once it ended (124 when it was
 * interrupted at its timeout), 0 with --no-wait.  */
static int
shell_exec_status (const struct args *a, const cJSON *o)
{
  if (a->no_wait)
    return 0;
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (o, "timed_out")))
    return SR_EXIT_TIMEOUT;
  return (int) get_number (o, "exit_code", 0);
}

static int
cmd_shell_exec (struct client *c, struct args *a)
{
  _cleanup_free_ char *command = NULL;
  cJSON *args;

  if (a->argc == 1 && strcmp (a->argv[0], "-") == 0)
    {
      size_t len;

      if (read_input ("-", &command, &len) < 0)
        return SR_EXIT_RUNNER;
    }
  else
    {
      /* The words join with spaces, as ssh joins them: the shell in the
       * session parses them again.  */
      size_t len = 0;

      for (int i = 0; i < a->argc; i++)
        len += strlen (a->argv[i]) + 1;
      command = sr_xmalloc (len + 1);
      command[0] = '\0';
      for (int i = 0; i < a->argc; i++)
        {
          if (i)
            strcat (command, " ");
          strcat (command, a->argv[i]);
        }
    }
  args = shell_args (a);
  cJSON_AddStringToObject (args, "command", command);
  if (a->no_wait)
    cJSON_AddBoolToObject (args, "wait", false);
  if (a->timeout > 0)
    cJSON_AddNumberToObject (args, "timeout_seconds", a->timeout);
  return call_and_show (c, a, "shell_exec", args, print_shell_output, shell_exec_status);
}

static int
cmd_shell_read (struct client *c, struct args *a)
{
  return call_and_show (c, a, "shell_read", shell_args (a), print_shell_output, NULL);
}

/* \n, \r and \t of DATA become the characters, so that a shell user can
 * type 'ls\n'; \xHH and \\ go as they are: write_stdin decodes them.  */
static char *
control_escapes (const char *s)
{
  char *out = sr_xmalloc (strlen (s) + 1), *o = out;

  for (; *s; s++)
    {
      if (s[0] == '\\' && s[1] == '\\')
        {
          *o++ = *s++;
          *o++ = *s;
        }
      else if (s[0] == '\\' && s[1] && strchr ("nrt", s[1]))
        {
          s++;
          *o++ = *s == 'n' ? '\n' : *s == 'r' ? '\r' : '\t';
        }
      else
        *o++ = *s;
    }
  *o = '\0';
  return out;
}

static int
cmd_shell_write (struct client *c, struct args *a)
{
  _cleanup_free_ char *data = control_escapes (a->argv[0]);
  cJSON *args = shell_args (a);

  cJSON_AddStringToObject (args, "data", data);
  return call_and_show (c, a, "write_stdin", args, NULL, NULL);
}

static void
print_shells (const struct args *a, const cJSON *o)
{
  const cJSON *e;

  (void) a;
  printf ("%-32s  %-32s  %s\n", "SHELL", "SESSION", "STATE");
  cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "shells"))
    printf ("%-32s  %-32s  %s\n", get_string (e, "shell_id") ?: "",
            get_string (e, "session_id") ?: "", get_string (e, "state") ?: "");
}

static int
cmd_shell_ls (struct client *c, struct args *a)
{
  return call_and_show (c, a, "shell_list", cJSON_CreateObject (), print_shells, NULL);
}

static int
cmd_shell_rm (struct client *c, struct args *a)
{
  return call_and_show (c, a, "shell_remove", shell_args (a), NULL, NULL);
}

/* The arguments of the file tools: the session and the file.  */
static cJSON *
file_args (const struct args *a)
{
  cJSON *args = session_args (a);

  cJSON_AddStringToObject (args, "path", a->argv[0]);
  return args;
}

static void
print_content (const struct args *a, const cJSON *o)
{
  (void) a;
  fputs (get_string (o, "content") ?: "", stdout);
}

static int
cmd_file_read (struct client *c, struct args *a)
{
  cJSON *args = file_args (a);

  if (a->offset)
    cJSON_AddNumberToObject (args, "offset", (double) a->offset);
  if (a->limit)
    cJSON_AddNumberToObject (args, "limit", (double) a->limit);
  return call_and_show (c, a, "file_read", args, print_content, NULL);
}

static int
cmd_file_write (struct client *c, struct args *a)
{
  _cleanup_free_ char *content = NULL;
  size_t len;
  cJSON *args;

  if (read_input (a->argc > 1 ? a->argv[1] : NULL, &content, &len) < 0)
    return SR_EXIT_RUNNER;
  if (strlen (content) != len)
    {
      fail ("file-write: the content holds a NUL byte (use upload for binary files)");
      return SR_EXIT_RUNNER;
    }
  args = file_args (a);
  cJSON_AddStringToObject (args, "content", content);
  return call_and_show (c, a, "file_write", args, print_path, NULL);
}

static void
print_replacements (const struct args *a, const cJSON *o)
{
  (void) a;
  printf ("%.0f\n", get_number (o, "replacements", 0));
}

static int
cmd_file_patch (struct client *c, struct args *a)
{
  _cleanup_free_ char *diff = NULL;
  cJSON *args;

  if (a->diff ? a->old_s || a->new_s : !a->old_s || !a->new_s)
    {
      fail ("file-patch: give either --old TEXT and --new TEXT, or --diff FILE");
      return SR_EXIT_RUNNER;
    }
  if (a->diff)
    {
      size_t len;

      if (read_input (a->diff, &diff, &len) < 0)
        return SR_EXIT_RUNNER;
    }
  args = file_args (a);
  if (diff)
    cJSON_AddStringToObject (args, "diff", diff);
  else
    {
      cJSON_AddStringToObject (args, "old_string", a->old_s);
      cJSON_AddStringToObject (args, "new_string", a->new_s);
      if (a->all)
        cJSON_AddBoolToObject (args, "replace_all", true);
    }
  return call_and_show (c, a, "file_patch", args, print_replacements, NULL);
}

/* As grep -rn prints them.  */
static void
print_matches (const struct args *a, const cJSON *o)
{
  const cJSON *e;

  (void) a;
  cJSON_ArrayForEach (e, cJSON_GetObjectItemCaseSensitive (o, "matches"))
    printf ("%s:%.0f:%s\n", get_string (e, "path") ?: "", get_number (e, "line", 0),
            get_string (e, "text") ?: "");
  if (cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (o, "truncated")))
    sr_cli_error ("session: file-search: more matches were left out");
}

static int
cmd_file_search (struct client *c, struct args *a)
{
  cJSON *args = session_args (a);

  cJSON_AddStringToObject (args, "pattern", a->argv[0]);
  if (a->glob)
    cJSON_AddStringToObject (args, "glob", a->glob);
  if (a->path)
    cJSON_AddStringToObject (args, "path", a->path);
  return call_and_show (c, a, "file_search", args, print_matches, NULL);
}

#define S_OPT "  -s, --session ID   the session\n"
#define SH_OPT "  -S, --shell ID     the shell (from shell-new)\n"

static const struct subcommand subcommands[] = {
  { "new", cmd_new, "[--image IMAGE]", "create a session and print its id",
    "create a session and print its id",
    "  --image IMAGE      its image (default: the server's session_image)\n",
    W (OPT_IMAGE), 0, 0, 0 },
  { "list", cmd_list, "",
    "list the server's sessions", "list the server's sessions", "", 0, 0, 0, 0 },
  { "run", cmd_run, "[-s ID] [-l LANGUAGE] [--timeout S] [FILE|-]",
    "run code in a session (or once) and exit with its status",
    "run code (from FILE or stdin) in a session, or once without one; prints its\n"
    "stdout and stderr and exits with its exit status",
    "  -s, --session ID   run in this session (default: a one-shot run)\n"
    "  -l, --language L   the language (default: the server's)\n"
    "  --timeout S        the run's timeout in seconds\n",
    W (OPT_SESSION) | W (OPT_LANGUAGE) | W (OPT_TIMEOUT), 0, 1, 0 },
  { "upload", cmd_upload, "[-s ID] [--overwrite] LOCAL-FILE|- [NAME]",
    "copy a local file into a session's /mnt/data",
    "copy a local file into the session's /mnt/data (as NAME, default its own\n"
    "name); without --session a session is created and its id printed on stderr",
    "  -s, --session ID   the session (default: a new one)\n"
    "  --overwrite        replace an existing file\n",
    W (OPT_SESSION) | W (OPT_OVERWRITE), 1, 2, 0 },
  { "download", cmd_download, "-s ID [-o FILE|-] PATH",
    "copy a file of a session's /mnt/data to a local file",
    "copy a file of the session's /mnt/data to a local file, streamed over\n"
    "GET /files/{session}/{path}",
    S_OPT "  -o, --output FILE  where to write it (default: its name, in the current\n"
    "                     directory; - for stdout)\n",
    W (OPT_SESSION) | W (OPT_OUTPUT), 1, 1, W (OPT_SESSION) },
  { "ls", cmd_ls, "-s ID",
    "list the files of a session's /mnt/data",
    "list the files of the session's /mnt/data: size, modification time, MIME type\nand path",
    S_OPT, W (OPT_SESSION), 0, 0, W (OPT_SESSION) },
  { "close", cmd_close, "-s ID",
    "close a session (its files are destroyed)",
    "close a session: its container and every file of its /mnt/data are destroyed",
    S_OPT, W (OPT_SESSION), 0, 0, W (OPT_SESSION) },
  { "shell-new", cmd_shell_new, "[-s ID]", "start a persistent shell",
    "start a persistent shell (in a new session without --session) and print its id",
    "  -s, --session ID   the session (default: a new one)\n", W (OPT_SESSION), 0, 0, 0 },
  { "shell-exec", cmd_shell_exec, "-S ID [--no-wait] [--timeout S] COMMAND...|-",
    "run a command line in a persistent shell",
    "run a command line (its words, or stdin for -) in a persistent shell; prints\n"
    "its output and exits with its status (124 when interrupted at the timeout)",
    SH_OPT "  --no-wait          return at once; shell-read collects the output\n"
    "  --timeout S        interrupt it (Ctrl-C) after S seconds\n",
    W (OPT_SHELL) | W (OPT_NO_WAIT) | W (OPT_TIMEOUT), 1, INT_MAX, W (OPT_SHELL) },
  { "shell-read", cmd_shell_read, "-S ID",
    "print a shell's new output", "print what a shell printed since the last read",
    SH_OPT, W (OPT_SHELL), 0, 0, W (OPT_SHELL) },
  { "shell-write", cmd_shell_write, "-S ID DATA", "type into a shell (\\x03 is Ctrl-C)",
    "type DATA into a shell's terminal: \\n ends a line, \\t and \\r are the\n"
    "characters, \\xHH a byte (\\x03 is Ctrl-C, \\x04 end of input), \\\\ a backslash",
    SH_OPT,
    W (OPT_SHELL), 1, 1, W (OPT_SHELL) },
  { "shell-ls", cmd_shell_ls, "",
    "list the persistent shells", "list the persistent shells", "", 0, 0, 0, 0 },
  { "shell-rm", cmd_shell_rm, "-S ID",
    "kill a persistent shell", "kill a persistent shell (the session stays)", SH_OPT,
    W (OPT_SHELL), 0, 0, W (OPT_SHELL) },
  { "file-read", cmd_file_read, "-s ID [--offset N] [--limit N] PATH",
    "print lines of a text file of a session",
    "print lines of a text file of the session, each after its number",
    S_OPT "  --offset N         the first line (default 1)\n"
    "  --limit N          how many lines (default 2000)\n",
    W (OPT_SESSION) | W (OPT_OFFSET) | W (OPT_LIMIT), 1, 1, W (OPT_SESSION) },
  { "file-write", cmd_file_write, "-s ID PATH [LOCAL-FILE|-]", "write a text file in a session",
    "write a whole text file in the session (atomically, parents created) from\n"
    "LOCAL-FILE or stdin",
    S_OPT, W (OPT_SESSION), 1, 2, W (OPT_SESSION) },
  { "file-patch", cmd_file_patch, "-s ID (--old TEXT --new TEXT [--all] | --diff FILE|-) PATH",
    "edit a text file of a session",
    "edit a file of the session: replace TEXT once (every time with --all), or\n"
    "apply a unified diff; prints the number of replacements",
    S_OPT "  --old TEXT         the text to replace (it must occur once)\n"
    "  --new TEXT         what replaces it\n"
    "  --all              replace every occurrence\n"
    "  --diff FILE|-      a unified diff of the file instead\n",
    W (OPT_SESSION) | W (OPT_OLD) | W (OPT_NEW) | W (OPT_ALL) | W (OPT_DIFF), 1, 1,
    W (OPT_SESSION) },
  { "file-search", cmd_file_search, "-s ID [--glob GLOB] [--path DIR] PATTERN",
    "search the text files of a session",
    "print the lines of the session's text files matching an extended regular\n"
    "expression, as PATH:LINE:TEXT",
    S_OPT "  --glob GLOB        only files whose name matches GLOB (*.py)\n"
    "  --path DIR         where to search (default /mnt/data)\n",
    W (OPT_SESSION) | W (OPT_GLOB) | W (OPT_PATH), 1, 1, W (OPT_SESSION) },
};

static void
usage (FILE *f)
{
  fprintf (f,
           "Usage: sandbox-runner session [--server URL] [--token-file FILE] COMMAND "
           "[OPTIONS] [ARGS]\n\n"
           "Uses the sessions of a running sandbox-runner server on the HTTP transport:\n"
           "the same tools an MCP client has (each command is one MCP tools/call).\n\n"
           "Commands:\n");
  for (size_t i = 0; i < SR_ARRAY_SIZE (subcommands); i++)
    fprintf (f, "  %-12s %s\n", subcommands[i].name, subcommands[i].brief);
  fprintf (f,
           "\nOptions (also accepted after COMMAND):\n%s\n"
           "Exit status: 0; for run and shell-exec the command's own; %d when the server\n"
           "refuses (\"sandbox-runner: session: CODE: MESSAGE\"), cannot be reached, or the\n"
           "arguments are wrong.\n\n"
           "Run 'sandbox-runner session COMMAND --help' for a command's options.\n",
           global_options_help, SR_EXIT_RUNNER);
}

static void
subcommand_usage (const struct subcommand *sc)
{
  printf ("Usage: sandbox-runner session %s %s\n\n%s.\n\n%s%s", sc->name, sc->synopsis,
          sc->summary, sc->options, global_options_help);
}

/* The first token of a token file (the server's format: one a line, #
 * comments, blanks trimmed).  */
static int
read_token (const char *path, char **ret)
{
  _cleanup_free_ char *text = NULL;
  sr_error_t err = NULL;
  char *save = NULL;
  size_t len;

  if (sr_read_file (path, &text, &len, &err) < 0)
    {
      fail ("--token-file: %s", err->msg);
      sr_error_free (&err);
      return -1;
    }
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *t = line, *end;

      while (*t == ' ' || *t == '\t')
        t++;
      end = t + strlen (t);
      while (end > t && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
        *--end = '\0';
      if (*t && *t != '#')
        {
          *ret = sr_xstrdup (t);
          explicit_bzero (text, len);
          return 0;
        }
    }
  explicit_bzero (text, len);
  fail ("--token-file: %s holds no token (one a line, # comments)", path);
  return -1;
}

int
sr_cmd_session (int argc, char **argv)
{
  enum { G_SERVER = 1, G_TOKEN_FILE, G_JSON };
  static const struct option options[] = {
    { "server", required_argument, NULL, G_SERVER },
    { "token-file", required_argument, NULL, G_TOKEN_FILE },
    { "json", no_argument, NULL, G_JSON },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const struct subcommand *sc = NULL;
  struct args a = { 0 };
  struct client c = { .next_id = 1 };
  const char *env;
  int ch, status = SR_EXIT_RUNNER;

  optind = 1;
  while ((ch = getopt_long (argc, argv, "+h", options, NULL)) != -1)
    switch (ch)
      {
      case G_SERVER: a.server = optarg; break;
      case G_TOKEN_FILE: a.token_file = optarg; break;
      case G_JSON: a.json = true; break;
      case 'h':
        usage (stdout);
        return 0;
      default:
        usage (stderr);
        return SR_EXIT_RUNNER;
      }
  if (optind >= argc)
    {
      usage (stderr);
      return SR_EXIT_RUNNER;
    }
  for (size_t i = 0; i < SR_ARRAY_SIZE (subcommands); i++)
    if (strcmp (argv[optind], subcommands[i].name) == 0)
      sc = &subcommands[i];
  if (sc == NULL)
    {
      fail ("unknown command '%s' (see 'sandbox-runner session --help')", argv[optind]);
      return SR_EXIT_RUNNER;
    }
  if (parse_args (sc, argc - optind, argv + optind, &a) < 0)
    return SR_EXIT_RUNNER;
  if (a.help)
    {
      subcommand_usage (sc);
      return 0;
    }

  env = getenv (URL_ENV);
  c.url = sr_xstrdup (a.server ? a.server : env && *env ? env : DEFAULT_URL);
  if (a.token_file && read_token (a.token_file, &c.token) < 0)
    goto out;
  if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK || (c.curl = curl_easy_init ()) == NULL)
    {
      fail ("libcurl could not start");
      goto out;
    }
  status = check_required (sc, &a) < 0 ? SR_EXIT_RUNNER : sc->fn (&c, &a);
  fflush (stdout);
  terminate (&c);
  curl_easy_cleanup (c.curl);
  curl_global_cleanup ();
out:
  if (c.token)
    explicit_bzero (c.token, strlen (c.token));
  free (c.token);
  free (c.url);
  free (c.session_id);
  free (c.protocol);
  return status;
}
