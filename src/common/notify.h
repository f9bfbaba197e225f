/* The service manager's readiness protocol (sd_notify(3)), without
 * libsystemd: a datagram of "KEY=VALUE" lines to the unix socket
 * $NOTIFY_SOCKET names (a path, or an abstract name after '@').  A unit
 * of Type=notify learns when the server listens (READY=1), reloads
 * (RELOADING=1, then READY=1) and stops (STOPPING=1).  */
#ifndef SR_NOTIFY_H
#define SR_NOTIFY_H

/* Sends state to the service manager; nothing without NOTIFY_SOCKET.
 * Returns 0, or -1 with errno when the socket is there but the datagram
 * could not go (the caller may say so; the server goes on either way).  */
int sr_notify (const char *state);

#endif
