/* A container's create body: the policy of an sr_docker_config mapped
 * onto Docker's Config and HostConfig.  */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/defaults.h"
#include "common/json.h"
#include "common/util.h"
#include "docker/engine-internal.h"

void
sr_docker_add_strv_ (cJSON *obj, const char *key, char *const *v)
{
  cJSON *a = cJSON_AddArrayToObject (obj, key);

  for (; v && *v; v++)
    cJSON_AddItemToArray (a, cJSON_CreateString (*v));
}

static void
add_ulimit (cJSON *a, const char *name, uint64_t value)
{
  cJSON *u = cJSON_CreateObject ();

  cJSON_AddStringToObject (u, "Name", name);
  cJSON_AddNumberToObject (u, "Soft", (double) value);
  cJSON_AddNumberToObject (u, "Hard", (double) value);
  cJSON_AddItemToArray (a, u);
}

/* Docker's Binds and Tmpfs are ':' and ',' separated strings.  */
static bool
path_ok (const char *p)
{
  return p && p[0] == '/' && strpbrk (p, ":,\n") == NULL;
}

const char *
sr_docker_user_of_ (const struct sr_docker_config *cfg)
{
  return cfg->user ? cfg->user : SR_DOCKER_DEFAULT_USER;
}

void
sr_docker_add_env_ (cJSON *obj, char *const *env)
{
  static char *const default_env[] = {
    (char *) "PATH=" SR_DEFAULT_PATH, (char *) "HOME=" SR_DEFAULT_HOME,
    (char *) "LANG=" SR_DEFAULT_LANG, NULL,
  };

  sr_docker_add_strv_ (obj, "Env", env ? env : default_env);
}

/* What a held container's init writes is kept for env(action="logs"),
 * in one file of the daemon's local driver of at most this size.  */
#define HELD_LOG_MAX "1m"

/* HostConfig's limits and security options; held: a session's.  */
static void
add_host_policy (cJSON *hc, const struct sr_docker_config *cfg, bool held)
{
  cJSON *sec, *log;

  cJSON_AddStringToObject (hc, "NetworkMode", "none");
  if (cfg->memory)
    {
      cJSON_AddNumberToObject (hc, "Memory", (double) cfg->memory);
      cJSON_AddNumberToObject (hc, "MemorySwap",
                               (double) (cfg->memory_swap ? cfg->memory_swap : cfg->memory));
    }
  if (cfg->nano_cpus)
    cJSON_AddNumberToObject (hc, "NanoCpus", (double) cfg->nano_cpus);
  if (cfg->pids_limit)
    cJSON_AddNumberToObject (hc, "PidsLimit", cfg->pids_limit);
  if (cfg->shm_size)
    cJSON_AddNumberToObject (hc, "ShmSize", (double) cfg->shm_size);
  cJSON_AddBoolToObject (hc, "ReadonlyRootfs", cfg->readonly_root);
  /* An init as pid 1 (docker-init) in every container, one-shot ones
   * too: the command's signals to itself (raise, abort, kill $$) reach
   * it as on a host, as the native backend's init gives.  */
  cJSON_AddBoolToObject (hc, "Init", true);
  cJSON_AddBoolToObject (hc, "AutoRemove", false);
  cJSON_AddStringToObject (hc, "IpcMode", "private");
  /* A command's output comes through attach; a log driver would keep a
   * copy on the daemon's disk, without our cap.  A held container's init
   * writes little, kept capped.  */
  log = cJSON_AddObjectToObject (hc, "LogConfig");
  cJSON_AddStringToObject (log, "Type", held ? "local" : "none");
  if (held)
    {
      cJSON *lc = cJSON_AddObjectToObject (log, "Config");

      cJSON_AddStringToObject (lc, "max-size", HELD_LOG_MAX);
      cJSON_AddStringToObject (lc, "max-file", "1");
      /* The local driver compresses rotated files only, and there are
       * none; it refuses compression with one file.  */
      cJSON_AddStringToObject (lc, "compress", "false");
    }
  cJSON_AddItemToObject (hc, "CapDrop", cJSON_CreateStringArray ((const char *[]){ "ALL" }, 1));
  if (cfg->cap_add && cfg->cap_add[0])
    sr_docker_add_strv_ (hc, "CapAdd", cfg->cap_add);
  sec = cJSON_AddArrayToObject (hc, "SecurityOpt");
  cJSON_AddItemToArray (sec, cJSON_CreateString ("no-new-privileges:true"));
  if (cfg->seccomp_json)
    {
      _cleanup_free_ char *opt = sr_xasprintf ("seccomp=%s", cfg->seccomp_json);

      cJSON_AddItemToArray (sec, cJSON_CreateString (opt));
    }
}

/* runc gives a tmpfs the mode of the directory it covers (0755 for a
 * WorkingDir Docker made), so mode alone does not make it writable for
 * a non-root user: it also gets the user as owner, when we know its
 * numeric ids.  Returns the tmpfs options that say so, maybe "".  */
static char *
tmpfs_owner (const char *user)
{
  unsigned uid, gid;
  char tail;
  int n = sscanf (user, "%u:%u%c", &uid, &gid, &tail);

  if (n == 2)
    return sr_xasprintf (",uid=%u,gid=%u", uid, gid);
  if (n == 1 && strchr (user, ':') == NULL && strspn (user, "0123456789") == strlen (user))
    return sr_xasprintf (",uid=%u", uid);
  return sr_xstrdup ("");
}

