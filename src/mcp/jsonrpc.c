#include "config.h"

#include "mcp/jsonrpc.h"

#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"

static char *
print_and_free (cJSON *o)
{
  char *s = cJSON_PrintUnformatted (o);

  cJSON_Delete (o);
  if (s == NULL)
    sr_oom ();
  return s;
}

char *
sr_rpc_error (const cJSON *id, int code, const char *message, cJSON *data)
{
  cJSON *o = cJSON_CreateObject (), *e;

  cJSON_AddStringToObject (o, "jsonrpc", "2.0");
  if (id)
    cJSON_AddItemToObject (o, "id", cJSON_Duplicate (id, 1));
  else
    cJSON_AddNullToObject (o, "id");
  e = cJSON_AddObjectToObject (o, "error");
  cJSON_AddNumberToObject (e, "code", code);
  sr_utf8_add_text (e, "message", message);
  if (data)
    cJSON_AddItemToObject (e, "data", data);
  return print_and_free (o);
}

char *
sr_rpc_result (const cJSON *id, cJSON *result)
{
  cJSON *o = cJSON_CreateObject ();

  cJSON_AddStringToObject (o, "jsonrpc", "2.0");
  cJSON_AddItemToObject (o, "id", cJSON_Duplicate (id, 1));
  cJSON_AddItemToObject (o, "result", result ? result : cJSON_CreateObject ());
  return print_and_free (o);
}

char *
sr_rpc_notification (const char *method, cJSON *params)
{
  cJSON *o = cJSON_CreateObject ();

  cJSON_AddStringToObject (o, "jsonrpc", "2.0");
  cJSON_AddStringToObject (o, "method", method);
  if (params)
    cJSON_AddItemToObject (o, "params", params);
  return print_and_free (o);
}

bool
sr_rpc_is_notification (const char *json)
{
  static const char start[] = "{\"jsonrpc\":\"2.0\",\"method\":";

  return strncmp (json, start, sizeof start - 1) == 0;
}

const cJSON *
sr_rpc_progress_token (const struct sr_rpc_message *m)
{
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive (m->params, "_meta");

  return cJSON_GetObjectItemCaseSensitive (meta, "progressToken");
}

bool
sr_rpc_same_id (const cJSON *a, const cJSON *b)
{
  if (a == NULL || b == NULL)
    return false;
  if (cJSON_IsString (a) && cJSON_IsString (b))
    return strcmp (a->valuestring, b->valuestring) == 0;
  return cJSON_IsNumber (a) && cJSON_IsNumber (b) && a->valuedouble == b->valuedouble;
}

/* The largest integer a double holds exactly, and so what an id may be:
 * casting a larger double (1e30) to long long is undefined.  */
#define MAX_EXACT_ID 9007199254740992.0

static bool
valid_id (const cJSON *id)
{
  if (cJSON_IsString (id))
    return true;
  if (!cJSON_IsNumber (id))
    return false;
  return id->valuedouble >= -MAX_EXACT_ID && id->valuedouble <= MAX_EXACT_ID
         && id->valuedouble == (double) (long long) id->valuedouble;
}

/* The name of the innermost member before the first string of json (a
 * valid JSON text) that holds the escape \u0000, or NULL.  */
static char *
find_nul_member (const char *json, size_t len)
{
  const char *key = "";
  size_t key_len = 0;

  for (size_t i = 0; i < len; i++)
    {
      size_t start, j;
      bool nul = false;

      if (json[i] != '"')
        continue;
      start = ++i;
      for (; i < len && json[i] != '"'; i++)
        if (json[i] == '\\')
          {
            nul |= len - i > 5 && memcmp (json + i + 1, "u0000", 5) == 0;
            i++;
          }
      if (nul)
        return sr_xasprintf ("%.*s", (int) (key_len < 64 ? key_len : 64), key);
      for (j = i + 1; j < len && strchr (" \t\r\n", json[j]); j++)
        ;
      if (j < len && json[j] == ':')
        {
          key = json + start;
          key_len = i - start;
        }
    }
  return NULL;
}

