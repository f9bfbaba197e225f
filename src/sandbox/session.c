#include "config.h"

#include "sandbox/session.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/defaults.h"
#include "common/log.h"
#include "common/util.h"
#include "sandbox/code-internal.h"
#include "sandbox/backend.h"
#include "sandbox/shell.h"

/* How often a call queued for a busy session looks at its cancel_fd.  */
#define CANCEL_CHECK_NS (50 * 1000000ull)

/* A shell and the calls using it.  */
struct shell_slot
{
  struct sr_shell *sh;
  unsigned refs;
};

struct sr_session
{
  struct sr_sessions *m;
  char id[40];
  char *owner;             /* who made it (sr_sessions_acquire); NULL: the one client */
  const struct sr_backend *be;  /* the manager's, or the SSH backend for a machine */
  void *be_state;
  struct sr_backend_box *box;
  /* An SSH machine (sr_sessions_connect): no sandbox, no code directory,
   * never idle-expired; its commands and relative paths start at the
   * remote account's home.  NULL for a sandbox session.  */
  char *home;
  char shell_tag[9];       /* a machine's: its shells' files in the remote /tmp are
                            * unique per runner (hex) */
  struct sr_fsroot host_fs; /* a machine's: the backend's primitives, which fs wraps */
  struct sr_fsroot fs;     /* the box's; also how a sandbox's code goes in */
  struct sr_policy_ids ids;  /* its container's, held until it is gone */
  int64_t created;
  uint64_t last_used_ns;
  bool busy;
  bool orphaned;           /* its owner is gone: the reaper takes it once it is free */
  unsigned pins;           /* shell calls in flight: the session stays */
  struct shell_slot *shells;
  size_t n_shells;
  unsigned shell_serial;
  struct sr_session *next;
};

/* A session to create, handed to the manager's thread: a container's init
 * dies with the thread that cloned it (PR_SET_PDEATHSIG follows the
 * parent thread) where there is no spawner (runtime/spawner.h), and
 * callers' threads are short-lived.  */
struct create_request
{
  const char *image;
  struct sr_session *session;
  sr_error_t err;
  int result;
  bool done;
  struct create_request *next;
};

struct sr_sessions
{
  const struct sr_config *cfg;
  struct sr_store *store;
  const struct sr_backend *be;
  void *be_state;
  /* SSH machines: the backend, opened at the first connect (which ends
   * the masters dead runners left); connect_lock makes connects one at a
   * time, so that a NAME is connected once per owner.  */
  pthread_mutex_t connect_lock;
  const struct sr_backend *ssh_be;
  void *ssh_state;
  struct machine_default *defaults;

  pthread_mutex_t lock;
  pthread_cond_t changed;  /* a session released, or stop */
  struct sr_session *head; /* oldest first */
  size_t n;                /* in the list, plus those being created */
  bool stop;
  /* How long a call for a busy session waits for it (issue 6); 0: it is
   * told session_busy at once.  */
  uint64_t queue_ms;
  struct create_request *requests;
  pthread_t reaper;        /* also creates every session's container */
  bool reaper_started;
};

/* An owner's default machine, and the default shell on it (default_set).  */
struct machine_default
{
  char *owner;             /* NULL: the one client */
  char *machine;
  char *shell_id;          /* NULL: none */
  struct machine_default *next;
};

static void
default_free (struct machine_default *d)
{
  free (d->owner);
  free (d->machine);
  free (d->shell_id);
  free (d);
}

static int session_create (struct sr_sessions *m, const char *image_ref,
                           struct sr_session **ret, sr_error_t *err);

static bool
same_owner (const char *a, const char *b)
{
  return a == b || (a && b && strcmp (a, b) == 0);
}

/* owner's default, or NULL.  m->lock held.  */
static struct machine_default **
default_locked (struct sr_sessions *m, const char *owner)
{
  struct machine_default **pp;

  for (pp = &m->defaults; *pp; pp = &(*pp)->next)
    if (same_owner ((*pp)->owner, owner))
      return pp;
  return NULL;
}

/* Whether owner may see s: the one client (NULL) sees every session,
 * anyone else only the sessions it made.  */
static bool
visible (const struct sr_session *s, const char *owner)
{
  return owner == NULL || (s->owner && strcmp (s->owner, owner) == 0);
}

/* The one lookup of a session by its id, for every call that names one:
 * the session of id (id_len bytes) that owner may see, or NULL.  Another
 * owner's session is not found, as a missing one is: an id names nothing
 * to whoever did not make it.  m->lock held.  */
static struct sr_session **
lookup_locked (struct sr_sessions *m, const char *owner, const char *id, size_t id_len)
{
  struct sr_session **pp;

  /* Machine names repeat across owners: each owner finds its own.  */
  for (pp = &m->head; *pp; pp = &(*pp)->next)
    if (strlen ((*pp)->id) == id_len && memcmp ((*pp)->id, id, id_len) == 0
        && visible (*pp, owner))
      return pp;
  return NULL;
}

/* How many sessions owner has, under the lock.  */
static uint64_t
owned_locked (const struct sr_sessions *m, const char *owner)
{
  uint64_t n = 0;

  for (const struct sr_session *s = m->head; s; s = s->next)
    n += s->owner && strcmp (s->owner, owner) == 0;
  return n;
}

static struct sr_session *
find_locked (struct sr_sessions *m, const char *owner, const char *id)
{
  struct sr_session **pp = lookup_locked (m, owner, id, strlen (id));

  return pp ? *pp : NULL;
}

/* A machine's shells leave nothing in its /tmp: it outlives them.  */
static void
stop_shell (struct sr_session *s, struct sr_shell *sh)
{
  if (s->home)
    sr_shell_stop_clean (sh);
  else
    sr_shell_stop (sh);
}

