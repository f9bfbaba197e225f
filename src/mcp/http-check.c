/* The checks made on a request's headers before any body is read: Host
 * and Origin against DNS rebinding, the bearer token, Accept, the
 * protocol version and the body's type and length; and reading what they
 * check against (the token file, allowed_origins).  */
#include "config.h"

#include <ctype.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "common/sha256.h"
#include "common/util.h"
#include "mcp/http-internal.h"
#include "mcp/jsonrpc.h"

bool
sr_http_ct_equal (const char *secret, const char *given)
{
  size_t slen = strlen (secret), glen = strlen (given);
  volatile unsigned char d = slen != glen;

  for (size_t i = 0; i < glen; i++)
    d |= (unsigned char) given[i] ^ (unsigned char) (i < slen ? secret[i] : 0);
  return d == 0;
}

static char *
trim (char *s)
{
  char *e;

  while (*s && isspace ((unsigned char) *s))
    s++;
  e = s + strlen (s);
  while (e > s && isspace ((unsigned char) e[-1]))
    *--e = '\0';
  return s;
}

static bool
is_loopback_name (const char *host, size_t len)
{
  static const char *const names[] = { "localhost", "127.0.0.1", "[::1]" };

  for (size_t i = 0; i < SR_ARRAY_SIZE (names); i++)
    if (len == strlen (names[i]) && strncasecmp (host, names[i], len) == 0)
      return true;
  return false;
}

/* The host part of "host[:port]" or "[v6][:port]": its start and length. */
static size_t
host_part (const char *hostport)
{
  const char *colon;

  if (hostport[0] == '[')
    {
      const char *end = strchr (hostport, ']');
      return end ? (size_t) (end - hostport) + 1 : strlen (hostport);
    }
  colon = strchr (hostport, ':');
  return colon ? (size_t) (colon - hostport) : strlen (hostport);
}

/* "http(s)://host[:port]" -> the host[:port], or NULL.  */
static const char *
origin_authority (const char *origin)
{
  if (strncasecmp (origin, "http://", 7) == 0)
    return origin + 7;
  if (strncasecmp (origin, "https://", 8) == 0)
    return origin + 8;
  return NULL;
}

static bool
origin_listed (const struct http *h, const char *origin)
{
  size_t len = strlen (origin);

  while (len && origin[len - 1] == '/')
    len--;
  for (char **o = h->origins; o && *o; o++)
    if (strlen (*o) == len && strncasecmp (*o, origin, len) == 0)
      return true;
  return false;
}

static bool
origin_ok (const struct http *h, const char *origin)
{
  const char *auth = origin_authority (origin);

  if (auth && strchr (auth, '/') == NULL && is_loopback_name (auth, host_part (auth)))
    return true;
  return origin_listed (h, origin);
}

/* Host names the server answers to when it listens on loopback: the
 * loopback names and the hosts of allowed_origins.  */
static bool
host_ok (const struct http *h, const char *hostport)
{
  size_t len = host_part (hostport);

  if (is_loopback_name (hostport, len))
    return true;
  for (char **o = h->origins; o && *o; o++)
    {
      const char *auth = origin_authority (*o);

      if (auth && host_part (auth) == len && strncasecmp (auth, hostport, len) == 0)
        return true;
    }
  return false;
}

bool
sr_http_accepts (const char *accept, const char *type, bool *explicit)
{
  _cleanup_free_ char *copy = NULL;
  size_t slash = (size_t) (strchr (type, '/') - type);
  bool ok = false;
  char *save = NULL;

  *explicit = false;
  if (accept == NULL)
    return true;
  copy = sr_xstrdup (accept);
  for (char *item = strtok_r (copy, ",", &save); item; item = strtok_r (NULL, ",", &save))
    {
      char *params = strchr (item, ';'), *mt;
      bool zero = false;

      if (params)
        {
          char *q;

          *params++ = '\0';
          q = strstr (params, "q=");
          zero = q && strtod (q + 2, NULL) <= 0.0;
        }
      mt = trim (item);
      if (zero)
        continue;
      if (strcasecmp (mt, type) == 0)
        {
          *explicit = true;
          ok = true;
        }
      else if (strcmp (mt, "*/*") == 0
               || (strlen (mt) == slash + 2 && strncasecmp (mt, type, slash + 1) == 0
                   && mt[slash + 1] == '*'))
        ok = true;
    }
  return ok;
}

