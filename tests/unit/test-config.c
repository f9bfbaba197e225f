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

/* A user setting of names loads: only an image says whether they exist.  */
static void
test_user_name (void)
{
  _cleanup_free_ char *path = write_conf ("username-ok.conf", "user = sandbox:users\n");
  struct sr_config cfg;
  sr_error_t err = NULL;

  if (!ok (sr_config_load (&cfg, path, "/nonexistent", &err) == 0,
           "user = NAME:GROUP loads (its syntax is all a load checks)"))
    printf ("#   %s\n", err->msg);
  else
    is_str (cfg.user, "sandbox:users", "and is kept as written");
  sr_error_free (&err);
  sr_config_done (&cfg);
  unlink (path);
}

/* ssh.NAME.FIELD: an entry per NAME, fields checked; a NAME without one
 * is not in the table (OpenSSH's Host alias).  */
static void
test_ssh (void)
{
  _cleanup_free_ char *path = write_conf ("ssh.conf",
                                          "ssh.web.host = web1.example.org\n"
                                          "ssh.web.port = 2222\n"
                                          "ssh.db_2.user = agent\n"
                                          "ssh.web.identity_file = /etc/key\n");
  const struct sr_ssh_target *t;
  struct sr_config cfg;
  sr_error_t err = NULL;

  ok (sr_config_load (&cfg, path, "/nonexistent", &err) == 0 && cfg.n_ssh_targets == 2,
      "ssh.NAME settings make one entry per NAME");
  t = sr_config_ssh_target (&cfg, "web");
  ok (t && strcmp (t->host, "web1.example.org") == 0 && t->port == 2222
      && strcmp (t->identity_file, "/etc/key") == 0 && *t->user == '\0',
      "an entry has the fields set, the others empty");
  t = sr_config_ssh_target (&cfg, "db_2");
  ok (t && strcmp (t->user, "agent") == 0 && *t->host == '\0' && t->port == 0,
      "a NAME with only a user connects to NAME itself");
  ok (sr_config_ssh_target (&cfg, "other") == NULL, "an unset NAME has no entry");
  ok (sr_ssh_name_valid ("Web-1_a") && !sr_ssh_name_valid ("-x") && !sr_ssh_name_valid ("a.b")
      && !sr_ssh_name_valid ("") && !sr_ssh_name_valid ("a b"),
      "names are checked identifiers");
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
  setenv ("SANDBOX_LANGUAGE_PYTHON_DATA_IMAGE", "registry.example/python-data:1", 1);
  ok (sr_config_load (&cfg, path, "/nonexistent", &err) == 0, "docker_image in a file loads");
  is_str (sr_config_language (&cfg, "python-data")->image, "registry.example/python-data:1",
          "SANDBOX_LANGUAGE_PYTHON_DATA_IMAGE sets python-data's image ('_' for '-')");
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
  unsetenv ("SANDBOX_LANGUAGE_PYTHON_DATA_IMAGE");
  unlink (path);
}

/* config show's text of cfg, the caller's to free.  */
static char *
show (const struct sr_config *cfg)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);

  sr_config_print (cfg, f, false);
  fclose (f);
  return buf;
}

/* mcp-code-sandbox's variables, as its users' client configurations
 * set them: each sets its setting, config show names it, and ours wins
 * over an alias of the same setting.  */
