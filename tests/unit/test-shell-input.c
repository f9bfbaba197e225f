/* A persistent shell (sandbox/shell.h) whose bash runs here, on a
 * terminal that is its own: its command is seen waiting for typed input
 * (bash's builtin read, or a program it started), and not while it
 * sleeps or once it ended; what sr_shell_write types reaches it, and
 * sr_shell_write_eof ends its input after a line left open; a cancelled
 * exec interrupts it, and kills a job that ignores ^C; a shell whose terminal is relayed (one_stream) is
 * never seen waiting; a ^C at the prompt is not taken for the next
 * command's output or end.  */
#include <config.h>

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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/run-result.h"
#include "common/util.h"
#include "runtime/container.h"
#include "sandbox/files.h"
#include "sandbox/shell.h"
#include "tap.h"

/* The shell's files go where it names them, in this machine's /tmp.  */
static int
host_write (void *ctx, const char *abs, unsigned flags, const void *buf, size_t len,
            bool overwrite, sr_error_t *err)
{
  FILE *f = fopen (abs, "w");

  (void) ctx, (void) flags, (void) overwrite;
  if (f == NULL || fwrite (buf, 1, len, f) != len || fclose (f) != 0)
    return sr_error_set (err, errno, "write %s", abs);
  return 0;
}

static const struct sr_fs_ops host_ops = { .write = host_write };

/* Set: a relayed terminal's relay holds bash's output back, as a slow
 * one does, counting the prompts in it, until cleared and relay_release
 * (an eventfd) written; then it hands it all on at once.  */
static _Atomic bool relay_holds;
static _Atomic size_t held_prompts;
static int relay_release = -1;

static size_t
prompt_markers (const char *buf, size_t len)
{
  size_t n = 0;

  for (size_t i = 0; i + 1 < len; i++)
    n += buf[i] == '\036' && buf[i + 1] == '\n';
  return n;
}

/* Runs the command here as a session runs it in its container: its own
 * session, stdin (a terminal) its controlling terminal, stdout and
 * stderr handed to on_output as they come, killed when cancel_fd is.
 * ctx non-NULL: as a relayed terminal carries them, stderr comes on
 * stdout, held back while relay_holds.  */
static int
host_exec (void *ctx, const struct sr_exec_spec *spec, const struct sr_run_options *opts,
           struct sr_run_result *res, sr_error_t *err)
{
  int out[2], errs[2];
  struct pollfd p[4];
  int open_streams = 2, status;
  bool relayed = ctx != NULL;
  _cleanup_free_ char *held = NULL;
  size_t held_len = 0;
  pid_t pid;

  memset (res, 0, sizeof *res);
  if (pipe2 (out, O_CLOEXEC) < 0 || pipe2 (errs, O_CLOEXEC) < 0)
    return sr_error_set (err, errno, "pipe");
  pid = fork ();
  if (pid == 0)
    {
      int in = opts->stdin_fd >= 0 ? opts->stdin_fd : open ("/dev/null", O_RDONLY);

      /* A container's init starts its commands with every signal at
       * its default; this test may run where ^C is ignored (a
       * background job of a script).  */
      signal (SIGINT, SIG_DFL);
      signal (SIGQUIT, SIG_DFL);
      setsid ();
      dup2 (in, 0);
      if (isatty (0))
        ioctl (0, TIOCSCTTY, 0);
      dup2 (out[1], 1);
      dup2 (relayed ? out[1] : errs[1], 2);
      execvp (spec->argv[0], spec->argv);
      _exit (127);
    }
  close (out[1]);
  close (errs[1]);
  p[0] = (struct pollfd){ .fd = out[0], .events = POLLIN };
  p[1] = (struct pollfd){ .fd = errs[0], .events = POLLIN };
  p[2] = (struct pollfd){ .fd = opts->cancel_fd, .events = POLLIN };
  p[3] = (struct pollfd){ .fd = relayed ? relay_release : -1, .events = POLLIN };
  while (open_streams > 0 && poll (p, 4, -1) >= 0)
    {
      char buf[4096];
      uint64_t released;

      if (p[3].revents && read (relay_release, &released, sizeof released) > 0 && !relay_holds
          && held_len > 0)
        {
          opts->on_output (SR_STREAM_STDOUT, held, held_len, opts->userdata);
          held_len = 0;
        }

      if (p[2].revents)
        {
          kill (-pid, SIGKILL);
          p[2].fd = -1;
        }
      for (int i = 0; i < 2; i++)
        if (p[i].revents)
          {
            ssize_t n = read (p[i].fd, buf, sizeof buf);

            if (n > 0 && relayed && relay_holds)
              {
                held = sr_xrealloc (held, held_len + (size_t) n);
                memcpy (held + held_len, buf, (size_t) n);
                held_len += (size_t) n;
                held_prompts = prompt_markers (held, held_len);
              }
            else if (n > 0 && opts->on_output)
              opts->on_output (i == 0 ? SR_STREAM_STDOUT : SR_STREAM_STDERR, buf, (size_t) n,
                               opts->userdata);
            if (n <= 0)
              {
                p[i].fd = -1;
                open_streams--;
              }
          }
    }
  if (held_len > 0 && opts->on_output)
    opts->on_output (SR_STREAM_STDOUT, held, held_len, opts->userdata);
  close (out[0]);
  close (errs[0]);
  waitpid (pid, &status, 0);
  res->exit_code = WIFEXITED (status) ? WEXITSTATUS (status) : 0;
  res->signal = WIFSIGNALED (status) ? WTERMSIG (status) : 0;
  return 0;
}

