/* sandbox-runner doctor [--json]: what this host supports, and what a run
 * will enforce, with a fix for each missing piece.  Exit status 0: runs
 * are fully isolated and limited; 1: runs work, with something missing
 * (images present or not do not count);
 * 2: containers cannot be made here.  */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <mntent.h>
#include <pwd.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/image-user.h"
#include "common/util.h"
#include "image/store.h"
#include "runtime/cgroup.h"
#include "runtime/idmap.h"
#include "sandbox/code.h"

enum level { OK, WARN, FAIL };

struct report
{
  cJSON *checks;
  enum level worst;       /* of the checks that decide the isolation */
  bool json;
  bool informational;     /* checks now do not change worst */
};

static void
check (struct report *r, const char *name, enum level l, const char *detail, const char *fix)
{
  static const char *const names[] = { "ok", "warning", "missing" };
  cJSON *o = cJSON_CreateObject ();

  cJSON_AddStringToObject (o, "check", name);
  cJSON_AddStringToObject (o, "status", names[l]);
  cJSON_AddStringToObject (o, "detail", detail);
  if (fix)
    cJSON_AddStringToObject (o, "fix", fix);
  cJSON_AddItemToArray (r->checks, o);
  if (l > r->worst && !r->informational)
    r->worst = l;
  if (!r->json)
    {
      printf ("%-8s %-18s %s\n", names[l], name, detail);
      if (fix)
        printf ("%-8s %-18s fix: %s\n", "", "", fix);
    }
}

static long
read_number (const char *path)
{
  _cleanup_free_ char *text = NULL;

  if (sr_read_file (path, &text, NULL, NULL) < 0)
    return -1;
  return strtol (text, NULL, 10);
}

/* Can this process make a user namespace?  Tried in a child, so that
 * nothing here changes.  */
static int
try_userns (void)
{
  int status;
  pid_t pid = fork ();

  if (pid == 0)
    _exit (unshare (CLONE_NEWUSER | CLONE_NEWNS) == 0 ? 0 : errno);
  if (pid < 0 || waitpid (pid, &status, 0) < 0)
    return errno;
  return WIFEXITED (status) ? WEXITSTATUS (status) : EINTR;
}

static void
check_userns (struct report *r)
{
  long max = read_number ("/proc/sys/user/max_user_namespaces");
  long apparmor = read_number ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
  long debian = read_number ("/proc/sys/kernel/unprivileged_userns_clone");
  int e = try_userns ();
  _cleanup_free_ char *detail = NULL;

  if (e == 0)
    {
      check (r, "user namespaces", OK, "a user namespace can be created", NULL);
      return;
    }
  detail = sr_xasprintf ("unshare(CLONE_NEWUSER): %s", strerror (e));
  if (max == 0)
    check (r, "user namespaces", FAIL, detail, "sysctl -w user.max_user_namespaces=15000");
  else if (apparmor == 1)
    check (r, "user namespaces", FAIL, detail,
           "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile "
           "for sandbox-runner that allows userns");
  else if (debian == 0)
    check (r, "user namespaces", FAIL, detail, "sysctl -w kernel.unprivileged_userns_clone=1");
  else
    check (r, "user namespaces", FAIL, detail,
           "a seccomp filter or container around sandbox-runner forbids unshare; run it "
           "outside, or use the Docker backend");
}

/* The fix for a user without a subordinate range: one that no user of
 * this host has already, in either file.  */
static char *
subid_fix (void)
{
  _cleanup_free_ char *subuid = NULL, *subgid = NULL;
  uint32_t start;

  (void) sr_read_file ("/etc/subuid", &subuid, NULL, NULL);
  (void) sr_read_file ("/etc/subgid", &subgid, NULL, NULL);
  start = sr_subid_free_range (subuid, subgid);
  if (start == 0)
    return sr_xstrdup ("apt-get install uidmap; give $USER a range of 65536 ids that no other "
                       "user has in /etc/subuid and /etc/subgid");
  return sr_xasprintf ("apt-get install uidmap; usermod --add-subuids %u-%u --add-subgids "
                       "%u-%u $USER",
                       start, start + SR_SUBID_RANGE - 1, start, start + SR_SUBID_RANGE - 1);
}

