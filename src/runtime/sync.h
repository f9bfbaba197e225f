/* The parent and the container's init talk over one SOCK_SEQPACKET pair.
 * Every message has the same fixed layout; file descriptors ride along as
 * SCM_RIGHTS.  The sequence (numbered the same on both sides):
 *
 *   sync 1  parent -> child  GO      uid/gid maps are written; fds: a root runner's
 *                                    detached mounts (sr_mount_plan_detached)
 *   sync 2  child  -> parent READY   the container is built, init waits
 *   sync 3  parent -> child  START   fds: exec spec (memfd), stdin, stdout, stderr,
 *                                    status pipe (write end)
 *   sync 4  child  -> parent EXEC    policy applied, execve is next
 *           then EOF (the socket is O_CLOEXEC) once execve succeeded.
 *
 * The init forks the command (pid 2) at START; the command sends EXEC or
 * ERROR itself, and the init closes its copy of the socket, so the EOF is
 * the command's execve.  When the command ends the init writes its wait
 * status and CPU time (struct sr_child_end) to the status pipe and exits.
 *
 * A container kept for a session gets HOLD instead of START: its init then
 * only reaps, and each command joins it (see sr_joiner_main) with the same
 * GO, READY, START, EXEC sequence on a socket of its own (START without
 * the status pipe: the joiner ends the way its command did).
 *
 * Any step that fails sends ERROR (errnum + which step) instead, and the
 * child exits.  */
#ifndef SR_SYNC_H
#define SR_SYNC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/run-result.h"

enum sr_sync_type
{
  SR_SYNC_GO = 1,
  SR_SYNC_READY,
  SR_SYNC_START,
  SR_SYNC_EXEC,
  SR_SYNC_ERROR,
  SR_SYNC_HOLD,   /* parent -> child instead of START: become a holding init */
  SR_SYNC_PID,    /* joiner -> parent: the command's host pid, in `pid` */
};

#define SR_SYNC_TEXT_MAX 384
#define SR_SYNC_MAX_FDS 40

struct sr_sync_msg
{
  uint32_t type;
  int32_t errnum;
  int32_t pid;
  uint64_t marks[SR_MARK_MAX];
  char text[SR_SYNC_TEXT_MAX];
};

/* One message of len bytes with up to SR_SYNC_MAX_FDS fds, on a
 * SOCK_SEQPACKET socket: sr_msg_send returns 0 or -1 with errno (a
 * message sent short is EMSGSIZE); sr_msg_recv returns the message's
 * length, 0 on EOF (the peer closed or died), or -1 with errno (a message
 * or fds that did not fit are EBADMSG, with nothing received left open).
 * Received fds are O_CLOEXEC, and beyond max_fds closed.  Neither
 * allocates.  */
int sr_msg_send (int fd, const void *buf, size_t len, const int *fds, size_t n_fds);
ssize_t sr_msg_recv (int fd, void *buf, size_t cap, int *fds, size_t max_fds, size_t *ret_n_fds);

/* Both return 0 on success and -1 with errno set.  sr_sync_recv returns 1
 * on EOF (the peer closed or exec'd).  Received fds are O_CLOEXEC.  Neither
 * allocates, so the child may use them.  */
int sr_sync_send (int fd, const struct sr_sync_msg *msg, const int *fds, size_t n_fds);
int sr_sync_recv (int fd, struct sr_sync_msg *msg, int *fds, size_t max_fds, size_t *ret_n_fds);

#endif