static void
session_destroy (struct sr_session *s)
{
  if (s == NULL)
    return;
  /* The shells' threads use the container: they go first.  */
  for (size_t i = 0; i < s->n_shells; i++)
    stop_shell (s, s->shells[i].sh);
  free (s->shells);
  if (s->box)
    {
      s->be->destroy (s->box);
      sr_log (SR_LOG_INFO, "session_close", "session", s->id, NULL);
    }
  sr_policy_ids_release (&s->ids);
  free (s->home);
  free (s->owner);
  free (s);
}

/* Sessions that are idle past the timeout, or whose container died, come
 * off the list; the caller destroys them outside the lock.  */
static struct sr_session *
take_expired (struct sr_sessions *m, uint64_t now)
{
  struct sr_session *gone = NULL, **pp = &m->head;

  while (*pp)
    {
      struct sr_session *s = *pp;
      bool idle;

      /* A shell command still running is activity.  */
      for (size_t i = 0; i < s->n_shells; i++)
        if (sr_shell_state (s->shells[i].sh) == SR_SHELL_WAITING)
          s->last_used_ns = now;
      /* A machine stays until it is closed: it holds no container.  */
      idle = s->home == NULL && now - s->last_used_ns >= m->cfg->session_idle_ms * 1000000ull;
      if (!s->busy && s->pins == 0 && (idle || s->orphaned || !s->be->alive (s->box)))
        {
          *pp = s->next;
          s->next = gone;
          gone = s;
          m->n--;
        }
      else
        pp = &s->next;
    }
  return gone;
}

static void *
reaper_main (void *arg)
{
  struct sr_sessions *m = arg;

  pthread_mutex_lock (&m->lock);
  while (!m->stop)
    {
      struct timespec until;
      struct sr_session *gone;

      if (m->requests)
        {
          struct create_request *rq = m->requests;

          m->requests = rq->next;
          pthread_mutex_unlock (&m->lock);
          rq->result = session_create (m, rq->image, &rq->session, &rq->err);
          pthread_mutex_lock (&m->lock);
          rq->done = true;
          pthread_cond_broadcast (&m->changed);
          continue;
        }
      clock_gettime (CLOCK_MONOTONIC, &until);
      until.tv_sec += 1;
      pthread_cond_timedwait (&m->changed, &m->lock, &until);
      if (m->stop || m->requests)
        continue;
      gone = take_expired (m, sr_now_ns ());
      pthread_mutex_unlock (&m->lock);
      while (gone)
        {
          struct sr_session *next = gone->next;

          session_destroy (gone);
          gone = next;
        }
      pthread_mutex_lock (&m->lock);
    }
  /* Nothing creates sessions any more.  */
  for (struct create_request *rq = m->requests; rq; rq = rq->next)
    {
      rq->result = sr_error_set_code (&rq->err, "sandbox_error", 0,
                                      "the session manager is stopping");
      rq->done = true;
    }
  m->requests = NULL;
  pthread_cond_broadcast (&m->changed);
  pthread_mutex_unlock (&m->lock);
  return NULL;
}

/* Creates a session on the manager's thread and waits for it.  */
static int
create_on_manager (struct sr_sessions *m, const char *image, struct sr_session **ret,
                   sr_error_t *err)
{
  struct create_request rq = { .image = image };

  pthread_mutex_lock (&m->lock);
  if (m->stop)
    {
      pthread_mutex_unlock (&m->lock);
      return sr_error_set_code (err, "sandbox_error", 0, "the session manager is stopping");
    }
  rq.next = m->requests;
  m->requests = &rq;
  pthread_cond_broadcast (&m->changed);
  while (!rq.done)
    pthread_cond_wait (&m->changed, &m->lock);
  pthread_mutex_unlock (&m->lock);
  if (rq.result < 0)
    {
      sr_error_move (err, &rq.err);
      return -1;
    }
  *ret = rq.session;
  return 0;
}

int
sr_sessions_new (const struct sr_config *cfg, struct sr_store *store, struct sr_sessions **ret,
                 sr_error_t *err)
{
  struct sr_sessions *m = sr_xcalloc (1, sizeof *m);
  pthread_condattr_t ca;
  int r;

  m->cfg = cfg;
  m->store = store;
  m->queue_ms = cfg->session_queue_ms;
  pthread_mutex_init (&m->lock, NULL);
  pthread_mutex_init (&m->connect_lock, NULL);
  pthread_condattr_init (&ca);
  pthread_condattr_setclock (&ca, CLOCK_MONOTONIC);
  pthread_cond_init (&m->changed, &ca);
  pthread_condattr_destroy (&ca);
  m->be = sr_backend_get (cfg, err);
  if (m->be == NULL)
    goto fail;
  if (m->be->open (cfg, store, SR_BACKEND_SESSIONS, &m->be_state, err) < 0)
    {
      m->be = NULL;
      sr_error_wrap (err, "sessions on the %s backend",
                     sr_backend_kind_name (cfg->backend_kind));
      goto fail;
    }
  r = pthread_create (&m->reaper, NULL, reaper_main, m);
  if (r != 0)
    {
      sr_error_set (err, r, "start the session reaper");
      goto fail;
    }
  m->reaper_started = true;
  *ret = m;
  return 0;

fail:
  sr_sessions_free (m);
  return -1;
}

