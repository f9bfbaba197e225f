/* The native backend (sandbox/backend.h): containers of our own runtime
 * (runtime/container.h) from images of the store (image/store.h), under
 * the policy's native translation.  Its file primitives resolve every path
 * from the host with openat2 below the container's root (files.h).  */
#include "config.h"

#include "sandbox/backend.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/statedir.h"
#include "common/util.h"
#include "image/store.h"
#include "runtime/container.h"
#include "sandbox/code-internal.h"
#include "sandbox/policy.h"
#include "sandbox/prestart.h"

struct native_state
{
  struct sr_store *store;
  struct sr_policy *policy;
  char *state_dir;         /* the containers' state entries */
};

/* What a session's container needs beyond a run's (policy.h).  */
static const struct sr_policy_overrides session_needs = { .session = true };

static int
native_open (const struct sr_config *cfg, struct sr_store *store, enum sr_backend_use use,
             void **ret, sr_error_t *err)
{
  struct native_state *ns = sr_xcalloc (1, sizeof *ns);

  ns->store = store;
  ns->state_dir = sr_statedir_runtime_sub (cfg->runtime_dir, "containers", err);
  if (ns->state_dir == NULL
      || sr_policy_new (cfg, SR_BACKEND_NATIVE, use == SR_BACKEND_SESSIONS ? &session_needs : NULL,
                        &ns->policy, err)
         < 0)
    {
      free (ns->state_dir);
      free (ns);
      return -1;
    }
  *ret = ns;
  return 0;
}

static void
native_close (void *state)
{
  struct native_state *ns = state;

  sr_policy_free (ns->policy);
  free (ns->state_dir);
  free (ns);
}

/* The directory is already the user's (code-dir.c chowns it to the ids of
 * sr_policy_ids_take) or, for a rootless runner, the container gives it
 * to the user itself (mounts.h, open_to_runner): nothing to hand over.  */
static int
native_code_dir (void *state, const char *dir, int dirfd, uid_t *uid, gid_t *gid,
                 sr_error_t *err)
{
  (void) state, (void) dir, (void) dirfd, (void) uid, (void) gid, (void) err;
  return 0;
}

/* --- run_code: a fresh container per stage --- */

struct sr_backend_run
{
  struct native_state *ns;
  struct sr_image_use image;
  uid_t uid;                 /* the user setting's ids in the image */
  gid_t gid;
};

/* l's image for run, and who the user setting is in it.  */
static int
use_run_image (struct native_state *ns, const struct sr_language *l, struct sr_backend_run *run,
               sr_error_t *err)
{
  run->ns = ns;
  run->image.lock_fd = -1;
  if (sr_code_use_image (ns->store, l, &run->image, err) < 0)
    return -1;
  if (sr_policy_user (ns->policy, run->image.rootfs, l->image, &run->uid, &run->gid, err) < 0)
    return sr_error_wrap (err, "language %s", l->name);
  return 0;
}

static int
native_run_begin (void *state, const struct sr_language *l, struct sr_backend_run **ret,
                  sr_error_t *err)
{
  struct sr_backend_run *run = sr_xcalloc (1, sizeof *run);

  if (use_run_image (state, l, run, err) < 0)
    {
      sr_image_release (&run->image);
      free (run);
      return -1;
    }
  *ret = run;
  return 0;
}

/* The options of a stage's command, its stdin (*stdin_fd, the caller's
 * to close) and its progress reports.  */
static int
stage_options (const struct sr_policy *policy, struct sr_code_stage *st,
               struct sr_run_options *opts, int *stdin_fd, sr_error_t *err)
{
  if (sr_code_stage_stdin (st, stdin_fd, err) < 0)
    return -1;
  *opts = (struct sr_run_options){
    .timeout_ms = st->timeout_ms, .max_output = sr_code_stage_max_output (st, policy->max_output),
    .stdin_fd = *stdin_fd, .cancel_fd = st->req->cancel_fd,
  };
  sr_code_stage_progress (st, opts);
  return 0;
}