/* The id map a container made here gets, planned once for the checks
 * that read it; err says why there is none.  */
struct idmap_plan
{
  struct sr_idmap m;
  sr_error_t err;
};

static void
check_idmap (struct report *r, const struct idmap_plan *plan)
{
  _cleanup_free_ char *detail = NULL, *fix = NULL;

  if (plan->err)
    {
      check (r, "id mapping", WARN, plan->err->msg, "fix /etc/subuid and /etc/subgid");
      return;
    }
  switch (plan->m.mode)
    {
    case SR_IDMAP_ROOT:
      detail = sr_xasprintf ("root in a container is one of %u host ranges of %u ids from uid "
                             "%u, a range no other live container has; never host root",
                             plan->m.slots, plan->m.uid_count, plan->m.uid_base);
      check (r, "id mapping", OK, detail, NULL);
      break;
    case SR_IDMAP_SUBID:
      detail = sr_xasprintf ("your uid and %u subordinate ids from /etc/subuid, via newuidmap",
                             plan->m.uid_count);
      check (r, "id mapping", OK, detail, NULL);
      break;
    case SR_IDMAP_SINGLE:
      check (r, "id mapping", WARN,
             "only your own uid maps (no /etc/subuid range or no newuidmap): programs that "
             "change users inside will fail",
             fix = subid_fix ());
      break;
    }
}

/* The ids the user setting names, as the native backend resolves them:
 * in the session image when the store has it (*where says so), else
 * without an image, which only ids need.  */
static int
resolve_user (const struct sr_config *cfg, uid_t *uid, gid_t *gid, char **where,
              sr_error_t *err)
{
  struct sr_store *s = NULL;
  struct sr_image_use use = { .lock_fd = -1 };
  int r;

  if (cfg->backend_kind == SR_BACKEND_NATIVE
      && sr_store_open_all (cfg->image_store, cfg->image_stores_readonly, false, &s, NULL) == 0
      && sr_store_use (s, cfg->session_image, &use, NULL) == 0)
    {
      r = sr_image_user_resolve_path (cfg->user, use.rootfs, cfg->session_image, uid, gid, err);
      *where = sr_xasprintf (" (in image %s)", cfg->session_image);
    }
  else if (sr_image_user_numeric (cfg->user))
    {
      r = sr_image_user_resolve (cfg->user, -1, NULL, uid, gid, err);
      *where = sr_xstrdup ("");
    }
  else
    r = sr_error_set_plain (err, "invalid_config", ENOENT,
                            "the user setting '%s' is a name, which %s in each image: not "
                            "checked here",
                            cfg->user,
                            cfg->backend_kind == SR_BACKEND_NATIVE
                                ? "is looked up (the session image is not in the store)"
                                : "dockerd looks up");
  sr_image_release (&use);
  sr_store_close (s);
  return r;
}

/* Who the commands of run_code and sessions are inside, and who owns
 * the images' files there.  */
