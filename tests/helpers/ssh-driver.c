/* Drives the SSH backend (sandbox/ssh.c) for tests/integration/ssh.sh,
 * through the same ops table, file tools and persistent shells the
 * server uses: connects to machine NAME (the configuration is
 * $SANDBOX_CONFIG's), runs each STEP, prints one line per step, and
 * destroys the connection at the end ("destroyed").
 *
 *   cwd:DIR  env:K=V       cwd and a variable of the execs that follow
 *   exec:CMD               sh -c CMD: "exec STATUS EXIT OUT ERR"
 *   timeout:MS:CMD         the same with a timeout
 *   write:PATH:TEXT        sr_files_write: "write ok"
 *   writebig:PATH:N        N bytes written, read back and compared
 *   read:PATH              the fs read primitive: "read LEN TEXT"
 *   walk:PATH              the walk primitive: "walk REL SIZE" per file
 *   search:DIR:RE          sr_files_search: "match PATH LINE TEXT"
 *   shell:CMD              a persistent shell (started on first use):
 *                          "shell STATE EXIT OUTPUT"
 *   shellbg:CMD            the same, not waiting: "shellbg STATE"
 *   ctrlc                  ^C to the shell, then waits for its prompt:
 *                          "ctrlc STATE EXIT MS"
 *   pid  alive  run        the master's pid; alive; run_code's refusal
 *   killmaster             SIGKILL to the master (a lost connection)
 * Newlines in outputs print as '|'.  A failure prints "error CODE MSG".  */
#include <config.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "sandbox/backend.h"
#include "sandbox/files.h"
#include "sandbox/shell.h"

static const struct sr_backend *be;
static struct sr_backend_box *box;

static void
flat (char *s)
{
  for (; s && *s; s++)
    if (*s == '\n' || *s == '\r')
      *s = '|';
}

static int
fail (sr_error_t *err)
{
  printf ("error %s %s\n", sr_error_code (*err) ? sr_error_code (*err) : "-", (*err)->msg);
  sr_error_free (err);
  return -1;
}

/* A shell's way to the box, as a session's (sr_shell_exec_fn).  */
static int
box_exec (void *ctx, const struct sr_exec_spec *spec, const struct sr_run_options *opts,
          struct sr_run_result *res, sr_error_t *err)
{
  (void) ctx;
  return be->exec (box, spec, opts, res, err);
}

static void
exec_step (const char *cwd, char **env, const char *cmd, uint64_t timeout_ms)
{
  char *argv[] = { (char *) "sh", (char *) "-c", (char *) cmd, NULL };
  struct sr_exec_spec spec = { .argv = argv, .env = env, .cwd = cwd };
  struct sr_run_options opts = { .timeout_ms = timeout_ms, .stdin_fd = -1, .cancel_fd = -1 };
  struct sr_run_result res;
  sr_error_t err = NULL;
  uint64_t t0 = sr_now_ns ();

  if (be->exec (box, &spec, &opts, &res, &err) < 0)
    fail (&err);
  else
    {
      flat (res.out.data);
      flat (res.err.data);
      printf ("exec %s %d %s %s %llu\n", sr_run_status_name (res.status), res.exit_code,
              res.out.data, res.err.data, (unsigned long long) ((sr_now_ns () - t0) / 1000000));
    }
  sr_run_result_done (&res);
}

static int
visit (void *userdata, const struct sr_fs_entry *e)
{
  (void) userdata;
  printf ("walk %s %llu\n", e->rel, (unsigned long long) e->size);
  return 0;
}