const char *
sr_http_token_owner (const struct http *h, struct MHD_Connection *c)
{
  const char *auth = MHD_lookup_connection_value (c, MHD_HEADER_KIND,
                                                  MHD_HTTP_HEADER_AUTHORIZATION);
  const struct http_tokens *t = atomic_load (&h->tokens);
  const char *owner = NULL;

  if (t == NULL || auth == NULL || strncasecmp (auth, "Bearer ", 7) != 0)
    return NULL;
  auth += 7;
  while (*auth == ' ')
    auth++;
  if (*auth == '\0')
    return NULL;
  /* Against every token, without stopping at a match.  */
  for (size_t i = 0; t->tokens[i]; i++)
    if (sr_http_ct_equal (t->tokens[i], auth) && owner == NULL)
      owner = t->ids[i];
  return owner;
}

/* The owner id of each token, in their order.  */
static char **
token_ids (char **tokens)
{
  char **ids = NULL;

  for (char **t = tokens; t && *t; t++)
    {
      unsigned char d[SR_SHA256_LEN];
      char id[sizeof "token:" + 16] = "token:";
      struct sr_sha256 *hash = sr_sha256_new ();

      sr_sha256_update (hash, *t, strlen (*t));
      sr_sha256_final (hash, d);
      /* 64 bits tell tokens apart and say nothing of them.  */
      sr_hex_encode (d, 8, id + 6);
      sr_strv_push (&ids, id);
    }
  return ids;
}

char *
sr_http_files_url (struct MHD_Connection *c)
{
  const char *host = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
  size_t len = host ? strlen (host) : 0;

  /* It goes into a URL and a JSON text: a host name, an address or
   * [an IPv6 address], and a port, nothing else.  */
  if (len == 0 || len > 255
      || strspn (host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]")
             != len)
    return NULL;
  return sr_xasprintf ("http://%s", host);
}

/* An authentication failure, or a refused Host or Origin, in the log:
 * who asked (the peer's address) and why.  */
static void
log_refused (struct MHD_Connection *c, const char *why)
{
  const union MHD_ConnectionInfo *info
    = MHD_get_connection_info (c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  char host[NI_MAXHOST] = "";
  const struct sockaddr *sa = info ? info->client_addr : NULL;

  if (sa)
    getnameinfo (sa, sa->sa_family == AF_INET6 ? sizeof (struct sockaddr_in6)
                                               : sizeof (struct sockaddr_in),
                 host, sizeof host, NULL, 0, NI_NUMERICHOST);
  sr_log (SR_LOG_WARNING, "auth_failed", "peer", host, "reason", why, NULL);
}

bool
sr_http_caller_ok (const struct http *h, struct MHD_Connection *c, bool signed_link,
                   enum MHD_Result *ret)
{
  const char *host = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
  const char *origin = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ORIGIN);
  const char *why;

  /* DNS rebinding: a page of evil.example whose name now resolves to
   * 127.0.0.1 sends Host: evil.example and (on POST) its Origin.  */
  if (h->loopback && host && !host_ok (h, host))
    *ret = sr_http_reply_error (c, MHD_HTTP_FORBIDDEN, -32000,
                                why = "Forbidden: invalid Host header", NULL, NULL);
  else if (origin && !origin_ok (h, origin))
    *ret = sr_http_reply_error (c, MHD_HTTP_FORBIDDEN, -32000,
                                why = "Forbidden: this Origin is not allowed (allowed_origins)",
                                NULL, NULL);
  else if (h->authenticated && !signed_link && sr_http_token_owner (h, c) == NULL)
    *ret = sr_http_reply_error (c, MHD_HTTP_UNAUTHORIZED, -32000,
                                why = "Unauthorized: a valid bearer token is required",
                                "WWW-Authenticate", "Bearer realm=\"sandbox-runner\"");
  else
    return true;
  log_refused (c, why);
  return false;
}