static void
test_env_aliases (void)
{
  static const char *const vars[] = {
    "SANDBOX_MEMORY_LIMIT",  "SANDBOX_CPU_LIMIT",        "SANDBOX_EXEC_TIMEOUT_S",
    "SANDBOX_SESSION_TTL_M", "SANDBOX_MAX_UPLOAD_BYTES", "SANDBOX_MAX_OUTPUT_BYTES",
    "SANDBOX_MAX_CODE_BYTES", "SANDBOX_HTTP_HOST",      "SANDBOX_HTTP_PORT",
    "SANDBOX_IMAGE",
  };
  static const char *const values[] = { "1g", "1.5", "60", "2.5", "52428800", "102400",
                                        "100k", "::1", "9000", "llm-sandbox:latest" };
  struct sr_config cfg;
  sr_error_t err = NULL;
  _cleanup_free_ char *text = NULL, *again = NULL;

  for (size_t i = 0; i < SR_ARRAY_SIZE (vars); i++)
    {
      setenv (vars[i], values[i], 1);
      ok (sr_config_variable_known (vars[i]), "%s is a variable we read", vars[i]);
    }
  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) == 0, "the aliases load");
  is_int (cfg.memory, 1ULL << 30, "SANDBOX_MEMORY_LIMIT=1g sets memory (lower-case unit)");
  ok (cfg.cpus == 1.5, "SANDBOX_CPU_LIMIT sets cpus");
  is_int (cfg.timeout_ms, 60000, "SANDBOX_EXEC_TIMEOUT_S sets timeout");
  is_int (cfg.max_timeout_ms, 60000, "and its ceiling, fixed as the original's was");
  is_int (cfg.session_idle_ms, 150000, "SANDBOX_SESSION_TTL_M is minutes of session idle");
  is_int (cfg.max_upload_size, 52428800, "SANDBOX_MAX_UPLOAD_BYTES sets max_upload_size");
  is_int (cfg.max_output, 102400, "SANDBOX_MAX_OUTPUT_BYTES sets max_output");
  is_int (cfg.max_code_size, 102400, "SANDBOX_MAX_CODE_BYTES sets max_code_size");
  is_str (cfg.listen, "[::1]:9000", "SANDBOX_HTTP_HOST and SANDBOX_HTTP_PORT make listen");
  is_str (cfg.session_image, "llm-sandbox:latest", "SANDBOX_IMAGE sets session_image");
  text = show (&cfg);
  ok (strstr (text, "environment (SANDBOX_MEMORY_LIMIT)")
        && strstr (text, "environment (SANDBOX_HTTP_HOST, SANDBOX_HTTP_PORT)")
        && strstr (text, "environment (SANDBOX_SESSION_TTL_M)"),
      "config show names the variable that set each");
  sr_config_done (&cfg);

  setenv ("SANDBOX_MEMORY", "2G", 1);
  setenv ("SANDBOX_LISTEN", "127.0.0.1:7000", 1);
  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) == 0, "ours and aliases load");
  is_int (cfg.memory, 2ULL << 30, "SANDBOX_MEMORY wins over SANDBOX_MEMORY_LIMIT");
  is_str (cfg.listen, "127.0.0.1:7000", "SANDBOX_LISTEN wins over the host and port");
  again = show (&cfg);
  ok (strstr (again, "(SANDBOX_MEMORY; SANDBOX_MEMORY_LIMIT ignored)")
        && strstr (again, "(SANDBOX_LISTEN; SANDBOX_HTTP_HOST, SANDBOX_HTTP_PORT ignored)"),
      "config show says which aliases ours overrode");
  sr_config_done (&cfg);
  unsetenv ("SANDBOX_MEMORY");
  unsetenv ("SANDBOX_LISTEN");

  setenv ("SANDBOX_SESSION_TTL_M", "soon", 1);
  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) < 0
        && strstr (err->msg, "SANDBOX_SESSION_TTL_M") && strstr (err->msg, "minutes"),
      "a bad alias value names the alias");
  sr_error_free (&err);
  sr_config_done (&cfg);
  for (size_t i = 0; i < SR_ARRAY_SIZE (vars); i++)
    unsetenv (vars[i]);
}

/* compat_tools: empty by default, mcp-code-sandbox, nothing else.  */
static void
test_compat_tools (void)
{
  struct sr_config cfg;
  sr_error_t err = NULL;

  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) == 0 && cfg.compat_tools == 0,
      "no compat tools by default");
  sr_config_done (&cfg);
  setenv ("SANDBOX_COMPAT_TOOLS", "mcp-code-sandbox", 1);
  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) == 0
        && cfg.compat_tools == SR_COMPAT_CODE_SANDBOX,
      "SANDBOX_COMPAT_TOOLS=mcp-code-sandbox");
  sr_config_done (&cfg);
  unsetenv ("SANDBOX_COMPAT_TOOLS");
  expect_error ("compat.conf", "compat_tools = e2b\n", "'e2b' is not empty or mcp-code-sandbox");
}

