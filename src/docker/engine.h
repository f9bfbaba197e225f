/* A client of the Docker Engine API, for the optional Docker backend.
 *
 * It runs the same commands as the native runtime (runtime/container.h)
 * and answers with the same types: a struct sr_exec_spec in, the same
 * struct sr_run_options (timeout, output cap, cancel fd, output callback)
 * and the same struct sr_run_result out (status, exit code or signal,
 * captured stdout and stderr with the same cap and truncation marker,
 * duration), so a caller cannot tell the backends apart by their results.
 * opts->stdin_fd, when not -1, is read to its end into the command's stdin
 * (a container's attach, an exec's start, on a connection the daemon
 * hijacks), which then ends.  Not mirrored: the native-only fields of the
 * result (marks, cpu_ns, memory_peak stay 0).
 *
 * The policy is mapped onto Docker's options: network none, memory and
 * memory+swap, NanoCpus, PidsLimit, a read-only root, size-capped tmpfs
 * mounts, binds, a non-root user, cap-drop ALL, no-new-privileges and a
 * seccomp profile passed as JSON text.  The timeout is ours, not Docker's:
 * when it passes the container is killed and removed.  Every container
 * carries our labels, so the ones a dead runner left behind can be found
 * and removed (sr_docker_reap_orphans).
 *
 * It speaks HTTP over the daemon's unix socket with libcurl ($DOCKER_HOST,
 * else unix:///var/run/docker.sock); tcp:// (plain HTTP) works too.  An
 * sr_docker holds no connection and nothing mutable after sr_docker_open,
 * so one may serve several threads; a container (struct
 * sr_docker_container) serves one thread at a time.  */
#ifndef SR_DOCKER_ENGINE_H
#define SR_DOCKER_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/run-result.h"

#define SR_DOCKER_DEFAULT_HOST "unix:///var/run/docker.sock"
/* nobody:nogroup, which exists in Debian's images and is never the owner
 * of anything in them.  */
#define SR_DOCKER_DEFAULT_USER "65534:65534"
/* Every container we create carries this label ("1"), and
 * SR_DOCKER_LABEL_RUNNER naming the runner that made it:
 * "HOSTNAME:PID:STARTTIME" (STARTTIME from /proc/PID/stat, so a reused pid
 * is not taken for the runner).  */
#define SR_DOCKER_LABEL "org.sandbox-runner"
#define SR_DOCKER_LABEL_RUNNER "org.sandbox-runner.runner"
/* How long sr_docker_open waits for the daemon's answer to _ping.  */
#define SR_DOCKER_PING_TIMEOUT_MS 3000

struct sr_docker_tmpfs
{
  const char *path;
  uint64_t size;         /* bytes; 0: Docker's default (half the RAM) */
  uint64_t inodes;       /* nr_inodes; 0: the kernel's default */
  bool exec;             /* false: noexec; nosuid and nodev always */
  uint32_t mode;         /* 0: 01777 */
};
/* runc gives a tmpfs the mode of the directory it is mounted on, so each
 * tmpfs is also owned by the container's user when that is numeric
 * ("UID[:GID]"), which keeps it writable for that user.  */

struct sr_docker_bind
{
  const char *source;    /* a directory on the daemon's host */
  const char *target;
  bool readonly;
};

struct sr_docker_label
{
  const char *key, *value;
};

