#include <config.h>

#include "common/curlbuf.h"

#include <string.h>
#include <strings.h>

#include "common/util.h"

void
sr_buf_append (struct sr_buf *b, const void *d, size_t n)
{
  if (b->len + n + 1 > b->cap)
    {
      size_t cap = b->cap ? b->cap : 4096;

      while (cap < b->len + n + 1)
        cap *= 2;
      b->data = sr_xrealloc (b->data, cap);
      b->cap = cap;
    }
  memcpy (b->data + b->len, d, n);
  b->len += n;
  b->data[b->len] = '\0';
}

void
sr_buf_done (struct sr_buf *b)
{
  free (b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}

size_t
sr_buf_curl_write (char *ptr, size_t size, size_t nmemb, void *userdata)
{
  struct sr_buf *b = userdata;
  size_t n = size * nmemb;

  if (b->max && b->len + n > b->max)
    return 0;
  sr_buf_append (b, ptr, n);
  return n;
}

char *
sr_curl_header_value (const char *line, size_t len, const char *name)
{
  size_t n = strlen (name);
  const char *v, *end = line + len;

  if (len <= n || strncasecmp (line, name, n) != 0 || line[n] != ':')
    return NULL;
  v = line + n + 1;
  while (v < end && (*v == ' ' || *v == '\t'))
    v++;
  while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
    end--;
  return sr_xasprintf ("%.*s", (int) (end - v), v);
}

bool
sr_curl_header_take (const char *line, size_t len, const char *name, char **field)
{
  char *v = sr_curl_header_value (line, len, name);

  if (v == NULL)
    return false;
  free (*field);
  *field = v;
  return true;
}
