#include "config.h"

#include "sandbox/pool.h"
#include "sandbox/backend.h"
#include "sandbox/code-internal.h"
#include "sandbox/prestart.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"

/* After a warm container could not be made (the image is missing, the
 * disk is full), the next try waits this long; runs meanwhile make their
 * own containers and report the problem.  */
#define RETRY_NS (5ull * 1000 * 1000 * 1000)
/* A run that took a warm container has the CPU to itself this long, or
 * until it ends, before the pool's thread makes the next one: starting
 * an interpreter costs more CPU than a short run, and on a host of two
 * cores the two would share them.  Short enough that a call soon after
 * still finds the next one ready.  */
#define REFILL_DELAY_NS (50ull * 1000 * 1000)
/* When the last run ends, its result still has to be recorded and sent:
 * the pool's thread, and the old container's teardown, wait this long, so
 * that they do not take a core from the reply.  */
#define REPLY_DELAY_NS (5ull * 1000 * 1000)

struct warm
{
  const struct sr_language *l;
  char *scratch;
  int scratch_fd;          /* holds the directory's lock */
  int scratch_hold_fd;     /* and that of the directory beneath its tmpfs */
  struct sr_policy_ids ids;  /* its container's, held until it is gone */
  uid_t uid;               /* the owner of the code put there */
  gid_t gid;
  struct sr_backend_warm *bw;
  struct warm *next;
};

/* The warm containers of one language.  */
struct slot
{
  const struct sr_language *l;
  uint64_t ready;
  uint64_t retry_ns;       /* no new try before this (CLOCK_MONOTONIC) */
  /* A run asked for l: its next containers start l's interpreter ahead,
   * when it has a warm_start.  Not before, so that an interpreter and
   * its preloads (the data stack's hundred MiB) wait in memory only for
   * the languages in use.  */
  bool asked;
};

struct sr_code_pool
{
  const struct sr_config *cfg;
  struct sr_store *store;
  const struct sr_backend *be;
  void *state;             /* be's, for every run; NULL: be keeps nothing warm */
  struct slot *slots;
  size_t n_slots;

  pthread_mutex_t lock;
  pthread_cond_t wake;     /* a container was taken or used, or stop */
  struct warm *ready;
  struct warm *used;       /* for the thread to destroy, off the runs' path */
  unsigned running;        /* runs on a warm container, not yet ended */
  uint64_t refill_ns;      /* no new container, no teardown before this */
  bool stop;
  bool has_thread;
  pthread_t thread;
};

static void
warm_free (struct sr_code_pool *p, struct warm *w)
{
  if (w == NULL)
    return;
  p->be->warm_free (w->bw);
  sr_policy_ids_release (&w->ids);
  if (w->scratch)
    sr_code_remove_dir (w->scratch, w->scratch_hold_fd);
  if (w->scratch_fd >= 0)
    close (w->scratch_fd);
  free (w->scratch);
  free (w);
}

/* The bootstrap of l's pre-started interpreter as its entry file, which
 * the run's code replaces; *prestart false when l has none.  */
static int
write_bootstrap (const struct warm *w, bool *prestart, sr_error_t *err)
{
  size_t len = 0;
  _cleanup_free_ char *program = *prestart ? sr_prestart_program (w->l, &len) : NULL;

  *prestart = program != NULL;
  if (program == NULL)
    return 0;
  return sr_code_write_source (w->scratch_fd, w->l->source, program, len, w->uid, w->gid, err);
}

/* The ids of a warm container of l: its code directory must be the user's
 * that the user setting names in l's image (keeps_warm backends take
 * ids).  */
static int
take_ids (struct sr_code_pool *p, const struct sr_language *l, struct sr_policy_ids *ids,
          sr_error_t *err)
{
  struct sr_backend_run *run = NULL;
  uid_t uid;
  gid_t gid;

  if (p->be->run_begin (p->state, l, &run, err) < 0)
    return -1;
  p->be->run_user (run, &uid, &gid);
  p->be->run_end (run);
  return sr_policy_ids_take (p->cfg, uid, gid, ids, err);
}