/* HostConfig's Tmpfs and Binds.  */
static int
add_mounts (cJSON *hc, const struct sr_docker_config *cfg, sr_error_t *err)
{
  _cleanup_free_ char *owner = tmpfs_owner (sr_docker_user_of_ (cfg));
  cJSON *tmpfs, *binds;

  tmpfs = cJSON_AddObjectToObject (hc, "Tmpfs");
  for (size_t i = 0; i < cfg->n_tmpfs; i++)
    {
      const struct sr_docker_tmpfs *t = &cfg->tmpfs[i];
      _cleanup_free_ char *size = t->size ? sr_xasprintf (",size=%llu", (unsigned long long) t->size)
                                          : sr_xstrdup ("");
      _cleanup_free_ char *inodes = t->inodes ? sr_xasprintf (",nr_inodes=%llu",
                                                              (unsigned long long) t->inodes)
                                              : sr_xstrdup ("");
      _cleanup_free_ char *opts = NULL;

      if (!path_ok (t->path))
        return sr_error_set (err, EINVAL, "tmpfs %s: an absolute path without ':' or ','",
                             t->path ? t->path : "(null)");
      opts = sr_xasprintf ("rw,nosuid,nodev,%s,mode=%o%s%s%s", t->exec ? "exec" : "noexec",
                           t->mode ? t->mode : 01777, size, inodes, owner);
      cJSON_AddStringToObject (tmpfs, t->path, opts);
    }
  binds = cJSON_AddArrayToObject (hc, "Binds");
  for (size_t i = 0; i < cfg->n_binds; i++)
    {
      const struct sr_docker_bind *b = &cfg->binds[i];
      _cleanup_free_ char *s = NULL;

      if (!path_ok (b->source) || !path_ok (b->target))
        return sr_error_set (err, EINVAL, "bind %s on %s: absolute paths without ':' or ','",
                             b->source ? b->source : "(null)", b->target ? b->target : "(null)");
      s = sr_xasprintf ("%s:%s:%s", b->source, b->target, b->readonly ? "ro" : "rw");
      cJSON_AddItemToArray (binds, cJSON_CreateString (s));
    }
  return 0;
}

/* HostConfig's Ulimits.  */
static void
add_ulimits (cJSON *hc, const struct sr_docker_config *cfg)
{
  cJSON *ulimits = cJSON_AddArrayToObject (hc, "Ulimits");

  if (cfg->max_file_size)
    add_ulimit (ulimits, "fsize", cfg->max_file_size);
  if (cfg->max_open_files)
    add_ulimit (ulimits, "nofile", cfg->max_open_files);
  if (cfg->max_cpu_seconds)
    add_ulimit (ulimits, "cpu", cfg->max_cpu_seconds);
  if (cfg->max_pending_signals)
    add_ulimit (ulimits, "sigpending", cfg->max_pending_signals);
  if (cfg->max_msgqueue_bytes)
    add_ulimit (ulimits, "msgqueue", cfg->max_msgqueue_bytes);
}

int
sr_docker_container_json_ (const struct sr_docker *d, const struct sr_docker_config *cfg,
                           char *const *argv, char *const *env, const char *cwd, bool held,
                           cJSON **ret, sr_error_t *err)
{
  _cleanup_json_ cJSON *c = cJSON_CreateObject ();
  cJSON *hc, *labels;

  if (cfg->image == NULL || *cfg->image == '\0')
    return sr_error_set (err, EINVAL, "no image given");
  if (argv == NULL || argv[0] == NULL)
    return sr_error_set (err, EINVAL, "no command given");

  cJSON_AddStringToObject (c, "Image", cfg->image);
  cJSON_AddStringToObject (c, "Hostname", cfg->hostname ? cfg->hostname : SR_DEFAULT_HOSTNAME);
  if (*sr_docker_user_of_ (cfg))
    cJSON_AddStringToObject (c, "User", sr_docker_user_of_ (cfg));
  sr_docker_add_strv_ (c, "Cmd", argv);
  /* An image's ENTRYPOINT would run in front of our command.  */
  cJSON_AddItemToObject (c, "Entrypoint", cJSON_CreateArray ());
  sr_docker_add_env_ (c, env);
  cJSON_AddStringToObject (c, "WorkingDir", cwd ? cwd : SR_DEFAULT_WORKDIR);
  cJSON_AddBoolToObject (c, "AttachStdin", false);
  cJSON_AddBoolToObject (c, "AttachStdout", !held);
  cJSON_AddBoolToObject (c, "AttachStderr", !held);
  cJSON_AddBoolToObject (c, "OpenStdin", false);
  cJSON_AddBoolToObject (c, "Tty", false);
  cJSON_AddBoolToObject (c, "NetworkDisabled", true);
  labels = cJSON_AddObjectToObject (c, "Labels");
  for (size_t i = 0; i < cfg->n_labels; i++)
    cJSON_AddStringToObject (labels, cfg->labels[i].key, cfg->labels[i].value);
  cJSON_AddStringToObject (labels, SR_DOCKER_LABEL, "1");
  cJSON_AddStringToObject (labels, SR_DOCKER_LABEL_RUNNER, d->runner);

  hc = cJSON_AddObjectToObject (c, "HostConfig");
  add_host_policy (hc, cfg, held);
  if (add_mounts (hc, cfg, err) < 0)
    return -1;
  add_ulimits (hc, cfg);
  *ret = TAKE_PTR (c);
  return 0;
}
