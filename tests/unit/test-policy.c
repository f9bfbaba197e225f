#include <config.h>

#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/policy.h"
#include "tap.h"

static char dir[] = "/tmp/sr-test-policy-XXXXXX";

static void
set (struct sr_config *cfg, const char *key, const char *value)
{
  sr_error_t err = NULL;

  if (!ok (sr_config_set (cfg, key, value, SR_ORIGIN_FLAG, "test", &err) == 0, "set %s", key))
    {
      printf ("#   %s\n", err->msg);
      sr_error_free (&err);
    }
}

static const char *
env_get (char **env, const char *key)
{
  size_t n = strlen (key);

  for (; env && *env; env++)
    if (strncmp (*env, key, n) == 0 && (*env)[n] == '=')
      return *env + n + 1;
  return NULL;
}

static void
test_defaults (const struct sr_config *cfg)
{
  struct sr_policy *p = NULL;
  sr_error_t err = NULL;

  if (!ok (sr_policy_new (cfg, SR_BACKEND_NATIVE, NULL, &p, &err) == 0, "native policy"))
    {
      printf ("#   %s\n", err->msg);
      sr_error_free (&err);
      return;
    }
  is_int (p->memory, 512ull << 20, "memory from the configuration");
  ok (p->cpus == 1.5, "cpus from the configuration");
  is_int (p->pids, 77, "pids from the configuration");
  is_int (p->timeout_ms, cfg->timeout_ms, "timeout from the configuration");
  is_int (p->max_output, cfg->max_output, "max_output from the configuration");
  is_int (p->max_cpu_seconds, (cfg->timeout_ms + 999) / 1000 + 1, "CPU backstop of the timeout");
  is_int (p->max_file_size, cfg->scratch_size > cfg->tmp_size ? cfg->scratch_size : cfg->tmp_size,
          "max_file_size: the larger tmpfs");
  is_int (p->max_open_files, SR_DEFAULT_MAX_OPEN_FILES, "max_open_files");
  ok (!p->data_dir && p->data_size == 0, "a run has no data directory");
  ok (p->seccomp != NULL, "the built-in seccomp filter is compiled");
  is_int (p->keep_caps, 1ull << 0 | 1ull << 7, "cap_keep cap_chown,cap_setuid as a mask");
  sr_policy_free (p);
}

