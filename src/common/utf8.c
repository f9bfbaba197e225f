#include <config.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"

/* Length of the well-formed sequence at s (at most n bytes), or 0.  The
 * ranges follow the Unicode table of well-formed byte sequences.  */
static size_t
valid_sequence_length (const unsigned char *s, size_t n)
{
  unsigned char c = s[0];
  unsigned char lo = 0x80, hi = 0xBF;
  size_t len;

  if (c >= 0x01 && c <= 0x7F)
    return 1;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    {
      len = 3;
      if (c == 0xE0)
        lo = 0xA0;
      else if (c == 0xED)
        hi = 0x9F;
    }
  else if (c >= 0xF0 && c <= 0xF4)
    {
      len = 4;
      if (c == 0xF0)
        lo = 0x90;
      else if (c == 0xF4)
        hi = 0x8F;
    }
  else
    return 0;
  if (n < len)
    return 0;
  if (s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xBF)
      return 0;
  return len;
}

char *
sr_utf8_sanitize (const char *buf, size_t len, size_t *ret_len)
{
  static const char replacement[] = "\xEF\xBF\xBD";
  const unsigned char *s = (const unsigned char *) buf;
  char *out = sr_xmalloc (len * 3 + 1);
  size_t o = 0, i = 0;

  while (i < len)
    {
      size_t n = valid_sequence_length (s + i, len - i);

      if (n == 0)
        {
          memcpy (out + o, replacement, 3);
          o += 3;
          i++;
          continue;
        }
      memcpy (out + o, s + i, n);
      o += n;
      i += n;
    }
  out[o] = '\0';
  if (ret_len)
    *ret_len = o;
  return out;
}

void
sr_utf8_add_text (cJSON *o, const char *key, const char *text)
{
  _cleanup_free_ char *clean = sr_utf8_sanitize (text, strlen (text), NULL);

  cJSON_AddStringToObject (o, key, clean);
}

bool
sr_utf8_valid (const char *buf, size_t len)
{
  const unsigned char *s = (const unsigned char *) buf;

  for (size_t i = 0, n; i < len; i += n)
    if ((n = valid_sequence_length (s + i, len - i)) == 0)
      return false;
  return true;
}

char *
sr_utf8_escape_name (const char *name)
{
  const unsigned char *s = (const unsigned char *) name;
  size_t len = strlen (name), o = 0;
  char *out = sr_xmalloc (len * 4 + 1);

  for (size_t i = 0, n; i < len; i += n)
    {
      n = valid_sequence_length (s + i, len - i);
      if (n == 1 && s[i] == '\\')
        {
          memcpy (out + o, "\\\\", 2);
          o += 2;
        }
      else if (n == 0)
        {
          snprintf (out + o, 5, "\\x%02x", s[i]);
          o += 4;
          n = 1;
        }
      else
        {
          memcpy (out + o, s + i, n);
          o += n;
        }
    }
  out[o] = '\0';
  return out;
}

void
sr_utf8_add_name (cJSON *o, const char *key, const char *name)
{
  size_t len = strlen (name);
  _cleanup_free_ char *text = NULL, *b64 = NULL, *b64_key = NULL;

  if (sr_utf8_valid (name, len))
    {
      cJSON_AddStringToObject (o, key, name);
      return;
    }
  text = sr_utf8_escape_name (name);
  b64 = sr_base64_encode (name, len);
  b64_key = sr_xasprintf ("%s_base64", key);
  cJSON_AddStringToObject (o, key, text);
  cJSON_AddStringToObject (o, b64_key, b64);
}
