/* Scratch directories that outlive no writer.  */
#ifndef SR_COMMON_WORKDIR_H
#define SR_COMMON_WORKDIR_H

#include "common/error.h"

/* Work directories (a run's scratch dir, an image extraction) are alive
 * for as long as their writer holds a flock on them; what a writer that
 * died left, nobody holds.
 *
 * sr_workdir_make creates one from a mkdtemp template (changed in place to
 * the name made) and returns a descriptor of it that holds its lock.  The
 * window between mkdtemp and flock, where a reclaimer may find the new
 * directory unlocked and remove it, is closed on the writer's side: with
 * the lock held it checks that the path still names the directory it
 * locked, and makes another one if not.  So sr_workdir_reclaim may remove
 * at once, whatever its age, every directory in dir whose name starts
 * with prefix and whose lock it can take; it never follows symlinks and
 * returns the number removed.  */
int sr_workdir_make (char *tmpl, int *ret_fd, sr_error_t *err);
int sr_workdir_reclaim (const char *dir, const char *prefix);

#endif
