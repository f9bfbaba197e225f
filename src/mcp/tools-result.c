#include "config.h"

#include "mcp/tools-internal.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "common/utf8.h"
#include "common/util.h"
#include "mcp/download-link.h"
#include "mcp/resource-uri.h"
#include "sandbox/service.h"

cJSON *
sr_mcp_tool_result (cJSON *structured, bool is_error)
{
  cJSON *r = cJSON_CreateObject ();

  cJSON_AddArrayToObject (r, "content");
  if (is_error)
    {
      _cleanup_free_ char *s = cJSON_PrintUnformatted (structured);
      cJSON *text = cJSON_CreateObject ();

      cJSON_AddStringToObject (text, "type", "text");
      cJSON_AddStringToObject (text, "text", s);
      sr_mcp_result_add (r, text);
      cJSON_Delete (structured);
    }
  else
    cJSON_AddItemToObject (r, "structuredContent", structured);
  cJSON_AddBoolToObject (r, "isError", is_error);
  return r;
}

void
sr_mcp_result_add (cJSON *r, cJSON *block)
{
  cJSON_AddItemToArray (cJSON_GetObjectItemCaseSensitive (r, "content"), block);
}

cJSON *
sr_mcp_tool_error (const char *code, const char *fmt, ...)
{
  cJSON *o = cJSON_CreateObject (), *e = cJSON_AddObjectToObject (o, "error");
  _cleanup_free_ char *msg = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = sr_xvasprintf (fmt, ap);
  va_end (ap);
  cJSON_AddStringToObject (e, "code", code);
  sr_utf8_add_text (e, "message", msg);
  return sr_mcp_tool_result (o, true);
}

cJSON *
sr_mcp_tool_refusal (sr_error_t *err)
{
  const char *code = sr_error_code (*err);
  cJSON *r = sr_mcp_tool_error (code ? code : "sandbox_error", "%s",
                                *err ? (*err)->msg : "failed");

  sr_error_free (err);
  return r;
}

cJSON *
sr_mcp_no_sessions (void)
{
  return sr_mcp_tool_error ("sessions_unavailable", "this server has no session support");
}

cJSON *
sr_mcp_timeout_arg (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, const char *name,
                    uint64_t absent_ms, uint64_t *ret_ms)
{
  double seconds;

  *ret_ms = absent_ms;
  if (!sr_mcp_arg_number (args, name, &seconds))
    return NULL;
  if (seconds * 1000 > (double) ctx->cfg->max_timeout_ms)
    return sr_mcp_tool_error ("timeout_too_large", "timeout %g s is over the ceiling of %g s",
                              seconds, (double) ctx->cfg->max_timeout_ms / 1000);
  *ret_ms = (uint64_t) ceil (seconds * 1000);
  return NULL;
}

/* Output that is valid UTF-8 goes as it is, anything else as base64.  */
void
sr_mcp_add_output (cJSON *o, const char *key, const char *encoding_key,
                   const struct sr_captured *c)
{
  const char *data = c->data ? c->data : "";
  size_t clean_len;
  _cleanup_free_ char *clean = sr_utf8_sanitize (data, c->len, &clean_len);

  if (clean_len == c->len && memcmp (clean, data, c->len) == 0)
    {
      cJSON_AddStringToObject (o, key, clean);
      cJSON_AddStringToObject (o, encoding_key, "utf-8");
      return;
    }
  {
    _cleanup_free_ char *b64 = sr_base64_encode (data, c->len);

    cJSON_AddStringToObject (o, key, b64);
    cJSON_AddStringToObject (o, encoding_key, "base64");
  }
}