int
main (int argc, char **argv)
{
  struct sr_config cfg = { 0 };
  sr_error_t err = NULL;
  void *state = NULL;
  struct sr_fsroot fs;
  struct sr_shell *sh = NULL;
  _cleanup_strv_ char **env = NULL;
  const char *cwd = NULL;
  int rc = 0;

  if (argc < 2)
    {
      fprintf (stderr, "usage: SANDBOX_CONFIG=FILE ssh-driver NAME STEP...\n");
      return 2;
    }
  setvbuf (stdout, NULL, _IOLBF, 0);
  sr_backend_register (&sr_ssh_backend);
  be = sr_backend_find (SR_BACKEND_SSH);
  env = sr_xcalloc (1, sizeof *env);
  if (sr_config_load (&cfg, NULL, NULL, &err) < 0
      || be->open (&cfg, NULL, SR_BACKEND_SESSIONS, &state, &err) < 0
      || be->create (state, "driver", argv[1], NULL, &box, &fs, &err) < 0)
    {
      fail (&err);
      if (state)
        be->close (state);
      sr_config_done (&cfg);
      return 1;
    }
  printf ("connected %s\n", be->image (box));
  for (int i = 2; i < argc; i++)
    {
      char *step = argv[i], *arg = strchr (step, ':');
      size_t op_len = arg ? (size_t) (arg - step) : strlen (step);

      arg = arg ? arg + 1 : step + op_len;
#define IS(name) (op_len == strlen (name) && strncmp (step, name, op_len) == 0)
      if (IS ("cwd"))
        cwd = arg;
      else if (IS ("env"))
        sr_strv_push (&env, arg);
      else if (IS ("exec"))
        exec_step (cwd, env, arg, 0);
      else if (IS ("timeout"))
        {
          char *cmd;
          unsigned long long ms = strtoull (arg, &cmd, 10);

          exec_step (cwd, env, cmd + 1, ms);
        }
      else if (IS ("write"))
        {
          char *text = strchr (arg, ':');

          *text++ = '\0';
          if (sr_files_write (&fs, arg, text, strlen (text), NULL, &err) < 0)
            fail (&err);
          else
            printf ("write ok\n");
        }
      else if (IS ("writebig"))
        {
          char *n_s = strchr (arg, ':'), *data, *back = NULL;
          size_t n, len = 0;

          *n_s++ = '\0';
          n = strtoull (n_s, NULL, 10);
          data = sr_xmalloc (n);
          for (size_t k = 0; k < n; k++)
            data[k] = (char) ((k * 7 + k / 251) & 0xff);
          if (fs.ops->write (fs.ctx, arg, 0, data, n, true, &err) < 0
              || fs.ops->read (fs.ctx, arg, 0, n, &back, &len, &err) < 0)
            fail (&err);
          else
            printf ("writebig %s %zu\n", len == n && memcmp (data, back, n) == 0 ? "ok" : "differs",
                    len);
          free (data);
          free (back);
        }
      else if (IS ("read"))
        {
          char *data = NULL;
          size_t len = 0;

          if (fs.ops->read (fs.ctx, arg, 0, 1 << 20, &data, &len, &err) < 0)
            fail (&err);
          else
            {
              flat (data);
              printf ("read %zu %s\n", len, data);
            }
          free (data);
        }
      else if (IS ("walk"))
        {
          bool truncated = false;

          if (fs.ops->walk (fs.ctx, arg, 0, 8, -1, visit, NULL, &truncated, &err) < 0)
            fail (&err);
        }
      else if (IS ("search"))
        {
          char *re = strchr (arg, ':');
          struct sr_search_limits lim = { .max_size = 1 << 20, .max_matches = 100,
                                          .max_bytes = 1 << 24, .cancel_fd = -1 };
          struct sr_search_result res = { 0 };

          *re++ = '\0';
          if (sr_files_search (&fs, re, NULL, arg, &lim, &res, &err) < 0)
            fail (&err);
          for (size_t k = 0; k < res.n; k++)
            printf ("match %s %llu %s\n", res.v[k].path, (unsigned long long) res.v[k].line,
                    res.v[k].text);
          sr_file_matches_free (res.v, res.n);
        }
      else if (IS ("shell") || IS ("shellbg"))
        {
          struct sr_shell_output out;
          bool wait = IS ("shell");

          if (sh == NULL
              && sr_shell_start (box_exec, NULL, &fs, "drv", 65536, be->shell_one_stream, &sh,
                                 &err) < 0)
            {
              fail (&err);
              continue;
            }
          if (sr_shell_exec (sh, arg, wait, 10000, -1, NULL, NULL, &out, &err) < 0)
            {
              fail (&err);
              continue;
            }
          flat (out.data);
          if (wait)
            printf ("shell %s %d %s\n", sr_shell_state_name (out.state), out.exit_code,
                    out.data);
          else
            printf ("shellbg %s\n", sr_shell_state_name (out.state));
          sr_shell_output_done (&out);
        }
      else if (IS ("ctrlc") && sh)
        {
          struct sr_shell_output out = { 0 };
          enum sr_shell_state after;
          uint64_t t0 = sr_now_ns ();

          if (sr_shell_write (sh, "\003", 1, &after, &err) < 0)
            {
              fail (&err);
              continue;
            }
          while (sr_shell_state (sh) == SR_SHELL_WAITING && sr_now_ns () - t0 < 5000000000ull)
            usleep (20000);
          sr_shell_read (sh, &out);
          printf ("ctrlc %s %d %llu\n", sr_shell_state_name (out.state), out.exit_code,
                  (unsigned long long) ((sr_now_ns () - t0) / 1000000));
          sr_shell_output_done (&out);
        }
      else if (IS ("pid"))
        printf ("pid %ld\n", (long) be->pid (box));
      else if (IS ("killmaster"))
        {
          kill (be->pid (box), SIGKILL);
          usleep (200000);
        }
      else if (IS ("alive"))
        printf ("alive %s\n", be->alive (box) ? "yes" : "no");
      else if (IS ("run"))
        {
          struct sr_backend_run *run = NULL;

          if (be->run_begin (state, &cfg.languages[0], &run, &err) < 0)
            fail (&err);
        }
      else
        {
          fprintf (stderr, "ssh-driver: unknown step '%s'\n", step);
          rc = 2;
          break;
        }
#undef IS
    }
  sr_shell_stop (sh);
  be->destroy (box);
  be->close (state);
  sr_config_done (&cfg);
  printf ("destroyed\n");
  return rc;
}
