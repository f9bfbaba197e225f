/* The table of MCP sessions (Mcp-Session-Id): creating one, finding it,
 * making room past MAX_SESSIONS, forgetting the ones left idle, ending
 * them.  */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/util.h"
#include "mcp/http-internal.h"
#include "sandbox/session.h"

/* Sessions kept at once; past it the least recently used idle one goes.  */
#define MAX_SESSIONS 64u

struct session *
sr_http_session_new (struct http *h, const char *token_owner, bool stateless, sr_error_t *err)
{
  char id[2 * HTTP_SESSION_ID_BYTES + 1];
  struct session *se;

  if (sr_random_hex (id, HTTP_SESSION_ID_BYTES, err) < 0)
    return NULL;
  se = sr_xcalloc (1, sizeof *se);
  se->h = h;
  se->refs = 1;
  /* The balancer finds the server by the id's prefix.  */
  snprintf (se->id, sizeof se->id, "%s.%s", sr_http_server_id (), id);
  se->stateless = stateless;
  se->owner = token_owner ? sr_xstrdup (token_owner)
              : stateless ? sr_xstrdup (HTTP_STATELESS_OWNER)
                          : sr_xasprintf ("mcp:%s", se->id);
  pthread_mutex_init (&se->conn_lock, NULL);
  pthread_mutex_init (&se->lock, NULL);
  se->conn = sr_mcp_conn_new (h->mcp, sr_http_on_send, se);
  /* One caller, one identity: the owner of its sessions (its token's id,
   * or this MCP session without tokens) is also who its audit rows name.  */
  sr_mcp_conn_set_client (se->conn, se->owner);
  sr_mcp_conn_set_owner (se->conn, se->owner);
  return se;
}

void
sr_http_session_ref (struct session *se)
{
  pthread_mutex_lock (&se->h->lock);
  se->refs++;
  pthread_mutex_unlock (&se->h->lock);
}

void
sr_http_session_unref (struct session *se)
{
  struct http *h = se->h;
  bool last;

  pthread_mutex_lock (&h->lock);
  last = --se->refs == 0;
  pthread_mutex_unlock (&h->lock);
  if (!last)
    return;
  /* The conn was closed before the table let go of it.  */
  sr_mcp_conn_close (se->conn);
  pthread_mutex_destroy (&se->conn_lock);
  pthread_mutex_destroy (&se->lock);
  free (se->owner);
  free (se);
}

void
sr_http_session_close (struct session *se)
{
  struct sr_sessions *sessions = sr_mcp_server_sessions (se->h->mcp);
  struct sr_mcp_conn *conn;

  pthread_mutex_lock (&se->lock);
  se->closed = true;
  pthread_mutex_unlock (&se->lock);

  pthread_mutex_lock (&se->conn_lock);
  conn = TAKE_PTR (se->conn);
  pthread_mutex_unlock (&se->conn_lock);
  /* Not under conn_lock: closing waits for call threads, and a reader
   * may be waiting for conn_lock.  Nobody else uses conn now.  */
  sr_mcp_conn_close (conn);
  /* Without tokens the MCP session owns its sandbox sessions, and once
   * it is gone nobody can name them: they go now, not at their idle
   * timeout.  A token's outlive it: the token may open another, and so
   * do those of stateless requests, which the next one may name.  */
  if (conn && !se->h->authenticated && !se->stateless && sessions)
    sr_sessions_orphan (sessions, se->owner);

  pthread_mutex_lock (&se->lock);
  for (struct stream *st = se->streams; st; st = st->next)
    {
      st->ended = true;
      pthread_cond_broadcast (&st->cond);
      sr_http_unpark (se->h->parked, &st->park);
    }
  pthread_mutex_unlock (&se->lock);
}

/* h->lock held.  */
static void
table_unlink_locked (struct http *h, struct session *se)
{
  for (struct session **p = &h->sessions; *p; p = &(*p)->next)
    if (*p == se)
      {
        *p = se->next;
        h->n_sessions--;
        se->in_table = false;
        return;
      }
}

void
sr_http_session_end (struct session *se)
{
  struct http *h = se->h;
  bool was_in;

  pthread_mutex_lock (&h->lock);
  was_in = se->in_table;
  if (was_in)
    table_unlink_locked (h, se);
  pthread_mutex_unlock (&h->lock);
  if (!was_in)
    return;
  sr_http_session_close (se);
  sr_http_session_unref (se); /* the table's */
}

/* Whether a session in the table has been unused past the idle timeout:
 * no request or stream open (an SSE stream or a long run is use), and
 * none for idle_ns.  h->lock held.  */