struct sr_docker_config
{
  const char *image;                     /* name[:tag] or an image id */
  const char *hostname;                  /* NULL: SR_DEFAULT_HOSTNAME */
  uint64_t memory;                       /* bytes; 0: unlimited */
  uint64_t memory_swap;                  /* memory + swap as Docker counts it; 0: = memory */
  uint64_t nano_cpus;                    /* 1e9 per CPU; 0: unlimited */
  uint32_t pids_limit;                   /* 0: unlimited */
  uint64_t shm_size;                     /* /dev/shm; 0: Docker's default */
  bool readonly_root;
  const struct sr_docker_tmpfs *tmpfs;
  size_t n_tmpfs;
  const struct sr_docker_bind *binds;
  size_t n_binds;
  /* "UID:GID" or a name; NULL: SR_DOCKER_DEFAULT_USER; "": the image's own
   * USER (which may be root).  */
  const char *user;
  /* An OCI/Docker seccomp profile as JSON text; NULL: Docker's default
   * profile; "unconfined": none.  */
  const char *seccomp_json;
  /* Capabilities added back after cap-drop ALL ("CHOWN", ...); NULL: none.  */
  char *const *cap_add;
  uint64_t max_file_size;                /* RLIMIT_FSIZE, 0: unlimited */
  uint32_t max_open_files;               /* RLIMIT_NOFILE, 0: Docker's default */
  uint32_t max_cpu_seconds;              /* RLIMIT_CPU, 0: unlimited */
  uint32_t max_pending_signals;          /* RLIMIT_SIGPENDING, 0: Docker's default */
  uint64_t max_msgqueue_bytes;           /* RLIMIT_MSGQUEUE, 0: Docker's default */
  const struct sr_docker_label *labels;  /* extra labels, besides ours */
  size_t n_labels;
  /* What a held container runs under its init (Init: true); NULL:
   * "sleep infinity".  */
  char *const *hold_command;
};

struct sr_docker;
struct sr_docker_container;

/* Connects to host (NULL: $DOCKER_HOST, else SR_DOCKER_DEFAULT_HOST) and
 * pings it within SR_DOCKER_PING_TIMEOUT_MS: a daemon that is not running,
 * a socket we may not open or a daemon that does not answer is an error
 * at once, which says so and names the endpoint.  */
int sr_docker_open (const char *host, struct sr_docker **ret, sr_error_t *err);
void sr_docker_close (struct sr_docker *d);

/* "unix:///var/run/docker.sock", as given or defaulted.  */
const char *sr_docker_endpoint (const struct sr_docker *d);
/* The API version in use ("1.41"): the daemon's, capped at the newest we
 * know.  */
const char *sr_docker_api_version (const struct sr_docker *d);

/* 0 when the daemon has image, and *ret_id (unless NULL) gets its Id
 * ("sha256:...", the caller's to free; NULL if the daemon gave none); -1
 * with errnum ENOENT and a message that names `docker pull IMAGE` and
 * `docker import` when it has not.  */
int sr_docker_image_exists (struct sr_docker *d, const char *image, char **ret_id,
                            sr_error_t *err);

/* One command in a fresh container: create, attach, start, wait, remove.
 * Returns 0 when the command ran (whatever its status) and -1 when the
 * container could not be created or started; an executable that is not
 * found fails at start with exit_code 127 in *result, as native does.
 * *result is filled in both cases as far as it got.  Nothing is left in
 * the daemon on any path.
 *
 * One difference Docker imposes: it reports a command killed by signal N
 * as exit code 128+N, so an exit code in 129..128+SIGRTMAX is taken for a
 * signal (result->signal = N), and a command that calls exit(137) looks
 * killed by SIGKILL.  Status oom comes from State.OOMKilled, set when any
 * process of the container was OOM-killed.  */
int sr_docker_run (struct sr_docker *d, const struct sr_docker_config *cfg,
                   const struct sr_exec_spec *spec, const struct sr_run_options *opts,
                   struct sr_run_result *result, sr_error_t *err);

/* Sessions: a long-lived container (Init: true, running cfg->hold_command)
 * with the same policy; each sr_docker_exec runs one command in it
 * through the exec API and returns the same result as a run.  When the
 * command ends, times out or is cancelled, what is left of its process
 * group is killed; the container lives on until sr_docker_destroy, which
 * kills and removes it and accepts NULL.  */
