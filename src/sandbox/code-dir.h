/* The private directory that holds a one-shot run's code
 * (<runtime_dir>/scratch/code-XXXXXX: a tmpfs of its own when the runner
 * is root), and writing the code and files of
 * a request into a code directory without following a symlink: what
 * code.c, the warm pool and the compile cache share.  */
#ifndef SR_SANDBOX_CODE_DIR_H
#define SR_SANDBOX_CODE_DIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/error.h"
#include "sandbox/code-request.h"
#include "sandbox/policy.h"

/* A new directory under <runtime_dir>/scratch, mode 0700, owned by the
 * container's root (ids), locked by the returned fd so a concurrent
 * runner never reclaims it.  A root runner whose containers see its
 * mounts (own_mount: the backend's shares_mounts) mounts a tmpfs of its
 * own there (cfg->code_dir_size, nosuid, nodev): the fd is its root, and
 * nothing written there reaches a host file system; *ret_hold_fd then
 * keeps the directory beneath locked, for runners in other mount
 * namespaces (-1 otherwise).  An ordinary user cannot mount on the host,
 * and a daemon may not see the mount: the directory then is on
 * runtime_dir's file system.  Removed with sr_code_remove_dir, then the
 * fd closed.  */
int sr_code_make_dir (const struct sr_config *cfg, const struct sr_policy_ids *ids, bool own_mount,
                      char **ret_dir, int *ret_fd, int *ret_hold_fd, sr_error_t *err);

/* Unmounts and removes a directory of sr_code_make_dir, then closes its
 * hold_fd.  */
void sr_code_remove_dir (const char *dir, int hold_fd);

/* Takes the tmpfs of a directory of sr_code_make_dir off its path once
 * every container that needs it has bound it: it lives on in them and
 * in the fds opened in it, and its unmount, which waits for an RCU grace
 * period (up to milliseconds), is then not paid by sr_code_remove_dir.
 * The directory beneath stays locked by hold_fd.  */
void sr_code_detach_dir (const char *dir);

/* Removes the directories (and unmounts the tmpfs) of runners that
 * died.  */
void sr_code_reclaim_dirs (const struct sr_config *cfg);

/* Writes the source file name into dirfd, replacing whatever is there
 * without following it (a session's code may have put a symlink there).  */
int sr_code_write_source (int dirfd, const char *name, const char *code, size_t len, uid_t uid,
                          gid_t gid, sr_error_t *err);

/* The directory name's file is in, below dirfd, made as needed (owned by
 * uid, gid) and opened component by component without following a
 * symlink: a session's code may have put one anywhere in its /scratch.
 * *ret_base points at the file's own name in name.  Returns the fd.  */
int sr_code_open_parent (int dirfd, const char *name, uid_t uid, gid_t gid,
                         const char **ret_base, sr_error_t *err);

/* Writes a validated request's code as l's source and its files beside
 * it into dirfd, making the directories of their names (owned by uid,
 * gid) and following no symlink on the way.  */
int sr_code_write_inputs (int dirfd, const struct sr_language *l,
                          const struct sr_code_request *req, uid_t uid, gid_t gid,
                          sr_error_t *err);

#endif