void
sr_sessions_free (struct sr_sessions *m)
{
  struct sr_session *s;

  if (m == NULL)
    return;
  pthread_mutex_lock (&m->lock);
  m->stop = true;
  pthread_cond_broadcast (&m->changed);
  pthread_mutex_unlock (&m->lock);
  if (m->reaper_started)
    pthread_join (m->reaper, NULL);

  pthread_mutex_lock (&m->lock);
  for (;;)
    {
      bool busy = false;

      for (s = m->head; s; s = s->next)
        busy |= s->busy || s->pins;
      if (!busy)
        break;
      pthread_cond_wait (&m->changed, &m->lock);
    }
  s = m->head;
  m->head = NULL;
  pthread_mutex_unlock (&m->lock);
  while (s)
    {
      struct sr_session *next = s->next;

      session_destroy (s);
      s = next;
    }
  if (m->be)
    m->be->close (m->be_state);
  if (m->ssh_be)
    m->ssh_be->close (m->ssh_state);
  while (m->defaults)
    {
      struct machine_default *d = m->defaults;

      m->defaults = d->next;
      default_free (d);
    }
  pthread_cond_destroy (&m->changed);
  pthread_mutex_destroy (&m->connect_lock);
  pthread_mutex_destroy (&m->lock);
  free (m);
}

static void
make_id (char id[static 40])
{
  /* getrandom fails only without a kernel source, which no run could
   * survive either.  */
  if (sr_random_hex (id, 16, NULL) < 0)
    abort ();
}

static int session_exec (void *ctx, const struct sr_exec_spec *spec,
                         const struct sr_run_options *opts, struct sr_run_result *res,
                         sr_error_t *err);

static int
session_create (struct sr_sessions *m, const char *image_ref, struct sr_session **ret,
                sr_error_t *err)
{
  struct sr_session *s = sr_xcalloc (1, sizeof *s);

  s->m = m;
  s->be = m->be;
  s->be_state = m->be_state;
  s->ids.map.lease_fd = -1;
  make_id (s->id);
  /* The user is known once create has the image: it sets who owns the
   * session's files (sr_policy_ids_owner).  */
  if (sr_policy_ids_take (m->cfg, 0, 0, &s->ids, err) < 0
      || m->be->create (m->be_state, s->id, image_ref, &s->ids, &s->box, &s->fs, err) < 0)
    goto fail;
  /* The syntax check of TOML runs python3 in the session.  */
  s->fs.exec = session_exec;
  s->fs.exec_ctx = s;
  s->created = (int64_t) time (NULL);
  s->last_used_ns = sr_now_ns ();
  sr_log (SR_LOG_INFO, "session_open", "session", s->id, "image", image_ref, "backend",
          sr_backend_kind_name (m->be->kind), NULL);
  *ret = s;
  return 0;

fail:
  session_destroy (s);
  return -1;
}

/* Waits, under the lock, for a session to be released, until
 * *deadline_ns (CLOCK_MONOTONIC; set on the first call, m->queue_ms from
 * now).  False once it has passed.  With a cancel_fd the wait goes in
 * slices, as a condition variable cannot watch an fd.  */
static bool
wait_turn (struct sr_sessions *m, uint64_t *deadline_ns, int cancel_fd)
{
  uint64_t now = sr_now_ns (), until;
  struct timespec ts;

  if (*deadline_ns == 0)
    *deadline_ns = now + m->queue_ms * 1000000ull;
  if (now >= *deadline_ns)
    return false;
  until = *deadline_ns;
  if (cancel_fd >= 0 && now + CANCEL_CHECK_NS < until)
    until = now + CANCEL_CHECK_NS;
  ts.tv_sec = (time_t) (until / 1000000000ull);
  ts.tv_nsec = (long) (until % 1000000000ull);
  /* m->changed runs on CLOCK_MONOTONIC (sr_sessions_new).  */
  pthread_cond_timedwait (&m->changed, &m->lock, &ts);
  return true;
}

/* Counts a session about to be made (machines too), within
 * max_sessions and owner's max_sessions_per_owner.  m->lock held.  */
static int
reserve_locked (struct sr_sessions *m, const char *owner, sr_error_t *err)
{
  if (m->n >= m->cfg->max_sessions)
    return sr_error_set_code (err, "session_limit", 0,
                              "%zu sessions are open, the limit (max_sessions); close one with "
                              "close_session first",
                              m->n);
  if (owner && m->cfg->max_sessions_per_owner
      && owned_locked (m, owner) >= m->cfg->max_sessions_per_owner)
    return sr_error_set_code (err, "session_limit", 0,
                              "this client has %llu sessions open, its limit "
                              "(max_sessions_per_owner); close one with close_session first",
                              (unsigned long long) m->cfg->max_sessions_per_owner);
  m->n++;
  return 0;
}

/* Puts s (made after reserve_locked) at the end of the list, owned by
 * owner.  m->lock held.  */
static void
append_locked (struct sr_sessions *m, struct sr_session *s, const char *owner)
{
  struct sr_session **pp = &m->head;

  while (*pp)
    pp = &(*pp)->next;
  *pp = s;
  s->owner = owner ? sr_xstrdup (owner) : NULL;
}

