#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/result_json.h"
#include "common/config.h"
#include "common/defaults.h"
#include "common/util.h"
#include "image/store.h"
#include "runtime/caps.h"
#include "runtime/container.h"
#include "runtime/mounts.h"
#include "runtime/state.h"
#include "sandbox/policy.h"

struct run_args
{
  const char *rootfs;
  const char *image;
  bool json;
  const char *workdir;
  const char *user;      /* --user; NULL: SR_DEFAULT_RUN_USER, not the user setting */
  struct sr_bind *binds;
  size_t n_binds;
  char **env;
  struct sr_policy_overrides policy;  /* the flags that override the configuration */
};

/* Live output in text mode: each stream is passed through up to the cap.  */
struct live_output
{
  size_t cap;
  size_t written[3];
};

enum
{
  OPT_ROOTFS = 1000, OPT_IMAGE, OPT_TIMEOUT, OPT_BIND, OPT_ENV, OPT_WORKDIR, OPT_MAX_OUTPUT, OPT_JSON,
  OPT_MEMORY, OPT_CPUS, OPT_PIDS, OPT_TMP_SIZE, OPT_STRICT, OPT_SECCOMP, OPT_CAP_KEEP, OPT_HELP,
  OPT_USER,
};

static const struct option run_options[] = {
  { "rootfs", required_argument, NULL, OPT_ROOTFS },
  { "image", required_argument, NULL, OPT_IMAGE },
  { "timeout", required_argument, NULL, OPT_TIMEOUT },
  { "bind", required_argument, NULL, OPT_BIND },
  { "env", required_argument, NULL, OPT_ENV },
  { "workdir", required_argument, NULL, OPT_WORKDIR },
  { "user", required_argument, NULL, OPT_USER },
  { "max-output", required_argument, NULL, OPT_MAX_OUTPUT },
  { "json", no_argument, NULL, OPT_JSON },
  { "memory", required_argument, NULL, OPT_MEMORY },
  { "cpus", required_argument, NULL, OPT_CPUS },
  { "pids", required_argument, NULL, OPT_PIDS },
  { "tmp-size", required_argument, NULL, OPT_TMP_SIZE },
  { "strict-limits", no_argument, NULL, OPT_STRICT },
  { "seccomp", required_argument, NULL, OPT_SECCOMP },
  { "cap-keep", required_argument, NULL, OPT_CAP_KEEP },
  { "help", no_argument, NULL, OPT_HELP },
  { NULL, 0, NULL, 0 },
};

static void
run_usage (FILE *f)
{
  fprintf (f,
           "Usage: sandbox-runner run [OPTIONS] -- CMD [ARGS...]\n\n"
           "Runs CMD in a fresh container and exits with its status.\n\n"
           "  --rootfs DIR         root filesystem (mounted read-only)\n"
           "  --image NAME         an image of the store instead (its Env and WorkingDir\n"
           "                       apply; without CMD, its Entrypoint and Cmd run)\n"
           "  --timeout S          wall-clock limit in seconds (default %u, at most %u)\n"
           "  --bind SRC:DST[:ro|:rw][:idmap]  bind a host path into the container\n"
           "                       (repeatable); idmap: its owners as the host sees them\n"
           "  --env K=V            add to the environment (repeatable)\n"
           "  --workdir DIR        working directory inside (default %s)\n"
           "  --user USER[:GROUP]  who CMD runs as inside: root, an id or a name of the\n"
           "                       image's /etc/passwd (default root)\n"
           "  --max-output BYTES   cap per stream of captured output (default %u)\n"
           "  --memory SIZE        memory limit (default %lluM, 0 for none)\n"
           "  --cpus N             CPU limit (default %.1f, 0 for none)\n"
           "  --pids N             process limit (default %u, 0 for none)\n"
           "  --tmp-size SIZE      size of the /tmp tmpfs (default %lluM)\n"
           "  --strict-limits      fail if a limit cannot be enforced\n"
           "  --seccomp FILE|unconfined   seccomp profile (OCI JSON; default: built-in)\n"
           "  --cap-keep LIST      capabilities to keep (default: none)\n"
           "  --json               print a JSON result instead of the output\n\n"
           "Exit status: CMD's status, 128+N if killed by signal N, %d on timeout,\n"
           "%d if the container could not be set up, %d/%d if CMD could not be executed.\n",
           SR_DEFAULT_TIMEOUT_MS / 1000, SR_MAX_TIMEOUT_MS / 1000, SR_DEFAULT_WORKDIR,
           SR_DEFAULT_MAX_OUTPUT, (unsigned long long) (SR_DEFAULT_MEMORY >> 20),
           SR_DEFAULT_CPUS, SR_DEFAULT_PIDS, (unsigned long long) (SR_DEFAULT_TMP_SIZE >> 20),
           SR_EXIT_TIMEOUT, SR_EXIT_RUNNER, SR_EXIT_NOEXEC, SR_EXIT_NOTFOUND);
}