static void
test_overrides (const struct sr_config *cfg)
{
  char *extra[] = { "FOO=2", NULL };
  struct sr_policy_overrides o = {
    .set = SR_POLICY_SET_TIMEOUT | SR_POLICY_SET_MEMORY | SR_POLICY_SET_PIDS
           | SR_POLICY_SET_TMP_SIZE | SR_POLICY_SET_SECCOMP | SR_POLICY_SET_CAPS
           | SR_POLICY_SET_MAX_OUTPUT,
    .timeout_ms = 2500, .memory = 0, .pids = 0, .tmp_size = 3ull << 30, .seccomp = "unconfined",
    .keep_caps = 1ull << 10, .max_output = 99, .env = extra,
    .cpus = 9,  /* not marked set: the configuration's stays */
  };
  char *image_env[] = { "PATH=/img", "=bad", "noeq", "FOO=1", "BAR=x", NULL };
  _cleanup_strv_ char **env = NULL;
  struct sr_container_config cc;
  struct sr_policy *p = NULL;
  sr_error_t err = NULL;

  if (!ok (sr_policy_new (cfg, SR_BACKEND_NATIVE, &o, &p, &err) == 0, "policy with overrides"))
    {
      sr_error_free (&err);
      return;
    }
  is_int (p->timeout_ms, 2500, "timeout override wins");
  is_int (p->max_cpu_seconds, 4, "the CPU backstop follows the timeout override");
  is_int (p->memory, 0, "memory 0 (none) overrides");
  is_int (p->pids, 0, "pids 0 (none) overrides");
  ok (p->cpus == 1.5, "an override not marked set does not count");
  is_int (p->max_file_size, 3ull << 30, "max_file_size follows the tmp_size override");
  ok (p->seccomp == NULL, "seccomp unconfined");
  is_int (p->keep_caps, 1ull << 10, "cap override replaces cap_keep");
  is_int (p->max_output, 99, "max_output override");

  env = sr_policy_env (p, image_env);
  is_str (env_get (env, "PATH"), "/img", "the image's PATH wins over the default");
  is_str (env_get (env, "HOME"), SR_DEFAULT_HOME, "default HOME");
  is_str (env_get (env, "LANG"), SR_DEFAULT_LANG, "default LANG");
  is_str (env_get (env, "FOO"), "2", "the overrides' env comes last");
  is_str (env_get (env, "BAR"), "x", "the image's env");
  is_str (env_get (env, "noeq"), NULL, "an entry without '=' is dropped");
  is_int (sr_strv_length (env), 5, "nothing else");

  sr_policy_to_container (p, "/rootfs", 1000, 1000, &cc);
  is_str (cc.fs.rootfs, "/rootfs", "native: rootfs");
  is_int (cc.fs.tmp_size, 3ull << 30, "native: tmp_size");
  is_int (cc.fs.shm_size, SR_DEFAULT_DEV_SHM_SIZE, "native: shm_size");
  is_int (cc.fs.scratch_size, cfg->scratch_size, "native: scratch_size");
  is_int (cc.fs.data_size, 0, "native: no data tmpfs");
  is_int (cc.limits.memory, 0, "native: memory");
  ok (cc.limits.cpus == 1.5, "native: cpus");
  is_int (cc.max_cpu_seconds, 4, "native: RLIMIT_CPU");
  is_int (cc.max_file_size, 3ull << 30, "native: RLIMIT_FSIZE");
  is_int (cc.max_open_files, SR_DEFAULT_MAX_OPEN_FILES, "native: RLIMIT_NOFILE");
  is_int (cc.max_pending_signals, SR_DEFAULT_MAX_PENDING_SIGNALS, "native: RLIMIT_SIGPENDING");
  is_int (cc.max_msgqueue_bytes, SR_DEFAULT_MAX_MSGQUEUE_BYTES, "native: RLIMIT_MSGQUEUE");
  ok (cc.userns.inotify_instances == SR_DEFAULT_MAX_INOTIFY_INSTANCES
      && cc.userns.inotify_watches == SR_DEFAULT_MAX_INOTIFY_WATCHES
      && cc.userns.fanotify_groups == SR_DEFAULT_MAX_FANOTIFY_GROUPS
      && cc.userns.fanotify_marks == SR_DEFAULT_MAX_FANOTIFY_MARKS
      && cc.userns.no_new_namespaces, "native: the user namespace's limits");
  is_int (cc.keep_caps, 1ull << 10, "native: keep_caps");
  ok (cc.uid == 1000 && cc.gid == 1000, "native: commands run as the default user, 1000:1000");
  ok (cc.seccomp == NULL && cc.fs.binds == NULL && cc.state_dir == NULL,
      "native: the caller's fields left empty");
  sr_policy_free (p);
}

static void
test_session (const struct sr_config *cfg)
{
  struct sr_policy_overrides o = { .session = true };
  struct sr_docker_tmpfs tmpfs[SR_POLICY_DOCKER_TMPFS];
  struct sr_docker_config dc;
  struct sr_container_config cc;
  struct sr_policy *p = NULL;
  sr_error_t err = NULL;

  if (!ok (sr_policy_new (cfg, SR_BACKEND_NATIVE, &o, &p, &err) == 0, "session policy"))
    {
      sr_error_free (&err);
      return;
    }
  is_int (p->timeout_ms, cfg->max_timeout_ms, "a session's commands may run the ceiling");
  is_int (p->max_cpu_seconds, (cfg->max_timeout_ms + 999) / 1000 + 1, "session backstop");
  ok (p->data_dir, "a session has a data directory");
  is_int (p->data_size, 8ull << 30, "of session_data_size");
  is_int (p->max_file_size, 8ull << 30, "a file may fill it");
  sr_policy_to_container (p, "/r", 1000, 1000, &cc);
  is_int (cc.fs.data_size, 8ull << 30, "native: the data tmpfs");
  ok (cc.fs.code_size == cfg->session_scratch_size && cc.fs.code_size
      && cc.fs.code_inodes == cfg->session_scratch_inodes && cc.fs.code_inodes,
      "native: a session's code directory is a tmpfs of session_scratch_size and _inodes");
  sr_policy_free (p);

  if (!ok (sr_policy_new (cfg, SR_BACKEND_DOCKER, &o, &p, &err) == 0, "Docker session policy"))
    {
      sr_error_free (&err);
      return;
    }
  sr_policy_to_docker (p, tmpfs, &dc);
  is_int (dc.n_tmpfs, 4, "Docker: /tmp, scratch, code and data");
  ok (strcmp (tmpfs[2].path, SR_CODE_DIR) == 0 && tmpfs[2].size == cfg->session_scratch_size
      && tmpfs[2].inodes == cfg->session_scratch_inodes && tmpfs[2].exec,
      "Docker: the code tmpfs, of session_scratch_size and _inodes, exec");
  is_str (tmpfs[3].path, SR_DATA_DIR, "Docker: the data tmpfs");
  is_int (tmpfs[3].size, 8ull << 30, "Docker: of session_data_size");
  is_int (dc.max_file_size, 8ull << 30, "Docker: RLIMIT_FSIZE");
  sr_policy_free (p);
}

