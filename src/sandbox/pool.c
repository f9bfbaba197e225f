#include "config.h"

#include "sandbox/pool.h"
#include "sandbox/code-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/statedir.h"
#include "common/util.h"

/* After a warm container could not be made (the image is missing, the
 * disk is full), the next try waits this long; runs meanwhile make their
 * own containers and report the problem.  */
#define RETRY_NS (5ull * 1000 * 1000 * 1000)

struct warm
{
  const struct sr_language *l;
  struct sr_image_use image;
  char *scratch;
  int scratch_fd;          /* holds the directory's lock */
  uid_t uid;
  gid_t gid;
  struct sr_container *c;
  struct warm *next;
};

/* The warm containers of one language.  */
struct slot
{
  const struct sr_language *l;
  uint64_t ready;
  uint64_t retry_ns;       /* no new try before this (CLOCK_MONOTONIC) */
};

struct sr_code_pool
{
  const struct sr_config *cfg;
  struct sr_store *store;
  struct sr_policy *policy; /* its runs', warm or not: the default timeout */
  char *state_dir;
  struct slot *slots;
  size_t n_slots;

  pthread_mutex_t lock;
  pthread_cond_t wake;     /* a container was taken or used, or stop */
  struct warm *ready;
  struct warm *used;       /* for the thread to destroy, off the runs' path */
  bool stop;
  bool has_thread;
  pthread_t thread;
};

static void
warm_free (struct warm *w)
{
  if (w == NULL)
    return;
  sr_container_destroy (w->c);
  if (w->scratch)
    (void) sr_rm_rf_at (AT_FDCWD, w->scratch, NULL);
  if (w->scratch_fd >= 0)
    close (w->scratch_fd);
  free (w->scratch);
  sr_image_release (&w->image);
  free (w);
}

/* What sr_code_run would create for l's run stage, waiting for START.  */
static int
warm_new (struct sr_code_pool *p, const struct sr_language *l, struct warm **ret,
          sr_error_t *err)
{
  struct warm *w = sr_xcalloc (1, sizeof *w);
  _cleanup_free_ char *label = sr_xasprintf ("warm: %s", l->run);
  struct sr_container_config cc;
  struct sr_bind bind = { .target = (char *) SR_CODE_DIR, .readonly = true };

  w->l = l;
  w->image.lock_fd = -1;
  w->scratch_fd = -1;
  if (sr_code_use_image (p->store, l, &w->image, err) < 0
      || sr_code_make_dir (p->cfg, &w->scratch, &w->scratch_fd, &w->uid, &w->gid, err) < 0)
    goto fail;
  bind.source = w->scratch;
  sr_policy_to_container (p->policy, w->image.rootfs, &cc);
  cc.fs.binds = &bind;
  cc.fs.n_binds = 1;
  cc.state_dir = p->state_dir;
  cc.label = label;
  if (sr_container_create (&cc, &w->c, err) < 0)
    goto fail;
  *ret = w;
  return 0;

fail:
  warm_free (w);
  return -1;
}

static uint64_t
monotonic_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* The pool's thread: destroys the containers runs used, and keeps every
 * slot full, one container at a time.  */
static void *
pool_main (void *arg)
{
  struct sr_code_pool *p = arg;

  pthread_mutex_lock (&p->lock);
  while (!p->stop)
    {
      uint64_t now = monotonic_ns (), next_retry = 0;
      struct slot *want = NULL;
      struct warm *w = NULL;
      sr_error_t e = NULL;
      int r;

      if (p->used)
        {
          w = p->used;
          p->used = w->next;
          pthread_mutex_unlock (&p->lock);
          warm_free (w);
          pthread_mutex_lock (&p->lock);
          continue;
        }

      for (size_t i = 0; i < p->n_slots && want == NULL; i++)
        {
          struct slot *s = &p->slots[i];

          if (s->ready >= p->cfg->warm_containers)
            continue;
          if (s->retry_ns <= now)
            want = s;
          else if (next_retry == 0 || s->retry_ns < next_retry)
            next_retry = s->retry_ns;
        }
      if (want == NULL)
        {
          if (next_retry)
            {
              struct timespec until = { .tv_sec = (time_t) (next_retry / 1000000000ull),
                                        .tv_nsec = (long) (next_retry % 1000000000ull) };

              pthread_cond_timedwait (&p->wake, &p->lock, &until);
            }
          else
            pthread_cond_wait (&p->wake, &p->lock);
          continue;
        }

      pthread_mutex_unlock (&p->lock);
      r = warm_new (p, want->l, &w, &e);
      sr_error_free (&e);
      pthread_mutex_lock (&p->lock);
      if (r < 0)
        {
          want->retry_ns = monotonic_ns () + RETRY_NS;
          continue;
        }
      w->next = p->ready;
      p->ready = w;
      want->ready++;
    }
  pthread_mutex_unlock (&p->lock);
  return NULL;
}

int
sr_code_pool_new (const struct sr_config *cfg, struct sr_store *store,
                  struct sr_code_pool **ret, sr_error_t *err)
{
  struct sr_code_pool *p = sr_xcalloc (1, sizeof *p);
  pthread_condattr_t attr;

