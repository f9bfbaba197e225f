#include "config.h"

#include "mcp/resource-uri.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "common/util.h"

#define FILES_PART "/files/"

static bool
unreserved (unsigned char ch)
{
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
         || ch == '-' || ch == '.' || ch == '_' || ch == '~';
}

/* Appends s percent-encoded at o, '/' kept when keep_slash; returns the
 * end.  */
static char *
encode (char *o, const char *s, bool keep_slash)
{
  static const char hex[] = "0123456789ABCDEF";

  for (; *s; s++)
    {
      unsigned char ch = (unsigned char) *s;

      if (unreserved (ch) || (keep_slash && ch == '/'))
        *o++ = (char) ch;
      else
        {
          *o++ = '%';
          *o++ = hex[ch >> 4];
          *o++ = hex[ch & 15];
        }
    }
  return o;
}

char *
sr_mcp_uri_path (const char *path)
{
  char *out = sr_xmalloc (3 * strlen (path) + 1);

  *encode (out, path, true) = '\0';
  return out;
}

char *
sr_mcp_file_uri (const char *session_id, const char *path)
{
  char *uri = sr_xmalloc (strlen (SR_MCP_URI_SESSIONS) + 3 * strlen (session_id)
                          + strlen (FILES_PART) + 3 * strlen (path) + 1);
  char *o = stpcpy (uri, SR_MCP_URI_SESSIONS);

  o = encode (o, session_id, false);
  o = stpcpy (o, FILES_PART);
  o = encode (o, path, true);
  *o = '\0';
  return uri;
}

static int
hex_value (char c)
{
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* The decoding of s[0..len), or NULL when it is empty, holds a malformed
 * escape, or decodes to a NUL or (unless slash_ok) a '/'.  */
static char *
decode (const char *s, size_t len, bool slash_ok)
{
  _cleanup_free_ char *out = sr_xmalloc (len + 1);
  char *o = out;

  if (len == 0)
    return NULL;
  for (size_t i = 0; i < len; i++)
    {
      int hi, lo;

      if (s[i] != '%')
        {
          *o++ = s[i];
          continue;
        }
      if (i + 2 >= len || (hi = hex_value (s[i + 1])) < 0 || (lo = hex_value (s[i + 2])) < 0)
        return NULL;
      if (hi == 0 && lo == 0)
        return NULL;
      if (!slash_ok && hi * 16 + lo == '/')
        return NULL;
      *o++ = (char) (hi * 16 + lo);
      i += 2;
    }
  *o = '\0';
  return TAKE_PTR (out);
}

int
sr_mcp_file_uri_parse (const char *uri, char **ret_session_id, char **ret_path,
                       sr_error_t *err)
{
  size_t pre = strlen (SR_MCP_URI_SESSIONS);
  const char *id, *files;
  _cleanup_free_ char *sid = NULL, *path = NULL;

  if (strncmp (uri, SR_MCP_URI_SESSIONS, pre) != 0)
    goto bad;
  id = uri + pre;
  if ((files = strstr (id, FILES_PART)) == NULL || memchr (id, '/', (size_t) (files - id)))
    goto bad;
  sid = decode (id, (size_t) (files - id), false);
  path = decode (files + strlen (FILES_PART), strlen (files + strlen (FILES_PART)), true);
  if (sid == NULL || path == NULL)
    goto bad;
  *ret_session_id = TAKE_PTR (sid);
  *ret_path = TAKE_PTR (path);
  return 0;

bad:
  return sr_error_set_plain (err, "invalid_uri", EINVAL,
                             "'%s' is not a sandbox://sessions/{session_id}/files/{path} URI",
                             uri);
}