static void
test_docker (const struct sr_config *cfg)
{
  struct sr_docker_tmpfs tmpfs[SR_POLICY_DOCKER_TMPFS];
  struct sr_docker_config dc;
  _cleanup_strv_ char **env = NULL;
  struct sr_policy *p = NULL;
  sr_error_t err = NULL;

  if (!ok (sr_policy_new (cfg, SR_BACKEND_DOCKER, NULL, &p, &err) == 0, "Docker policy"))
    {
      sr_error_free (&err);
      return;
    }
  sr_policy_to_docker (p, tmpfs, &dc);
  is_int (dc.memory, 512ull << 20, "Docker: memory");
  is_int (dc.memory_swap, 512ull << 20, "Docker: no swap beyond memory");
  is_int (dc.nano_cpus, 1500000000ull, "Docker: NanoCpus");
  is_int (dc.pids_limit, 77, "Docker: PidsLimit");
  is_int (dc.shm_size, SR_DEFAULT_DEV_SHM_SIZE, "Docker: ShmSize");
  ok (dc.readonly_root, "Docker: read-only root");
  is_str (dc.user, "1000:1000", "Docker: the user setting's user, its gid that of its uid");
  is_int (dc.n_tmpfs, 2, "Docker: /tmp and scratch");
  is_str (tmpfs[0].path, "/tmp", "Docker: /tmp first");
  is_int (tmpfs[0].size, cfg->tmp_size, "Docker: /tmp of tmp_size");
  ok (!tmpfs[0].exec && tmpfs[1].exec, "Docker: /tmp noexec, scratch exec");
  is_str (tmpfs[1].path, SR_SCRATCH_DIR, "Docker: scratch");
  is_int (tmpfs[1].size, cfg->scratch_size, "Docker: scratch of scratch_size");
  is_int (dc.max_cpu_seconds, (cfg->timeout_ms + 999) / 1000 + 1, "Docker: RLIMIT_CPU");
  is_int (dc.max_open_files, SR_DEFAULT_MAX_OPEN_FILES, "Docker: RLIMIT_NOFILE");
  is_int (dc.max_pending_signals, SR_DEFAULT_MAX_PENDING_SIGNALS, "Docker: RLIMIT_SIGPENDING");
  is_int (dc.max_msgqueue_bytes, SR_DEFAULT_MAX_MSGQUEUE_BYTES, "Docker: RLIMIT_MSGQUEUE");
  ok (dc.seccomp_json && dc.seccomp_json[0] == '{', "Docker: the built-in profile as JSON");
  ok (dc.cap_add && dc.cap_add[0] && dc.cap_add[1] && dc.cap_add[2] == NULL,
      "Docker: two capabilities added");
  is_str (dc.cap_add ? dc.cap_add[1] : NULL, "cap_setuid", "Docker: by their names");
  ok (dc.image == NULL && dc.binds == NULL && dc.labels == NULL,
      "Docker: the caller's fields left empty");
  env = sr_policy_env (p, NULL);
  is_str (env_get (env, "PATH"), SR_DEFAULT_PATH, "Docker env: default PATH");
  is_int (sr_strv_length (env), 3, "Docker env: PATH, HOME, LANG");
  sr_policy_free (p);
}

static void
test_bad_caps (struct sr_config *cfg)
{
  struct sr_policy *p = NULL;
  sr_error_t err = NULL;

  set (cfg, "cap_keep", "NO_SUCH_CAP");
  ok (sr_policy_new (cfg, SR_BACKEND_NATIVE, NULL, &p, &err) < 0, "an unknown capability fails");
  ok (err && strstr (err->msg, "cap_keep") != NULL, "the message names the setting");
  sr_error_free (&err);
  ok (p == NULL, "and returns no policy");
}

