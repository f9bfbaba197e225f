#include "config.h"

#include "sandbox/shell.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "common/stdin-wait.h"
#include "common/util.h"
#include "runtime/container.h"

/* How long a new shell may take to print its first prompt.  */
#define SHELL_START_MS 10000u
/* How long shell_exec without wait waits for the command to begin.  */
#define SHELL_BEGIN_MS 2000u
/* How long an interrupted command (timeout, ^C) gets to end.  */
#define SHELL_INTERRUPT_GRACE_MS 2000u
/* When a ^C that did not end the command is sent once more.  */
#define SHELL_INTERRUPT_RETRY_MS 500u
/* The output of a command that goes to its live callback.  */
#define SHELL_LIVE_MAX (64u * 1024u)
#define NONCE_CHARS 16
/* How long a command seen waiting for input is watched for its end
 * first: bash at its next prompt reads the terminal as its builtin read
 * does, and its marker may not have reached on_output yet.  */
#define SHELL_INPUT_SETTLE_MS 50u

/* Where a reader of a terminal sleeps (n_tty_read, in wait_woken since
 * Linux 4.13).  */
static const char *const terminal_waits[] = { "n_tty_read", "wait_woken", NULL };

/* What one stream (stdout or stderr) has not committed yet (the start
 * of a marker, perhaps), and where it is in the running command.  A
 * prompt comes without a command too: a ^C at the prompt makes bash
 * print a newline and a new prompt, whose marker may arrive after the
 * next command was written.  A stream's bytes before that command's
 * begin marker are therefore not its output, and only the first prompt
 * marker after the begin marker is its end.  Where a ^C is known to
 * have reached bash at its prompt, or may have, the stream is muted
 * until the prompt it makes.  */
struct carry
{
  char *data;
  size_t len;
  bool begun;               /* the running command's begin marker came */
  bool ended;               /* and then the marker of the prompt after it */
  bool muted;               /* a ^C reached bash at its prompt, or may have:
                               nothing counts until its new prompt came */
};

struct sr_shell
{
  char id[48];
  sr_shell_exec_fn exec;
  void *exec_ctx;
  const struct sr_fsroot *fs;
  char nonce[NONCE_CHARS + 1];
  char marker[32];          /* "\036sr:<nonce>:" */
  size_t marker_len;
  int master, slave;
  int cancel_fd;
  pthread_t thread;
  bool thread_started;

  pthread_mutex_t lock;
  pthread_cond_t changed;
  enum sr_shell_state state;
  bool one_stream;          /* stderr comes on stdout (a terminal's) */
  struct carry carry[2];    /* stdout, stderr */
  bool line_open;           /* the last write left a line without its newline */
  int last_status;
  bool finished;            /* the last command ended since exec */
  bool interrupting;        /* a ^C was sent to the running command */
  bool interrupted_unbegun; /* one was sent before its begin marker came:
                               the terminal may have discarded its line,
                               so a prompt alone may be its end */
  bool stray_prompt;        /* a ^C may reach bash once back at its prompt:
                               mute each stream at the command's end */
  char *out;
  size_t out_len, max_output;
  bool live_on;             /* sr_shell_exec streams this command's output */
  char *live;               /* what it has not handed on yet */
  size_t live_len, live_total;
  bool truncated;
  char *failure;            /* why the shell could not run */
};

const char *
sr_shell_state_name (enum sr_shell_state s)
{
  switch (s)
    {
    case SR_SHELL_INIT: return "init";
    case SR_SHELL_READY: return "ready";
    case SR_SHELL_WAITING: return "waiting";
    case SR_SHELL_TERMINATED: return "terminated";
    }
  return "unknown";
}

void
sr_shell_output_done (struct sr_shell_output *o)
{
  free (o->data);
  memset (o, 0, sizeof *o);
}

/* Appends to the output, keeping its last max_output bytes.  */
static void
commit (struct sr_shell *sh, const char *buf, size_t len)
{
  if (sh->live_on && sh->live_total < SHELL_LIVE_MAX)
    {
      size_t n = len < SHELL_LIVE_MAX - sh->live_total ? len : SHELL_LIVE_MAX - sh->live_total;

      sh->live = sr_xrealloc (sh->live, sh->live_len + n);
      memcpy (sh->live + sh->live_len, buf, n);
      sh->live_len += n;
      sh->live_total += n;
    }
  if (len >= sh->max_output)
    {
      buf += len - sh->max_output;
      len = sh->max_output;
      sh->out_len = 0;
      sh->truncated = true;
    }
  else if (sh->out_len + len > sh->max_output)
    {
      size_t drop = sh->out_len + len - sh->max_output;

      memmove (sh->out, sh->out + drop, sh->out_len - drop);
      sh->out_len -= drop;
      sh->truncated = true;
    }
  memcpy (sh->out + sh->out_len, buf, len);
  sh->out_len += len;
  sh->out[sh->out_len] = '\0';
}

