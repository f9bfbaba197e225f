/* Sessions: containers that stay, for agents that iterate.
 *
 * A session is one held container of one image (the create op of the
 * backend cfg->backend_kind names, sandbox/backend.h: sr_container_hold
 * on the native runtime, sr_docker_hold on Docker; invisible from here),
 * with a persistent, size-capped /mnt/data (a tmpfs of session_data_size)
 * and a private code directory bound at SR_CODE_DIR.  Each call runs a
 * fresh process inside it under the same limits and policy as a one-shot
 * run; files in /mnt/data, /work and /tmp persist from call to call.
 *
 * The manager holds every session of a server: at most max_sessions, each
 * closed after session_idle_timeout without a call (by a reaper thread),
 * all closed when the manager is freed.  Sessions of a runner that died
 * are reclaimed when the next server starts: their inits die with their
 * runner (PR_SET_PDEATHSIG), and sr_code_reclaim removes their cgroups,
 * state entries and code directories; a Docker session's container
 * outlives its runner, and the next manager on Docker removes it by its
 * labels (sr_docker_reap_orphans).
 *
 * A session belongs to whoever made it, its owner: a string the caller
 * names (over HTTP the bearer token's id, or the MCP session's), or NULL
 * for the one client of a server that has one (stdio), which owns every
 * session.  Every call that names a session takes the caller's owner and
 * finds only that owner's sessions; another's is session_not_found, as a
 * missing one is, so that an id tells nothing to whoever did not make it.
 *
 * A session serves one call at a time: sr_sessions_acquire marks it busy
 * (session_busy for a second caller) until sr_session_release.
 *
 * A failure's error carries a code (sr_error_code): session_not_found,
 * session_busy, session_limit, image_missing, sandbox_error, cancelled,
 * or one of sandbox/files.h; an error without a code is a sandbox_error.  */
#ifndef SR_SANDBOX_SESSION_H
#define SR_SANDBOX_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/error.h"
#include "image/store.h"
#include "sandbox/backend.h"
#include "sandbox/code.h"
#include "sandbox/files.h"
#include "sandbox/shell.h"

struct sr_sessions;
struct sr_session;

/* cfg and store must outlive the manager.  backend = docker needs the
 * Docker backend registered (sandbox-runner-full does) and a reachable
 * daemon: an error at once otherwise.  */
int sr_sessions_new (const struct sr_config *cfg, struct sr_store *store,
                     struct sr_sessions **ret, sr_error_t *err);
/* Closes every session (waiting for calls in flight) and frees m.  */
void sr_sessions_free (struct sr_sessions *m);

/* id NULL or "": a new session on image (NULL: the session_image
 * setting), owned by owner.  Otherwise the session id names, if owner
 * may see it, which must not be busy
 * (or, with session_queue_timeout, stop being busy in time).  The session
 * is busy until sr_session_release.  cancel_fd (-1: none) readable gives
 * up, with code "cancelled": a queued call within 50 ms, a creation once
 * it is done (the new session is then destroyed).  */
int sr_sessions_acquire (struct sr_sessions *m, const char *owner, const char *id,
                         const char *image, int cancel_fd, struct sr_session **ret,
                         sr_error_t *err);
void sr_session_release (struct sr_session *s);

/* Destroys the session and its data.  Refuses a busy one.  */
int sr_sessions_close (struct sr_sessions *m, const char *owner, const char *id,
                       sr_error_t *err);
/* The owner is gone (its MCP session ended): its sessions are closed by
 * the reaper within a second, each once no call uses it.  */
void sr_sessions_orphan (struct sr_sessions *m, const char *owner);

struct sr_session_info
{
  char id[40];
  char *image;
  pid_t init_pid;
  int64_t created;         /* seconds since the epoch */
  uint64_t idle_ms;        /* since the last call ended */
  bool busy;
  const char *backend;     /* sr_backend_kind_name: "native", "docker", "ssh" */
  bool sandbox;            /* false: an SSH machine (sr_sessions_connect) */
  size_t n_shells;
};
/* The sessions owner may see, oldest first.  */
void sr_sessions_list (struct sr_sessions *m, const char *owner, struct sr_session_info **ret,
                       size_t *ret_n);
void sr_session_infos_free (struct sr_session_info *v, size_t n);

const char *sr_session_id (const struct sr_session *s);
const char *sr_session_image (const struct sr_session *s);
/* The session's filesystem, for sandbox/files.h.  */
const struct sr_fsroot *sr_session_fs (const struct sr_session *s);

/* run_code inside the session: the code is written to its SR_CODE_DIR,
 * compiled there when the language compiles, and run with /mnt/data as
 * the working directory.  The language's commands run in the session's
 * image, whatever image the language names.  *ret_artifacts gets the
 * files of /mnt/data the call created or changed.  Returns -1 like
 * sr_code_run.  */
