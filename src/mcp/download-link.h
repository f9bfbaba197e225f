/* Signed download links: a download_url that works without the bearer
 * token (or the MCP session) for a bounded time, so that a person or a
 * plain client can follow it.
 *
 *   GET /files/{session_id}/{path}?expires=T&sig=S
 *
 * S is the HMAC-SHA256, in hex, of "{session_id}\n{path}\n{T}" under a
 * key the server draws from getrandom at start and never shows: a link
 * names one file of one session until T (seconds since the epoch), and
 * no link outlives the server that made it.  */
#ifndef SR_MCP_DOWNLOAD_LINK_H
#define SR_MCP_DOWNLOAD_LINK_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/sha256.h"

struct sr_mcp_link_key
{
  unsigned char key[SR_SHA256_LEN];
};

/* A fresh random key.  */
int sr_mcp_link_key_init (struct sr_mcp_link_key *k, sr_error_t *err);

/* "?expires=T&sig=S" for the file path of session, T = expires.  */
char *sr_mcp_link_query (const struct sr_mcp_link_key *k, const char *session, const char *path,
                         int64_t expires);

/* Whether sig (as the URL gave it) signs session, path and expires (its
 * text), and expires is still ahead of now.  The signature is compared in
 * constant time.  */
bool sr_mcp_link_valid (const struct sr_mcp_link_key *k, const char *session, const char *path,
                        const char *expires, const char *sig, int64_t now);

#endif
