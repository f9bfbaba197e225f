/* The runner's own state directories (the runtime dir and what is under
 * it, the history db's directory, the image store): opened, and made when
 * missing, so that nothing another user made or can write is used.  A
 * runtime dir under /tmp that another user created first would otherwise
 * let them read our command lines and code, and plant state entries that
 * make our next run kill a process of their choosing.  */
#ifndef SR_STATEDIR_H
#define SR_STATEDIR_H

#include "common/error.h"

enum
{
  /* Also not readable by group and others (search stays, for the
   * container's unprivileged uid to reach its scratch directory): the
   * runtime dir, where command lines and code live.  */
  SR_STATEDIR_PRIVATE = 1 << 0,
  /* Do not make it (nor its parents): a missing one is ENOENT.  */
  SR_STATEDIR_NO_CREATE = 1 << 1,
};

/* Opens the directory path (absolute) as one of the runner's state
 * directories, made with mode 0700 when missing (its missing parents as
 * sr_mkdir_p makes them).  The last component is never followed when it
 * is a symbolic link; the checks run on the open fd: it must be owned by
 * the caller and writable by no one else, and its parent must belong to
 * the caller or root and be writable by others only with the sticky bit
 * (/tmp).  With SR_STATEDIR_PRIVATE, read permission for group and others
 * is taken away.  Anything else is refused with a message that names the
 * path, the owner found and `setting`, the setting that moves it
 * ("runtime_dir" also names XDG_RUNTIME_DIR).  Returns the fd (O_DIRECTORY,
 * the caller's to close) or -1.  */
int sr_statedir_open (const char *path, const char *setting, unsigned flags, sr_error_t *err);

/* <runtime_dir>/<name>, a state directory under a private runtime dir
 * (both opened, made and checked as sr_statedir_open does).  Returns the
 * path (the caller's to free) or NULL.  */
char *sr_statedir_runtime_sub (const char *runtime_dir, const char *name, sr_error_t *err);

#endif
