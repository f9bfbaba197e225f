/* Drives the runtime's held containers for tests/integration/session.sh:
 * creates one container on ROOTFS, holds it, then runs each argument as a
 * `sh -c` command inside it and prints one line per command:
 *   <status> <exit_code> <stdout with newlines as |>
 * so the shell test can check persistence and isolation across commands,
 * then "pids MECHANISM", what limited their pids (cgroup1, cgroup2,
 * rlimit).  An argument "timeout:CMD" runs CMD with a 500 ms timeout.  */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "common/defaults.h"
#include "common/util.h"
#include "runtime/container.h"

int
main (int argc, char **argv)
{
  struct sr_container_config cfg = { 0 };
  struct sr_container *c = NULL;
  sr_error_t err = NULL;
  const char *rootfs = getenv ("ROOTFS");
  enum sr_limit_mechanism pids_by = SR_LIMIT_NONE;

  if (rootfs == NULL || argc < 2)
    {
      fprintf (stderr, "usage: ROOTFS=DIR session-driver CMD...\n");
      return 2;
    }
  cfg.fs.rootfs = rootfs;
  cfg.fs.tmp_size = SR_DEFAULT_TMP_SIZE;
  cfg.fs.shm_size = SR_DEFAULT_DEV_SHM_SIZE;
  cfg.fs.scratch_size = SR_DEFAULT_SCRATCH_SIZE;
  cfg.limits.pids = 32;
  if (sr_container_create (&cfg, &c, &err) < 0 || sr_container_hold (c, &err) < 0)
    {
      fprintf (stderr, "session-driver: %s\n", err->msg);
      sr_container_destroy (c);
      return 1;
    }
  printf ("init %ld\n", (long) sr_container_pid (c));
  fflush (stdout);
  for (int i = 1; i < argc; i++)
    {
      const char *cmd = argv[i];
      struct sr_run_options opts = { .stdin_fd = -1, .cancel_fd = -1 };
      struct sr_run_result res;
      char *sh_argv[] = { (char *) "sh", (char *) "-c", NULL, NULL };

      if (strncmp (cmd, "timeout:", 8) == 0)
        {
          opts.timeout_ms = 500;
          cmd += 8;
        }
      sh_argv[2] = (char *) cmd;
      {
        struct sr_exec_spec spec = { .argv = sh_argv };

        if (sr_container_exec (c, &spec, &opts, &res, &err) < 0)
          {
            printf ("failed %s\n", err->msg);
            sr_error_free (&err);
          }
        else
          {
            pids_by = res.limits.pids;
            for (char *p = res.out.data; *p; p++)
              if (*p == '\n')
                *p = '|';
            printf ("%s %d %s\n", sr_run_status_name (res.status),
                    res.signal ? 128 + res.signal : res.exit_code, res.out.data);
          }
      }
      fflush (stdout);
      sr_run_result_done (&res);
    }
  printf ("pids %s\n", sr_limit_mechanism_name (pids_by));
  sr_container_destroy (c);
  return 0;
}
