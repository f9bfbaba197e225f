#include "config.h"

#include "sandbox/service.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

#include "common/log.h"
#include "common/util.h"
#include "image/digest.h"
#include "image/store.h"
#include "sandbox/policy.h"
#include "sandbox/pool.h"
#include "sandbox/session.h"

struct sr_service
{
  const struct sr_config *cfg;
  enum sr_service_mode mode;
  const char *source;
  struct sr_store *store;
  pthread_mutex_t history_lock;  /* guards opening the history */
  struct sr_history *history;    /* NULL: not open (history_problem says why) */
  char *history_problem;         /* why it did not open first; kept until close */
  int64_t history_tried_ms;      /* a server's last attempt to open it */
  struct sr_code_pool *pool;     /* NULL: the policy did not load; runs start fresh */
  struct sr_sessions *sessions;
  char *sessions_problem;
  pthread_mutex_t prune_lock;
  int64_t pruned_ms;             /* when the audit trail was last pruned */
};

/* A server whose history did not open (a database down) tries again at
 * its next use, at most this often.  */
#define HISTORY_RETRY_MS 1000

/* The audit trail is pruned at most this often.  */
#define AUDIT_PRUNE_INTERVAL_MS (3600 * 1000)

/* Deletes the audit rows past audit_retention_days (0: keeps them).  */
static int
prune_audit (const struct sr_config *cfg, struct sr_history *h, sr_error_t *err)
{
  if (cfg->audit_retention_days == 0)
    return 0;
  return sr_history_audit_prune (h, sr_now_realtime_ms () - (int64_t) cfg->audit_retention_days * 86400000,
                                 NULL, err);
}

/* A server's start: everything a long-lived process keeps.  */
static void
open_server_parts (struct sr_service *s)
{
  const struct sr_config *cfg = s->cfg;
  sr_error_t e = NULL;

  if (sr_history_open (cfg->history_db, &s->history, &e) < 0)
    {
      /* The message names the database, never its password.  */
      if (cfg->history_db && *cfg->history_db)
        sr_log (SR_LOG_WARNING, "history_unavailable", "error", e->msg, NULL);
      s->history_problem = sr_xstrdup (e->msg);
      sr_error_free (&e);
    }
  else if (prune_audit (cfg, s->history, &e) < 0)
    sr_error_free (&e); /* the next hour's prune tries again */
  s->pruned_ms = s->history_tried_ms = sr_now_realtime_ms ();
  /* Set once, before any worker thread reads it.  */
  sr_policy_seccomp_cache (cfg);
  if (sr_code_pool_new (cfg, s->store, &s->pool, &e) < 0)
    sr_error_free (&e);
  if (sr_sessions_new (cfg, s->store, &s->sessions, &e) < 0)
    {
      s->sessions_problem = sr_xstrdup (e->msg);
      sr_error_free (&e);
    }
}

int
sr_service_open (const struct sr_config *cfg, enum sr_service_mode mode, const char *source,
                 struct sr_service **ret, sr_error_t *err)
{
  struct sr_service *s = sr_xcalloc (1, sizeof *s);

  /* A runner killed with SIGKILL (a server or a CLI run) could not clean
   * up: its containers' state, cgroups and scratch directories go before
   * this one runs anything.  */
  sr_code_reclaim (cfg);
  s->cfg = cfg;
  s->mode = mode;
  s->source = source;
  /* A one-shot run on the native backend only reads the store: a missing
   * (mistyped) one is an error, not a directory made for a run that then
   * fails.  A server and the Docker backend make it as before.  */
  if (sr_store_open_all (cfg->image_store, cfg->image_stores_readonly,
                         mode != SR_SERVICE_ONE_SHOT || cfg->backend_kind != SR_BACKEND_NATIVE,
                         &s->store, err) < 0)
    {
      free (s);
      return -1;
    }
  sr_store_set_caps (s->store, cfg->max_image_size, cfg->max_image_entries);
  pthread_mutex_init (&s->history_lock, NULL);
  pthread_mutex_init (&s->prune_lock, NULL);
  if (mode == SR_SERVICE_SERVER)
    open_server_parts (s);
  else
    s->sessions_problem = sr_xstrdup ("sessions need a server");
  *ret = s;
  return 0;
}