/* What sr_code_run would create for l's run stage, waiting for START, or
 * with prestart, l's interpreter started ahead if it has a warm_start
 * (prestart.h).  */
static int
warm_new (struct sr_code_pool *p, const struct sr_language *l, bool prestart, struct warm **ret,
          sr_error_t *err)
{
  struct warm *w = sr_xcalloc (1, sizeof *w);

  w->l = l;
  w->scratch_fd = w->scratch_hold_fd = -1;
  w->ids.map.lease_fd = -1;
  if (take_ids (p, l, &w->ids, err) < 0)
    goto fail;
  w->uid = w->ids.uid;
  w->gid = w->ids.gid;
  if (sr_code_make_dir (p->cfg, &w->ids, p->be->shares_mounts, &w->scratch, &w->scratch_fd,
                        &w->scratch_hold_fd, err) < 0
      || p->be->code_dir (p->state, w->scratch, w->scratch_fd, &w->uid, &w->gid, err) < 0
      || write_bootstrap (w, &prestart, err) < 0
      || p->be->warm_new (p->state, l, w->scratch, &w->ids, prestart, false, &w->bw, err) < 0)
    goto fail;
  *ret = w;
  return 0;

fail:
  warm_free (p, w);
  return -1;
}

/* Destroys every container of the pool; called with the lock held.  */
static void
free_all (struct sr_code_pool *p)
{
  while (p->ready || p->used)
    {
      struct warm **list = p->ready ? &p->ready : &p->used, *w = *list;

      *list = w->next;
      pthread_mutex_unlock (&p->lock);
      warm_free (p, w);
      pthread_mutex_lock (&p->lock);
    }
}

static uint64_t
monotonic_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* Waits on the pool's condition until ns (CLOCK_MONOTONIC) at the latest;
 * called with the lock held.  */
static void
wait_until (struct sr_code_pool *p, uint64_t ns)
{
  struct timespec until = { .tv_sec = (time_t) (ns / 1000000000ull),
                            .tv_nsec = (long) (ns % 1000000000ull) };

  pthread_cond_timedwait (&p->wake, &p->lock, &until);
}

/* The pool's thread: keeps every slot full, one container at a time,
 * then destroys the containers runs used; both wait while a run that
 * took a container has the CPU to itself (REFILL_DELAY_NS), and then its
 * reply (REPLY_DELAY_NS).  */
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
      bool prestart;
      int r;

      if (now < p->refill_ns)
        {
          wait_until (p, p->refill_ns);
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
      if (want == NULL && p->used)
        {
          w = p->used;
          p->used = w->next;
          pthread_mutex_unlock (&p->lock);
          warm_free (p, w);
          pthread_mutex_lock (&p->lock);
          continue;
        }
      if (want == NULL)
        {
          if (next_retry)
            wait_until (p, next_retry);
          else
            pthread_cond_wait (&p->wake, &p->lock);
          continue;
        }

      prestart = want->asked;
      pthread_mutex_unlock (&p->lock);
      r = warm_new (p, want->l, prestart, &w, &e);
      sr_error_free (&e);
      pthread_mutex_lock (&p->lock);
      if (r < 0)
        {
          want->retry_ns = monotonic_ns () + RETRY_NS;
          continue;
        }
      /* Made without its interpreter while a run asked for l: the next
       * run is for one that has it, and this goes.  */
      if (!prestart && want->asked && want->l->warm_start[0] != '\0')
        {
          w->next = p->used;
          p->used = w;
          continue;
        }
      w->next = p->ready;
      p->ready = w;
      want->ready++;
    }
  /* The containers go on this thread, which made them: their inits die
   * with it (PR_SET_PDEATHSIG).  */
  free_all (p);
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
  p->be = sr_backend_get (cfg, err);
  if (p->be == NULL
      || (p->be->keeps_warm && p->be->open (cfg, store, SR_BACKEND_RUNS, &p->state, err) < 0))
    {
      free (p);
      return -1;
    }
  pthread_mutex_init (&p->lock, NULL);
  pthread_condattr_init (&attr);
  pthread_condattr_setclock (&attr, CLOCK_MONOTONIC);
  pthread_cond_init (&p->wake, &attr);
  pthread_condattr_destroy (&attr);

  if (cfg->warm_containers && p->state)
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
  pthread_mutex_lock (&p->lock);
  free_all (p);
  pthread_mutex_unlock (&p->lock);
  if (p->state)
    p->be->close (p->state);
  pthread_mutex_destroy (&p->lock);
  pthread_cond_destroy (&p->wake);
  free (p->slots);
  free (p);
}