  p->cfg = cfg;
  p->store = store;
  p->state_dir = sr_statedir_runtime_sub (cfg->runtime_dir, "containers", err);
  if (p->state_dir == NULL || sr_policy_new (cfg, SR_POLICY_NATIVE, NULL, &p->policy, err) < 0)
    {
      free (p->state_dir);
      free (p);
      return -1;
    }
  pthread_mutex_init (&p->lock, NULL);
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&p->wake, &attr);
  pthread_condattr_destroy (&attr);

  if (cfg->warm_containers && cfg->backend_kind == SR_BACKEND_NATIVE)
    {
      p->slots = sr_xcalloc (cfg->n_languages ? cfg->n_languages : 1, sizeof *p->slots);
      for (size_t i = 0; i < cfg->n_languages; i++)
        if (cfg->languages[i].compile[0] == '\0')
          p->slots[p->n_slots++].l = &cfg->languages[i];
    }
  if (p->n_slots)
    {
      int r = pthread_create (&p->thread, NULL, pool_main, p);

      /* Without its thread the pool still serves, every run cold.  */
      p->has_thread = r == 0;
    }
  *ret = p;
  return 0;
}

void
sr_code_pool_free (struct sr_code_pool *p)
{
  if (p == NULL)
    return;
  if (p->has_thread)
    {
      pthread_mutex_lock (&p->lock);
      p->stop = true;
      pthread_cond_signal (&p->wake);
      pthread_mutex_unlock (&p->lock);
      pthread_join (p->thread, NULL);
    }
  while (p->ready || p->used)
    {
      struct warm **list = p->ready ? &p->ready : &p->used, *w = *list;

      *list = w->next;
      warm_free (w);
    }
  sr_policy_free (p->policy);
  pthread_mutex_destroy (&p->lock);
  pthread_cond_destroy (&p->wake);
  free (p->slots);
  free (p->state_dir);
  free (p);
}

/* A warm container of l, out of the pool; NULL when none is ready.  */
static struct warm *
take (struct sr_code_pool *p, const struct sr_language *l)
{
  struct warm *w = NULL;

  pthread_mutex_lock (&p->lock);
  for (struct warm **pw = &p->ready; *pw; pw = &(*pw)->next)
    if ((*pw)->l == l)
      {
        w = *pw;
        *pw = w->next;
        w->next = NULL;
        break;
      }
  if (w)
    for (size_t i = 0; i < p->n_slots; i++)
      if (p->slots[i].l == l)
        {
          p->slots[i].ready--;
          pthread_cond_signal (&p->wake);
        }
  pthread_mutex_unlock (&p->lock);
  return w;
}

/* Whether w still runs the image the store names for its language: one
 * replaced meanwhile serves no run.  */
static bool
warm_current (struct sr_code_pool *p, const struct warm *w)
{
  struct sr_image_info info = { 0 };
  bool same;

  if (!sr_container_alive (w->c) || sr_store_lookup (p->store, w->l->image, &info, NULL) < 0)
    return false;
  same = strcmp (info.id, w->image.info.id) == 0;
  sr_image_info_done (&info);
  return same;
}

struct warm_stage
{
  const struct sr_policy *policy;
  struct warm *w;
};

static int
run_warm_stage (void *ctx, struct sr_code_stage *st, struct sr_run_result *res, sr_error_t *err)
{
  const struct warm_stage *ws = ctx;
  struct warm *w = ws->w;
  _cleanup_strv_ char **argv = sr_code_split_command (st->command), **env = NULL;
  struct sr_exec_spec spec = { .argv = argv, .cwd = SR_DEFAULT_WORKDIR };
  struct sr_run_options opts = {
    .timeout_ms = st->timeout_ms, .max_output = ws->policy->max_output, .stdin_fd = -1,
    .cancel_fd = st->req->cancel_fd,
  };

  if (argv[0] == NULL)
    return sr_error_set (err, 0, "empty command");
  env = sr_policy_env (ws->policy, w->image.info.env);
  spec.env = env;
  sr_code_stage_progress (st, &opts);
  return sr_container_start (w->c, &spec, &opts, res, err);
}

int
sr_code_pool_run (struct sr_code_pool *p, const struct sr_code_request *req,
                  struct sr_code_result *res, sr_error_t *err)
{
  const struct sr_config *cfg = p->cfg;
  const struct sr_language *l = NULL;
  struct warm *w = NULL;
  int r = -1;

  if (cfg->backend_kind == SR_BACKEND_DOCKER)
    return sr_code_run (cfg, p->store, req, res, err);
  memset (res, 0, sizeof *res);
  if (sr_code_validate (cfg, req, &l, err) < 0)
    return -1;
  res->language = sr_xstrdup (l->name);

  /* A warm container's CPU-seconds backstop is the default timeout's.  */
  if (l->compile[0] == '\0'
      && sr_policy_cpu_seconds (req->timeout_ms ? req->timeout_ms : cfg->timeout_ms)
         == p->policy->max_cpu_seconds)
    w = take (p, l);
  if (w && !warm_current (p, w))
    {
      warm_free (w);
      w = NULL;
    }
  if (w == NULL)
    return sr_code_run_native (cfg, p->store, l, p->policy, req, res, err);

  if (sr_code_write_source (w->scratch_fd, l->source, req->code, req->code_len, w->uid, w->gid,
                            err)
      == 0)
    {
      struct warm_stage ws = { .policy = p->policy, .w = w };

      r = sr_code_run_stages (cfg, l, req, run_warm_stage, &ws, res, err);
    }
  /* The result is complete: the pool's thread destroys the container
   * while the caller sends it.  */
  pthread_mutex_lock (&p->lock);
  w->next = p->used;
  p->used = w;
  pthread_cond_signal (&p->wake);
  pthread_mutex_unlock (&p->lock);
  return r;
}