int
sr_rpc_parse (const char *json, size_t len, struct sr_rpc_message *ret, char **ret_error)
{
  cJSON *root = cJSON_ParseWithLength (json, len);
  const cJSON *version, *id, *method, *params;
  struct sr_rpc_message m = { 0 };

  if (root == NULL)
    {
      *ret_error = sr_rpc_error (NULL, SR_RPC_PARSE_ERROR, "Parse error: not valid JSON", NULL);
      return -1;
    }
  if (!cJSON_IsObject (root))
    {
      *ret_error = sr_rpc_error (NULL, SR_RPC_INVALID_REQUEST,
                                 cJSON_IsArray (root)
                                     ? "Invalid Request: batches are not supported"
                                     : "Invalid Request: a message must be a JSON object",
                                 NULL);
      cJSON_Delete (root);
      return -1;
    }
  id = cJSON_GetObjectItemCaseSensitive (root, "id");
  if (id && !cJSON_IsNull (id) && !valid_id (id))
    {
      *ret_error = sr_rpc_error (NULL, SR_RPC_INVALID_REQUEST,
                                 "Invalid Request: id must be a string or an integer", NULL);
      cJSON_Delete (root);
      return -1;
    }
  version = cJSON_GetObjectItemCaseSensitive (root, "jsonrpc");
  if (!cJSON_IsString (version) || strcmp (version->valuestring, "2.0") != 0)
    {
      *ret_error = sr_rpc_error (valid_id (id) ? id : NULL, SR_RPC_INVALID_REQUEST,
                                 "Invalid Request: jsonrpc must be \"2.0\"", NULL);
      cJSON_Delete (root);
      return -1;
    }
  method = cJSON_GetObjectItemCaseSensitive (root, "method");
  params = cJSON_GetObjectItemCaseSensitive (root, "params");
  m.root = root;
  if (method)
    {
      if (!cJSON_IsString (method) || method->valuestring[0] == '\0')
        {
          *ret_error = sr_rpc_error (valid_id (id) ? id : NULL, SR_RPC_INVALID_REQUEST,
                                     "Invalid Request: method must be a non-empty string", NULL);
          cJSON_Delete (root);
          return -1;
        }
      if (params && !cJSON_IsObject (params))
        {
          *ret_error = sr_rpc_error (valid_id (id) ? id : NULL, SR_RPC_INVALID_PARAMS,
                                     "Invalid params: params must be an object", NULL);
          cJSON_Delete (root);
          return -1;
        }
      if (id && cJSON_IsNull (id))
        {
          *ret_error = sr_rpc_error (NULL, SR_RPC_INVALID_REQUEST,
                                     "Invalid Request: id must not be null", NULL);
          cJSON_Delete (root);
          return -1;
        }
      m.kind = id ? SR_RPC_REQUEST : SR_RPC_NOTIFICATION;
      m.method = method->valuestring;
      m.params = params;
      m.id = id;
    }
  else if (valid_id (id) && (cJSON_GetObjectItemCaseSensitive (root, "result")
                             || cJSON_IsObject (cJSON_GetObjectItemCaseSensitive (root, "error"))))
    {
      m.kind = SR_RPC_RESPONSE;
      m.id = id;
    }
  else
    {
      *ret_error = sr_rpc_error (valid_id (id) ? id : NULL, SR_RPC_INVALID_REQUEST,
                                 "Invalid Request: neither a request, a notification nor a response",
                                 NULL);
      cJSON_Delete (root);
      return -1;
    }
  if (m.kind == SR_RPC_REQUEST && memmem (json, len, "\\u0000", 6))
    m.nul_member = find_nul_member (json, len);
  *ret = m;
  return 0;
}

void
sr_rpc_message_done (struct sr_rpc_message *m)
{
  cJSON_Delete (m->root);
  free (m->nul_member);
  memset (m, 0, sizeof *m);
}