int
sr_sessions_acquire (struct sr_sessions *m, const char *owner, const char *id, const char *image,
                     int cancel_fd, struct sr_session **ret, sr_error_t *err)
{
  struct sr_session *s = NULL;
  int r;

  pthread_mutex_lock (&m->lock);
  if (id && *id)
    {
      uint64_t deadline_ns = 0;

      /* Looked up again after each wait: the session may have been
       * closed or have expired meanwhile.  */
      for (;;)
        {
          s = find_locked (m, owner, id);
          if (s && !s->busy && !s->be->alive (s->box))
            s = NULL;  /* the reaper takes it */
          if (s == NULL)
            r = sr_error_set_code (err, "session_not_found", 0,
                                   "no session '%s' (it may have expired or been closed)", id);
          else if (!s->busy)
            {
              s->busy = true;
              *ret = s;
              r = 0;
            }
          else if (sr_cancel_requested (cancel_fd))
            r = sr_error_set_code (err, "cancelled", ECANCELED,
                                   "cancelled while waiting for session %s", id);
          else if (m->queue_ms && !m->stop && wait_turn (m, &deadline_ns, cancel_fd))
            continue;
          else if (m->queue_ms)
            r = sr_error_set_code (err, "session_busy", 0,
                                   "session %s was still busy with another call after %" PRIu64
                                   " ms (session_queue_timeout); retry when it ends",
                                   id, m->queue_ms);
          else
            r = sr_error_set_code (err, "session_busy", 0,
                                   "session %s is busy with another call; retry when it ends", id);
          break;
        }
      pthread_mutex_unlock (&m->lock);
      return r;
    }
  if (reserve_locked (m, owner, err) < 0)
    {
      pthread_mutex_unlock (&m->lock);
      return -1;
    }
  pthread_mutex_unlock (&m->lock);

  r = create_on_manager (m, image && *image ? image : m->cfg->session_image, &s, err);
  /* Creation runs to its end on the manager's thread (a few ms natively,
   * a container start on Docker); a session nobody is left to use is not
   * kept.  */
  if (r == 0 && sr_cancel_requested (cancel_fd))
    {
      session_destroy (s);
      r = sr_error_set_code (err, "cancelled", ECANCELED, "cancelled while creating a session");
    }

  pthread_mutex_lock (&m->lock);
  if (r < 0)
    m->n--;
  else
    {
      append_locked (m, s, owner);
      s->busy = true;
      *ret = s;
    }
  pthread_mutex_unlock (&m->lock);
  return r;
}

/* used: the call counts as use, which restarts the idle timeout; a look
 * (env's ps, inspect, logs, stats) does not.  */
static void
release (struct sr_session *s, bool used)
{
  struct sr_sessions *m;

  if (s == NULL)
    return;
  m = s->m;
  pthread_mutex_lock (&m->lock);
  s->busy = false;
  if (used)
    s->last_used_ns = sr_now_ns ();
  pthread_cond_broadcast (&m->changed);
  pthread_mutex_unlock (&m->lock);
}

void
sr_session_release (struct sr_session *s)
{
  release (s, true);
}

int
sr_sessions_close (struct sr_sessions *m, const char *owner, const char *id, sr_error_t *err)
{
  struct sr_session *s, **pp;

  pthread_mutex_lock (&m->lock);
  pp = lookup_locked (m, owner, id, strlen (id));
  s = pp ? *pp : NULL;
  if (s == NULL || s->busy || s->pins)
    {
      pthread_mutex_unlock (&m->lock);
      if (s == NULL)
        return sr_error_set_code (err, "session_not_found", 0, "no session '%s'", id);
      return sr_error_set_code (err, "session_busy", 0,
                                "session %s is busy with another call; close it when that ends",
                                id);
    }
  *pp = s->next;
  m->n--;
  pthread_mutex_unlock (&m->lock);
  session_destroy (s);
  return 0;
}

void
sr_sessions_orphan (struct sr_sessions *m, const char *owner)
{
  struct machine_default **pp;

  pthread_mutex_lock (&m->lock);
  for (struct sr_session *s = m->head; s; s = s->next)
    if (s->owner && strcmp (s->owner, owner) == 0)
      s->orphaned = true;
  if ((pp = default_locked (m, owner)))
    {
      struct machine_default *d = *pp;

      *pp = d->next;
      default_free (d);
    }
  /* The reaper wakes for it.  */
  pthread_cond_broadcast (&m->changed);
  pthread_mutex_unlock (&m->lock);
}

void
sr_sessions_list (struct sr_sessions *m, const char *owner, struct sr_session_info **ret,
                  size_t *ret_n)
{
  struct sr_session_info *v = NULL;
  size_t n = 0;
  uint64_t now = sr_now_ns ();

  pthread_mutex_lock (&m->lock);
  for (struct sr_session *s = m->head; s; s = s->next)
    {
      struct sr_session_info *i;

      if (!visible (s, owner))
        continue;
      v = sr_xrealloc (v, (n + 1) * sizeof *v);
      i = &v[n++];
      memset (i, 0, sizeof *i);
      snprintf (i->id, sizeof i->id, "%s", s->id);
      i->image = sr_xstrdup (s->be->image (s->box));
      i->init_pid = s->be->pid (s->box);
      i->backend = sr_backend_kind_name (s->be->kind);
      i->sandbox = s->home == NULL;
      i->n_shells = s->n_shells;
      i->created = s->created;
      i->idle_ms = s->busy ? 0 : (now - s->last_used_ns) / 1000000;
      i->busy = s->busy;
    }
  pthread_mutex_unlock (&m->lock);
  *ret = v;
  *ret_n = n;
}

void
sr_session_infos_free (struct sr_session_info *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (v[i].image);
  free (v);
}

const char *
sr_session_id (const struct sr_session *s)
{
  return s->id;
}

const char *
sr_session_image (const struct sr_session *s)
{
  return s->be->image (s->box);
}

const struct sr_fsroot *
sr_session_fs (const struct sr_session *s)
{
  return &s->fs;
}

int
sr_session_exec (struct sr_session *s, const struct sr_exec_spec *spec,
                 const struct sr_run_options *opts, struct sr_run_result *res, sr_error_t *err)
{
  _cleanup_strv_ char **env = NULL;
  struct sr_exec_spec full = *spec;

  if (full.env == NULL)
    full.env = env = s->be->env (s->box);
  if (full.cwd == NULL)
    full.cwd = s->home ? s->home : SR_DATA_DIR;
  return s->be->exec (s->box, &full, opts, res, err);
}

/* A shell's way into its session (sr_shell_exec_fn).  */
static int
session_exec (void *ctx, const struct sr_exec_spec *spec, const struct sr_run_options *opts,
              struct sr_run_result *res, sr_error_t *err)
{
  return sr_session_exec (ctx, spec, opts, res, err);
}