static void
check_user (struct report *r, const struct sr_config *cfg, const struct idmap_plan *plan)
{
  _cleanup_free_ char *detail = NULL, *fix = NULL, *where = NULL;
  sr_error_t err = NULL;
  uid_t uid;
  gid_t gid;
  int e;

  if (resolve_user (cfg, &uid, &gid, &where, &err) < 0)
    {
      /* Without where, nothing was looked up: nothing is wrong yet.  */
      check (r, "user inside", where ? WARN : OK, err->msg,
             where ? "set user to one the images have: sandbox, 1000 or root" : NULL);
      sr_error_free (&err);
      return;
    }
  if (plan->err)
    {
      check (r, "user inside", WARN, plan->err->msg, NULL);
      return;
    }
  if (!sr_idmap_maps (&plan->m, uid, gid))
    {
      detail = sr_xasprintf ("the user setting is %s, %u:%u%s, but only your own uid maps: "
                             "run_code and sessions run as root inside (that uid) instead",
                             cfg->user, (unsigned) uid, (unsigned) gid, where);
      check (r, "user inside", WARN, detail, fix = subid_fix ());
    }
  else
    {
      detail = sr_xasprintf ("run_code and sessions run as %s, %u:%u%s inside%s", cfg->user,
                             (unsigned) uid, (unsigned) gid, where,
                             uid == 0 ? " (root: the user setting says so)" : "");
      check (r, "user inside", OK, detail, NULL);
    }
  free (detail);
  detail = NULL;
  if (plan->m.mode != SR_IDMAP_ROOT)
    {
      check (r, "image owners", OK,
             "the layers are extracted as you, so their files are root's inside", NULL);
      return;
    }
  e = sr_idmap_mount_probe (cfg->image_store);
  if (e == 0)
    detail = sr_xasprintf ("the root filesystems are mounted idmapped: files are owned inside "
                           "as the image says (%s takes idmapped mounts)", cfg->image_store);
  else
    detail = sr_xasprintf ("%s refuses an idmapped mount (%s): an image's files are nobody's "
                           "inside, not root's", cfg->image_store, strerror (e));
  check (r, "image owners", e == 0 ? OK : WARN, detail,
         e == 0 ? NULL : "put image_store on a file system that takes idmapped mounts (ext4, "
                         "xfs, btrfs; tmpfs from Linux 6.3)");
}

/* Whether a cgroup hierarchy is mounted with favordynmods, which keeps
 * the kernel's lock for moving processes between cgroups in the mode
 * where taking it does not wait for an RCU grace period (Linux 6.0).  */
static bool
favordynmods_mounted (void)
{
  FILE *f = setmntent ("/proc/self/mounts", "re");
  struct mntent *e;
  bool found = false;

  if (f == NULL)
    return false;
  while (!found && (e = getmntent (f)))
    found = (strcmp (e->mnt_type, "cgroup") == 0 || strcmp (e->mnt_type, "cgroup2") == 0)
            && hasmntopt (e, "favordynmods") != NULL;
  endmntent (f);
  return found;
}

/* How long a run's init takes to get into cg, on cgroup v1, where clone3
 * cannot start a process in its cgroup: it moves itself where it can
 * (sr_cgroup_self_fds), else the runner moves it.  -1 when it could not
 * be measured.  */
static double
attach_ms (struct sr_cgroup *cg)
{
  int fds[SR_CGROUP_MAX_V1];
  size_t n = sr_cgroup_self_fds (cg, fds);
  int ready[2];
  uint64_t t0;
  pid_t pid;
  char c = 'n';
  bool joined;
  double ms = -1;

  if (pipe2 (ready, O_CLOEXEC) < 0)
    {
      for (size_t i = 0; i < n; i++)
        close (fds[i]);
      return -1;
    }
  t0 = sr_now_ns ();
  pid = fork ();
  if (pid == 0)
    {
      c = sr_cgroup_join_self (fds, n) == 0 ? 'y' : 'n';
      if (write (ready[1], &c, 1) != 1)
        _exit (1);
      pause ();
      _exit (0);
    }
  for (size_t i = 0; i < n; i++)
    close (fds[i]);
  close (ready[1]);
  if (pid > 0)
    {
      if (n == 0)
        joined = sr_cgroup_attach (cg, pid, NULL) == 0;
      else
        joined = read (ready[0], &c, 1) == 1 && c == 'y';
      if (joined)
        ms = (double) (sr_now_ns () - t0) / 1e6;
      kill (pid, SIGKILL);
      waitpid (pid, NULL, 0);
    }
  close (ready[0]);
  return ms;
}

/* How this user gets cgroups of its own, on this host: through systemd
 * where it runs, else by hand from root, v1 (one per controller's
 * hierarchy) or v2 (one, which root must move the user's shell into: a
 * v2 move needs write access to the common ancestor).  */