void
sr_service_close (struct sr_service *s)
{
  if (s == NULL)
    return;
  sr_sessions_free (s->sessions);
  sr_code_pool_free (s->pool);
  sr_history_close (s->history);
  sr_store_close (s->store);
  pthread_mutex_destroy (&s->history_lock);
  pthread_mutex_destroy (&s->prune_lock);
  free (s->history_problem);
  free (s->sessions_problem);
  free (s);
}

struct sr_sessions *
sr_service_sessions (struct sr_service *s)
{
  return s->sessions;
}

const char *
sr_service_sessions_problem (const struct sr_service *s)
{
  return s->sessions_problem;
}

const char *
sr_service_history_problem (struct sr_service *s)
{
  const char *problem;

  pthread_mutex_lock (&s->history_lock);
  problem = s->history ? NULL : s->history_problem;
  pthread_mutex_unlock (&s->history_lock);
  return problem;
}

bool
sr_service_image_available (struct sr_service *s, const char *image, char **ret_version)
{
  struct sr_image_info info = { 0 };
  bool available = sr_store_lookup (s->store, image, &info, NULL) == 0;

  *ret_version = available ? TAKE_PTR (info.version) : NULL;
  sr_image_info_done (&info);
  return available;
}

void
sr_service_history_entry (struct sr_history_entry *e, const struct sr_code_request *req,
                          const struct sr_code_result *res, const char *source)
{
  char digest[SR_DIGEST_LEN + 1];
  const char *code = req->code ? req->code : "";
  size_t len = req->code ? req->code_len : 0;

  memset (e, 0, sizeof *e);
  e->language = sr_xstrdup (res->language ? res->language : req->language ? req->language : "");
  e->code_preview = sr_history_preview (code, len);
  sr_sha256_buf (code, len, digest);
  e->code_sha256 = sr_xstrdup (digest);
  e->status = sr_xstrdup (sr_code_status_name (res->status));
  e->exit_code = res->run.signal ? 128 + res->run.signal : res->run.exit_code;
  e->duration_ms = (int64_t) res->duration_ms;
  e->stdout_size = (int64_t) res->run.out.total;
  e->stderr_size = (int64_t) res->run.err.total;
  e->source = sr_xstrdup (source ? source : "cli");
}

/* A server tries again to open a history that did not open (PostgreSQL
 * down, a directory not yet writable), at most every HISTORY_RETRY_MS.
 * history_lock held.  */
static void
server_retry (struct sr_service *s, bool *ret_failed)
{
  int64_t now = sr_now_realtime_ms ();
  sr_error_t e = NULL;

  if (s->cfg->history_db == NULL || *s->cfg->history_db == '\0'
      || now - s->history_tried_ms < HISTORY_RETRY_MS)
    return;
  s->history_tried_ms = now;
  if (sr_history_open (s->cfg->history_db, &s->history, &e) < 0)
    {
      *ret_failed = true;
      sr_error_free (&e);
      return;
    }
  sr_log (SR_LOG_INFO, "history_available", NULL);
}

/* The history, opening it at its first use in one-shot mode; NULL
 * (*ret_failed when it could not open just now) when unavailable.  */
static struct sr_history *
history_get (struct sr_service *s, bool *ret_failed)
{
  struct sr_history *h;
  sr_error_t e = NULL;

  *ret_failed = false;
  pthread_mutex_lock (&s->history_lock);
  if (s->history == NULL && s->mode == SR_SERVICE_SERVER)
    server_retry (s, ret_failed);
  else if (s->history == NULL && s->history_problem == NULL)
    {
      if (s->cfg->history_db == NULL || *s->cfg->history_db == '\0')
        s->history_problem = sr_xstrdup ("the history is off (history_db is empty)");
      else if (sr_history_open (s->cfg->history_db, &s->history, &e) < 0)
        {
          s->history_problem = sr_xstrdup (e->msg);
          sr_error_free (&e);
          *ret_failed = true;
        }
    }
  h = s->history;
  pthread_mutex_unlock (&s->history_lock);
  return h;
}

