#include <config.h>

#include <stdlib.h>
#include <sys/stat.h>
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

/* SANDBOX_CONFIG names the one file: read instead of the system and user
 * files; a missing one is an error that names it.  */
static void
test_named_file (void)
{
  _cleanup_free_ char *named = write_conf ("named.conf", "memory = 96M\n");
  _cleanup_free_ char *xdg = sr_xasprintf ("%s/xdg", dir);
  _cleanup_free_ char *xdg_dir = sr_xasprintf ("%s/xdg/sandbox-runner", dir);
  _cleanup_free_ char *user = NULL, *missing = sr_xasprintf ("%s/missing.conf", dir);
  struct sr_config cfg;
  sr_error_t err = NULL;

  mkdir (xdg, 0700);
  mkdir (xdg_dir, 0700);
  user = write_conf ("xdg/sandbox-runner/sandbox-runner.conf", "pids = 3\nmemory = 1G\n");
  setenv ("XDG_CONFIG_HOME", xdg, 1);
  ok (sr_config_load (&cfg, NULL, NULL, &err) == 0 && cfg.pids == 3,
      "without SANDBOX_CONFIG the user file is read");
  sr_error_free (&err);
  sr_config_done (&cfg);

  setenv (SR_CONFIG_ENV, named, 1);
  ok (sr_config_load (&cfg, NULL, NULL, &err) == 0, "the named file loads");
  is_int (cfg.memory, 96 << 20, "its value applies");
  is_int (cfg.pids, SR_DEFAULT_PIDS, "the user file is not read");
  {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);

    sr_config_print (&cfg, f, false);
    fclose (f);
    ok (strstr (buf, "config file (") && strstr (buf, "named.conf:1"),
        "config show names the named file and line");
    free (buf);
  }
  sr_config_done (&cfg);

  setenv (SR_CONFIG_ENV, missing, 1);
  ok (sr_config_load (&cfg, NULL, NULL, &err) < 0 && strstr (err->msg, missing)
      && strstr (err->msg, "No such file"), "a missing named file is an error naming it");
  sr_error_free (&err);
  sr_config_done (&cfg);
  unsetenv (SR_CONFIG_ENV);
  unsetenv ("XDG_CONFIG_HOME");
  unlink (named);
  unlink (user);
  rmdir (xdg_dir);
  rmdir (xdg);
}

/* default < files < environment < flags, the checks on the final values:
 * SANDBOX_TIMEOUT=50 with --timeout 5 is fine.  */
static void
test_flag_after_env (void)
{
  struct sr_config cfg;
  sr_error_t err = NULL;

  setenv ("SANDBOX_TIMEOUT", "50", 1);
  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) < 0
      && strstr (err->msg, "at most max_timeout"), "a timeout over max_timeout is refused");
  sr_error_free (&err);
  sr_config_done (&cfg);
  ok (sr_config_read (&cfg, "/nonexistent", "/nonexistent", &err) == 0,
      "reading the layers does not check yet");
  is_int (cfg.timeout_ms, 50000, "the environment's timeout");
  ok (sr_config_set (&cfg, "timeout", "5", SR_ORIGIN_FLAG, "--timeout", &err) == 0
      && sr_config_check (&cfg, &err) == 0, "a flag under the ceiling wins and checks");
  sr_error_free (&err);
  sr_config_done (&cfg);

  setenv ("SANDBOX_MAX_TIMEOUT", "60", 1);
  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) == 0
      && cfg.timeout_ms == 50000, "the ceiling of the environment counts too");
  sr_error_free (&err);
  sr_config_done (&cfg);
  unsetenv ("SANDBOX_MAX_TIMEOUT");
  unsetenv ("SANDBOX_TIMEOUT");
}

static void
test_docker_image (void)
{
  _cleanup_free_ char *path = write_conf ("docker.conf", "language.cpp.docker_image = gcc:13\n"
                                          "language.sh.image = python\n"
                                          "language.sh.source = main.sh\n"
                                          "language.sh.run = sh /scratch/main.sh\n");
  _cleanup_free_ char *var = sr_language_docker_variable ("c++");
  struct sr_config cfg;
  sr_error_t err = NULL;

  is_str (var, "SANDBOX_DOCKER_IMAGE_C__", "the variable of a language name");
  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) == 0, "defaults load");
  is_str (sr_config_language (&cfg, "python")->docker_image, "python:3.12-slim",
          "python's built-in Docker image");
  is_str (sr_config_language (&cfg, "cpp")->docker_image, "gcc:14", "cpp's built-in Docker image");
  sr_config_done (&cfg);

  setenv ("SANDBOX_DOCKER_IMAGE_PYTHON", "python:3.13", 1);
  setenv ("SANDBOX_LANGUAGE_SH_DOCKER_IMAGE", "busybox", 1);
  ok (sr_config_load (&cfg, path, "/nonexistent", &err) == 0, "docker_image in a file loads");
  is_str (sr_config_language (&cfg, "cpp")->docker_image, "gcc:13", "the file sets it");
  is_str (sr_config_language (&cfg, "python")->docker_image, "python:3.13",
          "SANDBOX_DOCKER_IMAGE_<NAME> sets it");
  is_str (sr_config_language (&cfg, "sh")->docker_image, "busybox",
          "SANDBOX_LANGUAGE_<NAME>_DOCKER_IMAGE sets it, not the image");
  is_str (sr_config_language (&cfg, "sh")->image, "python", "the image stays");
  {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream (&buf, &len);

    sr_config_print (&cfg, f, false);
    fclose (f);
    ok (strstr (buf, "language.cpp.docker_image = \"gcc:13\"") != NULL,
        "config show shows it");
    free (buf);
  }
  sr_error_free (&err);
  sr_config_done (&cfg);
  unsetenv ("SANDBOX_DOCKER_IMAGE_PYTHON");
  unsetenv ("SANDBOX_LANGUAGE_SH_DOCKER_IMAGE");
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
  expect_error ("field.conf", "language.python.docker = x\n", "docker_image)");
  test_named_file ();
  test_flag_after_env ();
  test_docker_image ();

  unlink (sys);
  unlink (user);
  rmdir (dir);
  return done_testing ();
}
