/* A server of a fleet behind a balancer (HAProxy): its name, which every
 * response and every Mcp-Session-Id carries so that the balancer can
 * send a session's requests to it; GET /healthz, which tells the
 * balancer whether it takes new sessions; and draining, in which it
 * takes none while those it has carry on.  */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "common/defaults.h"
#include "common/json.h"
#include "common/util.h"
#include "mcp/http-internal.h"

/* The one HTTP server of the process, set before it starts.  */
static char server_id[SR_SERVER_ID_MAX + 1];
/* "timeout=N", N seconds an idle kept-alive connection may be reused.  */
static char keep_alive[32];

int
sr_http_server_id_set (const char *id, sr_error_t *err)
{
  if (sr_config_check_server_id (id, err) < 0)
    return -1;
  memcpy (server_id, id, strlen (id) + 1);
  return 0;
}

const char *
sr_http_server_id (void)
{
  return server_id;
}

/* Without the hint a client keeps an idle connection for its own
 * default: Node's fetch (undici) 4 s, so an agent pausing longer paid a
 * new connection per call.  The hint must end before the server closes
 * the connection, or a request sent as it closes is lost (fetch does not
 * retry a POST): the first of the header deadline (counted from the end
 * of the previous request) and MHD's idle timeout, less a second for a
 * request on its way.  undici keeps it 2 s less than the hint itself.
 * Under 2 s: 0, no reuse of an idle connection.  */
void
sr_http_keep_alive_set (uint64_t header_timeout_ms)
{
  uint64_t close_ms = HTTP_IDLE_TIMEOUT_S * 1000ull;

  if (header_timeout_ms && header_timeout_ms < close_ms)
    close_ms = header_timeout_ms;
  snprintf (keep_alive, sizeof keep_alive, "timeout=%llu",
            (unsigned long long) (close_ms >= 2000 ? close_ms / 1000 - 1 : 0));
}

enum MHD_Result
sr_http_queue (struct MHD_Connection *c, unsigned status, struct MHD_Response *r)
{
  MHD_add_response_header (r, HTTP_SERVER_HEADER, server_id);
  MHD_add_response_header (r, "Keep-Alive", keep_alive);
  return MHD_queue_response (c, status, r);
}

const char *
sr_http_routed_id (const char *id)
{
  size_t n = strlen (server_id);

  if (strncmp (id, server_id, n) == 0 && id[n] == '.')
    return id + n + 1;
  return NULL;
}

void
sr_http_drain_start (struct http *h)
{
  pthread_mutex_lock (&h->lock);
  h->draining = true;
  pthread_mutex_unlock (&h->lock);
}

bool
sr_http_draining (struct http *h)
{
  bool d;

  pthread_mutex_lock (&h->lock);
  d = h->draining;
  pthread_mutex_unlock (&h->lock);
  return d;
}

bool
sr_http_drained (struct http *h)
{
  bool done;

  pthread_mutex_lock (&h->lock);
  done = h->n_sessions == 0 && h->stateless_requests == 0;
  pthread_mutex_unlock (&h->lock);
  return done;
}

/* The tools/call requests in flight in the table's sessions, and the
 * requests of 2026-07-28 (each is one).  conn_lock is taken without
 * h->lock, as everywhere.  */
static size_t
runs_in_flight (struct http *h)
{
  struct session **v;
  size_t n = 0, runs;

  pthread_mutex_lock (&h->lock);
  runs = h->stateless_requests;
  v = sr_xcalloc (h->n_sessions + 1, sizeof *v);
  for (struct session *se = h->sessions; se; se = se->next)
    {
      se->refs++;
      v[n++] = se;
    }
  pthread_mutex_unlock (&h->lock);
  for (size_t i = 0; i < n; i++)
    {
      pthread_mutex_lock (&v[i]->conn_lock);
      if (v[i]->conn)
        runs += sr_mcp_conn_in_flight (v[i]->conn);
      pthread_mutex_unlock (&v[i]->conn_lock);
      sr_http_session_unref (v[i]);
    }
  free (v);
  return runs;
}

enum MHD_Result
sr_http_healthz (struct http *h, struct MHD_Connection *c)
{
  _cleanup_json_ cJSON *o = cJSON_CreateObject ();
  size_t runs = runs_in_flight (h), sessions, free_slots;
  bool draining, full;
  char *body;

  sr_http_session_slots (h, &sessions, &free_slots, &full);
  draining = sr_http_draining (h);
  cJSON_AddStringToObject (o, "server_id", server_id);
  cJSON_AddStringToObject (o, "status", draining ? "draining" : full ? "full" : "ok");
  cJSON_AddBoolToObject (o, "accepting", !draining && !full);
  cJSON_AddBoolToObject (o, "draining", draining);
  cJSON_AddNumberToObject (o, "runs", (double) runs);
  cJSON_AddNumberToObject (o, "mcp_sessions", (double) sessions);
  cJSON_AddNumberToObject (o, "free_session_slots", (double) free_slots);
  body = cJSON_PrintUnformatted (o);
  if (body == NULL)
    sr_oom ();
  /* 503 takes the server out of the balancer's choice for new sessions
   * (sessions it has still reach it: force-persist).  */
  return sr_http_reply_body (c, draining || full ? MHD_HTTP_SERVICE_UNAVAILABLE : MHD_HTTP_OK,
                             "application/json", body, MHD_HTTP_HEADER_CACHE_CONTROL,
                             "no-store");
}
