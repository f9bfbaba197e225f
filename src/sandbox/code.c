#include "config.h"

#include "sandbox/code.h"
#include "sandbox/code-internal.h"
#include "sandbox/backend.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/log.h"
#include "common/statedir.h"
#include "common/util.h"
#include "runtime/idmap.h"
#include "runtime/mounts.h"
#include "runtime/state.h"
#include "sandbox/compile-cache.h"

void
sr_code_result_done (struct sr_code_result *r)
{
  free (r->language);
  sr_run_result_done (&r->run);
  memset (r, 0, sizeof *r);
}

/* The stdin and the arguments, within their caps.  */
static int
check_stdin_args (const struct sr_config *cfg, const struct sr_code_request *req,
                  sr_error_t *err)
{
  size_t total = 0;

  if (req->stdin_data && req->stdin_len > cfg->max_stdin_size)
    return sr_error_set_plain (err, "stdin_too_large", EINVAL,
                               "stdin is over the limit of %llu bytes (max_stdin_size)",
                               (unsigned long long) cfg->max_stdin_size);
  if (req->n_args > SR_MAX_CODE_ARGS)
    return sr_error_set_plain (err, "too_many_args", EINVAL,
                               "%zu arguments given, over the limit of %u", req->n_args,
                               SR_MAX_CODE_ARGS);
  for (size_t i = 0; i < req->n_args; i++)
    total += strlen (req->args[i]) + 1;
  if (total > SR_MAX_CODE_ARGS_SIZE)
    return sr_error_set_plain (err, "args_too_large", EINVAL,
                               "the arguments take %zu bytes, over the limit of %u", total,
                               SR_MAX_CODE_ARGS_SIZE);
  return 0;
}

/* name as upload paths are taken, but exactly: relative, no '.', '..'
 * or empty component (the compile stage gets it as written).  */
static int
check_file_name (const char *name, sr_error_t *err)
{
  const char *p = name;

  if (*name == '\0')
    return sr_error_set_plain (err, "invalid_file_name", EINVAL, "a file name is empty");
  if (strlen (name) >= PATH_MAX - sizeof SR_CODE_DIR)
    return sr_error_set_plain (err, "invalid_file_name", EINVAL,
                               "file name '%.64s...' is too long", name);
  if (*name == '/')
    return sr_error_set_plain (err, "invalid_file_name", EINVAL,
                               "file name '%s' is absolute: give it relative to %s", name,
                               SR_CODE_DIR);
  for (;;)
    {
      size_t n = strcspn (p, "/");

      if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
        return sr_error_set_plain (err, "invalid_file_name", EINVAL,
                                   "file name '%s': '.', '..' and empty components are not "
                                   "allowed", name);
      if (n > NAME_MAX)
        return sr_error_set_plain (err, "invalid_file_name", EINVAL,
                                   "file name '%s': a component is longer than %d bytes", name,
                                   NAME_MAX);
      if (p[n] == '\0')
        return 0;
      p += n + 1;
    }
}

