/* Whether a program waits reading its stdin, as /proc shows it: a
 * process whose fd 0 is a given file, asleep in read(2) or readv(2) of
 * fd 0 (/proc/PID/syscall), or, on a kernel without that file, in one of
 * the kernel functions that wait for that kind of file (/proc/PID/wchan).
 * Only a process this one may inspect is seen: a descendant, or one in a
 * user namespace it owns.  */
#ifndef SR_COMMON_STDIN_WAIT_H
#define SR_COMMON_STDIN_WAIT_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Whether a process whose fd 0 is file (its st_dev and st_ino) sleeps
 * reading it; with pgrp > 0, a process of that process group (as this
 * one's pid namespace numbers it).  wchans: the NULL-terminated names
 * of the kernel's waits for such a file.  */
bool sr_stdin_waited (const struct stat *file, pid_t pgrp, const char *const *wchans);

#endif