/* The history, or NULL with an error that says why what (a part of it)
 * is unavailable.  */
static struct sr_history *
history_or_error (struct sr_service *s, const char *what, sr_error_t *err)
{
  bool failed;
  struct sr_history *h = history_get (s, &failed);

  if (h == NULL)
    sr_error_set (err, ENOENT, "%s is unavailable: %s", what,
                  s->history_problem ? s->history_problem : "not configured");
  return h;
}

/* Records a run that happened, as owner's (NULL: nobody's in
 * particular); a failure only leaves run->history_problem.  */
static void
record (struct sr_service *s, const struct sr_code_request *req, const char *owner,
        struct sr_service_run *run)
{
  struct sr_history *h = history_get (s, &run->history_failed);
  struct sr_history_entry e;
  sr_error_t err = NULL;

  if (h == NULL)
    {
      run->history_problem = sr_xstrdup (s->history_problem ? s->history_problem : "");
      return;
    }
  sr_service_history_entry (&e, req, &run->code, s->source);
  e.owner = owner ? sr_xstrdup (owner) : NULL;
  e.session_id = run->session_id ? sr_xstrdup (run->session_id) : NULL;
  if (sr_history_add (h, &e, &err) == 0)
    memcpy (run->run_id, e.id, sizeof run->run_id);
  else
    {
      run->history_problem = sr_xstrdup (err->msg);
      run->history_failed = true;
      sr_error_free (&err);
    }
  sr_history_entry_done (&e);
}

/* Runs req in the session session_id names, which stays busy meanwhile.  */
static int
run_in_session (struct sr_service *s, const struct sr_code_request *req, const char *owner,
                const char *session_id, struct sr_service_run *run, sr_error_t *err)
{
  struct sr_session *session = NULL;
  int r;

  if (s->sessions == NULL)
    return sr_error_set_plain (err, "sessions_unavailable", ENOTSUP,
                               "this server has no session support");
  if (sr_sessions_acquire (s->sessions, owner, session_id, NULL, req->cancel_fd, &session, err) < 0)
    return -1;
  r = sr_session_run_code (session, req, &run->code, &run->artifacts, &run->n_artifacts, err);
  if (r == 0)
    run->session_id = sr_xstrdup (sr_session_id (session));
  sr_session_release (session);
  return r;
}

int
sr_service_run_code (struct sr_service *s, const struct sr_code_request *req, const char *owner,
                     const char *session_id, struct sr_service_run *run, sr_error_t *err)
{
  int r;

  memset (run, 0, sizeof *run);
  if (session_id)
    r = run_in_session (s, req, owner, session_id, run, err);
  else if (s->pool)
    r = sr_code_pool_run (s->pool, req, &run->code, err);
  else
    r = sr_code_run (s->cfg, s->store, req, &run->code, err);
  if (r < 0)
    return -1;
  record (s, req, owner, run);
  {
    char ms[24];

    snprintf (ms, sizeof ms, "%llu", (unsigned long long) run->code.duration_ms);
    sr_log (SR_LOG_INFO, "run", "language", run->code.language, "status",
            sr_code_status_name (run->code.status), "duration_ms", ms, "prestarted",
            run->code.prestarted ? "true" : NULL, "session", run->session_id, "run_id",
            run->run_id[0] ? run->run_id : NULL, NULL);
  }
  return 0;
}

void
sr_service_run_done (struct sr_service_run *run)
{
  sr_code_result_done (&run->code);
  free (run->session_id);
  sr_artifacts_free (run->artifacts, run->n_artifacts);
  free (run->history_problem);
  memset (run, 0, sizeof *run);
}

int
sr_service_history_list (struct sr_service *s, const struct sr_history_filter *f,
                         struct sr_history_entry **ret, size_t *ret_n, sr_error_t *err)
{
  bool failed;
  struct sr_history *h;