/* The checks of a POST's headers.  */
static bool
post_headers_ok (const struct http *h, struct MHD_Connection *c, const char *accept,
                 enum MHD_Result *ret)
{
  const char *type = MHD_lookup_connection_value (c, MHD_HEADER_KIND,
                                                  MHD_HTTP_HEADER_CONTENT_TYPE);
  const char *length = MHD_lookup_connection_value (c, MHD_HEADER_KIND,
                                                    MHD_HTTP_HEADER_CONTENT_LENGTH);
  bool x, y;

  if (!sr_http_accepts (accept, "application/json", &x)
      && !sr_http_accepts (accept, "text/event-stream", &y))
    *ret = sr_http_reply_error (c, MHD_HTTP_NOT_ACCEPTABLE, -32000,
                                "Not Acceptable: the client must accept application/json and "
                                "text/event-stream",
                                NULL, NULL);
  else if (type == NULL || strncasecmp (type, "application/json", 16) != 0
           || (type[16] != '\0' && type[16] != ';' && type[16] != ' '))
    *ret = sr_http_reply_error (c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, -32000,
                                "Unsupported Media Type: the body must be application/json",
                                NULL, NULL);
  else if (length && strtoull (length, NULL, 10) > HTTP_MAX_DISCARD)
    *ret = sr_http_reply_body (c, MHD_HTTP_CONTENT_TOO_LARGE, "application/json",
                               sr_mcp_oversized_error (NULL, strtoull (length, NULL, 10),
                                                       h->max_message_size),
                               MHD_HTTP_HEADER_CONNECTION, "close");
  else
    return true;
  return false;
}

