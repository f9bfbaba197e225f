#include "config.h"

#include "mcp/http-deadline.h"

#include <errno.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

#include "common/util.h"

/* How often the watch looks.  */
#define CHECK_MS 250

struct watched
{
  struct http_deadlines *d;
  MHD_socket fd;
  uint64_t since_ns;     /* connected, or its last request ended */
  bool in_request;
  bool shut;
  struct watched *prev, *next;
};

struct http_deadlines
{
  uint64_t timeout_ns;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  struct watched *head;
  bool stop;
  pthread_t thread;
};

/* Shuts down, under the lock, the connections past their deadline: MHD's
 * thread for one sees its end and closes it.  The lock also keeps an
 * entry until MHD's CLOSED notice, which comes before it closes the fd,
 * so no fd shut here was reused.  */
static void
shut_late_locked (struct http_deadlines *d, uint64_t now)
{
  for (struct watched *w = d->head; w; w = w->next)
    if (!w->in_request && !w->shut && now - w->since_ns > d->timeout_ns)
      {
        shutdown (w->fd, SHUT_RDWR);
        w->shut = true;
      }
}

static void *
watch_main (void *arg)
{
  struct http_deadlines *d = arg;

  pthread_mutex_lock (&d->lock);
  while (!d->stop)
    {
      struct timespec ts;

      shut_late_locked (d, sr_now_ns ());
      sr_deadline_after (CLOCK_MONOTONIC, CHECK_MS, &ts);
      pthread_cond_timedwait (&d->wake, &d->lock, &ts);
    }
  pthread_mutex_unlock (&d->lock);
  return NULL;
}

int
sr_http_deadlines_start (uint64_t timeout_ms, struct http_deadlines **ret, sr_error_t *err)
{
  struct http_deadlines *d;
  pthread_condattr_t ca;
  int r;

  *ret = NULL;
  if (timeout_ms == 0)
    return 0;
  d = sr_xcalloc (1, sizeof *d);
  d->timeout_ns = timeout_ms * 1000000ull;
  pthread_mutex_init (&d->lock, NULL);
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&d->wake, &ca);
  pthread_condattr_destroy (&ca);
  r = pthread_create (&d->thread, NULL, watch_main, d);
  if (r != 0)
    {
      pthread_cond_destroy (&d->wake);
      pthread_mutex_destroy (&d->lock);
      free (d);
      return sr_error_set (err, r, "start the HTTP header deadline");
    }
  *ret = d;
  return 0;
}

void
sr_http_deadlines_stop (struct http_deadlines *d)
{
  if (d == NULL)
    return;
  pthread_mutex_lock (&d->lock);
  d->stop = true;
  pthread_cond_signal (&d->wake);
  pthread_mutex_unlock (&d->lock);
  pthread_join (d->thread, NULL);
  while (d->head)
    {
      struct watched *w = d->head;

      d->head = w->next;
      free (w);
    }
  pthread_cond_destroy (&d->wake);
  pthread_mutex_destroy (&d->lock);
  free (d);
}

void
sr_http_deadlines_notify (void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
  struct http_deadlines *d = cls;
  struct watched *w = *socket_context;

  if (d == NULL)
    return;
  if (toe == MHD_CONNECTION_NOTIFY_STARTED)
    {
      const union MHD_ConnectionInfo *fd
        = MHD_get_connection_info (c, MHD_CONNECTION_INFO_CONNECTION_FD);

      if (fd == NULL)
        return;
      w = sr_xcalloc (1, sizeof *w);
      w->d = d;
      w->fd = fd->connect_fd;
      w->since_ns = sr_now_ns ();
      pthread_mutex_lock (&d->lock);
      w->next = d->head;
      if (d->head)
        d->head->prev = w;
      d->head = w;
      pthread_mutex_unlock (&d->lock);
      *socket_context = w;
      return;
    }
  if (w == NULL)
    return;
  pthread_mutex_lock (&d->lock);
  if (w->prev)
    w->prev->next = w->next;
  else
    d->head = w->next;
  if (w->next)
    w->next->prev = w->prev;
  pthread_mutex_unlock (&d->lock);
  *socket_context = NULL;
  free (w);
}

void
sr_http_deadlines_request (struct MHD_Connection *c, bool in_request)
{
  const union MHD_ConnectionInfo *i = MHD_get_connection_info (c,
                                                               MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  struct watched *w = i ? i->socket_context : NULL;

  if (w == NULL)
    return;
  pthread_mutex_lock (&w->d->lock);
  w->in_request = in_request;
  w->since_ns = sr_now_ns ();
  pthread_mutex_unlock (&w->d->lock);
}