struct exec_call
{
  struct sr_shell *sh;
  const char *command;
  int cancel_fd;
  struct sr_shell_output out;
  int r;
  pthread_t thread;
};

static void *
exec_main (void *arg)
{
  struct exec_call *x = arg;

  x->r = sr_shell_exec (x->sh, x->command, true, 10000, x->cancel_fd, NULL, NULL, &x->out, NULL);
  return NULL;
}

static void
exec_start (struct exec_call *x, struct sr_shell *sh, const char *command, int cancel_fd)
{
  memset (x, 0, sizeof *x);
  x->sh = sh;
  x->command = command;
  x->cancel_fd = cancel_fd;
  pthread_create (&x->thread, NULL, exec_main, x);
}

/* Whether the shell's command is seen waiting for input within ms.  */
static bool
seen_waiting (struct sr_shell *sh, unsigned ms)
{
  uint64_t until = sr_now_ns () + ms * 1000000ull;

  do
    {
      if (sr_shell_waits_input (sh))
        return true;
      usleep (20000);
    }
  while (sr_now_ns () < until);
  return false;
}

/* How many of tries of a ^C at the prompt, then at once "echo own",
 * gave that command its own output and status: bash's newline and
 * prompt after the ^C may come once the command was typed.  */
static int
own_after_prompt_interrupts (struct sr_shell *sh, int tries)
{
  int clean = 0;

  for (int i = 0; i < tries; i++)
    {
      struct sr_shell_output out;

      sr_shell_write (sh, "\003", 1, &(enum sr_shell_state){ 0 }, NULL);
      if (sr_shell_exec (sh, "echo own", true, 10000, -1, NULL, NULL, &out, NULL) == 0)
        {
          clean += out.finished && out.exit_code == 0 && strcmp (out.data, "own\n") == 0;
          sr_shell_output_done (&out);
        }
    }
  return clean;
}

static void *
interrupt_main (void *arg)
{
  sr_shell_write (arg, "\003", 1, &(enum sr_shell_state){ 0 }, NULL);
  return NULL;
}

/* A command interrupted while the relay holds its end back past the
 * second ^C, which then finds bash back at its prompt; then "echo own".
 * What both gave, "[OUTPUT] STATUS, then [OUTPUT] STATUS"; NULL when
 * bash had not printed that second prompt a second in (the first ^C
 * came while bash handed the terminal over, or a loaded machine).  */
static char *
interrupted_late_prompt (struct sr_shell *sh)
{
  struct sr_shell_output out, next;
  _cleanup_free_ char *output = sr_xstrdup ("");
  uint64_t one = 1;
  pthread_t writer;
  bool two_prompts;
  int code = -1;
  char *what = NULL;

  sr_shell_exec (sh, "sleep 30", false, 0, -1, NULL, NULL, &out, NULL);
  sr_shell_output_done (&out);
  /* sleep has the terminal by then: a ^C while bash hands it over would
   * reach bash alone, and the second would end the command.  */
  usleep (300000);
  held_prompts = 0;
  relay_holds = true;
  pthread_create (&writer, NULL, interrupt_main, sh);
  /* Past the second ^C (half a second in), within the first's two
   * seconds.  */
  usleep (1000000);
  two_prompts = held_prompts >= 2;
  relay_holds = false;
  (void) !write (relay_release, &one, sizeof one);
  pthread_join (writer, NULL);
  for (int i = 0; i < 100 && code < 0; i++)
    {
      char *more;

      sr_shell_read (sh, &out);
      more = sr_xasprintf ("%s%s", output, out.data);
      free (output);
      output = more;
      if (out.finished)
        code = out.exit_code;
      sr_shell_output_done (&out);
      usleep (100000);
    }
  sr_shell_exec (sh, "echo own", true, 10000, -1, NULL, NULL, &next, NULL);
  if (two_prompts)
    what = sr_xasprintf ("[%s] %d, then [%s] %d", output, code, next.data ? next.data : "",
                         next.finished ? next.exit_code : -1);
  sr_shell_output_done (&next);
  return what;
}