static int
run_session_stage (void *ctx, struct sr_code_stage *st, struct sr_run_result *res,
                   sr_error_t *err)
{
  struct sr_session *s = ctx;
  _cleanup_close_ int stdin_fd = -1;
  struct sr_run_options opts = {
    .timeout_ms = st->timeout_ms, .max_output = sr_code_stage_max_output (st, s->m->cfg->max_output),
    .stdin_fd = -1,
    .cancel_fd = st->req->cancel_fd,
  };
  struct sr_exec_spec spec = { .argv = st->argv };

  if (st->argv[0] == NULL)
    return sr_error_set (err, 0, "empty %s command", st->name);
  if (sr_code_stage_stdin (st, &stdin_fd, err) < 0)
    return -1;
  opts.stdin_fd = stdin_fd;
  sr_code_stage_progress (st, &opts);
  return sr_session_exec (s, &spec, &opts, res, err);
}

/* The artifacts a call changed, with their MIME types.  */
static void
changed_artifacts (struct sr_session *s, struct sr_artifact *before, size_t n_before,
                   struct sr_artifact **ret, size_t *ret_n)
{
  struct sr_artifact *after = NULL;
  size_t n_after = 0;
  bool truncated;

  *ret = NULL;
  *ret_n = 0;
  if (sr_files_list (&s->fs, false, &after, &n_after, &truncated, NULL) < 0)
    return;
  sr_artifacts_changed (&s->fs, before, n_before, after, n_after, ret, ret_n);
  sr_artifacts_free (after, n_after);
  for (size_t i = 0; i < *ret_n; i++)
    {
      uint64_t size;
      int fd = sr_files_open_artifact (&s->fs, (*ret)[i].path, &size, NULL);

      if (fd >= 0)
        {
          (*ret)[i].mime_type = sr_files_mime (fd);
          close (fd);
        }
    }
}

int
sr_session_run_code (struct sr_session *s, const struct sr_code_request *req,
                     struct sr_code_result *res, struct sr_artifact **ret_artifacts,
                     size_t *ret_n_artifacts, sr_error_t *err)
{
  const struct sr_config *cfg = s->m->cfg;
  const struct sr_language *l;
  _cleanup_free_ struct sr_code_file *files = NULL;
  struct sr_artifact *before = NULL;
  size_t n_before = 0;
  bool truncated;
  int r;

  memset (res, 0, sizeof *res);
  *ret_artifacts = NULL;
  *ret_n_artifacts = 0;
  if (s->home)
    return sr_error_set_plain (err, "not_a_sandbox", ENOTSUP,
                               "machine %s is an SSH host, not a sandbox: run_code runs only "
                               "in sandbox sessions (give no machine, or a session's id); on "
                               "%s, run commands with shell_exec, with that account's rights",
                               s->id, s->id);
  if (sr_code_validate (cfg, req, &l, err) < 0)
    return -1;
  /* The source, then the request's other files beside it.  */
  files = sr_xcalloc (req->n_files + 1, sizeof *files);
  files[0] = (struct sr_code_file){ .name = l->source, .content = req->code,
                                    .len = req->code_len };
  if (req->n_files)
    memcpy (files + 1, req->files, req->n_files * sizeof *files);
  res->language = sr_xstrdup (l->name);
  if (sr_code_put_files (&s->fs, files, req->n_files + 1, err) < 0)
    return -1;
  (void) sr_files_list (&s->fs, false, &before, &n_before, &truncated, NULL);

  r = sr_code_run_stages (cfg, l, req, NULL, run_session_stage, s, res, err);
  if (r == 0)
    changed_artifacts (s, before, n_before, ret_artifacts, ret_n_artifacts);
  sr_artifacts_free (before, n_before);
  return r;
}

/* --- persistent shells --- */

int
sr_sessions_shell_new (struct sr_sessions *m, const char *owner, const char *session_id,
                       char **ret_shell_id, char **ret_session_id, sr_error_t *err)
{
  struct sr_session *s;
  struct sr_shell *sh = NULL;
  char id[64];
  size_t keep;
  int r;

  if (session_id && *session_id)
    {
      pthread_mutex_lock (&m->lock);
      s = find_locked (m, owner, session_id);
      if (s == NULL || !s->be->alive (s->box))
        {
          pthread_mutex_unlock (&m->lock);
          return sr_error_set_code (err, "session_not_found", 0, "no session '%s'", session_id);
        }
      s->pins++;
      pthread_mutex_unlock (&m->lock);
    }
  else
    {
      if (sr_sessions_acquire (m, owner, NULL, NULL, -1, &s, err) < 0)
        return -1;
      pthread_mutex_lock (&m->lock);
      s->pins++;
      pthread_mutex_unlock (&m->lock);
      sr_session_release (s);
    }

  pthread_mutex_lock (&m->lock);
  if (s->n_shells >= SR_MAX_SHELLS_PER_SESSION)
    r = sr_error_set_code (err, "shell_limit", 0,
                           "session %s has %u shells, the most it may have; remove one first",
                           s->id, SR_MAX_SHELLS_PER_SESSION);
  else
    {
      snprintf (id, sizeof id, s->home ? "%s-%u.%s" : "%s-%u", s->id, ++s->shell_serial,
                s->shell_tag);
      r = 0;
    }
  pthread_mutex_unlock (&m->lock);
  /* The shell keeps what the largest max_output of a call may return.  */
  keep = m->cfg->max_output > m->cfg->max_output_ceiling ? m->cfg->max_output
                                                         : m->cfg->max_output_ceiling;
  if (r == 0
      && sr_shell_start (session_exec, s, &s->fs, id, keep,
                         s->be->shell_one_stream, &sh, err) < 0)
    {
      /* A shell that does not start is the service's failure, whatever
       * the write of its rc file said.  */
      r = sr_error_recode (err, "sandbox_error");
    }

  pthread_mutex_lock (&m->lock);
  if (r == 0)
    {
      s->shells = sr_xrealloc (s->shells, (s->n_shells + 1) * sizeof *s->shells);
      s->shells[s->n_shells++] = (struct shell_slot) { .sh = sh };
      *ret_shell_id = sr_xstrdup (id);
      *ret_session_id = sr_xstrdup (s->id);
    }
  s->pins--;
  s->last_used_ns = sr_now_ns ();
  pthread_cond_broadcast (&m->changed);
  pthread_mutex_unlock (&m->lock);
  return r;
}

