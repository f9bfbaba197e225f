/* The id of a JSON-RPC message too large to parse, so that its refusal
 * still reaches the request it answers.
 *
 * Such a message is read and thrown away; only its first and last
 * SR_RPC_ID_KEEP bytes are kept (struct sr_rpc_id_scan), and the id is
 * looked for in them without parsing the whole: a member "id" of the top
 * object whose value lies wholly in the first bytes, or the last member
 * of the top object when it is "id" (the official TypeScript SDK writes
 * the id last: {"method":…,"params":…,"jsonrpc":"2.0","id":7}).  Only a
 * number or a string is an id; the token found is decoded by cJSON, so
 * escapes in a string id come out right.  */
#ifndef SR_MCP_RPC_ID_H
#define SR_MCP_RPC_ID_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#define SR_RPC_ID_KEEP 4096u

struct sr_rpc_id_scan
{
  char head[SR_RPC_ID_KEEP];
  char tail[SR_RPC_ID_KEEP];
  size_t head_len, tail_len;
  uint64_t total;           /* bytes fed */
};

/* Feeds the next n bytes of the message (s zeroed before the first).  */
void sr_rpc_id_scan_feed (struct sr_rpc_id_scan *s, const char *data, size_t n);

/* The id found in what was fed (the caller's, cJSON_Delete), or NULL.  */
cJSON *sr_rpc_id_scan_result (const struct sr_rpc_id_scan *s);

/* The same from the first head_len bytes of a message and its last
 * tail_len bytes (the two may overlap or be the same bytes).  */
cJSON *sr_rpc_find_id (const char *head, size_t head_len, const char *tail, size_t tail_len);

#endif