static char *
delegation_fix (void)
{
  const struct passwd *pw = getpwuid (geteuid ());
  const char *user = pw ? pw->pw_name : "USER";

  if (geteuid () == 0)
    return sr_xstrdup ("mount the cgroup controllers (memory, cpu, pids), or run under a systemd "
                       "unit with Delegate=yes");
  if (access ("/run/systemd/system", F_OK) == 0)
    return sr_xstrdup ("start it in a delegated cgroup: systemd-run --user --scope -p "
                       "Delegate=yes sandbox-runner ...");
  if (access ("/sys/fs/cgroup/memory", F_OK) == 0)
    return sr_xasprintf ("no systemd here: as root, give %s cgroups of its own: for c in memory cpu "
                         "pids; do mkdir /sys/fs/cgroup/$c/sandbox-runner-%s; chown -R %s "
                         "/sys/fs/cgroup/$c/sandbox-runner-%s; done; then, as %s, before starting "
                         "sandbox-runner: for c in memory cpu pids; do echo $$ > "
                         "/sys/fs/cgroup/$c/sandbox-runner-%s/cgroup.procs; done (README, "
                         "\"Limits without systemd\")",
                         user, user, user, user, user, user);
  return sr_xasprintf ("no systemd here: as root, mkdir /sys/fs/cgroup/sandbox-runner-%s; echo "
                       "'+memory +cpu +pids' > /sys/fs/cgroup/cgroup.subtree_control; chown %s "
                       "/sys/fs/cgroup/sandbox-runner-%s "
                       "/sys/fs/cgroup/sandbox-runner-%s/cgroup.{procs,subtree_control,threads}; "
                       "then move the shell that starts sandbox-runner into it, as root: echo PID "
                       "> /sys/fs/cgroup/sandbox-runner-%s/cgroup.procs (README, \"Limits without "
                       "systemd\")",
                       user, user, user, user, user);
}

static void
check_limits (struct report *r)
{
  struct sr_cgroup_limits want = { .memory = 64u << 20, .cpus = 0.5, .pids = 16 };
  struct sr_limit_report got = { 0 };
  struct sr_cgroup *cg = NULL;
  _cleanup_free_ char *name = sr_xasprintf ("sr-doctor-%d", (int) getpid ());
  _cleanup_free_ char *detail = NULL;
  sr_error_t err = NULL;
  bool all_cgroup;
  double join_ms;

  if (sr_cgroup_create (&want, name, &cg, &got, &err) < 0)
    {
      check (r, "limits", WARN, err->msg, NULL);
      sr_error_free (&err);
      return;
    }
  join_ms = got.memory == SR_LIMIT_CGROUP1 || got.cpu == SR_LIMIT_CGROUP1
                    || got.pids == SR_LIMIT_CGROUP1
                ? attach_ms (cg)
                : -1;
  sr_cgroup_destroy (cg, NULL);
  /* Where no cgroup takes a limit, a run falls back to rlimits: address
   * space for memory, RLIMIT_NPROC for processes, nothing for CPU.  */
  detail = sr_xasprintf ("memory: %s, cpu: %s, pids: %s",
                         got.memory ? sr_limit_mechanism_name (got.memory) : "rlimit",
                         sr_limit_mechanism_name (got.cpu),
                         got.pids ? sr_limit_mechanism_name (got.pids) : "rlimit");
  all_cgroup = (got.memory == SR_LIMIT_CGROUP2 || got.memory == SR_LIMIT_CGROUP1)
               && (got.cpu == SR_LIMIT_CGROUP2 || got.cpu == SR_LIMIT_CGROUP1)
               && (got.pids == SR_LIMIT_CGROUP2 || got.pids == SR_LIMIT_CGROUP1);
  if (all_cgroup)
    check (r, "limits", OK, detail, NULL);
  else
    {
      _cleanup_free_ char *fix = delegation_fix ();

      check (r, "limits", WARN, detail, fix);
    }
  /* A cost, not a hole: it does not change the verdict.  */
  if (join_ms >= 0)
    {
      bool was = r->informational;
      _cleanup_free_ char *cost = NULL;

      r->informational = true;
      if (favordynmods_mounted () || join_ms < 1.0)
        {
          cost = sr_xasprintf ("cgroup v1: a run joined its cgroups in %.2f ms", join_ms);
          check (r, "cgroup join", OK, cost, NULL);
        }
      else
        {
          cost = sr_xasprintf ("cgroup v1: a run waited %.1f ms to join its cgroups (the "
                               "kernel waits for an RCU grace period on each move)",
                               join_ms);
          check (r, "cgroup join", WARN, cost,
                 "boot with cgroup v2 (systemd.unified_cgroup_hierarchy=1), where a run "
                 "starts in its cgroup; or, on Linux 6.0 and newer, mount one cgroup "
                 "hierarchy with favordynmods: mkdir /run/cgroup-fdm && mount -t cgroup -o "
                 "none,name=favordynmods,favordynmods cgroup /run/cgroup-fdm");
        }
      r->informational = was;
    }
}