/* Marks l in use: the pool's thread pre-starts its next containers.  */
static void
ask (struct sr_code_pool *p, const struct sr_language *l)
{
  pthread_mutex_lock (&p->lock);
  for (size_t i = 0; i < p->n_slots; i++)
    if (p->slots[i].l == l && !p->slots[i].asked)
      {
        p->slots[i].asked = true;
        pthread_cond_signal (&p->wake);
      }
  pthread_mutex_unlock (&p->lock);
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
    {
      for (size_t i = 0; i < p->n_slots; i++)
        if (p->slots[i].l == l)
          p->slots[i].ready--;
      p->running++;
      p->refill_ns = monotonic_ns () + REFILL_DELAY_NS;
      pthread_cond_signal (&p->wake);
    }
  pthread_mutex_unlock (&p->lock);
  return w;
}

/* Ends the run that took w: the pool's thread destroys w, off the
 * run's path, and may make the next container, once the reply is out.  */
static void
give_back (struct sr_code_pool *p, struct warm *w)
{
  pthread_mutex_lock (&p->lock);
  if (--p->running == 0)
    p->refill_ns = monotonic_ns () + REPLY_DELAY_NS;
  w->next = p->used;
  p->used = w;
  pthread_cond_signal (&p->wake);
  pthread_mutex_unlock (&p->lock);
}

struct warm_stage
{
  const struct sr_backend *be;
  struct warm *w;
};

static int
run_warm_stage (void *ctx, struct sr_code_stage *st, struct sr_run_result *res, sr_error_t *err)
{
  const struct warm_stage *ws = ctx;

  return ws->be->warm_stage (ws->w->bw, st, res, err);
}

int
sr_code_pool_run (struct sr_code_pool *p, const struct sr_code_request *req,
                  struct sr_code_result *res, sr_error_t *err)
{
  const struct sr_config *cfg = p->cfg;
  const struct sr_language *l = NULL;
  struct warm *w = NULL;
  int r = -1;

  /* Nothing kept warm: each run opens the backend as a one-shot does.  */
  if (p->state == NULL)
    return sr_code_run (cfg, p->store, req, res, err);
  memset (res, 0, sizeof *res);
  if (sr_code_validate (cfg, req, &l, err) < 0)
    return -1;
  res->language = sr_xstrdup (l->name);
  ask (p, l);

  /* A warm container's CPU-seconds backstop is the default timeout's.  */
  if (l->compile[0] == '\0'
      && sr_policy_cpu_seconds (req->timeout_ms ? req->timeout_ms : cfg->timeout_ms)
         == sr_policy_cpu_seconds (cfg->timeout_ms))
    w = take (p, l);
  if (w && !p->be->warm_current (p->state, w->bw))
    {
      give_back (p, w);
      w = NULL;
    }
  if (w == NULL)
    return sr_code_run_on (p->be, p->state, cfg, l, req, res, err);

  if (sr_code_write_inputs (w->scratch_fd, l, req, w->uid, w->gid, err) == 0)
    {
      struct warm_stage ws = { .be = p->be, .w = w };

      r = sr_code_run_stages (cfg, l, req, &w->ids, run_warm_stage, &ws, res, err);
    }
  /* The result is complete: the pool's thread destroys the container
   * while the caller sends it.  */
  give_back (p, w);
  return r;
}