static void
run_args_done (struct run_args *a)
{
  for (size_t i = 0; i < a->n_binds; i++)
    sr_bind_done (&a->binds[i]);
  free (a->binds);
  sr_strv_free (a->env);
}

static int
parse_env (struct run_args *a, const char *kv)
{
  const char *eq = strchr (kv, '=');

  if (eq == NULL || eq == kv)
    {
      sr_cli_error ("invalid --env '%s': expected KEY=VALUE", kv);
      return -1;
    }
  sr_env_set (&a->env, kv);
  return 0;
}

static int
parse_size_opt (const char *opt, const char *s, uint64_t *ret)
{
  if (sr_parse_size (s, ret) < 0)
    {
      sr_cli_error ("invalid %s '%s': expected a size such as 256M or 1G", opt, s);
      return -1;
    }
  return 0;
}

/* --timeout S: at most the configuration's ceiling.  */
static int
parse_timeout (const char *arg, const struct sr_config *cfg, struct sr_policy_overrides *o)
{
  if (sr_parse_seconds (arg, &o->timeout_ms) < 0 || o->timeout_ms == 0)
    {
      sr_cli_error ("invalid --timeout '%s': expected seconds, such as 10 or 2.5", arg);
      return -1;
    }
  if (o->timeout_ms > cfg->max_timeout_ms)
    {
      sr_cli_error ("--timeout %s is over the ceiling of %g seconds", arg,
                    (double) cfg->max_timeout_ms / 1000);
      return -1;
    }
  return 0;
}

static int
parse_cpus (const char *arg, struct sr_policy_overrides *o)
{
  char *end;

  errno = 0;
  o->cpus = strtod (arg, &end);
  if (errno || end == arg || *end || o->cpus < 0 || o->cpus > 1024)
    {
      sr_cli_error ("invalid --cpus '%s': expected a number such as 0.5 or 2", arg);
      return -1;
    }
  return 0;
}

/* The flags that override the configuration's policy: each sets its
 * field of o and marks it set.  */
static int
parse_policy_opt (int c, const char *arg, const struct sr_config *cfg,
                  struct sr_policy_overrides *o)
{
  sr_error_t err = NULL;
  uint64_t v;

