/* The container policy: what every container of ours may use and do,
 * built ONCE from the configuration (common/config.h) and the caller's
 * overrides (the flags of `run`, a session's needs), then turned into a
 * backend's container configuration by that backend's one translator:
 *
 *   sr_policy_new ──► struct sr_policy ──► sr_policy_to_container  (native, runtime/container.h)
 *                                     └──► sr_policy_to_docker     (Docker, docker/engine.h)
 *
 * Nothing else reads the configuration's limits to build a container.
 * Adding a limit means: a row in common/config.c, a field here (set in
 * sr_policy_new), one line in each translator, and its enforcement in
 * runtime/ (Docker enforces what its HostConfig says).  */
#ifndef SR_SANDBOX_POLICY_H
#define SR_SANDBOX_POLICY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/config.h"
#include "common/error.h"
#include "docker/engine.h"
#include "runtime/container.h"

struct sr_seccomp_filter;

/* Which fields of struct sr_policy_overrides the caller set.  */
enum
{
  SR_POLICY_SET_TIMEOUT = 1u << 0,
  SR_POLICY_SET_MAX_OUTPUT = 1u << 1,
  SR_POLICY_SET_MEMORY = 1u << 2,
  SR_POLICY_SET_CPUS = 1u << 3,
  SR_POLICY_SET_PIDS = 1u << 4,
  SR_POLICY_SET_TMP_SIZE = 1u << 5,
  SR_POLICY_SET_STRICT = 1u << 6,
  SR_POLICY_SET_SECCOMP = 1u << 7,
  SR_POLICY_SET_CAPS = 1u << 8,
};

/* What the caller wants instead of the configuration.  A field counts
 * only when its bit is in set, except session and env, which the
 * configuration has no say on.  Nothing here is owned by the policy: it
 * copies what it keeps.  */
struct sr_policy_overrides
{
  unsigned set;
  uint64_t timeout_ms;      /* the longest a command runs: its CPU-seconds backstop */
  uint64_t max_output;
  uint64_t memory;          /* 0: none */
  double cpus;              /* 0: none */
  uint32_t pids;            /* 0: none */
  uint64_t tmp_size;
  bool strict_limits;
  const char *seccomp;      /* profile path, "unconfined", or NULL: the built-in one */
  uint64_t keep_caps;       /* native only: a mask of runtime/caps.h */
  /* A session's container: its SR_DATA_DIR of cfg->session_data_size,
   * and the backstop of cfg->max_timeout_ms unless timeout_ms is set.  */
  bool session;
  char *const *env;         /* KEY=VALUE added last to every environment; NULL: none */
};

struct sr_policy
{
  /* runs */
  uint64_t timeout_ms;       /* the longest a command runs (wall clock) */
  uint64_t max_output;       /* captured bytes per stream */
  /* limits (cgroups, Docker's HostConfig) */
  uint64_t memory;           /* bytes; 0: none */
  uint64_t swap;             /* beyond memory: always 0, as native's memory.swap.max */
  double cpus;               /* 0: none */
  uint32_t pids;             /* 0: none */
  bool strict_limits;        /* a limit nothing can enforce is an error */
  /* file systems */
  uint64_t tmp_size;         /* /tmp */
  uint64_t shm_size;         /* /dev/shm */
  uint64_t scratch_size;     /* SR_SCRATCH_DIR */
  bool data_dir;             /* a session's: SR_DATA_DIR on a tmpfs of data_size */
  uint64_t data_size;        /* (native takes 0 as no data directory) */
  uint64_t code_size;        /* a session's: SR_CODE_DIR on a tmpfs; 0: bound by the caller */
  uint64_t code_inodes;
  /* rlimits: backstops that hold without any cgroup: no process burns
   * more CPU than a command may last, writes a file larger than the
   * space it could fill, or hoards descriptors */
  uint32_t max_cpu_seconds;  /* RLIMIT_CPU, sr_policy_cpu_seconds (timeout_ms) */
  uint64_t max_file_size;    /* RLIMIT_FSIZE: the largest of the tmpfs */
  uint32_t max_open_files;   /* RLIMIT_NOFILE */
  /* per-user kernel resources: the container's share of what its
   * namespaces' owner (root of the host, or the rootless user) may hold
   * host-wide */
  uint32_t max_pending_signals; /* RLIMIT_SIGPENDING */
  uint64_t max_msgqueue_bytes;  /* RLIMIT_MSGQUEUE */
  struct sr_userns_limits userns; /* native: its user namespace's /proc/sys/user */
  /* kernel policy */
  struct sr_seccomp_filter *seccomp; /* native: compiled once; NULL: unconfined */
  char *seccomp_json;        /* Docker: the profile's text, or "unconfined" */
  uint64_t keep_caps;        /* native: capability keep-list mask */
  char **cap_names;          /* Docker: cap_keep's names as CapAdd; NULL: none */
  /* process */
  char user[72];             /* the user setting (common/image-user.h), which
                              * sr_policy_user resolves per image */
  char docker_user[72];      /* Docker's User: names as written, for dockerd
                              * to resolve in the image; ids as UID:GID, so
                              * that a uid alone keeps its gid, not 0 */
  char **env_extra;          /* the overrides' env, added last by sr_policy_env */
};

