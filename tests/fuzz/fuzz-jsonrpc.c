/* The JSON-RPC reader (src/mcp/jsonrpc.c): any bytes a client sends are
 * either one well-formed message or an error reply, which must itself be
 * a valid JSON-RPC error object.  The id scan of oversized messages
 * (src/mcp/rpc-id.c) reads the same bytes.  */
#include "config.h"

#include <cjson/cJSON.h>

#include "mcp/jsonrpc.h"
#include "mcp/rpc-id.h"
#include "tests/fuzz/fuzz.h"

/* A reply we send: an object with jsonrpc "2.0", an id member, and
 * exactly one of result and error (error with an integer code and a
 * string message).  */
static void
check_reply (const char *json, bool want_error)
{
  cJSON *o = cJSON_Parse (json);
  const cJSON *e, *code, *msg;

  fuzz_check (cJSON_IsObject (o), "reply is not a JSON object: %s", json);
  fuzz_check (cJSON_IsString (cJSON_GetObjectItemCaseSensitive (o, "jsonrpc")), "no jsonrpc: %s",
              json);
  fuzz_check (cJSON_HasObjectItem (o, "id"), "reply without id: %s", json);
  e = cJSON_GetObjectItemCaseSensitive (o, "error");
  fuzz_check (want_error == (e != NULL), "error member: %s", json);
  fuzz_check (want_error != cJSON_HasObjectItem (o, "result"), "result member: %s", json);
  if (e)
    {
      code = cJSON_GetObjectItemCaseSensitive (e, "code");
      msg = cJSON_GetObjectItemCaseSensitive (e, "message");
      fuzz_check (cJSON_IsNumber (code) && code->valuedouble <= -32600
                      && code->valuedouble >= -32700,
                  "error code: %s", json);
      fuzz_check (cJSON_IsString (msg) && msg->valuestring[0], "error message: %s", json);
    }
  cJSON_Delete (o);
}

/* The id of an oversized message (src/mcp/rpc-id.c), from the first and
 * last bytes of the input cut anywhere: never a crash, and on a whole
 * request the id parsing finds, when it finds one.  */
static void
check_id_scan (const char *data, size_t size, const struct sr_rpc_message *m, bool parsed)
{
  cJSON *id = sr_rpc_find_id (data, size, data, size);

  if (parsed && m->kind == SR_RPC_REQUEST && id)
    fuzz_check (sr_rpc_same_id (id, m->id), "the id scan found another id than parsing");
  cJSON_Delete (id);
  for (size_t keep = 1; keep < size; keep = keep * 2 + 1)
    cJSON_Delete (sr_rpc_find_id (data, keep, data + size - keep, keep));
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct sr_rpc_message m;
  char *error = NULL, *reply;

  if (sr_rpc_parse ((const char *) data, size, &m, &error) < 0)
    {
      check_id_scan ((const char *) data, size, NULL, false);
      fuzz_check (error != NULL, "a refused message got no error reply");
      check_reply (error, true);
      free (error);
      return 0;
    }
  fuzz_check (error == NULL, "an accepted message got an error reply");
  check_id_scan ((const char *) data, size, &m, true);
  fuzz_check (cJSON_IsObject (m.root), "accepted a message that is not an object");
  switch (m.kind)
    {
    case SR_RPC_REQUEST:
      fuzz_check (m.id && m.method && *m.method, "request without id or method");
      fuzz_check (m.params == NULL || cJSON_IsObject (m.params), "params not an object");
      fuzz_check (sr_rpc_same_id (m.id, m.id), "an id differs from itself");
      /* The replies the dispatcher would build for it.  */
      reply = sr_rpc_result (m.id, cJSON_Duplicate (m.params, 1));
      check_reply (reply, false);
      free (reply);
      reply = sr_rpc_error (m.id, SR_RPC_METHOD_NOT_FOUND, m.method, NULL);
      check_reply (reply, true);
      free (reply);
      break;
    case SR_RPC_NOTIFICATION:
      fuzz_check (m.id == NULL && m.method && *m.method, "notification with id or no method");
      reply = sr_rpc_notification (m.method, cJSON_Duplicate (m.params, 1));
      fuzz_check (reply && *reply == '{', "notification not serialised");
      free (reply);
      break;
    case SR_RPC_RESPONSE:
      fuzz_check (m.id && m.method == NULL, "response without id or with a method");
      fuzz_check (sr_rpc_same_id (m.id, m.id), "an id differs from itself");
      break;
    }
  sr_rpc_message_done (&m);
  fuzz_check (m.root == NULL, "message_done left the root");
  return 0;
}
