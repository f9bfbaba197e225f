#include "config.h"

#include "sandbox/policy.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/image-user.h"
#include "common/statedir.h"
#include "common/util.h"
#include "runtime/caps.h"
#include "runtime/seccomp.h"

void
sr_policy_seccomp_cache (const struct sr_config *cfg)
{
  _cleanup_free_ char *cache = sr_xasprintf ("%s/seccomp", cfg->runtime_dir);

  sr_seccomp_set_cache_dir (cache);
}

uint32_t
sr_policy_cpu_seconds (uint64_t timeout_ms)
{
  return (uint32_t) ((timeout_ms + 999) / 1000 + 1);
}

double
sr_policy_compile_cpus (const struct sr_config *cfg, const struct sr_language *l)
{
  double cpus = sr_language_compile_cpus (cfg, l);
  cpu_set_t set;

  if (cpus > 0)
    return cpus;
  /* A compiler held to the run's share of a CPU is what made a C++ hello
   * cost twice the bare compile: it gets every CPU the runner itself may
   * use (its affinity; the runner's own cgroup still caps the sum).  */
  if (sched_getaffinity (0, sizeof set, &set) == 0 && CPU_COUNT (&set) > 0)
    return CPU_COUNT (&set);
  return 1;
}

/* "CHOWN, SETUID" -> { "CHOWN", "SETUID" }; NULL when empty.  */
static char **
split_names (const char *list)
{
  char **v = NULL;
  const char *p = list;

  while (p && *p)
    {
      size_t n;

      p += strspn (p, ", \t");
      n = strcspn (p, ", \t");
      if (n)
        {
          _cleanup_free_ char *word = sr_xasprintf ("%.*s", (int) n, p);

          sr_strv_push (&v, word);
        }
      p += n;
    }
  return v;
}

/* The profile (a path, "unconfined", or NULL/"" for the built-in one)
 * compiled for native.  */
static int
load_filter (struct sr_policy *p, const char *profile, sr_error_t *err)
{
  if (profile == NULL || *profile == '\0')
    return sr_seccomp_filter_default (&p->seccomp, err);
  if (strcmp (profile, "unconfined") == 0)
    return 0;
  return sr_seccomp_filter_from_file (profile, &p->seccomp, err);
}

/* The same profile as JSON text for Docker.  */
static int
load_json (struct sr_policy *p, const char *profile, sr_error_t *err)
{
  size_t len;

  if (profile && strcmp (profile, "unconfined") == 0)
    p->seccomp_json = sr_xstrdup ("unconfined");
  else if (profile == NULL || *profile == '\0')
    {
      const char *text = sr_seccomp_default_json (&len);

      p->seccomp_json = sr_xasprintf ("%.*s", (int) len, text);
    }
  else if (sr_read_file (profile, &p->seccomp_json, &len, err) < 0)
    return sr_error_wrap (err, "seccomp profile");
  return 0;
}

/* The seccomp profile and capabilities, as backend needs them.  */
static int
load_kernel_policy (struct sr_policy *p, const struct sr_config *cfg,
                    enum sr_backend_kind backend, const struct sr_policy_overrides *o,
                    sr_error_t *err)
{
  const char *profile = o->set & SR_POLICY_SET_SECCOMP ? o->seccomp : cfg->seccomp_profile;

  if (backend == SR_BACKEND_DOCKER)
    {
      p->cap_names = split_names (cfg->cap_keep);
      return load_json (p, profile, err);
    }
  if (cfg->cap_keep[0] && sr_caps_parse_list (cfg->cap_keep, &p->keep_caps, err) < 0)
    return sr_error_wrap (err, "cap_keep setting");
  if (o->set & SR_POLICY_SET_CAPS)
    p->keep_caps = o->keep_caps;
  sr_policy_seccomp_cache (cfg);
  return load_filter (p, profile, err);
}

#define PICK(bit, field, fallback) (o->set & (bit) ? o->field : (fallback))