int sr_session_run_code (struct sr_session *s, const struct sr_code_request *req,
                         struct sr_code_result *res, struct sr_artifact **ret_artifacts,
                         size_t *ret_n_artifacts, sr_error_t *err);

/* Runs argv (a shell command line for persistent shells and tests) in the
 * session, cwd /mnt/data.  */
int sr_session_exec (struct sr_session *s, const struct sr_exec_spec *spec,
                     const struct sr_run_options *opts, struct sr_run_result *res,
                     sr_error_t *err);

/* Machines: the places shells and file tools act on.  A sandbox session
 * is one (its id is its name); an SSH host is another, a session of the
 * SSH backend (sandbox/ssh.c) whose id is its NAME (ssh.NAME, or a Host
 * of OpenSSH's configuration), made by sr_sessions_connect and closed by
 * sr_sessions_close.  It is no sandbox: run_code refuses it
 * (not_a_sandbox), its commands run with the remote account's rights
 * from that account's home, where its relative paths start too; it has
 * no data directory, and is not closed for being idle.  It counts
 * against max_sessions as a session does.  Its file primitives refuse a
 * path inside SR_DATA_DIR (not_a_sandbox): a host has none, and an upload
 * must not make one there.  Each owner connects its own
 * (two owners' "box" are two connections).  */

/* Connects machine name for owner, or finds it connected (*ret_new
 * false); *ret_home gets its remote home (allocated).  Codes:
 * invalid_arguments, session_limit, and those of the SSH backend's
 * create (host_key_mismatch, host_key_unknown, auth_failed,
 * connect_failed).  */
int sr_sessions_connect (struct sr_sessions *m, const char *owner, const char *name,
                         bool *ret_new, char **ret_home, sr_error_t *err);
/* An SSH machine's remote home; NULL for a sandbox session.  */
const char *sr_session_home (const struct sr_session *s);

/* owner's default machine (NULL: none), and the default shell on it
 * (NULL: none), which the tools use when a call names neither.  A
 * shell_id alone sets its machine too.  Codes: session_not_found,
 * shell_not_found, invalid_arguments (a shell of another machine).  */
int sr_sessions_default_set (struct sr_sessions *m, const char *owner, const char *machine,
                             const char *shell_id, sr_error_t *err);
/* owner's defaults, in new strings; NULL when not set, or closed or
 * removed since.  */
void sr_sessions_default_get (struct sr_sessions *m, const char *owner, char **ret_machine,
                              char **ret_shell_id);

/* Persistent shells (sandbox/shell.h) of sessions.  A shell's id names
 * its session, and only the session's owner finds the shell.  Codes: session_not_found, shell_not_found, shell_busy,
 * shell_limit, sandbox_error.  */

/* The id of the session shell_id names, in a new string; NULL for a
 * string that is no shell id.  */
char *sr_session_of_shell (const char *shell_id);

/* Starts a shell in session_id (NULL or "": a new session).  */
int sr_sessions_shell_new (struct sr_sessions *m, const char *owner, const char *session_id,
                           char **ret_shell_id, char **ret_session_id, sr_error_t *err);
/* The shell, kept (with its session) until sr_sessions_shell_put.  */
int sr_sessions_shell_get (struct sr_sessions *m, const char *owner, const char *shell_id,
                           struct sr_shell **ret, sr_error_t *err);
void sr_sessions_shell_put (struct sr_sessions *m, struct sr_shell *sh);
/* Kills the shell; refuses one another call is using (shell_busy).  */
int sr_sessions_shell_remove (struct sr_sessions *m, const char *owner, const char *shell_id,
                              sr_error_t *err);

struct sr_shell_info
{
  char *shell_id;
  char *session_id;
  enum sr_shell_state state;
};
void sr_sessions_shell_list (struct sr_sessions *m, const char *owner,
                             struct sr_shell_info **ret, size_t *ret_n);
void sr_shell_infos_free (struct sr_shell_info *v, size_t n);

/* env's Docker actions on sandbox session id of owner: acquires it (so
 * not while a call uses it: session_busy), runs the backend's control op
 * (sandbox/backend.h), its report added to out.  stop and restart first
 * end the session's shells (shell_busy while one is in use; out gets
 * shells_ended).  A session of a backend without the op (native, an SSH
 * host) is docker_unavailable.  Only stop, start and restart count as use
 * of the session (session_idle_timeout): looking at it does not.  */
struct cJSON;
int sr_sessions_control (struct sr_sessions *m, const char *owner, const char *id,
                         enum sr_box_action a, unsigned tail, size_t max_output,
                         struct cJSON *out, sr_error_t *err);

#endif