/* Whether what comes on stream c belongs to the running command (or,
 * while bash starts, to nobody).  */
static bool
stream_counts (const struct sr_shell *sh, const struct carry *c)
{
  return !c->muted && (c->begun || sh->interrupted_unbegun);
}

static void
commit_stream (struct sr_shell *sh, const struct carry *c, const char *buf, size_t len)
{
  if (stream_counts (sh, c))
    commit (sh, buf, len);
}

/* Both streams (or the one) have shown the marker of the prompt after
 * the command.  */
static void
update_state (struct sr_shell *sh)
{
  if (sh->state == SR_SHELL_TERMINATED)
    return;
  if (sh->carry[0].ended && (sh->one_stream || sh->carry[1].ended))
    {
      if (sh->state == SR_SHELL_WAITING)
        sh->finished = true;
      sh->state = SR_SHELL_READY;
      sh->interrupting = false;
      sh->interrupted_unbegun = false;
    }
}

/* Commits what precedes a marker, takes the marker out and notes the
 * status it carries; holds back a trailing piece that may begin one.  */
static void
feed (struct sr_shell *sh, struct carry *c, const char *buf, size_t len)
{
  size_t pos = 0;

  c->data = sr_xrealloc (c->data, c->len + len + 1);
  memcpy (c->data + c->len, buf, len);
  c->len += len;

  for (;;)
    {
      char *m = memmem (c->data + pos, c->len - pos, sh->marker, sh->marker_len);
      char *digits, *end;
      long status;

      if (m == NULL)
        break;
      commit_stream (sh, c, c->data + pos, (size_t) (m - (c->data + pos)));
      pos = (size_t) (m - c->data);
      digits = m + sh->marker_len;
      end = memchr (digits, '\036', c->len - (size_t) (digits - c->data));
      /* A prompt's marker is complete with the newline after it; a begin
       * marker has none, and often nothing follows it for a while (a
       * command that prints nothing yet).  */
      if (end == NULL || ((size_t) (end + 1 - c->data) >= c->len && *digits != 'b'))
        {
          if (c->len - pos > sh->marker_len + 16)
            {
              /* Not a marker after all: let it through.  */
              commit_stream (sh, c, c->data + pos, 1);
              pos++;
              continue;
            }
          goto keep;  /* the rest has not arrived */
        }
      pos = (size_t) (end + 1 - c->data);
      if (*digits == 'b')
        c->begun = true;
      else if (c->muted)
        c->muted = false;   /* the prompt a ^C made bash print */
      else if (stream_counts (sh, c) && !c->ended)
        {
          status = strtol (digits, NULL, 10);
          sh->last_status = (int) status;
          c->ended = true;
          c->muted = sh->stray_prompt;
        }
      /* The newline that ends a prompt's marker line.  */
      if (*digits != 'b' && pos < c->len && c->data[pos] == '\n')
        pos++;
    }
  /* Hold back a tail that could be the start of a marker.  */
  {
    size_t keep_from = c->len;

    for (size_t i = c->len > sh->marker_len ? c->len - sh->marker_len : pos; i < c->len; i++)
      if (i >= pos && c->data[i] == '\036'
          && memcmp (c->data + i, sh->marker, c->len - i) == 0)
        {
          keep_from = i;
          break;
        }
    commit_stream (sh, c, c->data + pos, keep_from - pos);
    pos = keep_from;
  }
keep:
  memmove (c->data, c->data + pos, c->len - pos);
  c->len -= pos;
}

static void
on_output (enum sr_stream stream, const char *buf, size_t len, void *userdata)
{
  struct sr_shell *sh = userdata;

  pthread_mutex_lock (&sh->lock);
  feed (sh, &sh->carry[stream == SR_STREAM_STDERR], buf, len);
  update_state (sh);
  pthread_cond_broadcast (&sh->changed);
  pthread_mutex_unlock (&sh->lock);
}