bool
sr_http_mcp_headers_ok (const struct http *h, struct MHD_Connection *c, const char *method,
                        enum MHD_Result *ret)
{
  const char *version = MHD_lookup_connection_value (c, MHD_HEADER_KIND, "MCP-Protocol-Version");
  const char *accept = MHD_lookup_connection_value (c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
  bool x;

  /* A POST's is checked with its body, whose id its refusal answers.  */
  if (version && strcmp (method, "POST") != 0 && !sr_mcp_protocol_known (version))
    {
      _cleanup_free_ char *msg = sr_xasprintf (
          "Bad Request: unsupported MCP-Protocol-Version %s (supported: %s, ...)", version,
          SR_MCP_PROTOCOL_LATEST);
      *ret = sr_http_reply_error (c, MHD_HTTP_BAD_REQUEST, -32000, msg, NULL, NULL);
      return false;
    }
  if (strcmp (method, "GET") == 0 && !sr_http_accepts (accept, "text/event-stream", &x))
    {
      *ret = sr_http_reply_error (c, MHD_HTTP_NOT_ACCEPTABLE, -32000,
                                  "Not Acceptable: the client must accept text/event-stream",
                                  NULL, NULL);
      return false;
    }
  if (strcmp (method, "POST") == 0)
    return post_headers_ok (h, c, accept, ret);
  return true;
}

/* A header's value without the whitespace around it (RFC 9110 5.5):
 * its start, and its length in *len.  */
static const char *
header_value (struct MHD_Connection *c, const char *name, size_t *len)
{
  const char *v = MHD_lookup_connection_value (c, MHD_HEADER_KIND, name);
  size_t n;

  if (v == NULL)
    return NULL;
  v += strspn (v, " \t");
  n = strlen (v);
  while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
    n--;
  *len = n;
  return v;
}

/* Whether header value v (len bytes) says what body does: as it is, or
 * as =?base64?...?= of its bytes (SEP-2243's form for a value a header
 * cannot carry).  */
static bool
header_says (const char *v, size_t len, const char *body)
{
  _cleanup_free_ char *decoded = NULL;
  size_t dlen;

  if (len >= 11 && strncmp (v, "=?base64?", 9) == 0 && strncmp (v + len - 2, "?=", 2) == 0)
    {
      if (sr_base64_decode (v + 9, len - 11, &decoded, &dlen) < 0)
        return false;
      v = decoded;
      len = dlen;
    }
  return strlen (body) == len && memcmp (v, body, len) == 0;
}

/* The member of params the Mcp-Name header of a method repeats, or NULL
 * when it has none.  */
static const char *
name_member (const char *method)
{
  static const char *const pairs[][2] = {
    { "tools/call", "name" },  { "prompts/get", "name" },  { "resources/read", "uri" },
    { "tasks/get", "taskId" }, { "tasks/update", "taskId" }, { "tasks/cancel", "taskId" },
  };

  for (size_t i = 0; i < SR_ARRAY_SIZE (pairs); i++)
    if (strcmp (pairs[i][0], method) == 0)
      return pairs[i][1];
  return NULL;
}

static int
mismatch (const struct sr_rpc_message *m, char **ret_error, const char *why)
{
  _cleanup_free_ char *msg = sr_xasprintf ("Header mismatch: %s", why);

  *ret_error = sr_rpc_error (m->id, SR_RPC_HEADER_MISMATCH, msg, NULL);
  return SR_RPC_HEADER_MISMATCH;
}

int
sr_http_modern_check (struct MHD_Connection *c, const struct sr_rpc_message *m, char **ret_error)
{
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive (m->params, "_meta");
  const cJSON *claimed = cJSON_GetObjectItemCaseSensitive (meta, SR_MCP_META_VERSION);
  const char *member = m->kind == SR_RPC_REQUEST ? name_member (m->method) : NULL;
  const cJSON *name = member ? cJSON_GetObjectItemCaseSensitive (m->params, member) : NULL;
  size_t vlen = 0, mlen = 0, nlen = 0;
  const char *version = header_value (c, "MCP-Protocol-Version", &vlen);
  const char *method = header_value (c, "Mcp-Method", &mlen);
  const char *name_h = header_value (c, "Mcp-Name", &nlen);
  int code;

  *ret_error = NULL;
  if (version == NULL)
    return mismatch (m, ret_error, "the MCP-Protocol-Version header is required");
  if (cJSON_IsString (claimed) && !header_says (version, vlen, claimed->valuestring))
    return mismatch (m, ret_error,
                     "MCP-Protocol-Version differs from params._meta's protocolVersion");
  code = sr_mcp_modern_check (m, ret_error);
  if (code != 0 || m->kind != SR_RPC_REQUEST)
    return code;
  /* What a proxy routes by must be what the server acts on.  */
  if (method == NULL)
    return mismatch (m, ret_error, "the Mcp-Method header is required");
  if (!header_says (method, mlen, m->method))
    return mismatch (m, ret_error, "Mcp-Method differs from the body's method");
  if (cJSON_IsString (name) && name_h == NULL)
    return mismatch (m, ret_error, "the Mcp-Name header is required for this method");
  if (name_h && (!cJSON_IsString (name) || !header_says (name_h, nlen, name->valuestring)))
    return mismatch (m, ret_error, "Mcp-Name differs from the body's params");
  return 0;
}

int
sr_http_tokens_read (const char *path, struct http_tokens **ret, sr_error_t *err)
{
  _cleanup_free_ char *text = NULL;
  char **tokens = NULL, *save = NULL;
  size_t len;

  if (sr_read_file (path, &text, &len, err) < 0)
    return sr_error_wrap (err, "token_file");
  for (char *line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *t = trim (line);

      if (*t && *t != '#')
        sr_strv_push (&tokens, t);
    }
  explicit_bzero (text, len);
  if (tokens == NULL)
    return sr_error_set (err, 0, "token_file %s holds no token (one per line, # comments)",
                         path);
  *ret = sr_xcalloc (1, sizeof **ret);
  (*ret)->tokens = tokens;
  (*ret)->ids = token_ids (tokens);
  return 0;
}

void
sr_http_tokens_free (struct http_tokens *t)
{
  while (t)
    {
      struct http_tokens *older = t->older;

      for (char **p = t->tokens; *p; p++)
        explicit_bzero (*p, strlen (*p));
      sr_strv_free (t->tokens);
      sr_strv_free (t->ids);
      free (t);
      t = older;
    }
}

char **
sr_http_parse_origins (const char *list)
{
  _cleanup_free_ char *copy = sr_xstrdup (list);
  char **origins = NULL, *save = NULL;

  for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
    {
      char *origin = trim (t);
      size_t len = strlen (origin);

      while (len && origin[len - 1] == '/')
        origin[--len] = '\0';
      if (*origin)
        sr_strv_push (&origins, origin);
    }
  return origins;
}