/* Builds the policy of cfg for the translator of backend (native needs
 * the seccomp profile compiled and cap_keep as a mask, Docker the
 * profile's JSON text and cap_keep's names as written), with o (NULL:
 * none) winning over the configuration.  Loads the seccomp profile once (the native filter
 * through the compiled-program cache of sr_policy_seccomp_cache) and
 * parses cap_keep.  The caller owns *ret and frees it with
 * sr_policy_free; it keeps no pointer into cfg or o.  */
int sr_policy_new (const struct sr_config *cfg, enum sr_backend_kind backend,
                   const struct sr_policy_overrides *o, struct sr_policy **ret, sr_error_t *err);
/* Accepts NULL.  */
void sr_policy_free (struct sr_policy *p);

/* Points the seccomp compiled-program cache at <runtime_dir>/seccomp:
 * where it is lives here and only here.  sr_policy_new calls it; a
 * server calls it first, before its threads start.  */
void sr_policy_seccomp_cache (const struct sr_config *cfg);

/* The CPU-seconds backstop (RLIMIT_CPU) of a command that may run
 * timeout_ms of wall clock: a stage with its own timeout sets it on what
 * a translator made.  */
uint32_t sr_policy_cpu_seconds (uint64_t timeout_ms);

/* The CPU limit of language l's compile stage, which replaces the
 * policy's cpus there (the memory and pids limits stay): l's or the
 * configuration's compile_cpus, and for 0 every CPU the runner may use.
 * A stage's timeout and this are all a stage changes of its policy.  */
double sr_policy_compile_cpus (const struct sr_config *cfg, const struct sr_language *l);

/* The environment of a command (allocated): PATH, HOME and LANG, then
 * image_env's KEY=VALUE entries (NULL: none), then the overrides' env.  */
char **sr_policy_env (const struct sr_policy *p, char *const *image_env);

/* The ids inside the image whose root file system is rootfs (image
 * names it in errors) that p's user setting names: the one lookup of
 * common/image-user.h, in the image's own /etc/passwd and /etc/group.  */
int sr_policy_user (const struct sr_policy *p, const char *rootfs, const char *image,
                    uid_t *uid, gid_t *gid, sr_error_t *err);

/* The native translator: *cc from p, for the root file system rootfs,
 * its commands run as uid:gid (sr_policy_user's).  cc points into p
 * (seccomp), which must outlive it; the caller sets binds, state_dir and
 * label.  */
void sr_policy_to_container (const struct sr_policy *p, const char *rootfs, uid_t uid, gid_t gid,
                             struct sr_container_config *cc);

/* The Docker translator: *dc from p, its tmpfs mounts in tmpfs (the
 * caller's storage, which dc points to as it does into p).  The caller
 * sets image, binds and labels.  */
#define SR_POLICY_DOCKER_TMPFS 4
void sr_policy_to_docker (const struct sr_policy *p,
                          struct sr_docker_tmpfs tmpfs[SR_POLICY_DOCKER_TMPFS],
                          struct sr_docker_config *dc);

/* Who the containers of one run, one warm container or one session are
 * on the host, leased to them alone (runtime/idmap.h): map is what their
 * containers are created with; uid, gid own what the host puts in their
 * code and tmpfs directories (for a root runner the host ids of the
 * user_uid:user_gid inside, the user setting's ids in the image, which
 * its commands run as; else the runner's own).  The lease lives in
 * <runtime_dir>/ids.  */
struct sr_policy_ids
{
  struct sr_idmap map;      /* map.lease_fd: -1 for no lease (a rootless runner's) */
  uid_t uid;
  gid_t gid;
};
int sr_policy_ids_take (const struct sr_config *cfg, uid_t user_uid, gid_t user_gid,
                        struct sr_policy_ids *ret, sr_error_t *err);
/* The host ids that own the files of user_uid:user_gid inside ids'
 * containers, as sr_policy_ids_take sets uid and gid: a user the map
 * lacks fails at the container's creation, which says so, and its files
 * stay root's inside meanwhile.  */
void sr_policy_ids_owner (const struct sr_policy_ids *ids, uid_t user_uid, gid_t user_gid,
                          uid_t *uid, gid_t *gid);
/* Whether the host's writes for user_uid:user_gid must be made from
 * inside the container's user namespace as that user
 * (sr_container_charged_as): a rootless runner's own uid is the
 * container's root, so a file it wrote would be root's, which the user
 * can replace but not change in place; a root runner gives its fsuid the
 * user's host id instead, and where the user is root or not mapped
 * there is nothing to switch to.  */
bool sr_policy_ids_writes_inside (const struct sr_policy_ids *ids, uid_t user_uid,
                                  gid_t user_gid);
/* Frees the ids for another container; their containers must be gone.  */
void sr_policy_ids_release (struct sr_policy_ids *ids);

#endif
