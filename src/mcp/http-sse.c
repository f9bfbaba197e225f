/* The HTTP+SSE transport of protocol 2024-11-05, which older clients
 * still speak: GET /sse opens a session and its event stream, whose first
 * event (endpoint) names where to POST messages, /messages?sessionId=ID;
 * each POST gets 202, and the responses and notifications come on the
 * stream.  The session is the Streamable HTTP transport's, marked sse (its
 * stream carries every message; it ends when the stream does), behind
 * the same checks of Host, Origin and token (first_call in http.c).  */
#include "config.h"

#include <string.h>

#include "common/util.h"
#include "mcp/http-internal.h"
#include "mcp/jsonrpc.h"

enum MHD_Result
sr_http_sse_open (struct http *h, struct MHD_Connection *c, struct request *rq)
{
  sr_error_t err = NULL;
  struct session *se;
  struct msg *m;
  enum MHD_Result ret;

  if (sr_http_draining (h))
    return sr_http_reply_error (c, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                                "Service Unavailable: server_draining: this server takes no new "
                                "sessions (it is draining before it stops)",
                                NULL, NULL);
  se = sr_http_session_new (h, sr_http_token_owner (h, c), false, &err);
  if (se == NULL)
    return sr_http_reply_failure (c, &err);
  se->sse = true;
  if (!sr_http_session_insert (h, se))
    {
      sr_http_session_close (se);
      sr_http_session_unref (se);
      return sr_http_reply_error (c, MHD_HTTP_SERVICE_UNAVAILABLE, -32000,
                                  "Service Unavailable: too many sessions", NULL, NULL);
    }
  rq->stream = sr_http_stream_attach (se, NULL, true, c);
  m = sr_xcalloc (1, sizeof *m);
  m->text = sr_xasprintf ("event: endpoint\ndata: %s?sessionId=%s\n\n", HTTP_SSE_MESSAGES,
                          se->id);
  pthread_mutex_lock (&se->lock);
  se->get_stream = rq->stream;
  sr_http_stream_append_locked (rq->stream, m);
  pthread_mutex_unlock (&se->lock);
  ret = sr_http_reply_stream (c, rq->stream, NULL);
  sr_http_session_unref (se); /* ours; the table and the stream hold their own */
  return ret;
}

enum MHD_Result
sr_http_sse_post (struct http *h, struct MHD_Connection *c, struct request *rq)
{
  const char *id = MHD_lookup_connection_value (c, MHD_GET_ARGUMENT_KIND, "sessionId");
  _cleanup_free_ char *files_url = sr_http_files_url (c);
  struct session *se = id ? sr_http_session_find (h, c, id) : NULL;
  enum MHD_Result ret;

  if (se && !se->sse)
    {
      sr_http_session_unref (se);
      se = NULL;
    }
  if (se == NULL)
    return sr_http_reply_error (c, MHD_HTTP_NOT_FOUND, -32001, "Session not found", NULL,
                                NULL);
  if (rq->over)
    ret = sr_http_reply_oversized (h, c, rq);
  else if (sr_http_session_handle (se, NULL, files_url, rq->body ? rq->body : "", rq->len))
    ret = sr_http_reply_body (c, MHD_HTTP_ACCEPTED, "text/plain", sr_xstrdup ("Accepted"),
                              NULL, NULL);
  else
    ret = sr_http_reply_error (c, MHD_HTTP_NOT_FOUND, -32001, "Session not found", NULL, NULL);
  sr_http_session_unref (se);
  return ret;
}