static void
check_kernel (struct report *r)
{
  struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
  int fd = (int) syscall (SYS_openat2, AT_FDCWD, "/", &how, sizeof how);

  if (fd >= 0)
    {
      close (fd);
      check (r, "openat2", OK, "available: mounts and image layers resolve inside the rootfs",
             NULL);
    }
  else
    check (r, "openat2", FAIL, strerror (errno), "Linux 5.6 or newer is needed");
  if (prctl (PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 && access ("/proc/sys/kernel/seccomp", F_OK) == 0)
    check (r, "seccomp", OK, "filters can be installed", NULL);
  else
    check (r, "seccomp", FAIL, "the kernel has no seccomp filter support",
           "a kernel built with CONFIG_SECCOMP_FILTER");
}

/* Starts a container of l's image as runs would (the configured
 * backend, policy and seccomp profile) and runs `true` in it.  */
static void
try_container (struct report *r, const struct sr_config *cfg, struct sr_store *s,
               const struct sr_language *l, const char *what)
{
  _cleanup_free_ char *name = sr_xasprintf ("run %s", what), *detail = NULL;
  struct sr_code_result res;
  sr_error_t err = NULL;

  if (sr_code_try (cfg, s, l, &res, &err) < 0)
    {
      detail = sr_xasprintf ("a container of %s could not be made: %s", l->image, err->msg);
      check (r, name, FAIL, detail,
             "see the checks above; with backend docker, that dockerd runs and has the image");
      sr_error_free (&err);
    }
  else if (res.status != SR_CODE_SUCCESS)
    {
      detail = sr_xasprintf ("`true` in a container of %s ended with %s (exit %d): %.200s",
                             l->image, sr_code_status_name (res.status), res.run.exit_code,
                             res.run.err.data ? res.run.err.data : "");
      check (r, name, FAIL, detail,
             "check the seccomp_profile and cap_keep settings, and that the image has true");
    }
  else
    {
      detail = sr_xasprintf ("a %s container of %s ran true in %llu ms",
                             sr_backend_kind_name (cfg->backend_kind), l->image,
                             (unsigned long long) (res.run.duration_ns / 1000000));
      check (r, name, OK, detail, NULL);
    }
  sr_code_result_done (&res);
}

/* How to get the image named image (NULL: the default images).  */
static char *
image_fix (const char *image)
{
  return sr_xasprintf ("as root (every user reads root's images) " SR_DATADIR
                       "/rootfs/build-all.sh --import%s%s, or sandbox-runner image import "
                       "--name %s PATH", image ? " " : "", image ? image : "",
                       image ? image : "NAME");
}

/* Each language's image, and the session image: there, and a container
 * of it starts.  A missing image stops one language, not isolation.  */
static void
check_images (struct report *r, const struct sr_config *cfg)
{
  struct sr_language session = { .name = (char *) "session", .image = cfg->session_image,
                                 .source = (char *) "main", .docker_image = cfg->session_image };
  struct sr_store *s = NULL;
  sr_error_t err = NULL;

  if (sr_store_open_all (cfg->image_store, cfg->image_stores_readonly, false, &s, &err) < 0)
    {
      _cleanup_free_ char *fix = image_fix (NULL);

      check (r, "images", WARN, err->msg, fix);
      sr_error_free (&err);
      return;
    }
  for (size_t i = 0; i <= cfg->n_languages; i++)
    {
      const struct sr_language *l = i < cfg->n_languages ? &cfg->languages[i] : &session;
      bool seen = false;

      for (size_t j = 0; j < i && i == cfg->n_languages; j++)
        seen |= strcmp (cfg->languages[j].image, cfg->session_image) == 0;
      if (seen)
        continue;
      struct sr_image_info info = { 0 };
      _cleanup_free_ char *what = sr_xasprintf ("image %s", l->image);
      _cleanup_free_ char *user = i < cfg->n_languages ? sr_xasprintf ("language %s", l->name)
                                                       : sr_xstrdup ("sessions");
      _cleanup_free_ char *fix = image_fix (l->image);
      bool there = sr_store_lookup (s, l->image, &info, NULL) == 0;

      if (there)
        {
          _cleanup_free_ char *detail = sr_xasprintf ("%s: %s (%.12s)", user, l->image,
                                                      info.id);

          check (r, what, OK, detail, NULL);
        }
      else
        {
          _cleanup_free_ char *detail = sr_xasprintf (
              "%s: image %s is not in %s%s%s", user, l->image, cfg->image_store,
              *cfg->image_stores_readonly ? " nor in " : "", cfg->image_stores_readonly);

          check (r, what, WARN, detail, fix);
        }
      sr_image_info_done (&info);
      if (there || cfg->backend_kind != SR_BACKEND_NATIVE)
        {
          bool was = r->informational;

          r->informational = false;
          try_container (r, cfg, s, l, i < cfg->n_languages ? l->name : "session");
          r->informational = was;
        }
    }
  sr_store_close (s);
}

int
sr_cmd_doctor (int argc, char **argv)
{
  struct sr_config config = { 0 };
  struct report r = { .checks = cJSON_CreateArray () };
  struct idmap_plan idmap = { .err = NULL };
  sr_error_t err = NULL;
  bool config_ok = true;
  int status;

  if (argc == 2 && (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0))
    {
      cJSON_Delete (r.checks);
      printf ("Usage: sandbox-runner doctor [--json]\n\n"
              "Checks what this host supports and what runs will enforce, then starts\n"
              "a container of each configured image as runs would, with a fix for each\n"
              "missing piece.  Exit status: 0 fully isolated, 1 degraded, 2 runs\n"
              "impossible (or the configuration is broken).\n");
      return 0;
    }
  if (argc > 2 || (argc == 2 && strcmp (argv[1], "--json") != 0))
    {
      cJSON_Delete (r.checks);
      sr_cli_error ("usage: sandbox-runner doctor [--json]");
      return SR_EXIT_RUNNER;
    }
  r.json = argc == 2;
  /* A broken configuration is one more finding: the host checks still
   * run, and the ones that need the settings are left out.  */
  if (sr_config_load (&config, NULL, NULL, &err) < 0)
    {
      check (&r, "configuration", FAIL, err->msg,
             "correct that setting; `sandbox-runner config show` prints each one and where it "
             "comes from");
      sr_error_free (&err);
      config_ok = false;
    }
  check_userns (&r);
  (void) sr_idmap_plan (&idmap.m, "/etc/subuid", "/etc/subgid", &idmap.err);
  check_idmap (&r, &idmap);
  check_kernel (&r);
  check_limits (&r);
  /* Missing images stop runs of a language, not their isolation.  */
  r.informational = true;
  if (config_ok)
    {
      check_user (&r, &config, &idmap);
      check_images (&r, &config);
    }
  status = r.worst == OK ? 0 : r.worst == WARN ? 1 : 2;
  if (r.json)
    {
      cJSON *o = cJSON_CreateObject ();
      _cleanup_free_ char *text = NULL;

      cJSON_AddItemToObject (o, "checks", r.checks);
      cJSON_AddBoolToObject (o, "fully_isolated", status == 0);
      text = cJSON_Print (o);
      puts (text);
      cJSON_Delete (o);
    }
  else
    {
      printf ("\n%s\n", status == 0   ? "Runs here are fully isolated and limited."
                        : status == 1 ? "Runs work here, with the warnings above."
                                      : "Containers cannot be made here; see the fixes above.");
      cJSON_Delete (r.checks);
    }
  sr_error_free (&idmap.err);
  sr_config_done (&config);
  return status;
}