char *
sr_session_of_shell (const char *shell_id)
{
  const char *dash = shell_id ? strrchr (shell_id, '-') : NULL;

  if (dash == NULL || dash == shell_id)
    return NULL;
  return sr_xasprintf ("%.*s", (int) (dash - shell_id), shell_id);
}

/* The slot of shell_id, under the lock.  */
static struct shell_slot *
find_shell_locked (struct sr_sessions *m, const char *owner, const char *shell_id,
                   struct sr_session **ret)
{
  const char *dash = strrchr (shell_id, '-');
  size_t len;

  if (dash == NULL)
    return NULL;
  len = (size_t) (dash - shell_id);
  /* Every session of that id: a machine's name may be another owner's
   * too, and shell_put looks as any owner.  */
  for (struct sr_session *s = m->head; s; s = s->next)
    {
      if (strlen (s->id) != len || memcmp (s->id, shell_id, len) != 0 || !visible (s, owner))
        continue;
      for (size_t i = 0; i < s->n_shells; i++)
        if (strcmp (sr_shell_id (s->shells[i].sh), shell_id) == 0)
          {
            *ret = s;
            return &s->shells[i];
          }
    }
  return NULL;
}

int
sr_sessions_shell_get (struct sr_sessions *m, const char *owner, const char *shell_id,
                       struct sr_shell **ret, sr_error_t *err)
{
  struct sr_session *s;
  struct shell_slot *slot;

  pthread_mutex_lock (&m->lock);
  slot = find_shell_locked (m, owner, shell_id, &s);
  if (slot)
    {
      slot->refs++;
      s->pins++;
      *ret = slot->sh;
    }
  pthread_mutex_unlock (&m->lock);
  if (slot == NULL)
    return sr_error_set_code (err, "shell_not_found", 0,
                              "no shell '%s' (its session may have expired or been closed)",
                              shell_id);
  return 0;
}

void
sr_sessions_shell_put (struct sr_sessions *m, struct sr_shell *sh)
{
  struct sr_session *s;
  struct shell_slot *slot;

  pthread_mutex_lock (&m->lock);
  /* The shell was got by its owner: any caller finds it again.  */
  slot = find_shell_locked (m, NULL, sr_shell_id (sh), &s);
  if (slot)
    {
      slot->refs--;
      s->pins--;
      s->last_used_ns = sr_now_ns ();
      pthread_cond_broadcast (&m->changed);
    }
  pthread_mutex_unlock (&m->lock);
}

int
sr_sessions_shell_remove (struct sr_sessions *m, const char *owner, const char *shell_id,
                          sr_error_t *err)
{
  struct sr_session *s;
  struct shell_slot *slot;
  struct sr_shell *sh;

  pthread_mutex_lock (&m->lock);
  slot = find_shell_locked (m, owner, shell_id, &s);
  if (slot == NULL || slot->refs)
    {
      pthread_mutex_unlock (&m->lock);
      if (slot == NULL)
        return sr_error_set_code (err, "shell_not_found", 0, "no shell '%s'", shell_id);
      return sr_error_set_code (err, "shell_busy", 0,
                                "shell %s is in use by another call; remove it when that ends",
                                shell_id);
    }
  sh = slot->sh;
  *slot = s->shells[--s->n_shells];
  s->pins++;
  pthread_mutex_unlock (&m->lock);

  stop_shell (s, sh);

  pthread_mutex_lock (&m->lock);
  s->pins--;
  s->last_used_ns = sr_now_ns ();
  pthread_cond_broadcast (&m->changed);
  pthread_mutex_unlock (&m->lock);
  return 0;
}

void
sr_sessions_shell_list (struct sr_sessions *m, const char *owner, struct sr_shell_info **ret,
                        size_t *ret_n)
{
  struct sr_shell_info *v = NULL;
  size_t n = 0;

  pthread_mutex_lock (&m->lock);
  for (struct sr_session *s = m->head; s; s = s->next)
    for (size_t i = 0; i < s->n_shells && visible (s, owner); i++)
      {
        v = sr_xrealloc (v, (n + 1) * sizeof *v);
        v[n].shell_id = sr_xstrdup (sr_shell_id (s->shells[i].sh));
        v[n].session_id = sr_xstrdup (s->id);
        v[n].state = sr_shell_state (s->shells[i].sh);
        n++;
      }
  pthread_mutex_unlock (&m->lock);
  *ret = v;
  *ret_n = n;
}

void
sr_shell_infos_free (struct sr_shell_info *v, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (v[i].shell_id);
      free (v[i].session_id);
    }
  free (v);
}

/* --- machines: SSH hosts, and every owner's default --- */

/* The SSH backend, opened once (m->connect_lock held).  */
static int
ssh_backend (struct sr_sessions *m, sr_error_t *err)
{
  const struct sr_backend *be;

  if (m->ssh_be)
    return 0;
  be = sr_backend_find (SR_BACKEND_SSH);
  if (be == NULL)
    return sr_error_set_code (err, "sandbox_error", 0, "this binary has no SSH backend");
  if (be->open (m->cfg, m->store, SR_BACKEND_SESSIONS, &m->ssh_state, err) < 0)
    return sr_error_wrap (err, "SSH machines");
  m->ssh_be = be;
  return 0;
}