static bool
expired_locked (const struct http *h, struct session *se, uint64_t now)
{
  bool open;

  if (se->last_used_ns >= now || now - se->last_used_ns < h->idle_ns)
    return false;
  pthread_mutex_lock (&se->lock);
  open = se->streams != NULL;
  pthread_mutex_unlock (&se->lock);
  return !open;
}

/* Ends the sessions that expired, so that a client that never comes back
 * does not keep its conn.  Runs at every request: the table holds at
 * most MAX_SESSIONS.  */
static void
expire_sessions (struct http *h)
{
  struct session *gone = NULL;
  uint64_t now;

  pthread_mutex_lock (&h->lock);
  /* Under the lock, as every update of last_used_ns is.  */
  now = sr_now_ns ();
  for (struct session **p = &h->sessions; *p;)
    {
      struct session *se = *p;

      if (expired_locked (h, se, now))
        {
          *p = se->next;
          h->n_sessions--;
          se->in_table = false;
          se->next = gone;
          gone = se;
        }
      else
        p = &se->next;
    }
  pthread_mutex_unlock (&h->lock);
  while (gone)
    {
      struct session *se = gone;

      gone = se->next;
      sr_http_session_close (se);
      sr_http_session_unref (se); /* the table's */
    }
}

/* expire_sessions runs first.  Every id is compared, in constant time.  */
struct session *
sr_http_session_find (struct http *h, struct MHD_Connection *c, const char *id)
{
  const char *token_owner = sr_http_token_owner (h, c);
  struct session *found = NULL;

  expire_sessions (h);
  pthread_mutex_lock (&h->lock);
  for (struct session *se = h->sessions; se; se = se->next)
    if (sr_http_ct_equal (se->id, id) && found == NULL
        && (!h->authenticated || (token_owner && strcmp (token_owner, se->owner) == 0)))
      found = se;
  if (found)
    {
      found->refs++;
      found->last_used_ns = sr_now_ns ();
    }
  pthread_mutex_unlock (&h->lock);
  return found;
}

bool
sr_http_session_insert (struct http *h, struct session *se)
{
  struct session *victim = NULL;
  bool ok = true;

  pthread_mutex_lock (&h->lock);
  if (h->stopping)
    ok = false;
  else if (h->n_sessions >= MAX_SESSIONS)
    {
      for (struct session *s = h->sessions; s; s = s->next)
        {
          bool idle;

          pthread_mutex_lock (&s->lock);
          idle = s->streams == NULL;
          pthread_mutex_unlock (&s->lock);
          if (idle && (victim == NULL || s->last_used_ns < victim->last_used_ns))
            victim = s;
        }
      if (victim)
        table_unlink_locked (h, victim);
      else
        ok = false;
    }
  if (ok)
    {
      se->refs++;
      se->in_table = true;
      se->last_used_ns = sr_now_ns ();
      se->next = h->sessions;
      h->sessions = se;
      h->n_sessions++;
    }
  pthread_mutex_unlock (&h->lock);
  if (victim)
    {
      sr_http_session_close (victim);
      sr_http_session_unref (victim);
    }
  return ok;
}

void
sr_http_session_slots (struct http *h, size_t *sessions, size_t *free_slots, bool *full)
{
  bool idle = false;

  pthread_mutex_lock (&h->lock);
  *sessions = h->n_sessions;
  *free_slots = h->n_sessions < MAX_SESSIONS ? MAX_SESSIONS - h->n_sessions : 0;
  for (struct session *s = h->sessions; s && *free_slots == 0 && !idle; s = s->next)
    {
      pthread_mutex_lock (&s->lock);
      idle = s->streams == NULL;
      pthread_mutex_unlock (&s->lock);
    }
  *full = *free_slots == 0 && !idle;
  pthread_mutex_unlock (&h->lock);
}

void
sr_http_sessions_stop (struct http *h)
{
  struct session *all;

  pthread_mutex_lock (&h->lock);
  h->stopping = true;
  all = TAKE_PTR (h->sessions);
  h->n_sessions = 0;
  for (struct session *se = all; se; se = se->next)
    se->in_table = false;
  pthread_mutex_unlock (&h->lock);
  while (all)
    {
      struct session *se = all;

      all = se->next;
      sr_http_session_close (se);
      sr_http_session_unref (se);
    }
  /* Their streams waiting for a client to resume them saw the close. */
  pthread_mutex_lock (&h->lock);
  while (h->waiting)
    pthread_cond_wait (&h->resumed, &h->lock);
  pthread_mutex_unlock (&h->lock);
}