int
sr_policy_new (const struct sr_config *cfg, enum sr_backend_kind backend,
               const struct sr_policy_overrides *o, struct sr_policy **ret, sr_error_t *err)
{
  static const struct sr_policy_overrides none;
  struct sr_policy *p = sr_xcalloc (1, sizeof *p);

  if (o == NULL)
    o = &none;
  p->timeout_ms = PICK (SR_POLICY_SET_TIMEOUT, timeout_ms,
                        o->session ? cfg->max_timeout_ms : cfg->timeout_ms);
  p->max_output = PICK (SR_POLICY_SET_MAX_OUTPUT, max_output, cfg->max_output);
  p->memory = PICK (SR_POLICY_SET_MEMORY, memory, cfg->memory);
  p->cpus = PICK (SR_POLICY_SET_CPUS, cpus, cfg->cpus);
  p->pids = PICK (SR_POLICY_SET_PIDS, pids, (uint32_t) cfg->pids);
  p->strict_limits = PICK (SR_POLICY_SET_STRICT, strict_limits, cfg->strict_limits);
  p->tmp_size = PICK (SR_POLICY_SET_TMP_SIZE, tmp_size, cfg->tmp_size);
  p->shm_size = SR_DEFAULT_DEV_SHM_SIZE;
  p->scratch_size = cfg->scratch_size;
  p->data_dir = o->session;
  p->data_size = o->session ? cfg->session_data_size : 0;
  p->code_size = o->session ? cfg->session_scratch_size : 0;
  p->code_inodes = o->session ? cfg->session_scratch_inodes : 0;

  p->max_cpu_seconds = sr_policy_cpu_seconds (p->timeout_ms);
  p->max_file_size = p->scratch_size > p->tmp_size ? p->scratch_size : p->tmp_size;
  if (p->max_file_size < p->data_size)
    p->max_file_size = p->data_size;
  if (p->max_file_size < p->code_size)
    p->max_file_size = p->code_size;
  p->max_open_files = SR_DEFAULT_MAX_OPEN_FILES;
  p->max_pending_signals = SR_DEFAULT_MAX_PENDING_SIGNALS;
  p->max_msgqueue_bytes = SR_DEFAULT_MAX_MSGQUEUE_BYTES;
  p->userns = (struct sr_userns_limits){
    .inotify_instances = SR_DEFAULT_MAX_INOTIFY_INSTANCES,
    .inotify_watches = SR_DEFAULT_MAX_INOTIFY_WATCHES,
    .fanotify_groups = SR_DEFAULT_MAX_FANOTIFY_GROUPS,
    .fanotify_marks = SR_DEFAULT_MAX_FANOTIFY_MARKS,
    .no_new_namespaces = true,
  };

  if (sr_image_user_check (cfg->user, err) < 0)
    {
      sr_policy_free (p);
      return -1;
    }
  snprintf (p->user, sizeof p->user, "%s", cfg->user);
  snprintf (p->docker_user, sizeof p->docker_user, "%s", cfg->user);
  if (sr_image_user_numeric (cfg->user))
    {
      uid_t uid;
      gid_t gid;

      (void) sr_image_user_resolve (cfg->user, -1, NULL, &uid, &gid, NULL);
      snprintf (p->docker_user, sizeof p->docker_user, "%u:%u", (unsigned) uid, (unsigned) gid);
    }
  for (char *const *e = o->env; e && *e; e++)
    sr_env_set (&p->env_extra, *e);

  if (load_kernel_policy (p, cfg, backend, o, err) < 0)
    {
      sr_policy_free (p);
      return -1;
    }
  *ret = p;
  return 0;
}

void
sr_policy_free (struct sr_policy *p)
{
  if (p == NULL)
    return;
  sr_seccomp_filter_free (p->seccomp);
  free (p->seccomp_json);
  sr_strv_free (p->cap_names);
  sr_strv_free (p->env_extra);
  free (p);
}

char **
sr_policy_env (const struct sr_policy *p, char *const *image_env)
{
  char **env = NULL;

  sr_env_set (&env, "PATH=" SR_DEFAULT_PATH);
  sr_env_set (&env, "HOME=" SR_DEFAULT_HOME);
  sr_env_set (&env, "LANG=" SR_DEFAULT_LANG);
  for (char *const *e = image_env; e && *e; e++)
    if (strchr (*e, '=') && **e != '=')
      sr_env_set (&env, *e);
  for (char *const *e = p->env_extra; e && *e; e++)
    sr_env_set (&env, *e);
  return env;
}

int
sr_policy_user (const struct sr_policy *p, const char *rootfs, const char *image, uid_t *uid,
                gid_t *gid, sr_error_t *err)
{
  return sr_image_user_resolve_path (p->user, rootfs, image, uid, gid, err);
}

