/* The connections of the HTTP server that wait (a stream for something to
 * send), parked off MHD's threads (http-park.c): the server has a few
 * threads for all its connections, so one that waits must not hold one.  */
#ifndef SR_MCP_HTTP_PARK_H
#define SR_MCP_HTTP_PARK_H

#include <microhttpd.h>
#include <stdbool.h>

#include "common/error.h"

/* How often every parked connection is resumed: a stream to look at its
 * client and its request (peer hang-up, cancel, keepalive).  */
#define HTTP_PARK_TICK_MS 250

struct http_parked;

/* A connection that may be parked: kept in what waits for it (a stream,
 * a request), its fields under the server's parked lock.  */
struct http_park
{
  struct MHD_Connection *connection;
  bool parked;
  struct http_park *prev, *next;
};

/* The parked streams of one server, and their ticker thread.  */
int sr_http_parked_start (struct http_parked **ret, sr_error_t *err);
/* From c's access handler or content reader (which then returns 0): parks
 * c as e (MHD_suspend_connection) until sr_http_unpark or the next tick.
 * False when the server stops: the caller ends what waits instead.  The
 * parked lock is innermost: this may be called with a session's lock
 * held.  */
bool sr_http_park (struct http_parked *p, struct http_park *e, struct MHD_Connection *c);
/* Resumes e's connection if it is parked (something came for it, or it
 * ended); any thread, any lock held.  */
void sr_http_unpark (struct http_parked *p, struct http_park *e);
/* The server stops: every parked connection is resumed (MHD must stop
 * with none suspended), none is parked again, and the ticker ends.  */
void sr_http_parked_release (struct http_parked *p);
void sr_http_parked_free (struct http_parked *p);

#endif