/* The user setting: root, or UID:GID, for both backends.  */
static void
test_user (struct sr_config *cfg)
{
  struct sr_policy *p = NULL;
  struct sr_container_config cc;
  struct sr_docker_tmpfs tmpfs[SR_POLICY_DOCKER_TMPFS];
  struct sr_docker_config dc;
  sr_error_t err = NULL;

  set (cfg, "user", "root");
  if (ok (sr_policy_new (cfg, SR_BACKEND_NATIVE, NULL, &p, &err) == 0, "policy of user root"))
    {
      uid_t uid = 9;
      gid_t gid = 9;

      ok (sr_policy_user (p, dir, "test", &uid, &gid, NULL) == 0 && uid == 0 && gid == 0,
          "user root is 0:0, whatever the image");
      sr_policy_to_container (p, "/rootfs", uid, gid, &cc);
      ok (cc.uid == 0 && cc.gid == 0, "user root: commands run as 0:0");
      sr_policy_free (p);
    }
  sr_error_free (&err);
  set (cfg, "user", "1234:99");
  if (ok (sr_policy_new (cfg, SR_BACKEND_DOCKER, NULL, &p, &err) == 0, "policy of user 1234:99"))
    {
      sr_policy_to_docker (p, tmpfs, &dc);
      is_str (dc.user, "1234:99", "Docker: User is the setting's UID:GID");
      sr_policy_free (p);
    }
  sr_error_free (&err);
  set (cfg, "user", "sandbox:users");
  if (ok (sr_policy_new (cfg, SR_BACKEND_DOCKER, NULL, &p, &err) == 0,
          "policy of user sandbox:users"))
    {
      sr_policy_to_docker (p, tmpfs, &dc);
      is_str (dc.user, "sandbox:users", "Docker: a name goes to dockerd as written, which "
                                         "resolves it in the image");
      sr_policy_free (p);
    }
  sr_error_free (&err);
  set (cfg, "user", SR_DEFAULT_USER);
}

/* The compile stage's CPUs: the language's, else the setting's, and for
 * 0 every CPU the runner may use.  */
static void
test_compile_cpus (struct sr_config *cfg)
{
  const struct sr_language *cpp = sr_config_language (cfg, "cpp");
  const struct sr_language *c = sr_config_language (cfg, "c");
  cpu_set_t mine;

  ok (sched_getaffinity (0, sizeof mine, &mine) == 0, "the runner's CPUs");
  ok (sr_policy_compile_cpus (cfg, cpp) == CPU_COUNT (&mine),
      "by default a compile stage may use all the runner's CPUs, not the run's share");
  set (cfg, "compile_cpus", "3");
  ok (sr_policy_compile_cpus (cfg, cpp) == 3, "compile_cpus sets it");
  set (cfg, "language.cpp.compile_cpus", "0.75");
  ok (sr_policy_compile_cpus (cfg, cpp) == 0.75, "a language's compile_cpus wins");
  ok (sr_policy_compile_cpus (cfg, c) == 3, "for that language only");
  set (cfg, "language.cpp.compile_cpus", "");
  ok (sr_policy_compile_cpus (cfg, cpp) == 3, "an empty one is the setting's");
  set (cfg, "compile_cpus", "0");
}

int
main (void)
{
  struct sr_config cfg;
  sr_error_t err = NULL;

  if (mkdtemp (dir) == NULL)
    return 1;
  for (char **e = environ; e && *e; e++)
    if (strncmp (*e, "SANDBOX_", 8) == 0)
      {
        _cleanup_free_ char *name = sr_xasprintf ("%.*s", (int) strcspn (*e, "="), *e);

        unsetenv (name);
        e = environ - 1;
      }
  if (!ok (sr_config_load (&cfg, "/nonexistent", "/nonexistent", &err) == 0, "defaults load"))
    return 1;
  set (&cfg, "runtime_dir", dir);
  set (&cfg, "memory", "512M");
  set (&cfg, "cpus", "1.5");
  set (&cfg, "pids", "77");
  set (&cfg, "cap_keep", "cap_chown,cap_setuid");
  set (&cfg, "session_data_size", "8G");

  test_defaults (&cfg);
  test_overrides (&cfg);
  test_session (&cfg);
  test_docker (&cfg);
  test_compile_cpus (&cfg);
  test_user (&cfg);
  test_bad_caps (&cfg);

  sr_config_done (&cfg);
  (void) sr_rm_rf_at (AT_FDCWD, dir, NULL);
  return done_testing ();
}
