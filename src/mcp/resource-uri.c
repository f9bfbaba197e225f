#include "config.h"

#include "mcp/resource-uri.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

#define URI_PREFIX "sandbox://sessions/"
#define URI_FILES "/files/"

static bool
unreserved (unsigned char ch)
{
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')
         || (ch != '\0' && strchr ("-._~", ch));
}

char *
sr_mcp_uri_path_encode (const char *p)
{
  static const char hex[] = "0123456789ABCDEF";
  char *out = sr_xmalloc (3 * strlen (p) + 1), *o = out;

  for (; *p; p++)
    {
      unsigned char ch = (unsigned char) *p;

      if (unreserved (ch) || ch == '/')
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

char *
sr_mcp_resource_uri (const char *session_id, const char *path)
{
  _cleanup_free_ char *id = sr_mcp_uri_path_encode (session_id);
  _cleanup_free_ char *p = sr_mcp_uri_path_encode (path);

  return sr_xasprintf (URI_PREFIX "%s" URI_FILES "%s", id, p);
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

/* Decodes s[0..len) into a new string; NULL for a bad escape, an escaped
 * NUL, or (when one_segment) a '/', escaped or not.  */
static char *
decode (const char *s, size_t len, bool one_segment)
{
  char *out = sr_xmalloc (len + 1), *o = out;

  for (size_t i = 0; i < len; i++)
    {
      int hi, lo;

      if (s[i] != '%')
        {
          if (one_segment && s[i] == '/')
            goto bad;
          *o++ = s[i];
          continue;
        }
      if (i + 2 >= len)
        goto bad;
      hi = hex_value (s[i + 1]);
      lo = hi < 0 ? -1 : hex_value (s[i + 2]);
      /* An escaped '/' would make two URIs of one path.  */
      if (lo < 0 || (hi == 0 && lo == 0) || (hi << 4 | lo) == '/')
        goto bad;
      *o++ = (char) (hi << 4 | lo);
      i += 2;
    }
  *o = '\0';
  return out;

bad:
  free (out);
  return NULL;
}

int
sr_mcp_resource_uri_parse (const char *uri, char **ret_session_id, char **ret_path)
{
  const char *id, *files;
  char *session_id, *path;

  if (strncmp (uri, URI_PREFIX, strlen (URI_PREFIX)) != 0)
    return -1;
  id = uri + strlen (URI_PREFIX);
  files = strstr (id, URI_FILES);
  if (files == NULL || files == id || files[strlen (URI_FILES)] == '\0')
    return -1;
  session_id = decode (id, (size_t) (files - id), true);
  if (session_id == NULL)
    return -1;
  path = decode (files + strlen (URI_FILES), strlen (files + strlen (URI_FILES)), false);
  if (path == NULL)
    {
      free (session_id);
      return -1;
    }
  *ret_session_id = session_id;
  *ret_path = path;
  return 0;
}