/* The table's pre-started interpreters, and preloads set by name.  */
static void
test_warm_start (void)
{
  _cleanup_free_ char *path = write_conf ("warm.conf", "language.python.warm_start =\n"
                                          "language.python-data.preload = json,decimal xml.dom\n");
  struct sr_config cfg;
  sr_error_t err = NULL;

  ok (sr_config_load (&cfg, path, "/nonexistent", &err) == 0, "warm_start and preload load");
  is_str (sr_config_language (&cfg, "python")->warm_start, "",
          "a file turns python's pre-started interpreters off");
  is_str (sr_config_language (&cfg, "python-data")->preload, "json,decimal xml.dom",
          "python-data's preloads are the configured ones");
  is_str (sr_config_language (&cfg, "python-data")->warm_start, "python",
          "and its interpreters still start ahead");
  is_str (sr_config_language (&cfg, "cpp")->warm_start, "", "a compiled language has none");
  sr_config_done (&cfg);
  ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) == 0, "the defaults load");
  is_str (sr_config_language (&cfg, "python")->warm_start, "python",
          "python starts its interpreters ahead by default");
  is_str (sr_config_language (&cfg, "python-data")->warm_start, "python",
          "python-data too");
  is_str (sr_config_language (&cfg, "python-data")->preload, "numpy, pandas, matplotlib",
          "python-data preloads its data stack by default");
  sr_config_done (&cfg);
  sr_error_free (&err);
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
  expect_error ("codedir.conf", "code_dir_size = 1M\n",
                "code_dir_size 1048576 is below what a request may bring: max_code_size plus "
                "max_code_files_size");
  expect_error ("username.conf", "user = al/ice\n", "user 'al/ice': expected root, USER or "
                "USER:GROUP");
  expect_error ("userrange.conf", "user = 70000\n", "an id below 65536");
  expect_error ("usergid.conf", "user = 1000:\n", "user '1000:'");
  expect_error ("field.conf", "language.python.docker = x\n",
                "docker_image, sources, compile_cpus, warm_start, preload)");
  expect_error ("compilecpus.conf", "language.cpp.compile_cpus = many\n",
                "language cpp: compile_cpus 'many' is not a number of CPUs");
  expect_error ("warmstart.conf", "language.ruby.warm_start = ruby\n",
                "warmstart.conf:1): warm_start 'ruby' is not a bootstrap");
  expect_error ("warmcompiled.conf", "language.cpp.warm_start = python\n",
                "warmcompiled.conf:1): warm_start needs a language without a compile");
  expect_error ("preload.conf", "language.python.preload = numpy, os.path, 3d\n",
                "preload.conf:1): preload '3d' is not a module name");
  expect_error ("preloaddot.conf", "language.python.preload = numpy.\n",
                "preload 'numpy.' is not a module name");
  test_warm_start ();
  test_user_name ();
  expect_error ("sshfield.conf", "ssh.a.hostname = x\n", "sshfield.conf:1: unknown ssh field 'hostname'");
  expect_error ("sshname.conf", "ssh.a.b.host = x\n", "unknown ssh field 'b.host'");
  expect_error ("sshport.conf", "ssh.a.port = 22x\n", "ssh.a.port '22x': a port from 1 to 65535");
  expect_error ("sshword.conf", "ssh.a.user = \"a b\"\n", "ssh.a.user 'a b': one word");
  expect_error ("sshbackend.conf", "backend = ssh\n", "an SSH machine is not a sandbox");
  test_ssh ();
  test_named_file ();
  test_flag_after_env ();
  test_docker_image ();
  test_env_aliases ();
  test_compat_tools ();

  unlink (sys);
  unlink (user);
  rmdir (dir);
  return done_testing ();
}
