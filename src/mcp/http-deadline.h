/* The header deadline of the HTTP transport: a connection must send a
 * request's headers within a timeout of connecting (or, kept alive, of
 * its previous request ending), however slowly it trickles them; past
 * that it is shut down.  libmicrohttpd's own connection timeout counts
 * only inactivity, so a client sending a byte now and then (slow loris)
 * would hold a connection, one of its slots, forever.  A request whose
 * headers are in (its body, its response, an open stream) is not
 * subject to it.  */
#ifndef SR_MCP_HTTP_DEADLINE_H
#define SR_MCP_HTTP_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>
#include <microhttpd.h>

#include "common/error.h"

struct http_deadlines;

/* Starts the watch (a thread); timeout_ms 0: no deadline (*ret NULL).  */
int sr_http_deadlines_start (uint64_t timeout_ms, struct http_deadlines **ret, sr_error_t *err);
/* Stops it, after the daemon: every connection is closed.  Accepts NULL.  */
void sr_http_deadlines_stop (struct http_deadlines *d);

/* MHD_OPTION_NOTIFY_CONNECTION's callback, cls the watch: a connection
 * is watched from its start to its end.  */
void sr_http_deadlines_notify (void *cls, struct MHD_Connection *c, void **socket_context,
                               enum MHD_ConnectionNotificationCode toe);

/* A request's headers are in (true), or the request is over (false: the
 * deadline starts again for the next one).  No-op without a watch.  */
void sr_http_deadlines_request (struct MHD_Connection *c, bool in_request);

#endif
