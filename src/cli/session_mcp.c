/* The MCP client of `sandbox-runner session`: Streamable HTTP through
 * libcurl, for one command (initialize, notifications/initialized, the
 * tools/call), and the MCP session kept from one command to the next in
 * the runtime directory.  */
#include "config.h"

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/session_client.h"
#include "common/config.h"
#include "common/curlbuf.h"
#include "common/sha256.h"
#include "common/statedir.h"
#include "common/util.h"

/* The protocol version we ask for; the server may answer an older one,
 * which we then send back in MCP-Protocol-Version.  */
#define PROTOCOL_VERSION "2025-11-25"
/* A server that does not accept the connection in this time is down.  */
#define CONNECT_TIMEOUT_S 5L

void
sr_client_reply_done (struct reply *r)
{
  sr_buf_done (&r->body);
  free (r->content_type);
  free (r->session_id);
  *r = (struct reply) { 0 };
}

static size_t
on_header (char *line, size_t size, size_t n, void *cls)
{
  struct reply *r = cls;
  size_t len = size * n;

  if (!sr_curl_header_take (line, len, "Content-Type", &r->content_type))
    sr_curl_header_take (line, len, "Mcp-Session-Id", &r->session_id);
  return len;
}

void
sr_client_transport_failed (const struct client *c, CURLcode rc, const char *errbuf)
{
  const char *why = errbuf[0] ? errbuf : curl_easy_strerror (rc);

  if (rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST
      || rc == CURLE_OPERATION_TIMEDOUT)
    sr_client_fail ("cannot reach the server at %s: %s (is 'sandbox-runner serve --transport "
                    "http' running there? see --server and " SR_CLIENT_URL_ENV ")",
                    c->url, why);
  else
    sr_client_fail ("%s: %s", c->url, why);
}

