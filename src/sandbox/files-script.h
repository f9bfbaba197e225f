/* The file primitives of sandbox/files.h (struct sr_fs_ops) for a box
 * whose files the host cannot open: each is a small POSIX sh script run
 * where the files are, through the box's own way of running a command.
 * Docker (docker-session.c) runs them in the container as its user; an
 * SSH host (ssh.c) runs them over its master connection as the remote
 * account.  The scripts need sh and coreutils (realpath, stat, head, mv,
 * mktemp, base64, find with -printf): what every image and Linux host
 * has.  Every path and value is an argument of its own ("$1", "$2"...),
 * never part of a script's text.  */
#ifndef SR_SANDBOX_FILES_SCRIPT_H
#define SR_SANDBOX_FILES_SCRIPT_H

#include <stddef.h>

#include "common/error.h"
#include "common/run-result.h"
#include "sandbox/files.h"

/* How a box runs one script: argv is { "sh", "-c", SCRIPT, "sh", ARG...,
 * NULL }; its stdout is kept up to max_out bytes, stdin is empty, and
 * cancel_fd (-1: none) readable stops it.  Fills res as a backend's exec
 * does (its timeout is the caller's: timeout_ms).  */
struct sr_fs_script
{
  int (*run) (void *ctx, char *const *argv, uint64_t timeout_ms, size_t max_out, int cancel_fd,
              struct sr_run_result *res, sr_error_t *err);
  void *ctx;
  /* A write's content travels as base64 arguments: raw bytes per
   * argument, and arguments per run.  Their base64 must stay under the
   * kernel's MAX_ARG_STRLEN (128 KiB) per argument, and under it in all
   * where the whole command line is one argument (ssh's remote command).  */
  size_t chunk_raw;
  unsigned chunks_per_run;
};

/* The primitives; their ctx is a struct sr_fs_script (the box's, which
 * outlives the struct sr_fsroot that names it).  */
extern const struct sr_fs_ops sr_fs_script_ops;

#endif