void
sr_policy_to_container (const struct sr_policy *p, const char *rootfs, uid_t uid, gid_t gid,
                        struct sr_container_config *cc)
{
  memset (cc, 0, sizeof *cc);
  cc->fs.rootfs = rootfs;
  cc->fs.tmp_size = p->tmp_size;
  cc->fs.shm_size = p->shm_size;
  cc->fs.scratch_size = p->scratch_size;
  cc->fs.data_size = p->data_size;
  cc->fs.code_size = p->code_size;
  cc->fs.code_inodes = p->code_inodes;
  cc->limits.memory = p->memory;
  cc->limits.cpus = p->cpus;
  cc->limits.pids = p->pids;
  cc->strict_limits = p->strict_limits;
  cc->seccomp = p->seccomp;
  cc->keep_caps = p->keep_caps;
  cc->max_cpu_seconds = p->max_cpu_seconds;
  cc->max_file_size = p->max_file_size;
  cc->max_open_files = p->max_open_files;
  cc->max_pending_signals = p->max_pending_signals;
  cc->max_msgqueue_bytes = p->max_msgqueue_bytes;
  cc->userns = p->userns;
  cc->uid = uid;
  cc->gid = gid;
}

void
sr_policy_to_docker (const struct sr_policy *p,
                     struct sr_docker_tmpfs tmpfs[SR_POLICY_DOCKER_TMPFS],
                     struct sr_docker_config *dc)
{
  size_t n = 0;

  tmpfs[n++] = (struct sr_docker_tmpfs){ .path = "/tmp", .size = p->tmp_size, .exec = false,
                                         .mode = 01777 };
  tmpfs[n++] = (struct sr_docker_tmpfs){ .path = SR_SCRATCH_DIR, .size = p->scratch_size,
                                         .exec = true, .mode = 0755 };
  if (p->code_size)
    tmpfs[n++] = (struct sr_docker_tmpfs){ .path = SR_CODE_DIR, .size = p->code_size,
                                           .inodes = p->code_inodes, .exec = true,
                                           .mode = 0755 };
  if (p->data_dir)
    tmpfs[n++] = (struct sr_docker_tmpfs){ .path = SR_DATA_DIR, .size = p->data_size,
                                           .exec = false, .mode = 0755 };
  *dc = (struct sr_docker_config){
    .memory = p->memory,
    .memory_swap = p->memory + p->swap,
    .nano_cpus = (uint64_t) (p->cpus * 1e9),
    .pids_limit = p->pids,
    .shm_size = p->shm_size,
    .readonly_root = true,
    .tmpfs = tmpfs,
    .n_tmpfs = n,
    .user = p->docker_user,
    .seccomp_json = p->seccomp_json,
    .cap_add = p->cap_names,
    .max_file_size = p->max_file_size,
    .max_open_files = p->max_open_files,
    .max_pending_signals = p->max_pending_signals,
    .max_msgqueue_bytes = p->max_msgqueue_bytes,
    .max_cpu_seconds = p->max_cpu_seconds,
  };
}

int
sr_policy_ids_take (const struct sr_config *cfg, uid_t user_uid, gid_t user_gid,
                    struct sr_policy_ids *ret, sr_error_t *err)
{
  _cleanup_free_ char *lock_dir = NULL;

  *ret = (struct sr_policy_ids){ .map.lease_fd = -1 };
  if (sr_idmap_plan (&ret->map, "/etc/subuid", "/etc/subgid", err) < 0)
    return -1;
  if (ret->map.mode == SR_IDMAP_ROOT && ret->map.slots > 1)
    {
      lock_dir = sr_statedir_runtime_sub (cfg->runtime_dir, "ids", err);
      if (lock_dir == NULL || sr_idmap_lease (&ret->map, lock_dir, err) < 0)
        return -1;
    }
  sr_policy_ids_owner (ret, user_uid, user_gid, &ret->uid, &ret->gid);
  return 0;
}

void
sr_policy_ids_owner (const struct sr_policy_ids *ids, uid_t user_uid, gid_t user_gid,
                     uid_t *uid, gid_t *gid)
{
  if (ids->map.mode != SR_IDMAP_ROOT)
    {
      *uid = ids->map.caller_uid;
      *gid = ids->map.caller_gid;
      return;
    }
  if (!sr_idmap_maps (&ids->map, user_uid, user_gid))
    user_uid = user_gid = 0;
  *uid = ids->map.uid_base + user_uid;
  *gid = ids->map.gid_base + user_gid;
}

bool
sr_policy_ids_writes_inside (const struct sr_policy_ids *ids, uid_t user_uid, gid_t user_gid)
{
  return ids->map.mode != SR_IDMAP_ROOT && (user_uid != 0 || user_gid != 0)
         && sr_idmap_maps (&ids->map, user_uid, user_gid);
}

void
sr_policy_ids_release (struct sr_policy_ids *ids)
{
  if (ids->map.lease_fd >= 0)
    close (ids->map.lease_fd);
  ids->map.lease_fd = -1;
}