/* Whether a names b or a directory b is in.  */
static bool
name_covers (const char *a, const char *b)
{
  size_t n = strlen (a);

  return strncmp (a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

static int
check_files (const struct sr_config *cfg, const struct sr_language *l,
             const struct sr_code_request *req, sr_error_t *err)
{
  uint64_t total = 0;

  if (req->n_files > SR_MAX_CODE_FILES)
    return sr_error_set_plain (err, "too_many_files", EINVAL,
                               "%zu files given, over the limit of %u", req->n_files,
                               SR_MAX_CODE_FILES);
  for (size_t i = 0; i < req->n_files; i++)
    {
      const struct sr_code_file *f = &req->files[i];

      if (check_file_name (f->name, err) < 0)
        return -1;
      if (name_covers (f->name, l->source) || name_covers (l->source, f->name))
        return sr_error_set_plain (err, "invalid_file_name", EINVAL,
                                   "file name '%s' clashes with the code's own file %s: the "
                                   "code is %s's entry point", f->name, l->source, l->name);
      for (size_t j = 0; j < i; j++)
        if (name_covers (req->files[j].name, f->name) || name_covers (f->name, req->files[j].name))
          return sr_error_set_plain (err, "invalid_file_name", EINVAL,
                                     "file names '%s' and '%s' clash", req->files[j].name,
                                     f->name);
      if (f->len > cfg->max_code_file_size)
        return sr_error_set_plain (err, "file_too_large", EINVAL,
                                   "file %s is over the limit of %llu bytes (max_code_file_size)",
                                   f->name, (unsigned long long) cfg->max_code_file_size);
      total += f->len;
    }
  if (total > cfg->max_code_files_size)
    return sr_error_set_plain (err, "files_too_large", EINVAL,
                               "the files take %llu bytes, over the limit of %llu "
                               "(max_code_files_size)",
                               (unsigned long long) total,
                               (unsigned long long) cfg->max_code_files_size);
  return 0;
}

int
sr_code_validate (const struct sr_config *cfg, const struct sr_code_request *req,
                  const struct sr_language **ret, sr_error_t *err)
{
  const struct sr_language *l = NULL;

  if (req->language == NULL || *req->language == '\0')
    return sr_error_set_plain (err, "unknown_language", EINVAL, "no language given");
  l = sr_config_language (cfg, req->language);
  if (l == NULL)
    {
      char known[256];
      size_t len = 0;

      known[0] = '\0';
      for (size_t i = 0; i < cfg->n_languages && len + 1 < sizeof known; i++)
        len += (size_t) snprintf (known + len, sizeof known - len, "%s%s", i ? ", " : "",
                                  cfg->languages[i].name);
      return sr_error_set_plain (err, "unknown_language", EINVAL,
                                 "unknown language '%s' (supported: %s)", req->language, known);
    }
  if (req->code == NULL || req->code_len == 0)
    return sr_error_set_plain (err, "empty_code", EINVAL, "the code is empty");
  if (req->code_len > cfg->max_code_size)
    return sr_error_set_plain (err, "code_too_large", EINVAL,
                               "the code is %zu bytes, over the limit of %llu", req->code_len,
                               (unsigned long long) cfg->max_code_size);
  if (req->timeout_ms > cfg->max_timeout_ms)
    return sr_error_set_plain (err, "timeout_too_large", EINVAL,
                               "timeout %.3g s is over the ceiling of %.3g s",
                               (double) req->timeout_ms / 1000,
                               (double) cfg->max_timeout_ms / 1000);
  if (check_stdin_args (cfg, req, err) < 0 || check_files (cfg, l, req, err) < 0)
    return -1;
  *ret = l;
  return 0;
}

char **
sr_code_split_command (const char *cmd)
{
  char **argv = sr_xcalloc (1, sizeof *argv);
  const char *p = cmd;

  while (*p)
    {
      size_t n;

      while (*p == ' ' || *p == '\t')
        p++;
      n = strcspn (p, " \t");
      if (n)
        {
          _cleanup_free_ char *word = sr_xasprintf ("%.*s", (int) n, p);

          sr_strv_push (&argv, word);
        }
      p += n;
    }
  return argv;
}

void
sr_code_reclaim (const struct sr_config *cfg)
{
  _cleanup_free_ char *state = sr_statedir_runtime_sub (cfg->runtime_dir, "containers", NULL);

  if (state)
    sr_state_reclaim (state, NULL);
  sr_code_reclaim_dirs (cfg);
}

int
sr_code_put_files (const struct sr_fsroot *fs, const struct sr_code_file *files, size_t n,
                   sr_error_t *err)
{
  for (size_t i = 0; i < n; i++)
    {
      _cleanup_free_ char *abs = sr_xasprintf ("%s/%s", SR_CODE_DIR, files[i].name);

      if (fs->ops->write (fs->ctx, abs, 0, files[i].content, files[i].len, true, err) < 0)
        return sr_error_wrap (err, "put the code in the session");
    }
  return 0;
}

int
sr_code_stage_stdin (const struct sr_code_stage *st, int *ret_fd, sr_error_t *err)
{
  _cleanup_close_ int fd = -1;

  *ret_fd = -1;
  if (st->takes_stdin && st->req->stdin_data == NULL && st->req->stdin_pipe > 2)
    {
      *ret_fd = fcntl (st->req->stdin_pipe, F_DUPFD_CLOEXEC, 3);
      return *ret_fd < 0 ? sr_error_set (err, errno, "hold the run's stdin") : 0;
    }
  if (!st->takes_stdin || st->req->stdin_data == NULL)
    return 0;
  /* A file, not a pipe: the program may read it at its pace, and nothing
   * here has to feed it.  */
  fd = memfd_create ("stdin", MFD_CLOEXEC);
  if (fd < 0 || sr_write_all (fd, st->req->stdin_data, st->req->stdin_len) < 0
      || lseek (fd, 0, SEEK_SET) < 0)
    return sr_error_set (err, errno, "hold the run's stdin");
  *ret_fd = TAKE_FD (fd);
  return 0;
}

/* The compile command, then the request's files that l's sources match.  */
static char **
compile_argv (const struct sr_language *l, const struct sr_code_request *req)
{
  char **argv = sr_code_split_command (l->compile);
  _cleanup_strv_ char **patterns = sr_code_split_command (l->sources);

  for (size_t i = 0; i < req->n_files; i++)
    for (char **p = patterns; *p; p++)
      if (fnmatch (*p, req->files[i].name, 0) == 0)
        {
          _cleanup_free_ char *path = sr_xasprintf ("%s/%s", SR_CODE_DIR, req->files[i].name);

          sr_strv_push (&argv, path);
          break;
        }
  return argv;
}

/* The run command, then the request's args.  */
static char **
run_argv (const char *run, const struct sr_code_request *req)
{
  char **argv = sr_code_split_command (run);

  for (size_t i = 0; i < req->n_args; i++)
    sr_strv_push (&argv, req->args[i]);
  return argv;
}

static void
count_output (enum sr_stream stream, const char *buf, size_t len, void *userdata)
{
  struct sr_code_stage *st = userdata;

  st->output_bytes += len;
  st->req->on_progress (st->name, st->output_bytes,
                        stream == SR_STREAM_STDERR ? "stderr" : "stdout", buf, len,
                        st->req->userdata);
}

void
sr_code_stage_progress (struct sr_code_stage *st, struct sr_run_options *opts)
{
  if (st->req->on_progress == NULL)
    return;
  st->req->on_progress (st->name, 0, NULL, NULL, 0, st->req->userdata);
  opts->on_output = count_output;
  opts->userdata = st;
}

uint64_t
sr_code_stage_max_output (const struct sr_code_stage *st, uint64_t configured)
{
  return st->req->max_output ? st->req->max_output : configured;
}

static enum sr_code_status
code_status_of (const struct sr_run_result *r)
{
  switch (r->status)
    {
    case SR_RUN_SUCCESS: return SR_CODE_SUCCESS;
    case SR_RUN_ERROR: return SR_CODE_ERROR;
    case SR_RUN_TIMEOUT: return SR_CODE_TIMEOUT;
    case SR_RUN_OOM: return SR_CODE_OOM;
    case SR_RUN_CANCELLED: return SR_CODE_CANCELLED;
    }
  return SR_CODE_ERROR;
}

/* The compile cache as one run uses it: its code directory, and the key
 * of its compile.  */
struct cache_use
{
  struct sr_compile_cache *cache;
  const char *image_id;
  int dirfd;
  uid_t uid;
  gid_t gid;
  char key[SR_COMPILE_KEY_LEN + 1];
};

/* A cache that cannot be used never fails a run: it compiles, and a
 * server's log says so once per process.  */
static void
cache_failed (sr_error_t *e)
{
  static atomic_flag warned = ATOMIC_FLAG_INIT;

  if (!atomic_flag_test_and_set (&warned))
    sr_log (SR_LOG_WARNING, "compile_cache_failed", "error", (*e)->msg, "action",
            "compiling without it", NULL);
  sr_error_free (e);
}

/* Whether the cache put the compile's output in place.  */
static bool
cache_answers (struct cache_use *cu, const struct sr_language *l, char *const *argv,
               const struct sr_code_request *req)
{
  sr_error_t e = NULL;
  int r;

  if (cu == NULL)
    return false;
  sr_compile_cache_key (l, argv, cu->image_id, req, cu->key);
  r = sr_compile_cache_get (cu->cache, cu->key, cu->dirfd, cu->uid, cu->gid, &e);
  if (r < 0)
    cache_failed (&e);
  return r > 0;
}

static void
cache_keep (struct cache_use *cu, const struct sr_language *l,
            const struct sr_code_request *req)
{
  _cleanup_free_ struct sr_code_file *inputs = NULL;
  sr_error_t e = NULL;

  if (cu == NULL)
    return;
  inputs = sr_xcalloc (req->n_files + 1, sizeof *inputs);
  inputs[0] = (struct sr_code_file){ .name = l->source, .content = req->code,
                                     .len = req->code_len };
  if (req->n_files)
    memcpy (inputs + 1, req->files, req->n_files * sizeof *inputs);
  if (sr_compile_cache_put (cu->cache, cu->key, cu->dirfd, inputs, req->n_files + 1, &e) < 0)
    cache_failed (&e);
}

/* The compile stage of l, when it has one (the cache's answer else): 0
 * with *done set when it decided the outcome (a compile error, a
 * cancel), res filled as sr_code_run documents; -1 on error.  *keep is
 * set when the cache is to keep what it compiled (cache_keep, the
 * caller's to call before the code directory goes).  */
static int
compile_stage (const struct sr_config *cfg, const struct sr_language *l,
               const struct sr_code_request *req, const struct sr_policy_ids *ids,
               sr_code_stage_fn run_stage, void *ctx, struct cache_use *cu,
               struct sr_code_result *res, bool *done, bool *keep, sr_error_t *err)
{
  _cleanup_strv_ char **argv = NULL;
  struct sr_code_stage compile;
  uint64_t start = sr_now_ns ();

  *done = false;
  *keep = false;
  if (l->compile[0] == '\0')
    return 0;
  argv = compile_argv (l, req);
  compile = (struct sr_code_stage){ .name = "compile", .command = l->compile, .argv = argv,
                                    .code_writable = true, .ids = ids,
                                    .timeout_ms = cfg->compile_timeout_ms,
                                    .cpus = sr_policy_compile_cpus (cfg, l), .req = req };
  res->compiled = true;
  res->compile_cached = cache_answers (cu, l, argv, req);
  if (res->compile_cached)
    {
      res->compile_ms = (sr_now_ns () - start) / 1000000;
      return 0;
    }
  if (run_stage (ctx, &compile, &res->run, err) < 0)
    return sr_error_wrap (err, "compile stage");
  res->compile_ms = res->run.duration_ns / 1000000;
  if (res->run.status != SR_RUN_SUCCESS)
    {
      /* A compiler killed by its ceiling or the memory limit failed to
       * compile all the same; only a cancel stays a cancel.  */
      res->status = res->run.status == SR_RUN_CANCELLED ? SR_CODE_CANCELLED
                                                        : SR_CODE_COMPILE_ERROR;
      res->duration_ms = res->compile_ms;
      *done = true;
      return 0;
    }
  *keep = cu != NULL;
  sr_run_result_done (&res->run);
  memset (&res->run, 0, sizeof res->run);
  return 0;
}

/* The run stage's timeout.  */
static uint64_t
run_timeout_ms (const struct sr_config *cfg, const struct sr_code_request *req)
{
  return req->timeout_ms ? req->timeout_ms : cfg->timeout_ms;
}

static int
run_run_stage (const struct sr_config *cfg, const struct sr_language *l,
               const struct sr_code_request *req, const struct sr_policy_ids *ids,
               sr_code_stage_fn run_stage, void *ctx, struct sr_code_result *res,
               sr_error_t *err)
{
  _cleanup_strv_ char **argv = run_argv (l->run, req);
  struct sr_code_stage run = { .name = "run", .command = l->run, .argv = argv,
                               .takes_stdin = true, .code_writable = false, .ids = ids,
                               .timeout_ms = run_timeout_ms (cfg, req), .req = req };

  if (run_stage (ctx, &run, &res->run, err) < 0)
    return -1;
  res->prestarted = run.prestarted;
  res->status = code_status_of (&res->run);
  res->duration_ms = res->run.duration_ns / 1000000;
  return 0;
}

static int
run_stages (const struct sr_config *cfg, const struct sr_language *l,
            const struct sr_code_request *req, const struct sr_policy_ids *ids,
            sr_code_stage_fn run_stage, void *ctx, struct cache_use *cu,
            struct sr_code_result *res, sr_error_t *err)
{
  bool done, keep;

  if (compile_stage (cfg, l, req, ids, run_stage, ctx, cu, res, &done, &keep, err) < 0)
    return -1;
  if (keep)
    cache_keep (cu, l, req);
  return done ? 0 : run_run_stage (cfg, l, req, ids, run_stage, ctx, res, err);
}

int
sr_code_run_stages (const struct sr_config *cfg, const struct sr_language *l,
                    const struct sr_code_request *req, const struct sr_policy_ids *ids,
                    sr_code_stage_fn run_stage, void *ctx, struct sr_code_result *res,
                    sr_error_t *err)
{
  return run_stages (cfg, l, req, ids, run_stage, ctx, NULL, res, err);
}

int
sr_code_use_image (struct sr_store *store, const struct sr_language *l,
                   struct sr_image_use *image, sr_error_t *err)
{
  sr_error_t e = NULL;

  if (sr_store_use (store, l->image, image, &e) == 0)
    return 0;
  if (e->errnum != ENOENT)
    {
      sr_error_move (err, &e);
      return sr_error_wrap (err, "language %s", l->name);
    }
  sr_error_free (&e);
  return sr_error_set_plain (err, "image_missing", ENOENT,
                             "language %s needs image '%s', which is not in the store %s; build "
                             "it with rootfs/build-all.sh --import %s, or import one with "
                             "`sandbox-runner image import --name %s PATH`",
                             l->name, l->image, sr_store_dir (store), l->image, l->image);
}

/* What run_stage needs of a backend's run.  */
struct backend_stage
{
  const struct sr_backend *be;
  void *state;
  struct sr_backend_run *run;
  const char *code_dir;
  /* The run stage's container, made while the compile stage ran
   * (run_ahead); NULL: the run stage makes its own.  */
  struct sr_backend_warm *ahead;
  /* Where the compile stage leaves its container (sr_code_stage.leave),
   * or NULL.  */
  struct sr_container **leave;
  bool dir_mounted;   /* code_dir is a tmpfs of sr_code_make_dir's */
};

static int
run_backend_stage (void *ctx, struct sr_code_stage *st, struct sr_run_result *res,
                   sr_error_t *err)
{
  const struct backend_stage *bs = ctx;

  if (bs->ahead && !st->code_writable)
    return bs->be->warm_stage (bs->ahead, st, res, err);
  st->leave = st->code_writable ? bs->leave : NULL;
  return bs->be->run_stage (bs->run, bs->code_dir, st, res, err);
}

/* The compile stage (or the cache's answer) on a thread of its own, while
 * the caller's makes the run stage's container.  */
struct compile_job
{
  const struct sr_config *cfg;
  const struct sr_language *l;
  const struct sr_code_request *req;
  const struct sr_policy_ids *ids;
  struct backend_stage *bs;
  struct cache_use *cu;
  struct sr_code_result *res;
  bool done;
  bool keep;
  int r;
  sr_error_t err;
  /* Set, under lock, once the fields above hold the compile's outcome.  */
  bool compiled;
  /* Set, under lock, by the caller's thread once it has the outcome,
   * with the code directory to take off its path (sr_code_detach_dir)
   * when the run stage's container, made already, is all that needs it;
   * else NULL.  */
  bool decided;
  const char *detach_dir;
  pthread_mutex_t lock;
  pthread_cond_t cond;
};

/* The compile stage, then, while the caller's thread, told the outcome
 * first, runs the run stage: its container's teardown (its init, cgroups,
 * state; a millisecond or more), and the code directory's unmount when
 * the caller says.  The container stays this thread's to destroy: its
 * init dies with the thread that made it.  */
static void *
compile_job_main (void *arg)
{
  struct compile_job *j = arg;
  struct sr_container *left = NULL;
  struct backend_stage bs = *j->bs;
  const char *detach;

  bs.leave = &left;
  j->r = compile_stage (j->cfg, j->l, j->req, j->ids, run_backend_stage, &bs, j->cu, j->res,
                        &j->done, &j->keep, &j->err);
  pthread_mutex_lock (&j->lock);
  j->compiled = true;
  pthread_cond_broadcast (&j->cond);
  pthread_mutex_unlock (&j->lock);
  sr_container_destroy (left);
  pthread_mutex_lock (&j->lock);
  while (!j->decided)
    pthread_cond_wait (&j->cond, &j->lock);
  detach = j->detach_dir;
  pthread_mutex_unlock (&j->lock);
  if (detach)
    sr_code_detach_dir (detach);
  return NULL;
}

static void *
cache_keep_main (void *arg)
{
  struct compile_job *j = arg;

  cache_keep (j->cu, j->l, j->req);
  return NULL;
}

/* The run stage, while another thread has the cache keep what the
 * compile stage made: the copy, its digest and the cache's eviction
 * (a scan of every entry) were 0.8 ms of a C++ hello world's path to
 * its result.  The run stage gets the code directory read-only, so the
 * cache copies what the compiler left.  */
static int
run_keeping (struct compile_job *j, sr_error_t *err)
{
  pthread_t keeper;
  bool kept_aside = j->keep && pthread_create (&keeper, NULL, cache_keep_main, j) == 0;
  int r;

  if (j->keep && !kept_aside)
    cache_keep (j->cu, j->l, j->req);
  r = run_run_stage (j->cfg, j->l, j->req, j->ids, run_backend_stage, j->bs, j->res, err);
  if (kept_aside)
    pthread_join (keeper, NULL);
  return r;
}

/* Whether the run stage's container may be made while l compiles: what
 * the backend makes ahead (warm_new) is the run stage's container with
 * the default timeout's CPU-seconds backstop.  */
static bool
can_run_ahead (const struct sr_backend *be, const struct sr_config *cfg,
               const struct sr_language *l, const struct sr_code_request *req)
{
  return l->compile[0] && be->keeps_warm
         && sr_policy_cpu_seconds (run_timeout_ms (cfg, req))
              == sr_policy_cpu_seconds (cfg->timeout_ms);
}

/* run_stages for a language that compiles, on a backend that keeps_warm:
 * a container takes as long to set up as a hello world takes to run (on
 * cgroup v1 its attach waits for an RCU grace period), so the run
 * stage's is made on this thread, which outlives it (the container's
 * init dies with the thread that made it), while another compiles; the
 * two grace periods overlap too.  The stages and their results are
 * run_stages' own; a container that could not be made ahead is made
 * again by the run stage, which reports why it failed.  */
static int
run_ahead (const struct sr_config *cfg, const struct sr_language *l,
           const struct sr_code_request *req, const struct sr_policy_ids *ids,
           struct backend_stage *bs, struct cache_use *cu, struct sr_code_result *res,
           sr_error_t *err)
{
  struct compile_job j = { .cfg = cfg, .l = l, .req = req, .ids = ids, .bs = bs, .cu = cu,
                           .res = res, .lock = PTHREAD_MUTEX_INITIALIZER,
                           .cond = PTHREAD_COND_INITIALIZER };
  struct sr_backend_warm *w = NULL;
  pthread_t thread;
  sr_error_t e = NULL;
  int r;

  if (pthread_create (&thread, NULL, compile_job_main, &j) != 0)
    return run_stages (cfg, l, req, ids, run_backend_stage, bs, cu, res, err);
  if (bs->be->warm_new (bs->state, l, bs->code_dir, ids, false, true, &w, &e) < 0)
    sr_error_free (&e);
  pthread_mutex_lock (&j.lock);
  while (!j.compiled)
    pthread_cond_wait (&j.cond, &j.lock);
  j.decided = true;
  if (w && bs->dir_mounted && j.r == 0 && !j.done)
    j.detach_dir = bs->code_dir;
  pthread_cond_broadcast (&j.cond);
  pthread_mutex_unlock (&j.lock);
  if (j.r < 0)
    {
      sr_error_move (err, &j.err);
      r = -1;
    }
  else if (j.done)
    r = 0;
  else
    {
      bs->ahead = w;
      r = run_keeping (&j, err);
      bs->ahead = NULL;
    }
  pthread_join (thread, NULL);
  bs->be->warm_free (w);
  return r;
}

int
sr_code_run_on (const struct sr_backend *be, void *state, const struct sr_config *cfg,
                const struct sr_language *l, const struct sr_code_request *req,
                struct sr_code_result *res, sr_error_t *err)
{
  struct sr_backend_run *run = NULL;
  _cleanup_free_ char *scratch = NULL;
  _cleanup_close_ int scratch_fd = -1;
  int scratch_hold_fd = -1;
  /* Without takes_ids, the runner's own until code_dir hands it over.  */
  struct sr_policy_ids ids = { .map.lease_fd = -1, .uid = geteuid (), .gid = getegid () };
  uid_t uid;
  gid_t gid;
  int r = -1;

  if (be->run_begin (state, l, &run, err) < 0)
    return -1;
  if (be->takes_ids)
    {
      uid_t user_uid;
      gid_t user_gid;

      be->run_user (run, &user_uid, &user_gid);
      if (sr_policy_ids_take (cfg, user_uid, user_gid, &ids, err) < 0)
        goto out;
    }
  uid = ids.uid;
  gid = ids.gid;
  if (sr_code_make_dir (cfg, &ids, be->shares_mounts, &scratch, &scratch_fd, &scratch_hold_fd,
                        err) < 0
      || be->code_dir (state, scratch, scratch_fd, &uid, &gid, err) < 0
      || sr_code_write_inputs (scratch_fd, l, req, uid, gid, err) < 0)
    goto out;
  {
    struct backend_stage bs = { .be = be, .state = state, .run = run, .code_dir = scratch,
                                .dir_mounted = scratch_hold_fd >= 0 };
    struct cache_use cu = { .dirfd = scratch_fd, .uid = uid, .gid = gid };
    struct cache_use *cup;
    sr_error_t e = NULL;

    cu.image_id = be->run_image_id ? be->run_image_id (run) : NULL;
    if (l->compile[0] && cfg->compile_cache_size && cu.image_id
        && sr_compile_cache_open (cfg->runtime_dir, cfg->compile_cache_size, &cu.cache, &e) < 0)
      cache_failed (&e);
    cup = cu.cache ? &cu : NULL;
    if (can_run_ahead (be, cfg, l, req))
      r = run_ahead (cfg, l, req, &ids, &bs, cup, res, err);
    else
      r = run_stages (cfg, l, req, &ids, run_backend_stage, &bs, cup, res, err);
    sr_compile_cache_close (cu.cache);
  }

out:
  if (scratch)
    sr_code_remove_dir (scratch, scratch_hold_fd);
  be->run_end (run);
  sr_policy_ids_release (&ids);
  return r;
}

/* Runs req on language l through the configured backend.  */
static int
run_on_configured (const struct sr_config *cfg, struct sr_store *store,
                   const struct sr_language *l, const struct sr_code_request *req,
                   struct sr_code_result *res, sr_error_t *err)
{
  const struct sr_backend *be;
  void *state = NULL;
  int r;

  res->language = sr_xstrdup (l->name);
  be = sr_backend_get (cfg, err);
  if (be == NULL || be->open (cfg, store, SR_BACKEND_RUNS, &state, err) < 0)
    return -1;
  r = sr_code_run_on (be, state, cfg, l, req, res, err);
  be->close (state);
  return r;
}

int
sr_code_run (const struct sr_config *cfg, struct sr_store *store,
             const struct sr_code_request *req, struct sr_code_result *res, sr_error_t *err)
{
  const struct sr_language *l = NULL;

  memset (res, 0, sizeof *res);
  if (sr_code_validate (cfg, req, &l, err) < 0)
    return -1;
  return run_on_configured (cfg, store, l, req, res, err);
}

int
sr_code_try (const struct sr_config *cfg, struct sr_store *store, const struct sr_language *l,
             struct sr_code_result *res, sr_error_t *err)
{
  const struct sr_code_request req = { .language = l->name, .code = "", .cancel_fd = -1 };
  struct sr_language probe = *l;

  memset (res, 0, sizeof *res);
  probe.compile = (char *) "";
  probe.run = (char *) "true";
  return run_on_configured (cfg, store, &probe, &req, res, err);
}