int
main (void)
{
  struct sr_fsroot fs = { .ops = &host_ops };
  struct sr_shell *sh = NULL, *relayed = NULL;
  char *late;
  struct exec_call x;
  char id[64];
  uint64_t one = 1;
  int cancel_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  uint64_t started;

  snprintf (id, sizeof id, "unit-%ld", (long) getpid ());
  if (sr_shell_start (host_exec, NULL, &fs, id, 4096, false, &sh, NULL) < 0)
    {
      printf ("1..0 # SKIP bash could not start on a terminal here\n");
      return 0;
    }
  ok (sr_shell_sees_input (sh), "a shell on a terminal of its own can be seen waiting");
  ok (!sr_shell_waits_input (sh), "a shell at its prompt is not waiting for input");

  exec_start (&x, sh, "sleep 0.5; read a; read b; echo \"$a-$b\"", -1);
  ok (!seen_waiting (sh, 300), "a command that sleeps is not waiting for input");
  ok (seen_waiting (sh, 5000), "bash's builtin read of the terminal is seen waiting");
  sr_shell_write (sh, "one\n", 4, &(enum sr_shell_state){ 0 }, NULL);
  ok (seen_waiting (sh, 5000), "typed a line, it waits for the next");
  sr_shell_write (sh, "two\n", 4, &(enum sr_shell_state){ 0 }, NULL);
  pthread_join (x.thread, NULL);
  is_str (x.out.data, "one-two\n", "and gets both lines as typed");
  ok (!sr_shell_waits_input (sh), "an ended command is not waiting, bash at its prompt reads");
  sr_shell_output_done (&x.out);

  exec_start (&x, sh, "cat", -1);
  ok (seen_waiting (sh, 5000), "a program reading the terminal is seen waiting");
  sr_shell_write (sh, "open line", 9, &(enum sr_shell_state){ 0 }, NULL);
  sr_shell_write_eof (sh, &(enum sr_shell_state){ 0 }, NULL);
  pthread_join (x.thread, NULL);
  is_str (x.out.data, "open line", "eof after a line left open gives it, then ends the input");
  is_int (x.out.exit_code, 0, "and the program ends as at the end of its input");
  sr_shell_output_done (&x.out);

  exec_start (&x, sh, "sh -c 'read x'", cancel_fd);
  ok (seen_waiting (sh, 5000), "a program waiting for input ...");
  started = sr_now_ns ();
  (void) !write (cancel_fd, &one, sizeof one);
  pthread_join (x.thread, NULL);
  ok (sr_now_ns () - started < 3000000000ull && x.out.finished && !x.out.timed_out,
      "... is interrupted when its exec is cancelled, not timed out");
  is_int (sr_shell_state (sh), SR_SHELL_READY, "and the shell is ready for the next command");
  sr_shell_output_done (&x.out);

  (void) !read (cancel_fd, &one, sizeof one);
  exec_start (&x, sh, "sh -c 'trap \"\" INT; read x'", cancel_fd);
  ok (seen_waiting (sh, 5000), "a program that ignores ^C, waiting for input ...");
  started = sr_now_ns ();
  (void) !write (cancel_fd, &one, sizeof one);
  pthread_join (x.thread, NULL);
  ok (sr_now_ns () - started < 4500000000ull && x.out.finished,
      "... is killed when its exec is cancelled, after the ^C's grace");
  is_int (sr_shell_state (sh), SR_SHELL_READY, "and the shell is ready for the next command");
  sr_shell_output_done (&x.out);
  is_int (own_after_prompt_interrupts (sh, 20), 20,
          "a ^C at the prompt is neither the next command's output nor its end");
  sr_shell_stop_clean (sh);

  snprintf (id, sizeof id, "unit-%ld-relayed", (long) getpid ());
  relay_release = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (sr_shell_start (host_exec, &relayed, &fs, id, 4096, true, &relayed, NULL) == 0)
    {
      ok (!sr_shell_sees_input (relayed), "a shell on a relayed terminal cannot be seen waiting");
      exec_start (&x, relayed, "read a; echo \"$a\"", -1);
      ok (!seen_waiting (relayed, 1000), "nor is its command that reads");
      sr_shell_write (relayed, "x\n", 2, &(enum sr_shell_state){ 0 }, NULL);
      pthread_join (x.thread, NULL);
      sr_shell_output_done (&x.out);
      is_int (own_after_prompt_interrupts (relayed, 20), 20,
              "nor on a relayed terminal");
      late = NULL;
      for (int try = 0; try < 5 && late == NULL; try++)
        late = interrupted_late_prompt (relayed);
      if (late == NULL)
        ok (true, "a relay slower than the second ^C # SKIP bash printed no prompt for the "
            "second ^C in 5 tries");
      else
        is_str (late, "[\n] 130, then [own\n] 0",
                "a relay slower than the second ^C: bash's prompt after it is left out");
      free (late);
      sr_shell_stop_clean (relayed);
    }
  close (cancel_fd);
  if (relay_release >= 0)
    close (relay_release);
  return done_testing ();
}
