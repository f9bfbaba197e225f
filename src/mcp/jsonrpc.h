/* JSON-RPC 2.0 framing for MCP: classifying a received message and
 * building replies.  Only single messages: MCP dropped batches in
 * 2025-06-18, so an array is an invalid request.  */
#ifndef SR_MCP_JSONRPC_H
#define SR_MCP_JSONRPC_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#define SR_RPC_PARSE_ERROR      (-32700)
#define SR_RPC_INVALID_REQUEST  (-32600)
#define SR_RPC_METHOD_NOT_FOUND (-32601)
#define SR_RPC_INVALID_PARAMS   (-32602)
#define SR_RPC_INTERNAL_ERROR   (-32603)
/* MCP's own: resources/read of a URI the server does not have.  */
#define SR_RPC_RESOURCE_NOT_FOUND (-32002)
/* Those of 2026-07-28: a header that contradicts the body (or is
 * missing), a capability the client did not declare, a protocol version
 * we do not speak.  */
#define SR_RPC_HEADER_MISMATCH (-32020)
#define SR_RPC_MISSING_CAPABILITY (-32021)
#define SR_RPC_UNSUPPORTED_VERSION (-32022)

enum sr_rpc_kind
{
  SR_RPC_REQUEST,       /* method and id */
  SR_RPC_NOTIFICATION,  /* method, no id */
  SR_RPC_RESPONSE,      /* result or error, with id */
};

struct sr_rpc_message
{
  cJSON *root;          /* owns everything below */
  enum sr_rpc_kind kind;
  const cJSON *id;      /* string or number; NULL for notifications */
  const char *method;
  const cJSON *params;  /* object, or NULL */
  /* The member whose string held a NUL (\u0000), which a cJSON string
   * cannot carry (it ends there), or NULL: what uses the string refuses
   * it rather than take it cut short.  */
  char *nul_member;
};

/* Parses and checks one message.  On failure returns -1 and puts in
 * *ret_error the error response to send (id null when none could be
 * read).  */
int sr_rpc_parse (const char *json, size_t len, struct sr_rpc_message *ret, char **ret_error);
void sr_rpc_message_done (struct sr_rpc_message *m);

/* The request's params._meta.progressToken, as given (of any type), or
 * NULL.  */
const cJSON *sr_rpc_progress_token (const struct sr_rpc_message *m);

/* Whether two request ids are the same id (NULL matches nothing).  */
bool sr_rpc_same_id (const cJSON *a, const cJSON *b);

/* Serialised replies and notifications; they take result/params/data.
 * Each starts with "jsonrpc", then "id" (a reply) or "method".  */
char *sr_rpc_result (const cJSON *id, cJSON *result);
char *sr_rpc_error (const cJSON *id, int code, const char *message, cJSON *data);
char *sr_rpc_notification (const char *method, cJSON *params);
/* Whether json, made by sr_rpc_notification (else a reply of the above),
 * is a notification: from its start, without parsing a reply that may
 * carry megabytes.  */
bool sr_rpc_is_notification (const char *json);

#endif
