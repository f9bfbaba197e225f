/* Which store history_db names, and how to show it without its password.  */
#include <config.h>

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "common/history-db.h"

/* The length of a conninfo keyword at s ("host" of "host = x"), 0 when s
 * does not start with one followed by '='.  */
static size_t
keyword_len (const char *s)
{
  size_t n = 0, i;

  while ((s[n] >= 'a' && s[n] <= 'z') || s[n] == '_')
    n++;
  for (i = n; s[i] == ' ' || s[i] == '\t'; i++)
    ;
  return n > 0 && s[i] == '=' ? n : 0;
}

static bool
is_uri (const char *db)
{
  return strncmp (db, "postgresql://", 13) == 0 || strncmp (db, "postgres://", 11) == 0;
}

enum sr_history_kind
sr_history_kind_of (const char *db)
{
  if (db && (is_uri (db) || keyword_len (db) > 0))
    return SR_HISTORY_POSTGRESQL;
  return SR_HISTORY_SQLITE;
}

/* Appends s[0, n) to the string *out.  */
static void
append (char **out, const char *s, size_t n)
{
  char *r = sr_xasprintf ("%s%.*s", *out, (int) n, s);

  free (*out);
  *out = r;
}

/* A URI: the password of its user info and of a password= parameter.  */
static char *
display_uri (const char *db)
{
  const char *host = strstr (db, "://") + 3;
  const char *end = host + strcspn (host, "/?");
  const char *at = memrchr (host, '@', (size_t) (end - host));
  const char *colon = at ? memchr (host, ':', (size_t) (at - host)) : NULL;
  const char *query = strchr (end, '?');
  char *out = sr_xstrdup ("");

  if (colon)
    {
      append (&out, db, (size_t) (colon + 1 - db));
      append (&out, "***", 3);
      append (&out, at, (size_t) ((query ? query : end + strlen (end)) - at));
    }
  else
    append (&out, db, (size_t) ((query ? query : end + strlen (end)) - db));
  if (query == NULL)
    return out;
  append (&out, "?", 1);
  for (const char *p = query + 1; *p;)
    {
      size_t len = strcspn (p, "&");

      if (strncmp (p, "password=", 9) == 0)
        append (&out, "password=***", 12);
      else
        append (&out, p, len);
      p += len;
      if (*p == '&')
        append (&out, p++, 1);
    }
  return out;
}

/* A conninfo: keyword = value pairs, a value bare or in single quotes
 * (with backslash escapes).  */
static char *
display_conninfo (const char *db)
{
  char *out = sr_xstrdup ("");
  const char *p = db;

  while (*p)
    {
      size_t kw = keyword_len (p);
      const char *v;

      if (kw == 0)
        {
          append (&out, p, 1);
          p++;
          continue;
        }
      v = strchr (p, '=') + 1;
      while (*v == ' ' || *v == '\t')
        v++;
      append (&out, p, (size_t) (v - p));
      bool secret = kw == 8 && strncmp (p, "password", 8) == 0;
      p = v;
      if (*p == '\'')
        for (p++; *p && *p != '\''; p++)
          if (*p == '\\' && p[1])
            p++;
      if (*p == '\'')
        p++;
      else if (*v != '\'')
        while (*p && !isspace ((unsigned char) *p))
          p++;
      if (secret)
        append (&out, "***", 3);
      else
        append (&out, v, (size_t) (p - v));
    }
  return out;
}

char *
sr_history_display (const char *db)
{
  if (db == NULL)
    return sr_xstrdup ("");
  if (is_uri (db))
    return display_uri (db);
  if (keyword_len (db) > 0)
    return display_conninfo (db);
  return sr_xstrdup (db);
}
