/* Drives the Docker Engine client for tests/integration/docker.sh.
 *
 *   docker-driver [OPTIONS] ping           "ok API-VERSION", or the error
 *   docker-driver [OPTIONS] image NAME     "present", or the error
 *   docker-driver [OPTIONS] run CMD        one container for `sh -c CMD`; prints
 *                                          "<status> <exit_code> <signal> <ms>" and
 *                                          writes stdout and stderr to --out/--err
 *   docker-driver [OPTIONS] session CMD... holds a container, runs each `sh -c CMD`
 *                                          in it and prints "container ID", then per
 *                                          command "<status> <code> <stdout, | for newline>";
 *                                          "timeout:CMD" runs CMD with a 1 s timeout;
 *                                          "@stop", "@start", "@restart", "@inspect",
 *                                          "@stats" and "@logs:TAIL:MAX" act on the
 *                                          container instead (engine-manage.c) and
 *                                          print one line each (see lifecycle)
 *   docker-driver [OPTIONS] hold           holds a container, prints its id, and
 *                                          waits to be killed (an orphan maker)
 *   docker-driver [OPTIONS] reap           "removed N"
 *
 * Options: --image NAME (else $DOCKER_IMAGE), --timeout MS, --cancel-after MS
 * (a timerfd as the cancel fd), --max-output N, --memory BYTES, --pids N,
 * --user U, --seccomp FILE (a profile's JSON text), --label KEY=VALUE,
 * --writable-root, --bind SRC:DST[:ro], --out FILE, --err FILE.  Every
 * container gets a read-only root (unless --writable-root), tmpfs /tmp and
 * /work, and the rest of the policy from the client's defaults.  */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "docker/engine.h"

#define MAX_LABELS 8
#define MAX_BINDS 4

static int
fail (const char *what, sr_error_t *err)
{
  printf ("failed %s: %s\n", what, (*err)->msg);
  sr_error_free (err);
  return 1;
}

static void
write_to (const char *path, const struct sr_captured *c)
{
  FILE *f;

  if (path == NULL)
    return;
  f = fopen (path, "w");
  if (f == NULL)
    {
      perror (path);
      exit (2);
    }
  fwrite (c->data, 1, c->len, f);
  fclose (f);
}

static int
cancel_timer (uint64_t ms)
{
  struct itimerspec its = { 0 };
  int fd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC);

  if (fd < 0)
    return -1;
  its.it_value.tv_sec = (time_t) (ms / 1000);
  its.it_value.tv_nsec = (long) (ms % 1000) * 1000000;
  timerfd_settime (fd, 0, &its, NULL);
  return fd;
}

/* One "@ACTION" line of a session: what the lifecycle calls report, a
 * line each.  */
static void
lifecycle (struct sr_docker_container *c, const char *line)
{
  sr_error_t err = NULL;
  int r = 0;

  if (strcmp (line, "@stop") == 0)
    r = sr_docker_container_stop (c, &err);
  else if (strcmp (line, "@start") == 0)
    r = sr_docker_container_start (c, &err);
  else if (strcmp (line, "@restart") == 0)
    r = sr_docker_container_restart (c, &err);
  else if (strcmp (line, "@inspect") == 0)
    {
      struct sr_docker_inspect i;

      if ((r = sr_docker_container_inspect (c, &i, &err)) == 0)
        {
          printf ("inspect %s %d %s %s %" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n", i.state,
                  i.running, i.image, strcmp (i.id, sr_docker_container_id (c)) == 0 ? "id" : "?",
                  i.memory, i.nano_cpus, i.pids_limit, *i.created ? "created" : "-");
          sr_docker_inspect_done (&i);
        }
    }
  else if (strcmp (line, "@stats") == 0)
    {
      struct sr_docker_stats st;

      if ((r = sr_docker_container_stats (c, &st, &err)) == 0)
        printf ("stats %s %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
                st.memory_usage > 0 ? "memory" : "none", st.memory_limit, st.pids,
                st.pids_limit);
    }
  else if (strncmp (line, "@logs:", 6) == 0)
    {
      unsigned tail = (unsigned) strtoul (line + 6, NULL, 10);
      const char *max_s = strchr (line + 6, ':');
      struct sr_captured o, e;

      if ((r = sr_docker_container_logs (c, tail, max_s ? strtoul (max_s + 1, NULL, 10) : 1024,
                                         &o, &e, &err)) == 0)
        {
          /* What was kept of each stream, before a truncation marker.  */
          o.data[sr_captured_output_len (&o)] = '\0';
          e.data[sr_captured_output_len (&e)] = '\0';
          for (char *p = o.data; *p; p++)
            *p = *p == '\n' ? '|' : *p;
          for (char *p = e.data; *p; p++)
            *p = *p == '\n' ? '|' : *p;
          printf ("logs out=%s err=%s%s\n", o.data, e.data,
                  o.truncated || e.truncated ? " truncated" : "");
          sr_captured_done (&o);
          sr_captured_done (&e);
        }
    }
  else
    r = sr_error_set (&err, EINVAL, "no such action");
  if (r < 0)
    {
      printf ("failed %s\n", err->msg);
      sr_error_free (&err);
    }
  else if (strcmp (line, "@stop") == 0 || strcmp (line, "@start") == 0
           || strcmp (line, "@restart") == 0)
    printf ("%s ok %s\n", line + 1, sr_docker_container_alive (c) ? "running" : "stopped");
}