/* What programs wrote to the terminal itself.  */
static void
drain_terminal_locked (struct sr_shell *sh)
{
  char buf[4096];
  ssize_t n;

  while ((n = read (sh->master, buf, sizeof buf)) > 0)
    commit (sh, buf, (size_t) n);
}

/* Where shell id keeps its file of kind ("rc": its rc file; "sh": the
 * command it sources), in the /tmp of where it runs.  */
static char *
shell_file (const char *id, const char *kind)
{
  return sr_xasprintf ("/tmp/.sr-shell-%s.%s", id, kind);
}

static void *
shell_main (void *arg)
{
  struct sr_shell *sh = arg;
  _cleanup_free_ char *rc = shell_file (sh->id, "rc");
  char *argv[] = { (char *) "bash", (char *) "--noprofile", (char *) "--noediting",
                   (char *) "--rcfile", rc, (char *) "-i", NULL };
  struct sr_exec_spec spec = { .argv = argv };
  struct sr_run_options opts = {
    .max_output = 1, .stdin_fd = sh->slave, .cancel_fd = sh->cancel_fd,
    .on_output = on_output, .userdata = sh,
  };
  struct sr_run_result res;
  sr_error_t err = NULL;
  int r = sh->exec (sh->exec_ctx, &spec, &opts, &res, &err);

  pthread_mutex_lock (&sh->lock);
  sh->state = SR_SHELL_TERMINATED;
  if (r < 0)
    sh->failure = sr_xstrdup (err->msg);
  else if (!sh->finished)
    sh->last_status = res.signal ? 128 + res.signal : res.exit_code;
  pthread_cond_broadcast (&sh->changed);
  pthread_mutex_unlock (&sh->lock);
  sr_error_free (&err);
  sr_run_result_done (&res);
  return NULL;
}