/* A machine's file primitives: the backend's, but a path given inside
 * SR_DATA_DIR (an artifact's, an upload's) is refused, as a host has no
 * data directory of ours and must not get one made.  */
static int
no_data_dir (const struct sr_session *s, sr_error_t *err)
{
  return sr_error_set_plain (err, "not_a_sandbox", ENOTSUP,
                             "machine %s is an SSH host, not a sandbox: it has no %s (no "
                             "uploads, no artifacts); name files there by their paths on the "
                             "host", s->id, SR_DATA_DIR);
}

static int
machine_read (void *ctx, const char *abs, unsigned flags, uint64_t max, char **ret,
              size_t *ret_len, sr_error_t *err)
{
  struct sr_session *s = ctx;

  if (flags & SR_FS_DATA)
    return no_data_dir (s, err);
  return s->host_fs.ops->read (s->host_fs.ctx, abs, flags, max, ret, ret_len, err);
}

static int
machine_write (void *ctx, const char *abs, unsigned flags, const void *buf, size_t len,
               bool overwrite, sr_error_t *err)
{
  struct sr_session *s = ctx;

  if (flags & SR_FS_DATA)
    return no_data_dir (s, err);
  return s->host_fs.ops->write (s->host_fs.ctx, abs, flags, buf, len, overwrite, err);
}

static int
machine_walk (void *ctx, const char *abs, unsigned flags, unsigned max_depth, int cancel_fd,
              sr_fs_visit_fn visit, void *userdata, bool *ret_truncated, sr_error_t *err)
{
  struct sr_session *s = ctx;

  if (flags & SR_FS_DATA)
    return no_data_dir (s, err);
  return s->host_fs.ops->walk (s->host_fs.ctx, abs, flags, max_depth, cancel_fd, visit,
                               userdata, ret_truncated, err);
}

static int
machine_open (void *ctx, const char *abs, unsigned flags, uint64_t *ret_size, sr_error_t *err)
{
  struct sr_session *s = ctx;

  if (flags & SR_FS_DATA)
    return no_data_dir (s, err);
  return s->host_fs.ops->open (s->host_fs.ctx, abs, flags, ret_size, err);
}

static const struct sr_fs_ops machine_fs_ops = {
  .read = machine_read,
  .write = machine_write,
  .walk = machine_walk,
  .open = machine_open,
};

/* The remote account's home: where its commands and relative paths
 * start (the login's directory, before any cd).  */
static int
machine_home (struct sr_session *s, sr_error_t *err)
{
  char *argv[] = { (char *) "pwd", NULL };
  char *no_env[] = { NULL };
  struct sr_exec_spec spec = { .argv = argv, .cwd = "", .env = no_env };
  struct sr_run_options opts = { .timeout_ms = 30000, .max_output = 4096, .stdin_fd = -1,
                                 .cancel_fd = -1 };
  struct sr_run_result res;
  size_t len;

  if (s->be->exec (s->box, &spec, &opts, &res, err) < 0)
    return -1;
  len = res.out.data ? strcspn (res.out.data, "\r\n") : 0;
  if (res.status != SR_RUN_SUCCESS || len == 0 || res.out.data[0] != '/')
    {
      sr_run_result_done (&res);
      return sr_error_set_code (err, "connect_failed", 0,
                                "ssh %s: the remote login shell did not say its directory "
                                "(is it a POSIX shell that prints nothing of its own?)",
                                s->id);
    }
  s->home = sr_xasprintf ("%.*s", (int) len, res.out.data);
  sr_run_result_done (&res);
  return 0;
}

static int
machine_create (struct sr_sessions *m, const char *name, struct sr_session **ret,
                sr_error_t *err)
{
  struct sr_session *s = sr_xcalloc (1, sizeof *s);

  s->m = m;
  s->be = m->ssh_be;
  s->be_state = m->ssh_state;
  s->ids.map.lease_fd = -1;
  snprintf (s->id, sizeof s->id, "%s", name);
  if (sr_random_hex (s->shell_tag, (sizeof s->shell_tag - 1) / 2, err) < 0)
    goto fail;
  if (s->be->create (s->be_state, s->id, name, NULL, &s->box, &s->host_fs, err) < 0)
    goto fail;
  s->fs = (struct sr_fsroot){ .ops = &machine_fs_ops, .ctx = s };
  s->fs.exec = session_exec;
  s->fs.exec_ctx = s;
  if (machine_home (s, err) < 0)
    goto fail;
  s->created = (int64_t) time (NULL);
  s->last_used_ns = sr_now_ns ();
  sr_log (SR_LOG_INFO, "session_open", "session", s->id, "image", s->be->image (s->box),
          "backend", sr_backend_kind_name (s->be->kind), NULL);
  *ret = s;
  return 0;

fail:
  session_destroy (s);
  return -1;
}

int
sr_sessions_connect (struct sr_sessions *m, const char *owner, const char *name,
                     bool *ret_new, char **ret_home, sr_error_t *err)
{
  struct sr_session *s = NULL;
  int r;

  *ret_new = false;
  *ret_home = NULL;
  if (!sr_ssh_name_valid (name))
    return sr_error_set_code (err, "invalid_arguments", EINVAL,
                              "machine name '%s': use 1 to 32 of a-z, A-Z, 0-9, '_' and '-', "
                              "not starting with '-'", name);
  pthread_mutex_lock (&m->connect_lock);
  if (ssh_backend (m, err) < 0)
    {
      pthread_mutex_unlock (&m->connect_lock);
      return -1;
    }
  pthread_mutex_lock (&m->lock);
  s = find_locked (m, owner, name);
  if (s && s->home == NULL)
    r = sr_error_set_code (err, "invalid_arguments", EEXIST,
                           "'%s' is a sandbox session's id, not an SSH target", name);
  else if (s)
    {
      *ret_home = sr_xstrdup (s->home);  /* connected already */
      r = 0;
    }
  else
    r = reserve_locked (m, owner, err);
  pthread_mutex_unlock (&m->lock);
  if (r < 0 || s)
    {
      pthread_mutex_unlock (&m->connect_lock);
      return r;
    }

  r = machine_create (m, name, &s, err);
  pthread_mutex_lock (&m->lock);
  if (r < 0)
    m->n--;
  else
    {
      append_locked (m, s, owner);
      *ret_home = sr_xstrdup (s->home);
    }
  pthread_cond_broadcast (&m->changed);
  pthread_mutex_unlock (&m->lock);
  pthread_mutex_unlock (&m->connect_lock);
  *ret_new = r == 0;
  return r;
}