int
main (int argc, char **argv)
{
  struct sr_docker_config cfg = { 0 };
  struct sr_docker_tmpfs tmpfs[] = {
    { .path = "/tmp", .size = SR_DEFAULT_TMP_SIZE },
    { .path = SR_SCRATCH_DIR, .size = SR_DEFAULT_SCRATCH_SIZE, .exec = true },
  };
  struct sr_docker_label labels[MAX_LABELS];
  struct sr_docker_bind binds[MAX_BINDS];
  struct sr_run_options opts = { .stdin_fd = -1, .cancel_fd = -1 };
  const char *out_path = NULL, *err_path = NULL, *cmd;
  _cleanup_free_ char *seccomp = NULL;
  _cleanup_strv_ char **owned = NULL; /* the option strings we cut up */
  struct sr_docker *d = NULL;
  sr_error_t err = NULL;
  uint64_t cancel_after = 0;
  int i, rc = 0;

  cfg.image = getenv ("DOCKER_IMAGE");
  cfg.readonly_root = true;
  cfg.tmpfs = tmpfs;
  cfg.n_tmpfs = SR_ARRAY_SIZE (tmpfs);
  cfg.labels = labels;
  cfg.binds = binds;
  cfg.pids_limit = SR_DEFAULT_PIDS;
  for (i = 1; i < argc && strncmp (argv[i], "--", 2) == 0; i++)
    {
      const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

      if (strcmp (o, "--writable-root") == 0)
        {
          cfg.readonly_root = false;
          continue;
        }
      if (v == NULL)
        {
          fprintf (stderr, "docker-driver: %s needs a value\n", o);
          return 2;
        }
      i++;
      if (strcmp (o, "--image") == 0)
        cfg.image = v;
      else if (strcmp (o, "--timeout") == 0)
        opts.timeout_ms = strtoull (v, NULL, 10);
      else if (strcmp (o, "--cancel-after") == 0)
        cancel_after = strtoull (v, NULL, 10);
      else if (strcmp (o, "--max-output") == 0)
        opts.max_output = strtoull (v, NULL, 10);
      else if (strcmp (o, "--memory") == 0)
        cfg.memory = strtoull (v, NULL, 10);
      else if (strcmp (o, "--pids") == 0)
        cfg.pids_limit = (uint32_t) strtoul (v, NULL, 10);
      else if (strcmp (o, "--user") == 0)
        cfg.user = v;
      else if (strcmp (o, "--out") == 0)
        out_path = v;
      else if (strcmp (o, "--err") == 0)
        err_path = v;
      else if (strcmp (o, "--seccomp") == 0)
        {
          if (sr_read_file (v, &seccomp, NULL, &err) < 0)
            return fail ("--seccomp", &err);
          cfg.seccomp_json = seccomp;
        }
      else if (strcmp (o, "--label") == 0 && cfg.n_labels < MAX_LABELS && strchr (v, '='))
        {
          char *kv, *eq;

          sr_strv_push (&owned, v);
          kv = owned[sr_strv_length (owned) - 1];
          eq = strchr (kv, '=');

          *eq = '\0';
          labels[cfg.n_labels++] = (struct sr_docker_label){ kv, eq + 1 };
        }
      else if (strcmp (o, "--bind") == 0 && cfg.n_binds < MAX_BINDS && strchr (v, ':'))
        {
          char *s, *c1, *c2;

          sr_strv_push (&owned, v);
          s = owned[sr_strv_length (owned) - 1];
          c1 = strchr (s, ':');
          *c1++ = '\0';
          c2 = strchr (c1, ':');
          if (c2)
            *c2++ = '\0';
          binds[cfg.n_binds++] = (struct sr_docker_bind){ s, c1, c2 && strcmp (c2, "ro") == 0 };
        }
      else
        {
          fprintf (stderr, "docker-driver: unknown option %s\n", o);
          return 2;
        }
    }
  if (i >= argc)
    {
      fprintf (stderr, "usage: docker-driver [OPTIONS] ping|image|run|session|hold|reap ...\n");
      return 2;
    }
  cmd = argv[i++];
  if (sr_docker_open (NULL, &d, &err) < 0)
    return fail ("open", &err);

  if (strcmp (cmd, "ping") == 0)
    printf ("ok %s\n", sr_docker_api_version (d));
  else if (strcmp (cmd, "image") == 0 && i < argc)
    {
      if (sr_docker_image_exists (d, argv[i], NULL, &err) < 0)
        rc = fail ("image", &err);
      else
        printf ("present\n");
    }
  else if (strcmp (cmd, "reap") == 0)
    {
      unsigned n = 0;

      if (sr_docker_reap_orphans (d, &n, &err) < 0)
        rc = fail ("reap", &err);
      else
        printf ("removed %u\n", n);
    }
  else if (strcmp (cmd, "run") == 0 && i < argc)
    {
      char *sh_argv[] = { (char *) "sh", (char *) "-c", argv[i], NULL };
      struct sr_exec_spec spec = { .argv = sh_argv };
      struct sr_run_result res;

      if (cancel_after)
        opts.cancel_fd = cancel_timer (cancel_after);
      if (sr_docker_run (d, &cfg, &spec, &opts, &res, &err) < 0)
        {
          printf ("exit %d\n", res.exit_code);
          rc = fail ("run", &err);
        }
      else
        printf ("%s %d %d %llu\n", sr_run_status_name (res.status), res.exit_code, res.signal,
                (unsigned long long) (res.duration_ns / 1000000));
      write_to (out_path, &res.out);
      write_to (err_path, &res.err);
      sr_run_result_done (&res);
    }
  else if (strcmp (cmd, "session") == 0 || strcmp (cmd, "hold") == 0)
    {
      struct sr_docker_container *c = NULL;

      if (sr_docker_hold (d, &cfg, &c, &err) < 0)
        {
          rc = fail ("hold", &err);
          goto out;
        }
      printf ("container %s\n", sr_docker_container_id (c));
      fflush (stdout);
      if (strcmp (cmd, "hold") == 0)
        for (;;)
          pause ();
      for (; i < argc; i++)
        {
          const char *line = argv[i];
          struct sr_run_options o = opts;
          char *sh_argv[] = { (char *) "sh", (char *) "-c", NULL, NULL };
          struct sr_exec_spec spec = { .argv = sh_argv };
          struct sr_run_result res;

          if (line[0] == '@')
            {
              lifecycle (c, line);
              fflush (stdout);
              continue;
            }
          if (strncmp (line, "timeout:", 8) == 0)
            {
              o.timeout_ms = 1000;
              line += 8;
            }
          sh_argv[2] = (char *) line;
          if (sr_docker_exec (c, &spec, &o, &res, &err) < 0)
            {
              printf ("failed %s\n", err->msg);
              sr_error_free (&err);
            }
          else
            {
              for (char *p = res.out.data; *p; p++)
                if (*p == '\n')
                  *p = '|';
              printf ("%s %d %s\n", sr_run_status_name (res.status),
                      res.signal ? 128 + res.signal : res.exit_code, res.out.data);
            }
          fflush (stdout);
          sr_run_result_done (&res);
        }
      sr_docker_destroy (c);
    }
  else
    {
      fprintf (stderr, "docker-driver: unknown command %s\n", cmd);
      rc = 2;
    }
out:
  sr_docker_close (d);
  return rc;
}
