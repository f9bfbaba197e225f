#include "config.h"

#include <string.h>

#include "common/pack.h"
#include "common/xalloc.h"

void
sr_pack_bytes (struct sr_pack *p, const void *data, size_t n)
{
  if (p->len + n > p->cap)
    {
      p->cap = p->cap ? p->cap * 2 : 512;
      while (p->cap < p->len + n)
        p->cap *= 2;
      p->buf = sr_xrealloc (p->buf, p->cap);
    }
  if (n)
    memcpy (p->buf + p->len, data, n);
  p->len += n;
}

void
sr_pack_u64 (struct sr_pack *p, uint64_t v)
{
  sr_pack_bytes (p, &v, sizeof v);
}

/* Its length plus one, then the bytes and the NUL; 0 for NULL.  */
void
sr_pack_str (struct sr_pack *p, const char *s)
{
  size_t n = s ? strlen (s) + 1 : 0;

  sr_pack_u64 (p, n);
  sr_pack_bytes (p, s, n);
}

void
sr_unpack_init (struct sr_unpack *u, const void *buf, size_t len)
{
  u->at = buf;
  u->left = len;
  u->bad = false;
}

bool
sr_unpack_bytes (struct sr_unpack *u, void *out, size_t n)
{
  if (u->bad || n > u->left)
    {
      u->bad = true;
      memset (out, 0, n);
      return false;
    }
  memcpy (out, u->at, n);
  u->at += n;
  u->left -= n;
  return true;
}

uint64_t
sr_unpack_u64 (struct sr_unpack *u)
{
  uint64_t v;

  sr_unpack_bytes (u, &v, sizeof v);
  return v;
}

const char *
sr_unpack_str (struct sr_unpack *u)
{
  uint64_t n = sr_unpack_u64 (u);
  const char *s = u->at;

  if (u->bad || n == 0)
    return NULL;
  if (n > u->left || s[n - 1] != '\0' || memchr (s, '\0', n - 1) != NULL)
    {
      u->bad = true;
      return NULL;
    }
  u->at += n;
  u->left -= n;
  return s;
}
