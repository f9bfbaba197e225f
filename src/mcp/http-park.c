/* Parked connections: a stream with nothing to send (or a request that
 * waits for one) gives its connection back to MHD's event loop
 * (MHD_suspend_connection) instead of holding a thread, and is resumed
 * when something comes for it, and by a tick every HTTP_PARK_TICK_MS,
 * when a stream looks whether its client hung up (MHD watches no
 * suspended socket), whether its request was cancelled, and whether a
 * keepalive is due.  */
#include "config.h"

#include "mcp/http-park.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "common/util.h"

struct http_parked
{
  pthread_mutex_t lock;  /* innermost: taken under a session's lock, takes none */
  pthread_cond_t wake;
  struct http_park *head;
  bool stop;
  pthread_t ticker;
};

/* lock held.  */
static void
unpark_locked (struct http_parked *p, struct http_park *e)
{
  if (!e->parked)
    return;
  if (e->prev)
    e->prev->next = e->next;
  else
    p->head = e->next;
  if (e->next)
    e->next->prev = e->prev;
  e->prev = e->next = NULL;
  e->parked = false;
  MHD_resume_connection (e->connection);
}

static void *
tick (void *arg)
{
  struct http_parked *p = arg;

  pthread_mutex_lock (&p->lock);
  while (!p->stop)
    {
      struct timespec ts;

      sr_deadline_after (CLOCK_REALTIME, HTTP_PARK_TICK_MS, &ts);
      if (pthread_cond_timedwait (&p->wake, &p->lock, &ts) != ETIMEDOUT)
        continue;
      while (p->head)
        unpark_locked (p, p->head);
    }
  pthread_mutex_unlock (&p->lock);
  return NULL;
}

int
sr_http_parked_start (struct http_parked **ret, sr_error_t *err)
{
  struct http_parked *p = sr_xcalloc (1, sizeof *p);
  int e;

  pthread_mutex_init (&p->lock, NULL);
  pthread_cond_init (&p->wake, NULL);
  e = pthread_create (&p->ticker, NULL, tick, p);
  if (e)
    {
      pthread_cond_destroy (&p->wake);
      pthread_mutex_destroy (&p->lock);
      free (p);
      return sr_error_set (err, e, "start the HTTP streams' ticker");
    }
  *ret = p;
  return 0;
}

bool
sr_http_park (struct http_parked *p, struct http_park *e, struct MHD_Connection *c)
{
  bool parked = false;

  pthread_mutex_lock (&p->lock);
  if (!p->stop && !e->parked)
    {
      e->parked = parked = true;
      e->connection = c;
      e->prev = NULL;
      e->next = p->head;
      if (p->head)
        p->head->prev = e;
      p->head = e;
      MHD_suspend_connection (c);
    }
  pthread_mutex_unlock (&p->lock);
  return parked;
}

void
sr_http_unpark (struct http_parked *p, struct http_park *e)
{
  pthread_mutex_lock (&p->lock);
  unpark_locked (p, e);
  pthread_mutex_unlock (&p->lock);
}

void
sr_http_parked_release (struct http_parked *p)
{
  pthread_mutex_lock (&p->lock);
  p->stop = true;
  while (p->head)
    unpark_locked (p, p->head);
  pthread_cond_broadcast (&p->wake);
  pthread_mutex_unlock (&p->lock);
  pthread_join (p->ticker, NULL);
}

void
sr_http_parked_free (struct http_parked *p)
{
  if (p == NULL)
    return;
  pthread_cond_destroy (&p->wake);
  pthread_mutex_destroy (&p->lock);
  free (p);
}