static int
native_run_stage (struct sr_backend_run *run, const char *code_dir, struct sr_code_stage *st,
                  struct sr_run_result *res, sr_error_t *err)
{
  const struct sr_policy *policy = run->ns->policy;
  _cleanup_strv_ char **env = NULL;
  _cleanup_close_ int stdin_fd = -1;
  struct sr_bind bind = {
    .source = (char *) code_dir, .target = (char *) SR_CODE_DIR, .readonly = !st->code_writable,
    .owned = true,
  };
  struct sr_container_config cc;
  struct sr_exec_spec spec = { .argv = st->argv, .cwd = SR_DEFAULT_WORKDIR };
  struct sr_run_options opts;

  if (st->argv[0] == NULL)
    return sr_error_set (err, 0, "empty command");
  env = sr_policy_env (policy, run->image.info.env);
  spec.env = env;
  sr_policy_to_container (policy, run->image.rootfs, run->uid, run->gid, &cc);
  cc.max_cpu_seconds = sr_policy_cpu_seconds (st->timeout_ms);
  if (st->cpus)
    cc.limits.cpus = st->cpus;
  cc.fs.binds = &bind;
  cc.fs.n_binds = 1;
  cc.idmap = st->ids ? &st->ids->map : NULL;
  cc.state_dir = run->ns->state_dir;
  cc.label = st->command;
  if (stage_options (policy, st, &opts, &stdin_fd, err) < 0)
    return -1;
  if (st->leave == NULL)
    return sr_container_run (&cc, &spec, &opts, res, err);
  return sr_container_run_leaving (&cc, &spec, &opts, res, st->leave, err);
}

static const char *
native_run_image_id (struct sr_backend_run *run)
{
  return run->image.info.id;
}

static void
native_run_user (struct sr_backend_run *run, uid_t *uid, gid_t *gid)
{
  *uid = run->uid;
  *gid = run->gid;
}

static void
native_run_end (struct sr_backend_run *run)
{
  if (run == NULL)
    return;
  sr_image_release (&run->image);
  free (run);
}

/* --- warm containers: created ahead, started once --- */

struct sr_backend_warm
{
  struct sr_backend_run run;  /* its image */
  const struct sr_language *l;
  struct sr_container *c;
  /* A pre-started interpreter (prestart.h), the container's command
   * already: it and the socket of its hand-over; else NULL and -1, and
   * the container's init waits for its command.  */
  struct sr_container_cmd *cmd;
  int sock;
};

static void
native_warm_free (struct sr_backend_warm *w)
{
  if (w == NULL)
    return;
  if (w->sock >= 0)
    close (w->sock);
  sr_container_cmd_free (w->cmd);
  sr_container_destroy (w->c);
  sr_image_release (&w->run.image);
  free (w);
}

/* Starts w's interpreter, as its container's command (prestart.h), on
 * the bootstrap the pool wrote as the entry file; waits until it is
 * ready.  */