static int
open_terminal (struct sr_shell *sh, sr_error_t *err)
{
  char name[64];
  struct termios t;
  struct winsize ws = { .ws_row = 50, .ws_col = 200 };

  sh->master = posix_openpt (O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (sh->master < 0)
    return sr_error_set (err, errno, "open a pseudo-terminal");
  if (grantpt (sh->master) < 0 || unlockpt (sh->master) < 0
      || ptsname_r (sh->master, name, sizeof name) != 0)
    return sr_error_set (err, errno, "set up the pseudo-terminal");
  sh->slave = open (name, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (sh->slave < 0)
    return sr_error_set (err, errno, "open %s", name);
  /* Input is not echoed back into the output; ^C still interrupts.  */
  if (tcgetattr (sh->slave, &t) < 0)
    return sr_error_set (err, errno, "tcgetattr %s", name);
  t.c_lflag &= ~(tcflag_t) (ECHO | ECHOE | ECHOK | ECHONL | ECHOCTL);
  t.c_lflag |= ISIG | ICANON;
  if (tcsetattr (sh->slave, TCSANOW, &t) < 0 || ioctl (sh->slave, TIOCSWINSZ, &ws) < 0)
    return sr_error_set (err, errno, "configure %s", name);
  fcntl (sh->master, F_SETFL, O_NONBLOCK);
  return 0;
}

static void
deadline_after (struct timespec *ts, uint64_t ms)
{
  sr_deadline_after (CLOCK_MONOTONIC, ms, ts);
}

static bool
passed (const struct timespec *deadline)
{
  struct timespec now;

  clock_gettime (CLOCK_MONOTONIC, &now);
  return now.tv_sec > deadline->tv_sec
         || (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec);
}

/* Hands the output that came since the last call to live, with the lock
 * dropped meanwhile (the callback may take its time).  */
static void
stream_locked (struct sr_shell *sh, sr_shell_live_fn live, void *live_data)
{
  char *buf = sh->live;
  size_t len = sh->live_len;

  if (live == NULL || len == 0)
    return;
  sh->live = NULL;
  sh->live_len = 0;
  pthread_mutex_unlock (&sh->lock);
  live (buf, len, live_data);
  free (buf);
  pthread_mutex_lock (&sh->lock);
}

/* Waits, under the lock, for a change, at most 100 ms and at most until
 * the deadline: what programs write to the terminal itself wakes no
 * one, so a waiter drains it between slices.  */
static void
wait_slice_locked (struct sr_shell *sh, const struct timespec *deadline)
{
  struct timespec slice;

  deadline_after (&slice, 100);
  if (slice.tv_sec > deadline->tv_sec
      || (slice.tv_sec == deadline->tv_sec && slice.tv_nsec > deadline->tv_nsec))
    slice = *deadline;
  pthread_cond_timedwait (&sh->changed, &sh->lock, &slice);
}

/* Waits, under the lock, until the shell is not waiting, the deadline
 * passes or cancel_fd (-1: none) is readable (then returns true);
 * drains the terminal meanwhile, and hands output to live (NULL: none)
 * as it comes.  */
static bool
wait_locked (struct sr_shell *sh, const struct timespec *deadline, int cancel_fd,
             sr_shell_live_fn live, void *live_data)
{
  struct pollfd cancel = { .fd = cancel_fd, .events = POLLIN };
  bool cancelled = false;

  while ((sh->state == SR_SHELL_WAITING || sh->state == SR_SHELL_INIT) && !passed (deadline)
         && !(cancelled = cancel_fd >= 0 && poll (&cancel, 1, 0) > 0))
    {
      drain_terminal_locked (sh);
      stream_locked (sh, live, live_data);
      wait_slice_locked (sh, deadline);
    }
  drain_terminal_locked (sh);
  return cancelled;
}

/* Whether a process of the terminal's foreground process group sleeps
 * reading it, with no complete line to read (FIONREAD counts lines only,
 * in canonical mode).  */
static bool
terminal_read (struct sr_shell *sh)
{
  struct stat st;
  pid_t pgrp = 0;
  int unread = 0;

  if (fstat (sh->slave, &st) < 0 || ioctl (sh->slave, FIONREAD, &unread) < 0 || unread > 0
      || ioctl (sh->master, TIOCGPGRP, &pgrp) < 0 || pgrp <= 0)
    return false;
  return sr_stdin_waited (&st, pgrp, terminal_waits);
}

/* The terminal's foreground process group and its session (bash's),
 * where the terminal is bash's own, which tells them (as this pid
 * namespace numbers them); a relayed one does not.  */
static bool
terminal_groups (struct sr_shell *sh, pid_t *pgrp, pid_t *sid)
{
  return sr_shell_sees_input (sh) && ioctl (sh->master, TIOCGPGRP, pgrp) == 0
         && ioctl (sh->master, TIOCGSID, sid) == 0 && *pgrp > 0;
}

/* Kills the job in the terminal's foreground, one that ignored ^C, when
 * it is not bash itself (a builtin's wait).  Whether it sent the kill.  */
static bool
kill_foreground_job (struct sr_shell *sh)
{
  pid_t pgrp = 0, sid = 0;

  if (!terminal_groups (sh, &pgrp, &sid) || pgrp == sid)
    return false;
  return kill (-pgrp, SIGKILL) == 0;
}

/* Waits, under the lock, until the command has begun (its begin marker
 * came) or ended, at most SHELL_BEGIN_MS: a ^C sent right after a
 * shell_exec without wait then reaches the command, not bash still
 * reading the command's line, which the terminal would discard with the
 * rest of its input.  */
static void
wait_begun_locked (struct sr_shell *sh)
{
  struct timespec deadline;

  deadline_after (&deadline, SHELL_BEGIN_MS);
  while (sh->state == SR_SHELL_WAITING && !sh->carry[0].begun && !passed (&deadline))
    pthread_cond_timedwait (&sh->changed, &sh->lock, &deadline);
}

/* Waits, under the lock, until the deadline at most for the prompt that
 * a ^C at the prompt makes bash print (stdout muted until it comes),
 * draining the terminal meanwhile; then nothing is muted.  */
static void
await_stray_prompt_locked (struct sr_shell *sh, const struct timespec *deadline)
{
  while (sh->carry[0].muted && sh->state != SR_SHELL_TERMINATED && !passed (deadline))
    {
      drain_terminal_locked (sh);
      wait_slice_locked (sh, deadline);
    }
  sh->carry[0].muted = sh->carry[1].muted = false;
  pthread_cond_broadcast (&sh->changed);
}

/* Waits, under the lock, while sr_shell_write awaits such a prompt: a
 * command typed before it came could be read and then dropped with the
 * interrupted line.  */
static void
wait_unmuted_locked (struct sr_shell *sh)
{
  struct timespec deadline;

  deadline_after (&deadline, SHELL_INTERRUPT_GRACE_MS);
  while (sh->carry[0].muted && !passed (&deadline))
    pthread_cond_timedwait (&sh->changed, &sh->lock, &deadline);
}

/* Notes, under the lock, that a ^C is on its way to the running
 * command.  */
static void
note_interrupt_locked (struct sr_shell *sh)
{
  sh->interrupting = true;
  if (!sh->carry[0].begun)
    sh->interrupted_unbegun = true;
}

/* Types ^C for the running command, under the lock.  */
static void
interrupt_locked (struct sr_shell *sh)
{
  note_interrupt_locked (sh);
  (void) sr_write_all (sh->master, "\003", 1);
}

/* Whether bash is back at its prompt, reading its terminal: the
 * foreground process group is bash's and bash sleeps reading it.  The
 * lock is dropped meanwhile, as /proc is read.  */
static bool
at_prompt_locked (struct sr_shell *sh)
{
  pid_t pgrp = 0, sid = 0;
  bool reading;

  if (!terminal_groups (sh, &pgrp, &sid) || pgrp != sid)
    return false;
  pthread_mutex_unlock (&sh->lock);
  reading = terminal_read (sh);
  pthread_mutex_lock (&sh->lock);
  return reading;
}

static void
take_output_locked (struct sr_shell *sh, struct sr_shell_output *out)
{
  memset (out, 0, sizeof *out);
  out->data = sr_xmalloc (sh->out_len + 1);
  memcpy (out->data, sh->out, sh->out_len);
  out->data[sh->out_len] = '\0';
  out->len = sh->out_len;
  out->truncated = sh->truncated;
  out->state = sh->state;
  out->finished = sh->finished || sh->state == SR_SHELL_TERMINATED;
  out->exit_code = sh->last_status;
  sh->out_len = 0;
  sh->out[0] = '\0';
  sh->truncated = false;
}

int
sr_shell_start (sr_shell_exec_fn exec, void *exec_ctx, const struct sr_fsroot *fs,
                const char *id, size_t max_output, bool one_stream, struct sr_shell **ret,
                sr_error_t *err)
{
  struct sr_shell *sh = sr_xcalloc (1, sizeof *sh);
  _cleanup_free_ char *rc_path = NULL, *rc = NULL, *marker = NULL, *also_stderr = NULL;
  pthread_condattr_t ca;
  struct timespec deadline;
  int r;

  snprintf (sh->id, sizeof sh->id, "%s", id);
  sh->exec = exec;
  sh->exec_ctx = exec_ctx;
  sh->fs = fs;
  sh->one_stream = one_stream;
  sh->master = sh->slave = sh->cancel_fd = -1;
  sh->max_output = max_output ? max_output : 1;
  sh->out = sr_xmalloc (sh->max_output + 1);
  sh->out[0] = '\0';
  pthread_mutex_init (&sh->lock, NULL);
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&sh->changed, &ca);
  pthread_condattr_destroy (&ca);

  if (sr_random_hex (sh->nonce, NONCE_CHARS / 2, err) < 0)
    goto fail;
  sh->marker_len = (size_t) snprintf (sh->marker, sizeof sh->marker, "\036sr:%s:", sh->nonce);

  if (open_terminal (sh, err) < 0)
    goto fail;
  sh->cancel_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (sh->cancel_fd < 0)
    {
      sr_error_set (err, errno, "eventfd");
      goto fail;
    }
  /* The prompt command is a shell variable, not exported: the commands
   * never see it.  */
  rc_path = shell_file (sh->id, "rc");
  /* The prompts stay empty whatever a command sets (a venv's activate
   * prefixes PS1), so only the commands' output comes back.  The prompt
   * command prints the marker on stdout and on stderr, or once when both
   * are one terminal in the container, which echoes input and turns \n
   * into \r\n unless told not to (ours is set up by open_terminal).  */
  marker = sr_xasprintf ("printf \"\\036sr:%s:%%d\\036\\n\" \"$__sr_status\"", sh->nonce);
  also_stderr = one_stream ? sr_xstrdup ("") : sr_xasprintf ("; %s >&2", marker);
  rc = sr_xasprintf ("%sPS1=''\nPS2=''\nunset HISTFILE\nVIRTUAL_ENV_DISABLE_PROMPT=1\n"
                     "PROMPT_COMMAND='__sr_status=$?; PS1=; PS2=; %s%s'\n",
                     one_stream ? "stty -echo -onlcr 2>/dev/null\n" : "", marker, also_stderr);
  if (sr_files_write (fs, rc_path, rc, strlen (rc), NULL, err) < 0)
    {
      sr_error_wrap (err, "write the shell's rc file");
      goto fail;
    }

  sh->state = SR_SHELL_INIT;
  /* The first prompt is bash's start.  */
  sh->carry[0].begun = sh->carry[1].begun = true;
  r = pthread_create (&sh->thread, NULL, shell_main, sh);
  if (r != 0)
    {
      sr_error_set (err, r, "start the shell's thread");
      goto fail;
    }
  sh->thread_started = true;

  deadline_after (&deadline, SHELL_START_MS);
  pthread_mutex_lock (&sh->lock);
  wait_locked (sh, &deadline, -1, NULL, NULL);
  r = sh->state == SR_SHELL_READY ? 0 : -1;
  if (r < 0)
    sr_error_set (err, 0, "the shell did not start: %s",
                  sh->failure ? sh->failure : sh->state == SR_SHELL_INIT ? "no prompt in time"
                                                                         : "bash exited");
  /* What bash printed while starting is nobody's output.  */
  sh->out_len = 0;
  sh->out[0] = '\0';
  sh->finished = false;
  pthread_mutex_unlock (&sh->lock);
  if (r < 0)
    goto fail;
  *ret = sh;
  return 0;

fail:
  sr_shell_stop (sh);
  return -1;
}

int
sr_shell_exec (struct sr_shell *sh, const char *command, bool wait, uint64_t timeout_ms,
               int cancel_fd, sr_shell_live_fn live, void *live_data,
               struct sr_shell_output *out, sr_error_t *err)
{
  _cleanup_free_ char *path = shell_file (sh->id, "sh");
  /* The command begins with a begin marker on each stream, stderr's
   * first: a ^C between the two leaves stdout's missing, and a ^C that
   * stdout's begin marker did not precede makes a prompt alone an end
   * (interrupt_locked).  */
  _cleanup_free_ char *begin = sr_xasprintf ("printf '\\036sr:%s:b\\036'", sh->nonce);
  _cleanup_free_ char *script = sr_xasprintf ("%s%s%s\n%s\n", sh->one_stream ? "" : begin,
                                              sh->one_stream ? "" : " >&2; ", begin, command);
  _cleanup_free_ char *line = sr_xasprintf (". %s\n", path);
  struct timespec deadline;
  bool cancelled;

  memset (out, 0, sizeof *out);
  pthread_mutex_lock (&sh->lock);
  /* A command a ^C is ending is as good as ended: the caller who sent the
   * ^C (perhaps on a call still in flight) means to run the next.  */
  if (sh->state == SR_SHELL_WAITING && sh->interrupting)
    {
      deadline_after (&deadline, SHELL_INTERRUPT_GRACE_MS);
      wait_locked (sh, &deadline, -1, NULL, NULL);
    }
  wait_unmuted_locked (sh);
  if (sh->state != SR_SHELL_READY)
    {
      enum sr_shell_state st = sh->state;

      pthread_mutex_unlock (&sh->lock);
      return sr_error_set_code (err, st == SR_SHELL_TERMINATED ? "shell_terminated" : "shell_busy",
                                0,
                                st == SR_SHELL_TERMINATED
                                ? "shell %s has exited; remove it and start a new one"
                                : "shell %s is running a command; read its output with "
                                "shell_read, or interrupt it with write_stdin \\x03",
                                sh->id);
    }
  /* The command file is written while no command runs; the shell reads
   * it when it sources it, before anything else can change it.  */
  if (sr_files_write (sh->fs, path, script, strlen (script), NULL, err) < 0)
    {
      pthread_mutex_unlock (&sh->lock);
      return sr_error_wrap (err, "write the command for shell %s", sh->id);
    }
  drain_terminal_locked (sh);
  sh->out_len = 0;
  sh->out[0] = '\0';
  sh->truncated = false;
  sh->finished = false;
  for (size_t i = 0; i < 2; i++)
    sh->carry[i].begun = sh->carry[i].ended = sh->carry[i].muted = false;
  sh->interrupted_unbegun = false;
  sh->line_open = false;
  sh->state = SR_SHELL_WAITING;
  if (sr_write_all (sh->master, line, strlen (line)) < 0)
    {
      int e = errno;

      sh->state = SR_SHELL_READY;
      pthread_mutex_unlock (&sh->lock);
      return sr_error_set_code (err, "io_error", e, "write to shell %s", sh->id);
    }
  if (!wait)
    wait_begun_locked (sh);
  else
    {
      sh->live_on = live != NULL;
      sh->live_total = 0;
      deadline_after (&deadline, timeout_ms);
      cancelled = wait_locked (sh, &deadline, cancel_fd, live, live_data);
      if (sh->state == SR_SHELL_WAITING)
        {
          out->timed_out = !cancelled;
          /* The next command may come meanwhile (a cancelled task's
           * caller goes on): it waits for this one to end.  */
          interrupt_locked (sh);
          deadline_after (&deadline, SHELL_INTERRUPT_GRACE_MS);
          wait_locked (sh, &deadline, -1, live, live_data);
          if (cancelled && sh->state == SR_SHELL_WAITING && kill_foreground_job (sh))
            {
              deadline_after (&deadline, SHELL_INTERRUPT_GRACE_MS);
              wait_locked (sh, &deadline, -1, live, live_data);
            }
          sh->interrupting = false;
        }
      sh->live_on = false;
      free (sh->live);
      sh->live = NULL;
      sh->live_len = 0;
    }
  {
    bool timed_out = out->timed_out;

    take_output_locked (sh, out);
    out->timed_out = timed_out;
  }
  pthread_mutex_unlock (&sh->lock);
  return 0;
}

void
sr_shell_read (struct sr_shell *sh, struct sr_shell_output *out)
{
  pthread_mutex_lock (&sh->lock);
  drain_terminal_locked (sh);
  take_output_locked (sh, out);
  pthread_mutex_unlock (&sh->lock);
}

int
sr_shell_write (struct sr_shell *sh, const char *data, size_t len,
                enum sr_shell_state *ret_state, sr_error_t *err)
{
  struct timespec deadline;
  int r = 0;

  pthread_mutex_lock (&sh->lock);
  if (sh->state == SR_SHELL_TERMINATED)
    r = sr_error_set_code (err, "shell_terminated", 0, "shell %s has exited", sh->id);
  else if (sr_write_all (sh->master, data, len) < 0)
    r = sr_error_set_code (err, "io_error", errno, "write to shell %s", sh->id);
  else if (sh->state == SR_SHELL_READY && memchr (data, '\003', len))
    {
      /* Interrupted at its prompt, bash prints a newline and a new one.  */
      sh->carry[0].muted = true;
      sh->carry[1].muted = !sh->one_stream;
      deadline_after (&deadline, SHELL_INTERRUPT_GRACE_MS);
      await_stray_prompt_locked (sh, &deadline);
    }
  else if (sh->state == SR_SHELL_WAITING && memchr (data, '\003', len))
    {
      /* Back at the prompt, the shell takes the next command at once.  A
       * ^C that comes while bash hands the terminal to the command's job
       * (between its fork and tcsetpgrp) reaches bash alone, which lets
       * the job run on: the second one reaches the job.  Where bash can
       * be seen back at its prompt, its marker is on the way, and a
       * second ^C would only make it print another prompt.  Where it
       * cannot (a relayed terminal), the second ^C may do so: what
       * follows the command's end is muted until that prompt, or the
       * end of the two seconds (it comes as late after the second ^C
       * as the command's end came after the first).  */
      note_interrupt_locked (sh);
      deadline_after (&deadline, SHELL_INTERRUPT_RETRY_MS);
      wait_locked (sh, &deadline, -1, NULL, NULL);
      /* The state again after at_prompt_locked, which drops the lock.  */
      if (sh->state == SR_SHELL_WAITING && !at_prompt_locked (sh)
          && sh->state == SR_SHELL_WAITING)
        {
          sh->stray_prompt = !sr_shell_sees_input (sh);
          interrupt_locked (sh);
        }
      deadline_after (&deadline, SHELL_INTERRUPT_GRACE_MS - SHELL_INTERRUPT_RETRY_MS);
      wait_locked (sh, &deadline, -1, NULL, NULL);
      if (sh->stray_prompt)
        {
          sh->stray_prompt = false;
          if (sh->state == SR_SHELL_READY)
            await_stray_prompt_locked (sh, &deadline);
        }
      /* A command that ignores ^C runs on: the next shell_exec is busy at
       * once, not after waiting for it again.  */
      sh->interrupting = false;
    }
  /* A newline, ^C (which discards the line) or ^D ends what the
   * terminal holds of a line.  */
  if (r == 0 && len > 0)
    sh->line_open = data[len - 1] != '\n' && data[len - 1] != '\003' && data[len - 1] != '\004';
  *ret_state = sh->state;
  pthread_mutex_unlock (&sh->lock);
  return r;
}

int
sr_shell_write_eof (struct sr_shell *sh, enum sr_shell_state *ret_state, sr_error_t *err)
{
  bool line_open;

  pthread_mutex_lock (&sh->lock);
  line_open = sh->line_open;
  pthread_mutex_unlock (&sh->lock);
  /* The first ^D hands the open line over as it is, the next reads as
   * the end of input.  */
  return sr_shell_write (sh, line_open ? "\004\004" : "\004", line_open ? 2 : 1, ret_state, err);
}

bool
sr_shell_sees_input (const struct sr_shell *sh)
{
  return !sh->one_stream;
}

bool
sr_shell_waits_input (struct sr_shell *sh)
{
  struct timespec deadline;
  bool waits;

  if (!sr_shell_sees_input (sh))
    return false;
  /* Before its begin marker, bash may still be reading the command's
   * line.  */
  pthread_mutex_lock (&sh->lock);
  waits = sh->state == SR_SHELL_WAITING && !sh->interrupting && sh->carry[0].begun;
  pthread_mutex_unlock (&sh->lock);
  /* /proc is read without the lock, which the output keeps taking.  */
  if (!waits || !terminal_read (sh))
    return false;
  pthread_mutex_lock (&sh->lock);
  deadline_after (&deadline, SHELL_INPUT_SETTLE_MS);
  while (sh->state == SR_SHELL_WAITING && !passed (&deadline))
    pthread_cond_timedwait (&sh->changed, &sh->lock, &deadline);
  waits = sh->state == SR_SHELL_WAITING;
  pthread_mutex_unlock (&sh->lock);
  return waits;
}

const char *
sr_shell_id (const struct sr_shell *sh)
{
  return sh->id;
}

enum sr_shell_state
sr_shell_state (struct sr_shell *sh)
{
  enum sr_shell_state st;

  pthread_mutex_lock (&sh->lock);
  st = sh->state;
  pthread_mutex_unlock (&sh->lock);
  return st;
}

void
sr_shell_stop (struct sr_shell *sh)
{
  if (sh == NULL)
    return;
  if (sh->thread_started)
    {
      uint64_t one = 1;
      /* It fails only when the counter would overflow: already written.  */
      ssize_t n = write (sh->cancel_fd, &one, sizeof one);

      (void) n;
      pthread_join (sh->thread, NULL);
    }
  if (sh->master >= 0)
    close (sh->master);
  if (sh->slave >= 0)
    close (sh->slave);
  if (sh->cancel_fd >= 0)
    close (sh->cancel_fd);
  free (sh->carry[0].data);
  free (sh->carry[1].data);
  free (sh->out);
  free (sh->live);
  free (sh->failure);
  pthread_cond_destroy (&sh->changed);
  pthread_mutex_destroy (&sh->lock);
  free (sh);
}

void
sr_shell_stop_clean (struct sr_shell *sh)
{
  sr_shell_exec_fn exec;
  void *ctx;
  char id[sizeof sh->id];
  _cleanup_free_ char *rc = NULL, *cmd = NULL;

  if (sh == NULL)
    return;
  exec = sh->exec;
  ctx = sh->exec_ctx;
  snprintf (id, sizeof id, "%s", sh->id);
  sr_shell_stop (sh);
  rc = shell_file (id, "rc");
  cmd = shell_file (id, "sh");
  {
    char *argv[] = { (char *) "rm", (char *) "-f", (char *) "--", rc, cmd, NULL };
    struct sr_exec_spec spec = { .argv = argv };
    struct sr_run_options opts = { .timeout_ms = 10000, .max_output = 1024, .stdin_fd = -1,
                                   .cancel_fd = -1 };
    struct sr_run_result res;

    /* Best effort: a lost connection leaves them, as it leaves the host.  */
    if (exec (ctx, &spec, &opts, &res, NULL) == 0)
      sr_run_result_done (&res);
  }
}