  *ret = NULL;
  *ret_n = 0;
  if ((h = history_get (s, &failed)) == NULL)
    return sr_error_set (err, ENOENT, "%s",
                         s->history_problem ? s->history_problem : "not configured");
  return sr_history_list (h, f, ret, ret_n, err);
}

/* The database cfg names, for the CLI: *ret NULL when there is none (no
 * database is an empty history), rather than a new one.  */
static int
open_existing (const struct sr_config *cfg, struct sr_history **ret, sr_error_t *err)
{
  struct stat st;

  *ret = NULL;
  if (sr_history_kind_of (cfg->history_db) == SR_HISTORY_SQLITE
      && stat (cfg->history_db, &st) < 0 && errno == ENOENT)
    return 0;
  return sr_history_open (cfg->history_db, ret, err);
}

int
sr_service_history_query (const struct sr_config *cfg, const struct sr_history_filter *f,
                          struct sr_history_entry **ret, size_t *ret_n, sr_error_t *err)
{
  struct sr_history *h = NULL;
  int r;

  *ret = NULL;
  *ret_n = 0;
  if (open_existing (cfg, &h, err) < 0)
    return -1;
  if (h == NULL)
    return 0;
  r = sr_history_list (h, f, ret, ret_n, err);
  sr_history_close (h);
  return r;
}

char *
sr_service_audit_client (const char *identity)
{
  char digest[SR_DIGEST_LEN + 1];

  if (identity == NULL || strcmp (identity, "stdio") == 0)
    return sr_xstrdup ("stdio");
  sr_sha256_buf (identity, strlen (identity), digest);
  return sr_xasprintf ("client:%.16s", digest + sizeof "sha256:" - 1);
}

/* Whether the hourly prune is due; claims it when it is.  */
static bool
prune_due (struct sr_service *s)
{
  int64_t now = sr_now_realtime_ms ();
  bool due;

  pthread_mutex_lock (&s->prune_lock);
  due = now - s->pruned_ms >= AUDIT_PRUNE_INTERVAL_MS;
  if (due)
    s->pruned_ms = now;
  pthread_mutex_unlock (&s->prune_lock);
  return due;
}

int
sr_service_audit (struct sr_service *s, const struct sr_service_call *call, sr_error_t *err)
{
  struct sr_history *h;
  char digest[SR_DIGEST_LEN + 1];
  struct sr_audit_entry e = {
    .client = (char *) call->client, .machine = (char *) (call->machine ? call->machine : ""),
    .tool = (char *) call->tool, .status = (char *) call->status,
    .duration_ms = call->duration_ms, .args_sha256 = digest,
  };

  if ((h = history_or_error (s, "the audit trail", err)) == NULL)
    return -1;
  sr_sha256_buf (call->args_json, strlen (call->args_json), digest);
  if (prune_due (s) && prune_audit (s->cfg, h, err) < 0)
    return -1;
  return sr_history_audit_add (h, &e, err);
}

int
sr_service_audit_list (struct sr_service *s, const struct sr_audit_filter *f,
                       struct sr_audit_entry **ret, size_t *ret_n, sr_error_t *err)
{
  struct sr_history *h;

  *ret = NULL;
  *ret_n = 0;
  if ((h = history_or_error (s, "the audit trail", err)) == NULL)
    return -1;
  return sr_history_audit_list (h, f, ret, ret_n, err);
}

int
sr_service_audit_query (const struct sr_config *cfg, const struct sr_audit_filter *f,
                        struct sr_audit_entry **ret, size_t *ret_n, sr_error_t *err)
{
  struct sr_history *h = NULL;
  int r;

  *ret = NULL;
  *ret_n = 0;
  if (open_existing (cfg, &h, err) < 0)
    return -1;
  if (h == NULL)
    return 0;
  r = prune_audit (cfg, h, err);
  if (r == 0)
    r = sr_history_audit_list (h, f, ret, ret_n, err);
  sr_history_close (h);
  return r;
}