struct curl_slist *
sr_client_start (struct client *c, const char *url, char *errbuf, curl_write_callback write_fn,
                 void *write_data)
{
  _cleanup_free_ char *auth = NULL, *sid = NULL, *proto = NULL;
  struct curl_slist *h = NULL;

  curl_easy_reset (c->curl);
  curl_easy_setopt (c->curl, CURLOPT_URL, url);
  curl_easy_setopt (c->curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (c->curl, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
  curl_easy_setopt (c->curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (c->curl, CURLOPT_WRITEFUNCTION, write_fn);
  curl_easy_setopt (c->curl, CURLOPT_WRITEDATA, write_data);
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
  struct curl_slist *h;
  char errbuf[CURL_ERROR_SIZE] = "";
  CURLcode rc;

  *r = (struct reply) { 0 };
  h = sr_client_start (c, c->url, errbuf, sr_buf_curl_write, &r->body);
  curl_easy_setopt (c->curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt (c->curl, CURLOPT_HEADERDATA, r);
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
      sr_client_transport_failed (c, rc, errbuf);
      sr_client_reply_done (r);
      return -1;
    }
  curl_easy_getinfo (c->curl, CURLINFO_RESPONSE_CODE, &r->status);
  return 0;
}

char *
sr_client_http_error_message (const struct reply *r)
{
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
  _cleanup_free_ char *msg = sr_client_http_error_message (r);

  if (r->status == 401)
    sr_client_fail ("%s: %s " SR_CLIENT_TOKEN_HINT, c->url, msg);
  else
    sr_client_fail ("%s: %s", c->url, msg);
}

/* The SSE event's data when it is the JSON-RPC response to request id
 * (owned by the caller), else NULL.  */
static cJSON *
event_response (const char *data, size_t len, int id)
{
  cJSON *m;
  const cJSON *mid;

  if (len == 0)
    return NULL;
  m = cJSON_ParseWithLength (data, len);
  mid = cJSON_GetObjectItemCaseSensitive (m, "id");
  if (m && cJSON_IsNumber (mid) && mid->valueint == id
      && (cJSON_HasObjectItem (m, "result") || cJSON_HasObjectItem (m, "error")))
    return m;
  cJSON_Delete (m);
  return NULL;
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
  const char *p, *end, *nl;

  if (r->body.data == NULL)
    return NULL;
  if (!sse)
    return cJSON_Parse (r->body.data);
  /* Events are blocks of lines ended by an empty line; their data:
   * lines join with \n.  The end of the body ends the last event.  */
  for (p = r->body.data, end = p + r->body.len; p <= end; p = nl + 1)
    {
      size_t len;

      nl = memchr (p, '\n', (size_t) (end - p));
      len = (size_t) ((nl ? nl : end) - p);
      if (len && p[len - 1] == '\r')
        len--;
      if (len >= 5 && strncmp (p, "data:", 5) == 0)
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
      if (len == 0 || nl == NULL)
        {
          cJSON *m = event_response (data, data_len, id);

          if (m)
            return m;
          data_len = 0;
        }
      if (nl == NULL)
        break;
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
      sr_client_reply_done (&r);
      return NULL;
    }
  resp = find_response (&r, id);
  if (resp == NULL)
    sr_client_fail ("%s: the answer to %s is not a JSON-RPC response", c->url, method);
  else if (r.session_id && c->session_id == NULL)
    c->session_id = TAKE_PTR (r.session_id);
  sr_client_reply_done (&r);
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
  sr_client_reply_done (&r);
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
  sr_client_fail ("server error %d: %s", cJSON_IsNumber (code) ? code->valueint : 0,
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

/* Ends the MCP session.  A server that does not allow DELETE (405) is
 * fine by the spec.  */
static void
terminate (struct client *c)
{
  struct reply r;

  if (c->session_id == NULL)
    return;
  if (exchange (c, "DELETE", NULL, &r) == 0)
    sr_client_reply_done (&r);
  free (TAKE_PTR (c->session_id));
}

/* Where the MCP sessions are kept: <runtime_dir>/session-client, a state
 * directory of ours (common/statedir.h), and the file of c's server in
 * it, named for its URL.  False when there is none to be had.  */
static bool
state_open (struct client *c)
{
  struct sr_config cfg = { 0 };
  _cleanup_free_ char *dir = NULL;
  unsigned char d[SR_SHA256_LEN];
  struct sr_sha256 *h;
  sr_error_t err = NULL;

  c->state_dir = -1;
  if (sr_config_load (&cfg, NULL, NULL, &err) == 0)
    dir = sr_statedir_runtime_sub (cfg.runtime_dir, "session-client", &err);
  sr_config_done (&cfg);
  if (dir)
    c->state_dir = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  sr_error_free (&err);
  h = sr_sha256_new ();
  sr_sha256_update (h, c->url, strlen (c->url));
  sr_sha256_final (h, d);
  sr_hex_encode (d, 16, c->state_name);
  return c->state_dir >= 0;
}

void
sr_client_resume (struct client *c)
{
  _cleanup_free_ char *text = NULL;
  char id[129], protocol[33];
  size_t len;
  int fd;

  if (!state_open (c))
    return;
  fd = openat (c->state_dir, c->state_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  if (sr_read_fd (fd, 512, &text, &len) == 0 && sscanf (text, "%128s %32s", id, protocol) == 2)
    {
      c->session_id = sr_xstrdup (id);
      c->protocol = sr_xstrdup (protocol);
    }
  close (fd);
}

void
sr_client_keep (struct client *c)
{
  _cleanup_free_ char *text = NULL, *tmp = NULL;
  bool kept = false;
  int fd;

  if (c->session_id == NULL || c->state_dir < 0)
    {
      terminate (c);
      return;
    }
  /* Written whole, then renamed: a command running at the same time
   * reads the old id or the new, never half of one.  */
  text = sr_xasprintf ("%s %s\n", c->session_id, c->protocol ? c->protocol : PROTOCOL_VERSION);
  tmp = sr_xasprintf (".%s.%d", c->state_name, (int) getpid ());
  fd = openat (c->state_dir, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd >= 0)
    {
      kept = sr_write_all (fd, text, strlen (text)) == 0 && close (fd) == 0
             && renameat (c->state_dir, tmp, c->state_dir, c->state_name) == 0;
      if (!kept)
        unlinkat (c->state_dir, tmp, 0);
    }
  close (c->state_dir);
  c->state_dir = -1;
  if (!kept)
    terminate (c);
}

cJSON *
sr_client_call_tool (struct client *c, const char *name, cJSON *args)
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
        sr_client_fail ("%s: the server forgot our MCP session twice", c->url);
      return NULL;
    }
  if (rpc_failed (resp))
    {
      cJSON_Delete (resp);
      return NULL;
    }
  result = cJSON_GetObjectItemCaseSensitive (resp, "result");
  if (get_bool (result, "isError"))
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
        sr_client_fail ("%s: %s", code->valuestring, msg->valuestring);
      else
        sr_client_fail ("%s: %s", name, cJSON_IsString (text) ? text->valuestring : "failed");
      cJSON_Delete (j);
      cJSON_Delete (resp);
      return NULL;
    }
  structured = cJSON_DetachItemFromObjectCaseSensitive (result, "structuredContent");
  cJSON_Delete (resp);
  if (structured == NULL)
    sr_client_fail ("%s: the result has no structuredContent", name);
  return structured;
}
