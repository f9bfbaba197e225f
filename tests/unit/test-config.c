#include <config.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/defaults.h"
#include "common/util.h"
#include "tap.h"

static char dir[] = "/tmp/sr-test-config-XXXXXX";

static char *
write_conf (const char *name, const char *content)
{
  char *path = sr_xasprintf ("%s/%s", dir, name);
  FILE *f = fopen (path, "w");

  fputs (content, f);
  fclose (f);
  return path;
}

static void
expect_error (const char *name, const char *content, const char *want)
{
  _cleanup_free_ char *path = write_conf (name, content);
  struct sr_config cfg;
  sr_error_t err = NULL;

  if (ok (sr_config_load (&cfg, path, "/nonexistent", &err) < 0, "%s is rejected", name))
    {
      if (!ok (strstr (err->msg, want) != NULL, "the message names the problem"))
        printf ("#   got: %s\n#   expected to contain: %s\n", err->msg, want);
      sr_error_free (&err);
    }
  sr_config_done (&cfg);
  unlink (path);
}

int
main (void)
{
  struct sr_config cfg;
  sr_error_t err = NULL;
  _cleanup_free_ char *sys = NULL, *user = NULL;

  if (mkdtemp (dir) == NULL)
    return 1;
  unsetenv ("SANDBOX_MEMORY");
  unsetenv ("SANDBOX_PIDS");
  unsetenv ("SANDBOX_TIMEOUT");

  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) == 0, "no files: defaults");
  is_int (cfg.memory, SR_DEFAULT_MEMORY, "default memory");
  is_int (cfg.timeout_ms, SR_DEFAULT_TIMEOUT_MS, "default timeout");
  ok (cfg.cpus == SR_DEFAULT_CPUS, "default cpus");
  sr_config_done (&cfg);

  sys = write_conf ("system.conf", "# system\nmemory = 128M\npids = 32\ntimeout = 5\n"
                                   "log_file = \"/var/log/sandbox runner.log\"\n");
  user = write_conf ("user.conf", "\n  pids=16  \n");
  setenv ("SANDBOX_TIMEOUT", "7.5", 1);
  ok (sr_config_load (&cfg, sys, user, &err) == 0, "layers load");
  is_int (cfg.memory, 128 << 20, "the system file overrides the default");
  is_int (cfg.pids, 16, "the user file overrides the system file");
  is_int (cfg.timeout_ms, 7500, "the environment overrides the files");
  is_str (cfg.log_file, "/var/log/sandbox runner.log", "quotes are stripped");
  ok (sr_config_set (&cfg, "pids", "8", SR_ORIGIN_FLAG, "--pids", &err) == 0, "a flag is set");
  is_int (cfg.pids, 8, "the flag overrides everything");
  {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);

    sr_config_print (&cfg, f, false);
    fclose (f);
    ok (strstr (buf, "memory") && strstr (buf, "system file (") && strstr (buf, "system.conf:2"),
        "config show names the file and line");
    ok (strstr (buf, "environment (SANDBOX_TIMEOUT)") != NULL, "and the variable");
    free (buf);
  }
  sr_config_done (&cfg);
  unsetenv ("SANDBOX_TIMEOUT");

  setenv ("SANDBOX_MEMORY", "lots", 1);
  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) < 0
      && strstr (err->msg, "SANDBOX_MEMORY") && strstr (err->msg, "'lots'"),
      "a bad environment value names the variable");
  sr_error_free (&err);
  sr_config_done (&cfg);
  unsetenv ("SANDBOX_MEMORY");

  expect_error ("unknown.conf", "memory = 1G\nfrobnicate = 3\n", "unknown.conf:2: unknown setting 'frobnicate'");
  expect_error ("badvalue.conf", "pids = many\n", "badvalue.conf:1: pids: 'many' is not a whole number");
  expect_error ("noeq.conf", "memory 1G\n", "noeq.conf:1: expected 'key = value'");
  expect_error ("badbool.conf", "strict_limits = maybe\n", "not true or false");
  expect_error ("ceiling.conf", "timeout = 40\n", "at most max_timeout");
  expect_error ("backend.conf", "backend = lxc\n", "neither native nor docker");
  expect_error ("output.conf", "max_output = 2G\n", "max_output 2147483648 must be from 1 byte to 16M");

  unlink (sys);
  unlink (user);
  rmdir (dir);
  return done_testing ();
}
