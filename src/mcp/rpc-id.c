#include "config.h"

#include "mcp/rpc-id.h"

#include <stdbool.h>
#include <string.h>

void
sr_rpc_id_scan_feed (struct sr_rpc_id_scan *s, const char *data, size_t n)
{
  size_t room = SR_RPC_ID_KEEP - s->head_len;
  size_t take = n < room ? n : room;

  memcpy (s->head + s->head_len, data, take);
  s->head_len += take;
  if (n >= SR_RPC_ID_KEEP)
    {
      memcpy (s->tail, data + n - SR_RPC_ID_KEEP, SR_RPC_ID_KEEP);
      s->tail_len = SR_RPC_ID_KEEP;
    }
  else
    {
      if (s->tail_len + n > SR_RPC_ID_KEEP)
        {
          size_t drop = s->tail_len + n - SR_RPC_ID_KEEP;

          memmove (s->tail, s->tail + drop, s->tail_len - drop);
          s->tail_len -= drop;
        }
      memcpy (s->tail + s->tail_len, data, n);
      s->tail_len += n;
    }
  s->total += n;
}

cJSON *
sr_rpc_id_scan_result (const struct sr_rpc_id_scan *s)
{
  return sr_rpc_find_id (s->head, s->head_len, s->tail, s->tail_len);
}

/* As cJSON reads whitespace (any byte up to the space), so that what is
 * found here is what parsing the whole would find.  */
static bool
is_ws (char ch)
{
  return (unsigned char) ch <= ' ';
}

/* Whether ch is one of set (never its NUL).  */
static bool
in_set (const char *set, char ch)
{
  return memchr (set, ch, strlen (set)) != NULL;
}

/* A complete token, decoded: the id when it is a number or a string.  */
static cJSON *
decode_id (const char *token, size_t len)
{
  cJSON *v = cJSON_ParseWithLength (token, len);

  if (v && (cJSON_IsNumber (v) || cJSON_IsString (v)))
    return v;
  cJSON_Delete (v);
  return NULL;
}

/* Whether the string token is the key "id" (escapes decoded).  */
static bool
is_id_key (const char *token, size_t len)
{
  cJSON *k = cJSON_ParseWithLength (token, len);
  bool yes = cJSON_IsString (k) && strcmp (k->valuestring, "id") == 0;

  cJSON_Delete (k);
  return yes;
}

/* --- forwards, over the first bytes --- */

static size_t
skip_ws (const char *p, size_t len, size_t i)
{
  while (i < len && is_ws (p[i]))
    i++;
  return i;
}

/* p[*i] is the opening quote: past the closing one, false when the bytes
 * end first.  */
static bool
skip_string (const char *p, size_t len, size_t *i)
{
  for (size_t j = *i + 1; j < len; j++)
    if (p[j] == '\\')
      j++;
    else if (p[j] == '"')
      {
        *i = j + 1;
        return true;
      }
  return false;
}

/* Past the value at *i (strings, nested objects and arrays, scalars up to
 * their delimiter); false when it does not end within the bytes.  */
static bool
skip_value (const char *p, size_t len, size_t *i)
{
  size_t j = *i;
  unsigned depth = 0;

  if (j >= len)
    return false;
  if (p[j] == '"')
    return skip_string (p, len, i);
  if (p[j] != '{' && p[j] != '[')
    {
      while (j < len && !is_ws (p[j]) && !in_set (",}]", p[j]))
        j++;
      if (j == len || j == *i)
        return false;
      *i = j;
      return true;
    }
  while (j < len)
    {
      if (p[j] == '"')
        {
          if (!skip_string (p, len, &j))
            return false;
          continue;
        }
      if (p[j] == '{' || p[j] == '[')
        depth++;
      else if ((p[j] == '}' || p[j] == ']') && --depth == 0)
        {
          *i = j + 1;
          return true;
        }
      j++;
    }
  return false;
}

/* A member "id" of the top object whose value ends within the bytes.  */
static cJSON *
id_from_head (const char *p, size_t len)
{
  size_t i = skip_ws (p, len, 0);

  if (i == len || p[i] != '{')
    return NULL;
  i++;
  for (;;)
    {
      size_t key, key_end, value;

      i = skip_ws (p, len, i);
      if (i == len || p[i] != '"')
        return NULL;
      key = i;
      if (!skip_string (p, len, &i))
        return NULL;
      key_end = i;
      i = skip_ws (p, len, i);
      if (i == len || p[i] != ':')
        return NULL;
      i = value = skip_ws (p, len, i + 1);
      if (!skip_value (p, len, &i))
        return NULL;
      if (is_id_key (p + key, key_end - key))
        return decode_id (p + value, i - value);
      i = skip_ws (p, len, i);
      if (i == len || p[i] != ',')
        return NULL;
      i++;
    }
}

/* --- backwards, over the last bytes --- */

static size_t
skip_ws_back (const char *p, size_t j)
{
  while (j > 0 && is_ws (p[j - 1]))
    j--;
  return j;
}

/* p[end - 1] is a closing quote: the index of its opening quote, the
 * first quote before it not escaped (an even run of backslashes before
 * it); false when the bytes begin first.  Inside a JSON string every
 * quote is escaped, so the first unescaped one opens it.  */
static bool
string_start_back (const char *p, size_t end, size_t *ret)
{
  for (size_t k = end - 1; k-- > 0;)
    {
      size_t slashes = 0;

      if (p[k] != '"')
        continue;
      while (slashes < k && p[k - 1 - slashes] == '\\')
        slashes++;
      if (slashes == k)
        return false; /* the run reaches the start: cannot tell */
      if (slashes % 2 == 0)
        {
          *ret = k;
          return true;
        }
    }
  return false;
}

/* The last member of the top object, when it is "id" with a scalar
 * value: "id" : value } at the very end.  */
static cJSON *
id_from_tail (const char *p, size_t len)
{
  size_t j = skip_ws_back (p, len), value, value_end, key;

  if (j == 0 || p[j - 1] != '}')
    return NULL;
  j = value_end = skip_ws_back (p, j - 1);
  if (j == 0)
    return NULL;
  if (p[j - 1] == '"')
    {
      if (!string_start_back (p, j, &value))
        return NULL;
    }
  else
    {
      while (j > 0 && in_set ("0123456789+-.eE", p[j - 1]))
        j--;
      if (j == 0 || j == value_end)
        return NULL;
      value = j;
    }
  j = skip_ws_back (p, value);
  if (j == 0 || p[j - 1] != ':')
    return NULL;
  j = skip_ws_back (p, j - 1);
  if (j < 2 || p[j - 1] != '"' || !string_start_back (p, j, &key))
    return NULL;
  if (!is_id_key (p + key, j - key))
    return NULL;
  j = skip_ws_back (p, key);
  if (j == 0 || (p[j - 1] != ',' && p[j - 1] != '{'))
    return NULL;
  return decode_id (p + value, value_end - value);
}

cJSON *
sr_rpc_find_id (const char *head, size_t head_len, const char *tail, size_t tail_len)
{
  cJSON *id = id_from_head (head, head_len);

  return id ? id : id_from_tail (tail, tail_len);
}
