/* GET /files/{session}/{path}: a session's artifact, streamed from the
 * open file, for its owner (the bearer token, or without tokens the MCP
 * session of the Mcp-Session-Id header), or for whoever holds a signed
 * link to it that has not expired (mcp/download-link.h).  The session
 * part may be "{server_id}.{session}", as the links carry it, for the
 * balancer in front of a fleet.  */
#include "config.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "mcp/download-link.h"
#include "mcp/http-internal.h"
#include "sandbox/files.h"
#include "sandbox/session.h"

/* Who asks for the file of session id at path: 0 and *ret_owner (NULL:
 * a signed link, which stands for the owner it was made for), or -1
 * with the refusal queued in *ret.  *ret_owner is the caller's to free.  */
static int
caller (struct http *h, struct MHD_Connection *c, const char *id, const char *path,
        char **ret_owner, enum MHD_Result *ret)
{
  const char *sig = MHD_lookup_connection_value (c, MHD_GET_ARGUMENT_KIND, "sig");
  const char *expires = MHD_lookup_connection_value (c, MHD_GET_ARGUMENT_KIND, "expires");
  const char *mcp_id = MHD_lookup_connection_value (c, MHD_HEADER_KIND, "Mcp-Session-Id");
  struct session *se;

  *ret_owner = NULL;
  if (sig || expires)
    {
      if (sr_mcp_link_valid (sr_mcp_server_link_key (h->mcp), id, path, expires, sig,
                             (int64_t) time (NULL)))
        return 0;
      *ret = sr_http_reply_error (c, MHD_HTTP_FORBIDDEN, -32000,
                                  "Forbidden: the download link is not valid or has expired "
                                  "(download_url_ttl); list the artifacts again for a new one",
                                  NULL, NULL);
      return -1;
    }
  if (h->authenticated)
    {
      /* sr_http_caller_ok let it in: the token is valid.  */
      *ret_owner = sr_xstrdup (sr_http_token_owner (h, c));
      return 0;
    }
  se = mcp_id ? sr_http_session_find (h, c, mcp_id) : NULL;
  if (se == NULL)
    {
      /* Nobody's sessions: as for an id that names none.  */
      *ret = sr_http_reply_error (c, MHD_HTTP_NOT_FOUND, -32000,
                                  "session_not_found: no such session (send the Mcp-Session-Id "
                                  "that made it, or use its signed download_url)",
                                  NULL, NULL);
      return -1;
    }
  *ret_owner = sr_xstrdup (se->owner);
  sr_http_session_unref (se);
  return 0;
}

/* The session is held only while the file is opened; the open fd then
 * keeps the file readable even if the session closes during the
 * download.  */
enum MHD_Result
sr_http_serve_file (struct http *h, struct MHD_Connection *c, const char *url)
{
  struct sr_sessions *sessions = sr_mcp_server_sessions (h->mcp);
  _cleanup_free_ char *id = NULL, *mime = NULL, *owner = NULL;
  const char *rest = url + strlen (HTTP_FILES_PREFIX), *slash = strchr (rest, '/');
  const char *code;
  struct sr_session *se = NULL;
  struct MHD_Response *resp;
  sr_error_t err = NULL;
  uint64_t size = 0;
  unsigned status;
  enum MHD_Result ret;
  int fd;

  if (sessions == NULL)
    return sr_http_reply_error (c, MHD_HTTP_NOT_FOUND, -32000,
                                "Not Found: sessions are unavailable", NULL, NULL);
  if (slash == NULL || slash == rest || slash[1] == '\0')
    return sr_http_reply_error (c, MHD_HTTP_NOT_FOUND, -32000,
                                "Not Found: expected " HTTP_FILES_PREFIX "{session_id}/{path}",
                                NULL, NULL);
  id = sr_xasprintf ("%.*s", (int) (slash - rest), rest);
  /* A link this server made names it, "{server_id}.{session}", for the
   * balancer; a session id itself has no '.'.  */
  if (strchr (id, '.'))
    {
      const char *own = sr_http_routed_id (id);

      if (own == NULL)
        return sr_http_reply_error (c, MHD_HTTP_NOT_FOUND, -32000,
                                    "session_not_found: the session is another server's (the "
                                    "part of its id before '.'), not this one's",
                                    NULL, NULL);
      memmove (id, own, strlen (own) + 1);
    }
  if (caller (h, c, id, slash + 1, &owner, &ret) < 0)
    return ret;
  if (sr_sessions_acquire (sessions, owner, id, NULL, -1, &se, &err) == 0)
    {
      fd = sr_files_open_artifact (sr_session_fs (se), slash + 1, &size, &err);
      sr_session_release (se);
      if (fd >= 0 && size > h->max_download_size)
        {
          _cleanup_free_ char *msg = sr_xasprintf (
              "file_too_large: %s is %llu bytes, over the download limit of %llu bytes "
              "(max_artifact_size)",
              slash + 1, (unsigned long long) size, (unsigned long long) h->max_download_size);

          close (fd);
          return sr_http_reply_error (c, MHD_HTTP_CONTENT_TOO_LARGE, -32000, msg, NULL, NULL);
        }
      if (fd >= 0)
        {
          mime = sr_files_mime (fd);
          /* MHD sends from the fd in pieces (sendfile where it can): a
           * large file is streamed, never held in memory.  */
          resp = MHD_create_response_from_fd64 (size, fd);
          if (resp == NULL)
            {
              close (fd);
              return MHD_NO;
            }
          MHD_add_response_header (resp, MHD_HTTP_HEADER_CONTENT_TYPE, mime);
          MHD_add_response_header (resp, "X-Content-Type-Options", "nosniff");
          MHD_add_response_header (resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, "attachment");
          ret = sr_http_queue (c, MHD_HTTP_OK, resp);
          MHD_destroy_response (resp);
          return ret;
        }
    }
  code = sr_error_code (err);
  if (code && (strcmp (code, "session_not_found") == 0 || strcmp (code, "not_found") == 0))
    status = MHD_HTTP_NOT_FOUND;
  else if (code && strcmp (code, "session_busy") == 0)
    status = MHD_HTTP_CONFLICT;
  else if (code && strcmp (code, "file_too_large") == 0)
    status = MHD_HTTP_CONTENT_TOO_LARGE;
  else if (code && (strcmp (code, "path_outside_sandbox") == 0
                    || strcmp (code, "invalid_path") == 0 || strcmp (code, "not_a_file") == 0))
    status = MHD_HTTP_FORBIDDEN;
  else
    status = MHD_HTTP_INTERNAL_SERVER_ERROR;
  {
    _cleanup_free_ char *msg = sr_xasprintf ("%s: %s", code ? code : "error",
                                             err ? err->msg : "failed");

    sr_error_free (&err);
    return sr_http_reply_error (c, status, -32000, msg, NULL, NULL);
  }
}