cJSON *
sr_mcp_path_arg (const cJSON *args, const char *key, char **ret_path)
{
  _cleanup_free_ char *b64_key = sr_xasprintf ("%s_base64", key);
  const char *b64 = sr_mcp_arg_string (args, b64_key), *text;
  _cleanup_free_ char *raw = NULL;
  size_t len;

  *ret_path = NULL;
  if (b64 == NULL)
    {
      text = sr_mcp_arg_string (args, key);
      *ret_path = text ? sr_xstrdup (text) : NULL;
      return NULL;
    }
  if (sr_base64_decode (b64, strlen (b64), &raw, &len) < 0 || len == 0
      || memchr (raw, '\0', len))
    return sr_mcp_tool_error ("invalid_path", "%s is not the base64 of a path", b64_key);
  *ret_path = sr_xasprintf ("%.*s", (int) len, raw);
  return NULL;
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
      _cleanup_free_ char *uri = sr_mcp_file_uri (session_id, v[i].path);

      sr_utf8_add_name (e, "path", v[i].path);
      cJSON_AddNumberToObject (e, "size", (double) v[i].size);
      cJSON_AddStringToObject (e, "mtime", when);
      if (v[i].mime_type)
        cJSON_AddStringToObject (e, "mime_type", v[i].mime_type);
      cJSON_AddStringToObject (e, "uri", uri);
      if (ctx->files_url)
        {
          _cleanup_free_ char *path = sr_mcp_uri_path (v[i].path);
          _cleanup_free_ char *query = sr_mcp_link_query (
              ctx->link_key, session_id, v[i].path,
              (int64_t) time (NULL) + (int64_t) (ctx->cfg->download_url_ttl_ms / 1000));
          /* The server's id before the session's, for the balancer in
           * front of a fleet (mcp/http.h).  */
          const char *server = ctx->cfg->server_id;
          _cleanup_free_ char *url
              = sr_xasprintf ("%s/files/%s%s%s/%s%s", ctx->files_url, server ? server : "",
                              server && *server ? "." : "", session_id, path, query);

          cJSON_AddStringToObject (e, "download_url", url);
        }
      cJSON_AddItemToArray (list, e);
    }
}

cJSON *
sr_mcp_resource_link (const char *session_id, const char *path, const char *mime_type,
                      uint64_t size)
{
  cJSON *b = cJSON_CreateObject ();
  _cleanup_free_ char *uri = sr_mcp_file_uri (session_id, path);
  const char *slash = strrchr (path, '/');

  cJSON_AddStringToObject (b, "type", "resource_link");
  cJSON_AddStringToObject (b, "uri", uri);
  sr_utf8_add_text (b, "name", slash ? slash + 1 : path);
  if (mime_type)
    cJSON_AddStringToObject (b, "mimeType", mime_type);
  cJSON_AddNumberToObject (b, "size", (double) size);
  return b;
}

void
sr_mcp_add_artifact_links (cJSON *r, const char *session_id, const struct sr_artifact *v,
                           size_t n)
{
  for (size_t i = 0; i < n && i < SR_MCP_MAX_LINKS; i++)
    sr_mcp_result_add (r, sr_mcp_resource_link (session_id, v[i].path, v[i].mime_type,
                                                v[i].size));
}

uint64_t
sr_mcp_max_output_arg (const struct sr_mcp_tool_ctx *ctx, const cJSON *args)
{
  uint64_t ceiling = ctx->cfg->max_output_ceiling;
  uint64_t want = sr_mcp_arg_count (args, "max_output", ctx->cfg->max_output);

  return want < ceiling ? want : ceiling;
}

size_t
sr_mcp_utf8_cut (const char *data, size_t len)
{
  for (int i = 0; i < 3 && len > 0 && ((unsigned char) data[len] & 0xc0) == 0x80; i++)
    len--;
  return len;
}

/* Cuts c's output to at most len bytes, at a UTF-8 boundary.  */
static void
cut (struct sr_captured *c, size_t len)
{
  if (len < sr_captured_output_len (c))
    sr_captured_cut (c, sr_mcp_utf8_cut (c->data, len));
}

void
sr_mcp_fit_output (struct sr_captured *out, struct sr_captured *err, size_t max)
{
  size_t o = sr_captured_output_len (out), e = sr_captured_output_len (err);

  if (o + e <= max)
    return;
  /* Each stream keeps its head; one that needs less than half leaves the
   * rest to the other.  */
  if (e <= max / 2)
    o = max - e;
  else if (o <= max / 2)
    e = max - o;
  else
    {
      e = max / 2;
      o = max - e;
    }
  cut (out, o);
  cut (err, e);
}

void
sr_mcp_fit_tail (char *data, size_t *len, size_t max, bool *truncated)
{
  size_t start;

  if (*len <= max)
    return;
  start = *len - max;
  while (start < *len && ((unsigned char) data[start] & 0xc0) == 0x80)
    start++;
  memmove (data, data + start, *len - start);
  *len -= start;
  data[*len] = '\0';
  *truncated = true;
}