/* An exec killed by SIGKILL is status oom when the daemon reported an
 * "oom" event of the container while it ran (the memory cgroup's OOM
 * notification, which the daemon also turns into State.OOMKilled): the
 * container outlives the exec, so its sticky OOMKilled cannot tell one
 * exec from the next.  */
/* With opts->stdin_fd, the exec's stdin is attached and fed from it until
 * it ends.  When that fd is a terminal, the command gets a terminal of
 * its own in the container (Tty, 50x200): the fd is switched to raw mode
 * and its bytes relayed as they come, so the container's line discipline
 * interprets ^C; the command's stdout and stderr then arrive as one
 * stream, reported as stdout.  */
int sr_docker_hold (struct sr_docker *d, const struct sr_docker_config *cfg,
                    struct sr_docker_container **ret, sr_error_t *err);
int sr_docker_exec (struct sr_docker_container *c, const struct sr_exec_spec *spec,
                    const struct sr_run_options *opts, struct sr_run_result *result,
                    sr_error_t *err);
void sr_docker_destroy (struct sr_docker_container *c);

/* The container's full id.  */
const char *sr_docker_container_id (const struct sr_docker_container *c);
/* Its init on the daemon's host, as the daemon reported it at start.  */
int sr_docker_container_pid (const struct sr_docker_container *c);
/* Whether it still runs (the daemon says so); false when it cannot be
 * asked.  */
bool sr_docker_container_alive (struct sr_docker_container *c);

/* --- a held container's lifecycle (engine-manage.c) ---
 * Each acts on a container we hold, never on an id a caller names.  A
 * stopped container keeps its binds (the session's code directory) and
 * loses its tmpfs mounts and every process, execs included; start and
 * restart give it a new init (sr_docker_container_pid).  Stopping a
 * stopped container or starting a running one succeeds.  */
int sr_docker_container_stop (struct sr_docker_container *c, sr_error_t *err);
int sr_docker_container_start (struct sr_docker_container *c, sr_error_t *err);
int sr_docker_container_restart (struct sr_docker_container *c, sr_error_t *err);

/* What inspect tells of a container, curated: no host paths, mounts,
 * environment or daemon internals.  */
struct sr_docker_inspect
{
  char *id, *name, *image;
  char *state;              /* "running", "exited", ... */
  char *created, *started_at;  /* RFC 3339, as the daemon gives them */
  bool running;
  uint64_t memory;          /* bytes; 0: unlimited */
  uint64_t nano_cpus;       /* 0: unlimited */
  uint64_t pids_limit;      /* 0: unlimited */
};
int sr_docker_container_inspect (struct sr_docker_container *c, struct sr_docker_inspect *ret,
                                 sr_error_t *err);
void sr_docker_inspect_done (struct sr_docker_inspect *i);

/* The last tail lines of what the container's init wrote (not what execs
 * wrote: those return their own output), demultiplexed as a run's output
 * is, each stream kept up to max bytes and then ended by the truncation
 * marker (truncated set), as a run's.  */
int sr_docker_container_logs (struct sr_docker_container *c, unsigned tail, size_t max,
                              struct sr_captured *ret_stdout, struct sr_captured *ret_stderr,
                              sr_error_t *err);

/* One sample of the container's usage (0: the daemon did not say).  */
struct sr_docker_stats
{
  uint64_t memory_usage, memory_limit;
  uint64_t cpu_total_ns;    /* CPU time used since it started */
  uint64_t pids, pids_limit;
};
int sr_docker_container_stats (struct sr_docker_container *c, struct sr_docker_stats *ret,
                               sr_error_t *err);

/* Removes the containers with our label whose runner is dead: made on this
 * host by a process that no longer exists.  Containers of live runners and
 * of other hosts are left alone.  *ret_removed (when not NULL) gets how
 * many went.  */
int sr_docker_reap_orphans (struct sr_docker *d, unsigned *ret_removed, sr_error_t *err);

#endif