const char *
sr_session_home (const struct sr_session *s)
{
  return s->home;
}

int
sr_sessions_default_set (struct sr_sessions *m, const char *owner, const char *machine,
                         const char *shell_id, sr_error_t *err)
{
  _cleanup_free_ char *of_shell = NULL;
  struct machine_default **pp, *d;
  struct sr_session *s = NULL;

  if (shell_id && (of_shell = sr_session_of_shell (shell_id)) == NULL)
    return sr_error_set_code (err, "shell_not_found", 0, "no shell '%s'", shell_id);
  if (machine && of_shell && strcmp (machine, of_shell) != 0)
    return sr_error_set_code (err, "invalid_arguments", 0,
                              "shell %s is not on machine %s", shell_id, machine);
  if (machine == NULL)
    machine = of_shell;
  pthread_mutex_lock (&m->lock);
  if (machine && (s = find_locked (m, owner, machine)) == NULL)
    {
      pthread_mutex_unlock (&m->lock);
      return sr_error_set_code (err, "session_not_found", 0,
                                "no machine '%s' (machine_list lists them)", machine);
    }
  if (shell_id && find_shell_locked (m, owner, shell_id, &s) == NULL)
    {
      pthread_mutex_unlock (&m->lock);
      return sr_error_set_code (err, "shell_not_found", 0, "no shell '%s'", shell_id);
    }
  pp = default_locked (m, owner);
  if (pp)
    {
      d = *pp;
      *pp = d->next;
      default_free (d);
    }
  if (machine)
    {
      d = sr_xcalloc (1, sizeof *d);
      d->owner = owner ? sr_xstrdup (owner) : NULL;
      d->machine = sr_xstrdup (machine);
      d->shell_id = shell_id ? sr_xstrdup (shell_id) : NULL;
      d->next = m->defaults;
      m->defaults = d;
    }
  pthread_mutex_unlock (&m->lock);
  return 0;
}

void
sr_sessions_default_get (struct sr_sessions *m, const char *owner, char **ret_machine,
                         char **ret_shell_id)
{
  struct machine_default **pp;
  struct sr_session *s;

  *ret_machine = *ret_shell_id = NULL;
  pthread_mutex_lock (&m->lock);
  pp = default_locked (m, owner);
  /* A default closed or removed since is no default.  */
  if (pp && find_locked (m, owner, (*pp)->machine))
    {
      *ret_machine = sr_xstrdup ((*pp)->machine);
      if ((*pp)->shell_id && find_shell_locked (m, owner, (*pp)->shell_id, &s))
        *ret_shell_id = sr_xstrdup ((*pp)->shell_id);
    }
  pthread_mutex_unlock (&m->lock);
}

/* --- env's Docker actions --- */

/* Ends s's shells before its container stops: their execs die with it.
 * Refuses while a call uses one.  */
static int
end_shells (struct sr_session *s, size_t *ret_n, sr_error_t *err)
{
  struct sr_sessions *m = s->m;
  struct shell_slot *shells;
  size_t n;

  pthread_mutex_lock (&m->lock);
  for (size_t i = 0; i < s->n_shells; i++)
    if (s->shells[i].refs)
      {
        pthread_mutex_unlock (&m->lock);
        return sr_error_set_code (err, "shell_busy", 0,
                                  "a shell of machine %s is in use by another call; "
                                  "try again when it ends",
                                  s->id);
      }
  shells = s->shells;
  n = s->n_shells;
  s->shells = NULL;
  s->n_shells = 0;
  pthread_mutex_unlock (&m->lock);

  for (size_t i = 0; i < n; i++)
    stop_shell (s, shells[i].sh);
  free (shells);
  *ret_n = n;
  return 0;
}

int
sr_sessions_control (struct sr_sessions *m, const char *owner, const char *id,
                     enum sr_box_action a, unsigned tail, size_t max_output, cJSON *out,
                     sr_error_t *err)
{
  struct sr_session *s;
  size_t ended = 0;
  int r = -1;

  if (id == NULL || *id == '\0')
    return sr_error_set_code (err, "invalid_arguments", 0, "no machine named");
  if (sr_sessions_acquire (m, owner, id, NULL, -1, &s, err) < 0)
    return -1;
  if (s->be->control == NULL)
    sr_error_set_code (err, "docker_unavailable", 0,
                       "machine %s is %s, not a container of the Docker backend",
                       id, s->home ? "an SSH host" : "a native sandbox session");
  else if ((a == SR_BOX_STOP || a == SR_BOX_RESTART) && end_shells (s, &ended, err) < 0)
    ;
  else
    r = s->be->control (s->box, a, tail, max_output, out, err);
  if (r == 0 && (a == SR_BOX_STOP || a == SR_BOX_RESTART))
    cJSON_AddNumberToObject (out, "shells_ended", (double) ended);
  release (s, a == SR_BOX_STOP || a == SR_BOX_START || a == SR_BOX_RESTART);
  return r;
}