  switch (c)
    {
    case OPT_TIMEOUT:
      o->set |= SR_POLICY_SET_TIMEOUT;
      return parse_timeout (arg, cfg, o);
    case OPT_MAX_OUTPUT:
      o->set |= SR_POLICY_SET_MAX_OUTPUT;
      if (parse_size_opt ("--max-output", arg, &o->max_output) < 0)
        return -1;
      if (o->max_output == 0)
        {
          sr_cli_error ("invalid --max-output '%s': must be at least 1 byte", arg);
          return -1;
        }
      return 0;
    case OPT_MEMORY:
      o->set |= SR_POLICY_SET_MEMORY;
      if (parse_size_opt ("--memory", arg, &o->memory) < 0)
        return -1;
      if (o->memory && o->memory < (4u << 20))
        {
          sr_cli_error ("--memory %s is too small (at least 4M)", arg);
          return -1;
        }
      return 0;
    case OPT_CPUS:
      o->set |= SR_POLICY_SET_CPUS;
      return parse_cpus (arg, o);
    case OPT_PIDS:
      o->set |= SR_POLICY_SET_PIDS;
      if (sr_cli_parse_uint ("--pids", arg, 0, &v) < 0)
        return -1;
      if (v > 1u << 22)
        {
          sr_cli_error ("--pids %s is too large", arg);
          return -1;
        }
      o->pids = (uint32_t) v;
      return 0;
    case OPT_TMP_SIZE:
      o->set |= SR_POLICY_SET_TMP_SIZE;
      return parse_size_opt ("--tmp-size", arg, &o->tmp_size);
    case OPT_STRICT:
      o->set |= SR_POLICY_SET_STRICT;
      o->strict_limits = true;
      return 0;
    case OPT_SECCOMP:
      o->set |= SR_POLICY_SET_SECCOMP;
      o->seccomp = arg;
      return 0;
    case OPT_CAP_KEEP:
      o->set |= SR_POLICY_SET_CAPS;
      if (sr_caps_parse_list (arg, &o->keep_caps, &err) < 0)
        {
          sr_cli_error ("invalid --cap-keep: %s", err->msg);
          sr_error_free (&err);
          return -1;
        }
      return 0;
    }
  return 1;
}

/* The flags of the container itself (not its policy).  */
static int
parse_container_opt (int c, const char *arg, struct run_args *a)
{
  sr_error_t err = NULL;

  switch (c)
    {
    case OPT_ROOTFS:
      a->rootfs = arg;
      return 0;
    case OPT_IMAGE:
      a->image = arg;
      return 0;
    case OPT_BIND:
      a->binds = sr_xrealloc (a->binds, (a->n_binds + 1) * sizeof *a->binds);
      if (sr_bind_parse (arg, &a->binds[a->n_binds], &err) < 0)
        {
          sr_cli_error ("%s", err->msg);
          sr_error_free (&err);
          return -1;
        }
      a->n_binds++;
      return 0;
    case OPT_ENV:
      return parse_env (a, arg);
    case OPT_WORKDIR:
      if (arg[0] != '/')
        {
          sr_cli_error ("invalid --workdir '%s': must be an absolute path", arg);
          return -1;
        }
      a->workdir = arg;
      return 0;
    case OPT_JSON:
      a->json = true;
      return 0;
    case OPT_USER:
      a->user = arg;
      return 0;
    }
  return 1;
}

static int
parse_run_args (int argc, char **argv, const struct sr_config *cfg, struct run_args *a,
                int *ret_index)
{
  int c, r;

  optind = 1;
  while ((c = getopt_long (argc, argv, "+h", run_options, NULL)) != -1)
    {
      if (c == OPT_HELP || c == 'h')
        {
          run_usage (stdout);
          exit (0);
        }
      r = parse_container_opt (c, optarg, a);
      if (r > 0)
        r = parse_policy_opt (c, optarg, cfg, &a->policy);
      if (r > 0)
        run_usage (stderr);
      if (r != 0)
        return -1;
    }
  a->policy.env = a->env;
  if ((a->rootfs == NULL) == (a->image == NULL))
    {
      sr_cli_error ("run: give one of --rootfs DIR and --image NAME");
      return -1;
    }
  if (optind >= argc && a->image == NULL)
    {
      sr_cli_error ("run: no command given (usage: sandbox-runner run [OPTIONS] -- CMD [ARGS...])");
      return -1;
    }
  *ret_index = optind;
  return 0;
}

static void
live_output (enum sr_stream stream, const char *buf, size_t len, void *userdata)
{
  struct live_output *lo = userdata;
  size_t room = lo->cap - lo->written[stream];
  size_t n = len < room ? len : room;

  if (n == 0)
    return;
  sr_write_all (stream == SR_STREAM_STDOUT ? STDOUT_FILENO : STDERR_FILENO, buf, n);
  lo->written[stream] += n;
}

/* The caller's stdin goes to the command only when it is data (a pipe or a
 * file): a terminal would hand the container a controlling tty.  */
