/* The local OpenSSH client (sandbox/ssh-client.h).  */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "runtime/supervise.h"
#include "sandbox/ssh-client.h"

extern char **environ;

/* A word for a POSIX shell: single-quoted, each ' as '\''.  */
static void
quote_word (char **buf, size_t *len, const char *word)
{
  size_t n = strlen (word), need = *len + 4 * n + 4;

  *buf = sr_xrealloc (*buf, need);
  if (*len)
    (*buf)[(*len)++] = ' ';
  (*buf)[(*len)++] = '\'';
  for (const char *p = word; *p; p++)
    if (*p == '\'')
      {
        memcpy (*buf + *len, "'\\''", 4);
        *len += 4;
      }
    else
      (*buf)[(*len)++] = *p;
  (*buf)[(*len)++] = '\'';
  (*buf)[*len] = '\0';
}

char *
sr_ssh_quote_words (char *const *words)
{
  char *buf = NULL;
  size_t len = 0;

  for (size_t i = 0; words[i]; i++)
    quote_word (&buf, &len, words[i]);
  return buf;
}

/* What supervise's kill does to one client and its remote command.  */
struct kill_ctx
{
  pid_t pid;                    /* the local ssh */
  sr_ssh_kill_fn remote;        /* or NULL */
  void *ctx;
};

/* The remote command first, so that its end closes the channel and the
 * client ends by itself with what it printed; the client itself when
 * there is no remote side to reach, or at the last.  */
static void
kill_client (void *ctx, bool all)
{
  struct kill_ctx *k = ctx;

  if (k->remote)
    k->remote (k->ctx, all);
  if (all || k->remote == NULL)
    kill (k->pid, all ? SIGKILL : SIGTERM);
}

static void
close_pipe (int p[2])
{
  for (int i = 0; i < 2; i++)
    if (p[i] >= 0)
      close (p[i]);
}

int
sr_ssh_run (char *const *argv, const struct sr_run_options *opts, sr_ssh_kill_fn kill_remote,
            void *kill_ctx, struct sr_run_result *res, sr_error_t *err)
{
  _cleanup_close_ int null_fd = -1, pidfd = -1;
  int out[2] = { -1, -1 }, errp[2] = { -1, -1 };
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  sigset_t none, defaults;
  struct kill_ctx k = { .remote = kill_remote, .ctx = kill_ctx };
  struct sr_supervise_io io = { 0 };
  struct sr_supervise_outcome outcome = { 0 };
  uint64_t t0 = sr_now_ns ();
  int r = -1, e;

  memset (res, 0, sizeof *res);
  null_fd = open ("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0 || pipe2 (out, O_CLOEXEC) < 0 || pipe2 (errp, O_CLOEXEC) < 0)
    {
      sr_error_set (err, errno, "set up ssh's pipes");
      goto out;
    }
  posix_spawn_file_actions_init (&fa);
  posix_spawn_file_actions_adddup2 (&fa, opts->stdin_fd >= 0 ? opts->stdin_fd : null_fd, 0);
  posix_spawn_file_actions_adddup2 (&fa, out[1], 1);
  posix_spawn_file_actions_adddup2 (&fa, errp[1], 2);
  posix_spawnattr_init (&attr);
  sigemptyset (&none);
  sigfillset (&defaults);
  posix_spawnattr_setsigmask (&attr, &none);
  posix_spawnattr_setsigdefault (&attr, &defaults);
  posix_spawnattr_setflags (&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
                                   | POSIX_SPAWN_SETSID);
  e = posix_spawnp (&k.pid, "ssh", &fa, &attr, argv, environ);
  posix_spawn_file_actions_destroy (&fa);
  posix_spawnattr_destroy (&attr);
  if (e != 0)
    {
      sr_error_set_code (err, "ssh_missing", e, "run ssh (the OpenSSH client)");
      goto out;
    }
  close (out[1]);
  close (errp[1]);
  out[1] = errp[1] = -1;
  pidfd = (int) syscall (SYS_pidfd_open, k.pid, 0);
  if (pidfd < 0)
    {
      e = errno;
      kill (k.pid, SIGKILL);
      waitpid (k.pid, NULL, 0);
      sr_error_set (err, e, "pidfd_open");
      goto out;
    }
  fcntl (out[0], F_SETFL, O_NONBLOCK);
  fcntl (errp[0], F_SETFL, O_NONBLOCK);
  io = (struct sr_supervise_io){
    .out_fd = out[0], .err_fd = errp[0], .pidfd = pidfd, .status_fd = -1,
    .cancel_fd = opts->cancel_fd,
    .timeout_ms = opts->timeout_ms,
    .max_output = opts->max_output ? opts->max_output : SR_DEFAULT_MAX_OUTPUT,
    .on_output = opts->on_output, .userdata = opts->userdata,
    .kill = kill_client, .kill_ctx = &k,
  };
  if (sr_supervise (&io, &outcome, err) < 0)
    goto out;
  res->duration_ns = sr_now_ns () - t0;
  if (outcome.exit.si_code == CLD_EXITED)
    res->exit_code = outcome.exit.si_status;
  else
    res->signal = outcome.exit.si_status;
  res->status = outcome.timed_out   ? SR_RUN_TIMEOUT
                : outcome.cancelled ? SR_RUN_CANCELLED
                : res->exit_code == 0 && res->signal == 0 ? SR_RUN_SUCCESS
                                                          : SR_RUN_ERROR;
  res->out = outcome.out;
  res->err = outcome.err;
  memset (&outcome, 0, sizeof outcome);
  r = 0;

out:
  sr_captured_done (&outcome.out);
  sr_captured_done (&outcome.err);
  close_pipe (out);
  close_pipe (errp);
  return r;
}

