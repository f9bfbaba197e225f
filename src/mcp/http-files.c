/* GET /files/{session}/{path}: a session's artifact, streamed from the
 * open file.  */
#include "config.h"

#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "mcp/http-internal.h"
#include "sandbox/files.h"
#include "sandbox/session.h"

/* The session is held only while the file is opened; the open fd then
 * keeps the file readable even if the session closes during the
 * download.  */
enum MHD_Result
sr_http_serve_file (struct http *h, struct MHD_Connection *c, const char *url)
{
  struct sr_sessions *sessions = sr_mcp_server_sessions (h->mcp);
  _cleanup_free_ char *id = NULL, *mime = NULL;
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
  if (sr_sessions_acquire (sessions, id, NULL, -1, &se, &err) == 0)
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
          ret = MHD_queue_response (c, MHD_HTTP_OK, resp);
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