static int
pick_stdin (void)
{
  struct stat sb;

  if (fstat (STDIN_FILENO, &sb) < 0)
    return -1;
  if (S_ISFIFO (sb.st_mode) || S_ISREG (sb.st_mode) || S_ISSOCK (sb.st_mode))
    return STDIN_FILENO;
  return -1;
}

/* SIGINT, SIGTERM and SIGHUP cancel the run (and kill the container)
 * instead of killing the runner and leaving it behind.  */
int
sr_cli_cancel_fd (void)
{
  sigset_t set;

  sigemptyset (&set);
  sigaddset (&set, SIGINT);
  sigaddset (&set, SIGTERM);
  sigaddset (&set, SIGHUP);
  if (sigprocmask (SIG_BLOCK, &set, NULL) < 0)
    return -1;
  return signalfd (-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* The command line as ps shows it, cut short.  */
static char *
join_argv (char *const *argv)
{
  char buf[256];
  size_t len = 0;

  buf[0] = '\0';
  for (; *argv && len + 1 < sizeof buf; argv++)
    len += (size_t) snprintf (buf + len, sizeof buf - len, "%s%s", len ? " " : "", *argv);
  return sr_xstrdup (buf);
}

static void
print_json (cJSON *o)
{
  _cleanup_free_ char *s = cJSON_PrintUnformatted (o);

  puts (s);
  fflush (stdout);
}

static int
exit_status_of (const struct sr_run_result *r)
{
  if (r->status == SR_RUN_TIMEOUT)
    return SR_EXIT_TIMEOUT;
  if (r->signal)
    return 128 + r->signal;
  return r->exit_code;
}

/* --image: the image's rootfs, its WorkingDir unless --workdir, and,
 * without a command, its Entrypoint and Cmd in *ret_argv.  */
static int
use_image (struct sr_store *store, struct run_args *a, bool has_cmd, struct sr_image_use *image,
           char ***ret_argv, sr_error_t *err)
{
  if (sr_store_use (store, a->image, image, err) < 0)
    return -1;
  if (a->workdir == NULL && image->info.working_dir && image->info.working_dir[0] == '/')
    a->workdir = image->info.working_dir;
  if (!has_cmd)
    {
      char **v = sr_xcalloc (1, sizeof *v);

      for (char **p = image->info.entrypoint; p && *p; p++)
        sr_strv_push (&v, *p);
      for (char **p = image->info.cmd; p && *p; p++)
        sr_strv_push (&v, *p);
      *ret_argv = v;
      if (v[0] == NULL)
        return sr_error_set (err, 0,
                             "run: no command given, and image %s has no Entrypoint or Cmd",
                             a->image);
    }
  a->rootfs = image->rootfs;
  return 0;
}

/* What a run that ran says: the JSON result, or the truncation markers
 * and why it ended.  */
static void
report_run (const struct run_args *a, const struct sr_policy *policy,
            const struct sr_run_result *res)
{
  size_t cap = policy->max_output;

  if (a->json)
    {
      cJSON *o = sr_result_to_json (res);

      print_json (o);
      cJSON_Delete (o);
      return;
    }
  if (res->out.truncated)
    fprintf (stdout, SR_TRUNCATION_MARKER_FMT, cap,
             (unsigned long long) (res->out.total - cap));
  fflush (stdout);
  if (res->err.truncated)
    fprintf (stderr, SR_TRUNCATION_MARKER_FMT, cap,
             (unsigned long long) (res->err.total - cap));
  if (res->status == SR_RUN_TIMEOUT)
    sr_cli_error ("timed out after %.1f s; the container was killed",
                  (double) policy->timeout_ms / 1000.0);
  else if (res->status == SR_RUN_OOM)
    sr_cli_error ("out of memory: killed at the %llu MiB limit",
                  (unsigned long long) (res->memory_limit >> 20));
  else if (res->status == SR_RUN_CANCELLED)
    sr_cli_error ("cancelled; the container was killed");
}

int
sr_cmd_run (int argc, char **argv)
{
  struct run_args a = { 0 };
  struct sr_config config = { 0 };
  _cleanup_free_ char *state_dir = NULL, *label = NULL;
  struct sr_policy *policy = NULL;
  struct sr_container_config cfg;
  struct sr_run_options opts = { .stdin_fd = -1, .cancel_fd = -1 };
  struct sr_run_result res = { 0 };
  struct live_output lo = { 0 };
  struct sr_exec_spec spec = { 0 };
  struct sr_store *store = NULL;
  struct sr_image_use image = { .lock_fd = -1 };
  struct sr_policy_ids ids = { .map.lease_fd = -1 };
  uid_t uid;
  gid_t gid;
  _cleanup_strv_ char **env = NULL, **image_argv = NULL;
  sr_error_t err = NULL;
  int cmd_index, status = SR_EXIT_RUNNER;

  if (sr_cli_read_config (&config) < 0)
    goto out;
  if (parse_run_args (argc, argv, &config, &a, &cmd_index) < 0)
    goto out;
  /* A generic container's command is root inside unless --user says
   * otherwise: the user setting is run_code's and sessions'.  */
  if (sr_config_set (&config, "user", a.user ? a.user : SR_DEFAULT_RUN_USER, SR_ORIGIN_FLAG,
                     "--user", &err) < 0)
    goto fail;
  /* --timeout (checked against max_timeout) replaces the configured one.  */
  if (a.policy.set & SR_POLICY_SET_TIMEOUT)
    config.timeout_ms = a.policy.timeout_ms;
  if (sr_cli_check_config (&config) < 0)
    goto out;
  if (sr_policy_new (&config, SR_BACKEND_NATIVE, &a.policy, &policy, &err) < 0)
    goto fail;
  if (a.image && sr_cli_open_store (&config, false, &store) < 0)
    goto out;
  if (a.image && use_image (store, &a, cmd_index < argc, &image, &image_argv, &err) < 0)
    goto fail;
  /* The environment: the policy's, the image's, then --env.  */
  env = sr_policy_env (policy, a.image ? image.info.env : NULL);

  if (sr_policy_user (policy, a.rootfs, a.image ? a.image : a.rootfs, &uid, &gid, &err) < 0
      || sr_policy_ids_take (&config, uid, gid, &ids, &err) < 0)
    goto fail;
  sr_policy_to_container (policy, a.rootfs, uid, gid, &cfg);
  cfg.idmap = &ids.map;
  cfg.fs.binds = a.binds;
  cfg.fs.n_binds = a.n_binds;
  state_dir = sr_cli_state_dir (&config, &err);
  if (state_dir == NULL)
    goto fail;
  cfg.state_dir = state_dir;
  /* Whatever a runner that died left behind goes before we add ours.  */
  sr_state_reclaim (state_dir, NULL);
  spec.argv = image_argv ? image_argv : argv + cmd_index;
  label = join_argv (spec.argv);
  cfg.label = label;
  spec.env = env;
  spec.cwd = a.workdir;

  opts.timeout_ms = policy->timeout_ms;
  opts.max_output = policy->max_output;
  opts.stdin_fd = pick_stdin ();
  opts.cancel_fd = sr_cli_cancel_fd ();
  if (!a.json)
    {
      lo.cap = policy->max_output;
      opts.on_output = live_output;
      opts.userdata = &lo;
    }

  if (sr_container_run (&cfg, &spec, &opts, &res, &err) < 0)
    goto fail;
  report_run (&a, policy, &res);
  status = exit_status_of (&res);
  goto out;

fail:
  if (res.exit_code == SR_EXIT_NOEXEC || res.exit_code == SR_EXIT_NOTFOUND)
    status = res.exit_code;
  if (a.json)
    {
      cJSON *o = sr_setup_error_to_json (&res, err->msg);

      print_json (o);
      cJSON_Delete (o);
    }
  else
    sr_cli_error ("%s", err->msg);
  sr_error_free (&err);

out:
  if (opts.cancel_fd >= 0)
    close (opts.cancel_fd);
  sr_run_result_done (&res);
  sr_policy_ids_release (&ids);
  sr_image_release (&image);
  sr_store_close (store);
  sr_policy_free (policy);
  run_args_done (&a);
  sr_config_done (&config);
  return status;
}