static int
start_interpreter (struct native_state *ns, struct sr_backend_warm *w, sr_error_t *err)
{
  _cleanup_strv_ char **argv = sr_code_split_command (w->l->run);
  _cleanup_strv_ char **env = sr_policy_env (ns->policy, w->run.image.info.env);
  struct sr_exec_spec spec = { .argv = argv, .env = env, .cwd = SR_DEFAULT_WORKDIR };
  int pair[2];
  int r;

  if (socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
    return sr_error_set (err, errno, "socketpair");
  w->sock = pair[0];
  r = sr_container_start_begin (w->c, &spec, pair[1], &w->cmd, err);
  close (pair[1]);
  if (r < 0 || sr_prestart_wait_ready (w->sock, SR_PRESTART_READY_MS, err) < 0)
    return sr_error_wrap (err, "pre-start %s", w->l->name);
  return 0;
}

static int
native_warm_new (void *state, const struct sr_language *l, const char *code_dir,
                 const struct sr_policy_ids *ids, bool prestart, bool for_run,
                 struct sr_backend_warm **ret, sr_error_t *err)
{
  struct native_state *ns = state;
  struct sr_backend_warm *w = sr_xcalloc (1, sizeof *w);
  _cleanup_free_ char *label = for_run ? sr_xstrdup (l->run) : sr_xasprintf ("warm: %s", l->run);
  struct sr_bind bind = {
    .source = (char *) code_dir, .target = (char *) SR_CODE_DIR, .readonly = true,
    .owned = true,
  };
  struct sr_container_config cc;

  w->l = l;
  w->sock = -1;
  if (use_run_image (ns, l, &w->run, err) < 0)
    goto fail;
  sr_policy_to_container (ns->policy, w->run.image.rootfs, w->run.uid, w->run.gid, &cc);
  cc.fs.binds = &bind;
  cc.fs.n_binds = 1;
  cc.idmap = &ids->map;
  cc.state_dir = ns->state_dir;
  cc.label = label;
  if (sr_container_create (&cc, &w->c, err) < 0)
    goto fail;
  if (prestart && start_interpreter (ns, w, err) < 0)
    goto fail;
  *ret = w;
  return 0;

fail:
  native_warm_free (w);
  return -1;
}

/* A container whose image the store replaced meanwhile serves no run.  */
static bool
native_warm_current (void *state, struct sr_backend_warm *w)
{
  struct native_state *ns = state;
  struct sr_image_info info = { 0 };
  bool same;

  if (!sr_container_alive (w->c)
      || (w->cmd && !(sr_container_cmd_alive (w->cmd) && sr_prestart_waiting (w->sock)))
      || sr_store_lookup (ns->store, w->l->image, &info, NULL) < 0)
    return false;
  same = strcmp (info.id, w->run.image.info.id) == 0;
  sr_image_info_done (&info);
  return same;
}

static int
native_warm_stage (struct sr_backend_warm *w, struct sr_code_stage *st,
                   struct sr_run_result *res, sr_error_t *err)
{
  const struct sr_policy *policy = w->run.ns->policy;
  _cleanup_strv_ char **env = NULL;
  _cleanup_close_ int stdin_fd = -1;
  struct sr_exec_spec spec = { .argv = st->argv, .cwd = SR_DEFAULT_WORKDIR };
  struct sr_run_options opts;

  if (st->argv[0] == NULL)
    return sr_error_set (err, 0, "empty command");
  env = sr_policy_env (policy, w->run.image.info.env);
  spec.env = env;
  if (stage_options (policy, st, &opts, &stdin_fd, err) < 0)
    return -1;
  if (w->cmd)
    {
      /* The code is in the entry file: what is left of the run is its
       * args and stdin, and the supervision, timeout and all, from here.  */
      if (sr_prestart_hand_over (w->sock, st->req->args, st->req->n_args, stdin_fd,
                                 sr_container_cmd_end_fd (w->cmd), err) < 0)
        return -1;
      st->prestarted = true;
      return sr_container_start_finish (w->cmd, &opts, res, err);
    }
  return sr_container_start (w->c, &spec, &opts, res, err);
}

/* --- sessions: a held container --- */

struct sr_backend_box
{
  struct sr_image_use image;
  struct sr_container *c;
  const struct sr_policy *policy;  /* the manager's */
  struct sr_fs_native files;       /* its fds are the box's */
};

static void
native_destroy (struct sr_backend_box *b)
{
  if (b == NULL)
    return;
  if (b->files.datafd >= 0)
    close (b->files.datafd);
  if (b->files.rootfd >= 0)
    close (b->files.rootfd);
  sr_container_destroy (b->c);
  sr_image_release (&b->image);
  free (b);
}

static int
open_in_root (int rootfd, const char *path, int flags)
{
  return sr_openat2 (rootfd, path, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
}

static int
use_session_image (struct native_state *ns, const char *image_ref, struct sr_image_use *image,
                   sr_error_t *err)
{
  sr_error_t e = NULL;

  if (sr_store_use (ns->store, image_ref, image, &e) == 0)
    return 0;
  if (e->errnum != ENOENT)
    {
      sr_error_move (err, &e);
      return sr_error_wrap (err, "session image %s", image_ref);
    }
  sr_error_free (&e);
  return sr_error_set_code (err, "image_missing", 0,
                            "the session image '%s' is not in the store %s; build the default "
                            "images with rootfs/build-all.sh --import, or import one with "
                            "`sandbox-runner image import --name %s PATH`",
                            image_ref, sr_store_dir (ns->store), image_ref);
}

static int
native_create (void *state, const char *id, const char *image_ref,
               const struct sr_policy_ids *ids, struct sr_backend_box **ret,
               struct sr_fsroot *fs, sr_error_t *err)
{
  struct native_state *ns = state;
  struct sr_backend_box *b = sr_xcalloc (1, sizeof *b);
  _cleanup_free_ char *label = NULL;
  struct sr_container_config cc;
  uid_t uid;
  gid_t gid;

  b->image.lock_fd = -1;
  b->files = (struct sr_fs_native){ .rootfd = -1, .datafd = -1 };
  b->policy = ns->policy;
  if (use_session_image (ns, image_ref, &b->image, err) < 0)
    goto fail;
  if (sr_policy_user (ns->policy, b->image.rootfs, image_ref, &uid, &gid, err) < 0)
    {
      sr_error_wrap (err, "session image %s", image_ref);
      goto fail;
    }
  /* The session's files are its user's, as a run's code directory is.  */
  sr_policy_ids_owner (ids, uid, gid, &b->files.uid, &b->files.gid);
  b->files.as_user = sr_policy_ids_writes_inside (ids, uid, gid);
  b->files.user_uid = uid;
  b->files.user_gid = gid;
  sr_policy_to_container (ns->policy, b->image.rootfs, uid, gid, &cc);
  cc.idmap = &ids->map;
  cc.state_dir = ns->state_dir;
  label = sr_xasprintf ("session %s (%s)", id, image_ref);
  cc.label = label;
  if (sr_container_create (&cc, &b->c, err) < 0 || sr_container_hold (b->c, err) < 0)
    {
      sr_error_wrap (err, "create the session's container");
      goto fail;
    }

  b->files.charge_to = b->c;
  b->files.rootfd = fcntl (sr_container_root_fd (b->c), F_DUPFD_CLOEXEC, 3);
  if (b->files.rootfd < 0)
    {
      sr_error_set (err, errno, "take the session's root");
      goto fail;
    }
  b->files.datafd = open_in_root (b->files.rootfd, SR_DATA_DIR, O_PATH | O_DIRECTORY);
  if (b->files.datafd < 0)
    {
      sr_error_set (err, errno, "open the session's %s", SR_DATA_DIR);
      goto fail;
    }
  *fs = (struct sr_fsroot){ .ops = &sr_fs_native_ops, .ctx = &b->files };
  *ret = b;
  return 0;

fail:
  native_destroy (b);
  return -1;
}

static bool
native_alive (struct sr_backend_box *b)
{
  return sr_container_alive (b->c);
}

static pid_t
native_pid (const struct sr_backend_box *b)
{
  return sr_container_pid (b->c);
}

static const char *
native_image (const struct sr_backend_box *b)
{
  return b->image.info.names && b->image.info.names[0] ? b->image.info.names[0]
                                                       : b->image.info.id;
}

static char **
native_env (const struct sr_backend_box *b)
{
  return sr_policy_env (b->policy, b->image.info.env);
}

static int
native_exec (struct sr_backend_box *b, const struct sr_exec_spec *spec,
             const struct sr_run_options *opts, struct sr_run_result *res, sr_error_t *err)
{
  return sr_container_exec (b->c, spec, opts, res, err);
}

const struct sr_backend sr_native_backend = {
  .kind = SR_BACKEND_NATIVE,
  .keeps_warm = true,
  .shell_one_stream = false,
  .takes_ids = true,
  .shares_mounts = true,
  .open = native_open,
  .close = native_close,
  .code_dir = native_code_dir,
  .run_begin = native_run_begin,
  .run_stage = native_run_stage,
  .run_end = native_run_end,
  .run_image_id = native_run_image_id,
  .run_user = native_run_user,
  .warm_new = native_warm_new,
  .warm_current = native_warm_current,
  .warm_stage = native_warm_stage,
  .warm_free = native_warm_free,
  .create = native_create,
  .destroy = native_destroy,
  .alive = native_alive,
  .pid = native_pid,
  .image = native_image,
  .env = native_env,
  .exec = native_exec,
};
