/* SSH hosts as machines: the third backend (sandbox/backend.h), of kind
 * SR_BACKEND_SSH, over the OpenSSH client rather than an SSH
 * implementation of our own, since it is what the administrators of those
 * hosts already trust and configure (~/.ssh/config, known_hosts, agents).
 *
 * It is not a sandbox.  A box is one connection to one host, as the
 * configuration's ssh.NAME entry (common/config.h) or OpenSSH's own Host
 * NAME describes it, and whatever runs there runs with that account's
 * rights, on any path that account may reach: nothing is confined.  So
 * it runs no run_code and keeps nothing warm (those ops refuse, or are
 * NULL), and it is never the backend setting (config.c refuses it).
 *
 *   create   starts a ControlMaster (ssh -f -N, ControlPersist) whose
 *            socket is <runtime_dir>/ssh/XXXXXX/s (0700).  BatchMode:
 *            it never prompts; StrictHostKeyChecking=yes: a host whose
 *            key is not in known_hosts, or differs, is refused
 *            (host_key_unknown, host_key_mismatch), never accepted.
 *   exec     one `ssh -S socket` client per command through the master:
 *            the remote command line is built only of quoted words
 *            (ssh-client.h), the fixed wrapper script exec_script and the
 *            caller's words as its arguments.  A stdin that is a terminal
 *            (a persistent shell's, sandbox/shell.c) gets a remote
 *            terminal of its own (ssh -tt), so ^C reaches the remote
 *            foreground job through its line discipline and output comes
 *            as one stream (shell_one_stream).
 *   files    the scripts of files-script.h run through exec, as Docker's
 *            do: one implementation for both, tested by both.  Not
 *            sftp: its batch mode has no "make the parents", no size
 *            limit on a read, no identity of a file for a walk, and
 *            reports failures only as text; the scripts give each
 *            failure its code and write through a temp file renamed in
 *            the same directory.  Both break alike on a login shell that
 *            prints on stdout for commands.
 *   alive    the master still runs and answers `ssh -O check`.
 *   destroy  `ssh -O exit`, then the master is waited for (killed when
 *            it lingers) and its directory removed.  The masters of a
 *            runner killed before it could are ended by the next one that
 *            opens the backend for sessions (reclaim).
 *
 * A command's timeout or cancel ends it on the remote side too: the
 * wrapper notes its pid in a file of the remote /tmp, and a second client
 * signals that session's processes (kill_remote).  Commands run in the
 * account's login environment; the variables a caller gives are added to
 * it.  The remote login shell must be a POSIX shell (sh, bash, dash,
 * zsh, ksh), which reads the quoted words.  */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/statedir.h"
#include "common/util.h"
#include "sandbox/backend.h"
#include "sandbox/files-script.h"
#include "sandbox/ssh-client.h"

/* Connecting: the TCP connection and the key exchange.  */
#define CONNECT_TIMEOUT_S "15"
/* The master's own steps (start, check, exit) and a remote kill.  */
#define CONTROL_TIMEOUT_MS 30000u
/* How long the master may take to go after `ssh -O exit`.  */
#define EXIT_WAIT_MS 3000
/* How long the master's word that it runs is taken as still true: the
 * session manager asks every box, every second.  */
#define ALIVE_CACHE_NS 2000000000ull
/* A write's content, per run: its base64 (64 KiB) and the script stay
 * under MAX_ARG_STRLEN, as the whole remote command is one argument of
 * the remote login shell.  */
#define CHUNK_RAW (48u * 1024u)

struct ssh_state
{
  const struct sr_config *cfg;
  char *dir;                    /* <runtime_dir>/ssh */
};

struct sr_backend_box
{
  char *name;                   /* the machine: NAME of ssh.NAME */
  char *dest;                   /* what ssh connects to */
  char *image;                  /* "ssh:NAME" */
  char *dir, *sock;             /* the master's directory and socket */
  char **opts;                  /* ssh's options, up to the destination */
  pid_t master;                 /* 0 until known */
  int master_fd;                /* its pidfd, -1 until known */
  uint64_t alive_at;            /* when it last answered; 0: never */
  struct sr_fs_script fs;
};

/* --- the local ssh client (ssh-client.h) --- */

/* A command's client: quiet (ssh's own messages would mix with the
 * command's stderr), through the master only.  Should the master be gone,
 * ssh would connect by itself; the ProxyCommand that fails makes that
 * fail instead (it is never used through a master), so a lost connection
 * shows as one (machine_unreachable) rather than as a new one per
 * command.  */
#define CLIENT_OPTIONS "-q", "-o", "ControlMaster=no", "-o", "ProxyCommand=false"

/* ssh, the box's options, extra ones, and (when remote is not NULL) the
 * destination and the remote command line.  */
static char **
ssh_argv (const struct sr_backend_box *b, const char *const *extra, const char *remote)
{
  char **argv = NULL;

  sr_strv_push (&argv, "ssh");
  for (size_t i = 0; b->opts[i]; i++)
    sr_strv_push (&argv, b->opts[i]);
  for (size_t i = 0; extra && extra[i]; i++)
    sr_strv_push (&argv, extra[i]);
  sr_strv_push (&argv, "--");
  sr_strv_push (&argv, b->dest);
  if (remote)
    sr_strv_push (&argv, remote);
  return argv;
}

/* A remote command's side of a timeout or cancel (sr_ssh_kill_fn).  */
struct remote_cmd
{
  struct sr_backend_box *b;
  const char *pidfile;
};

static void kill_remote (struct sr_backend_box *b, const char *pidfile, const char *sig);

static void
kill_remote_cmd (void *ctx, bool all)
{
  struct remote_cmd *rc = ctx;

  kill_remote (rc->b, rc->pidfile, all ? "KILL" : "TERM");
}

/* A control command to the master (`ssh -O check`, `-O exit`).  */
static int
control (struct sr_backend_box *b, const char *cmd, struct sr_run_result *res, sr_error_t *err)
{
  const char *extra[] = { "-O", cmd, NULL };
  _cleanup_strv_ char **argv = ssh_argv (b, extra, NULL);
  struct sr_run_options opts = { .timeout_ms = CONTROL_TIMEOUT_MS, .max_output = 4096,
                                 .stdin_fd = -1, .cancel_fd = -1 };

  return sr_ssh_run (argv, &opts, NULL, NULL, res, err);
}

/* --- commands on the remote side --- */

/* sh -c exec_script sh PIDFILE CWD env -- NAME=VALUE... ARGV...: notes
 * the shell's pid for kill_remote (quietly: a /tmp it cannot write only
 * costs the remote kill), goes to CWD ("": the login's directory), runs
 * the command with the variables added.  */
static const char exec_script[] =
  "f=$1 d=$2; shift 2; { echo $$ >\"$f\"; } 2>/dev/null\n"
  "if [ -n \"$d\" ] && ! cd -- \"$d\"; then rm -f -- \"$f\"; exit 126; fi\n"
  "\"$@\"; s=$?; rm -f -- \"$f\"; exit $s\n";

/* sh -c kill_script sh PIDFILE SIGNAL: signals every process of the
 * session sshd made for the command (sshd starts each in one of its own),
 * or the pid alone when ps cannot tell the session.  */
static const char kill_script[] =
  "p=$(cat -- \"$1\" 2>/dev/null) || exit 0\n"
  "s=$(ps -o sid= -p \"$p\" 2>/dev/null | tr -d ' ')\n"
  "if [ -n \"$s\" ]; then pkill -\"$2\" -s \"$s\" 2>/dev/null || kill -s \"$2\" -- \"-$s\" \"$p\";\n"
  "else kill -s \"$2\" \"$p\"; fi 2>/dev/null\n"
  "[ \"$2\" = KILL ] && rm -f -- \"$1\"\n"
  "exit 0\n";

static void
kill_remote (struct sr_backend_box *b, const char *pidfile, const char *sig)
{
  char *words[] = { (char *) "sh", (char *) "-c", (char *) kill_script, (char *) "sh",
                    (char *) pidfile, (char *) sig, NULL };
  _cleanup_free_ char *line = sr_ssh_quote_words (words);
  const char *extra[] = { "-T", CLIENT_OPTIONS, NULL };
  _cleanup_strv_ char **argv = ssh_argv (b, extra, line);
  struct sr_run_options opts = { .timeout_ms = CONTROL_TIMEOUT_MS, .max_output = 4096,
                                 .stdin_fd = -1, .cancel_fd = -1 };
  struct sr_run_result res;

  /* Best effort: the master may be what failed.  */
  (void) sr_ssh_run (argv, &opts, NULL, NULL, &res, NULL);
  sr_run_result_done (&res);
}

/* Whether the master runs and answers.  */
static bool
master_check (struct sr_backend_box *b)
{
  struct sr_run_result res;
  bool up;

  if (b->master_fd >= 0)
    {
      struct pollfd p = { .fd = b->master_fd, .events = POLLIN };

      if (poll (&p, 1, 0) != 0)
        return false;  /* it exited */
    }
  up = control (b, "check", &res, NULL) == 0 && res.status == SR_RUN_SUCCESS;
  if (up && b->master_fd < 0)
    {
      /* "Master running (pid=1234)" */
      const char *p = res.err.data ? strstr (res.err.data, "pid=") : NULL;

      b->master = p ? (pid_t) atoi (p + 4) : 0;
      if (b->master > 0)
        b->master_fd = (int) syscall (SYS_pidfd_open, b->master, 0);
    }
  sr_run_result_done (&res);
  return up;
}

static int
ssh_exec (struct sr_backend_box *b, const struct sr_exec_spec *spec,
          const struct sr_run_options *opts, struct sr_run_result *res, sr_error_t *err)
{
  char hex[17];
  struct remote_cmd rc = { .b = b };
  _cleanup_strv_ char **words = NULL, **argv = NULL;
  _cleanup_free_ char *line = NULL, *pidfile = NULL;
  const char *extra[] = { isatty (opts->stdin_fd) ? "-tt" : "-T", CLIENT_OPTIONS, NULL };

  memset (res, 0, sizeof *res);
  if (spec->argv == NULL || spec->argv[0] == NULL)
    return sr_error_set_code (err, "invalid_argument", EINVAL, "no command to run");
  if (sr_random_hex (hex, 8, err) < 0)
    return -1;
  rc.pidfile = pidfile = sr_xasprintf ("/tmp/.sr-ssh-%s.pid", hex);
  sr_strv_push (&words, "sh");
  sr_strv_push (&words, "-c");
  sr_strv_push (&words, exec_script);
  sr_strv_push (&words, "sh");
  sr_strv_push (&words, pidfile);
  sr_strv_push (&words, spec->cwd ? spec->cwd : "");
  sr_strv_push (&words, "env");
  sr_strv_push (&words, "--");
  for (size_t i = 0; spec->env && spec->env[i]; i++)
    sr_strv_push (&words, spec->env[i]);
  for (size_t i = 0; spec->argv[i]; i++)
    sr_strv_push (&words, spec->argv[i]);
  line = sr_ssh_quote_words (words);
  argv = ssh_argv (b, extra, line);
  if (sr_ssh_run (argv, opts, kill_remote_cmd, &rc, res, err) < 0)
    return -1;
  if (res->exit_code == 255 && res->status == SR_RUN_ERROR && !master_check (b))
    {
      sr_run_result_done (res);
      return sr_error_set_code (err, "machine_unreachable", ENOTCONN,
                                "ssh %s: the connection is gone; connect again", b->name);
    }
  b->alive_at = sr_now_ns ();
  return 0;
}

/* How the file primitives run their scripts (struct sr_fs_script).  */
static int
run_script (void *ctx, char *const *argv, uint64_t timeout_ms, size_t max_out, int cancel_fd,
            struct sr_run_result *res, sr_error_t *err)
{
  struct sr_exec_spec spec = { .argv = argv, .cwd = "/" };
  struct sr_run_options opts = { .timeout_ms = timeout_ms, .max_output = max_out,
                                 .stdin_fd = -1, .cancel_fd = cancel_fd };

  return ssh_exec (ctx, &spec, &opts, res, err);
}

/* --- the box --- */

/* ssh's options for target name: the configuration's entry, then ours,
 * which no ~/.ssh/config may weaken (ssh takes the first value given, and
 * the command line comes first).  */
static void
set_options (struct sr_backend_box *b, const struct sr_config *cfg,
             const struct sr_ssh_target *t)
{
  char **o = NULL;

  if (cfg->ssh_config && *cfg->ssh_config)
    {
      sr_strv_push (&o, "-F");
      sr_strv_push (&o, cfg->ssh_config);
    }
  if (t && t->port)
    {
      _cleanup_free_ char *port = sr_xasprintf ("%u", t->port);

      sr_strv_push (&o, "-p");
      sr_strv_push (&o, port);
    }
  if (t && *t->user)
    {
      sr_strv_push (&o, "-l");
      sr_strv_push (&o, t->user);
    }
  if (t && *t->identity_file)
    {
      sr_strv_push (&o, "-i");
      sr_strv_push (&o, t->identity_file);
      sr_strv_push (&o, "-o");
      sr_strv_push (&o, "IdentitiesOnly=yes");
    }
  if (t && *t->known_hosts)
    {
      _cleanup_free_ char *kh = sr_xasprintf ("UserKnownHostsFile=%s", t->known_hosts);

      sr_strv_push (&o, "-o");
      sr_strv_push (&o, kh);
    }
  /* Nor does the remote host get this host's agent, X display or
   * forwarded ports.  */
  static const char *const ours[] = {
    "BatchMode=yes", "StrictHostKeyChecking=yes", "ConnectTimeout=" CONNECT_TIMEOUT_S,
    "ServerAliveInterval=15", "ServerAliveCountMax=3", "EscapeChar=none",
    "ForwardAgent=no", "ForwardX11=no", "ClearAllForwardings=yes", "PermitLocalCommand=no",
  };
  for (size_t i = 0; i < SR_ARRAY_SIZE (ours); i++)
    {
      sr_strv_push (&o, "-o");
      sr_strv_push (&o, ours[i]);
    }
  sr_strv_push (&o, "-S");
  sr_strv_push (&o, b->sock);
  b->opts = o;
}

/* ssh's last line, which says what failed (the banner of @ lines
 * around a changed key aside).  */
static char *
last_line (const char *s)
{
  const char *best = "";
  size_t best_n = 0;

  while (*s)
    {
      size_t n = strcspn (s, "\r\n");

      if (n > 0 && strncmp (s, "@@@", 3) != 0)
        {
          best = s;
          best_n = n;
        }
      s += n;
      s += strspn (s, "\r\n");
    }
  return sr_xasprintf ("%.*s", (int) best_n, best);
}

/* Why the master did not start, from what ssh said: the codes a caller
 * can act on.  */
static int
connect_error (const struct sr_backend_box *b, const struct sr_run_result *res, sr_error_t *err)
{
  const char *said = res->err.data ? res->err.data : "";
  _cleanup_free_ char *last = last_line (said);

  if (strstr (said, "REMOTE HOST IDENTIFICATION HAS CHANGED"))
    return sr_error_set_plain (err, "host_key_mismatch", EACCES,
                               "ssh %s (%s): the host's key differs from the one in "
                               "known_hosts; refused (if the key changed on purpose, replace "
                               "it there after checking it)", b->name, b->dest);
  if (strstr (said, "host key is known") || strstr (said, "Host key verification failed"))
    return sr_error_set_plain (err, "host_key_unknown", EACCES,
                               "ssh %s (%s): the host's key is not in known_hosts; add it "
                               "there after checking it (sandbox-runner never accepts a new "
                               "key by itself)", b->name, b->dest);
  if (strstr (said, "Permission denied"))
    return sr_error_set_plain (err, "auth_failed", EACCES, "ssh %s (%s): %s", b->name,
                               b->dest, last);
  if (res->status == SR_RUN_TIMEOUT)
    return sr_error_set_plain (err, "connect_failed", ETIMEDOUT,
                               "ssh %s (%s): no connection within %u s", b->name, b->dest,
                               CONTROL_TIMEOUT_MS / 1000);
  return sr_error_set_plain (err, "connect_failed", EHOSTUNREACH, "ssh %s (%s): %s", b->name,
                             b->dest, *last ? last : "ssh failed");
}

static void
ssh_destroy (struct sr_backend_box *b)
{
  if (b == NULL)
    return;
  if (b->opts)
    {
      struct sr_run_result res;

      (void) control (b, "exit", &res, NULL);
      sr_run_result_done (&res);
    }
  if (b->master_fd >= 0)
    {
      struct pollfd p = { .fd = b->master_fd, .events = POLLIN };

      /* A master that does not go leaves no process behind either.  */
      if (poll (&p, 1, EXIT_WAIT_MS) == 0)
        syscall (SYS_pidfd_send_signal, b->master_fd, SIGKILL, NULL, 0);
      close (b->master_fd);
    }
  if (b->sock)
    (void) unlink (b->sock);
  if (b->dir)
    (void) rmdir (b->dir);
  sr_strv_free (b->opts);
  free (b->sock);
  free (b->dir);
  free (b->image);
  free (b->dest);
  free (b->name);
  free (b);
}

/* A box is the machine name's connection: image_ref is NAME (ssh.NAME,
 * or a Host of OpenSSH's configuration); id and the ids are a
 * container's and mean nothing here.  */
static int
ssh_create (void *state, const char *id, const char *image_ref,
            const struct sr_policy_ids *ids, struct sr_backend_box **ret,
            struct sr_fsroot *fs, sr_error_t *err)
{
  struct ssh_state *st = state;
  const struct sr_ssh_target *t;
  struct sr_backend_box *b;
  struct sr_run_result res;
  const char *master[] = { "-o", "ControlMaster=yes", "-o", "ControlPersist=yes", "-f", "-N",
                           NULL };
  struct sr_run_options opts = { .timeout_ms = CONTROL_TIMEOUT_MS, .max_output = 16384,
                                 .stdin_fd = -1, .cancel_fd = -1 };
  _cleanup_strv_ char **argv = NULL;
  _cleanup_free_ char *tmpl = NULL;

  (void) id, (void) ids;
  if (!sr_ssh_name_valid (image_ref))
    return sr_error_set_plain (err, "invalid_argument", EINVAL,
                               "ssh machine '%s': use 1 to 32 of a-z, A-Z, 0-9, '_' and '-', "
                               "not starting with '-'", image_ref);
  t = sr_config_ssh_target (st->cfg, image_ref);
  b = sr_xcalloc (1, sizeof *b);
  b->master_fd = -1;
  b->name = sr_xstrdup (image_ref);
  b->dest = sr_xstrdup (t && *t->host ? t->host : image_ref);
  b->image = sr_xasprintf ("ssh:%s", image_ref);
  tmpl = sr_xasprintf ("%s/%ld.%llu.XXXXXX", st->dir, (long) getpid (),
                      (unsigned long long) sr_process_start_time (getpid ()));
  if (mkdtemp (tmpl) == NULL)
    {
      sr_error_set (err, errno, "make a directory in %s", st->dir);
      goto fail;
    }
  b->dir = TAKE_PTR (tmpl);
  b->sock = sr_xasprintf ("%s/s", b->dir);
  /* ssh binds the socket under a longer temporary name first (".XXXX"
   * plus 16 characters) before renaming it.  */
  if (strlen (b->sock) + 18 > sizeof ((struct sockaddr_un *) 0)->sun_path)
    {
      sr_error_set_plain (err, "invalid_argument", ENAMETOOLONG,
                          "ssh %s: the socket path %s is too long for a Unix socket; set a "
                          "shorter runtime_dir", b->name, b->sock);
      goto fail;
    }
  set_options (b, st->cfg, t);

  argv = ssh_argv (b, master, NULL);
  if (sr_ssh_run (argv, &opts, NULL, NULL, &res, err) < 0)
    goto fail;
  if (res.status != SR_RUN_SUCCESS)
    {
      connect_error (b, &res, err);
      sr_run_result_done (&res);
      goto fail;
    }
  sr_run_result_done (&res);
  if (!master_check (b) || b->master_fd < 0)
    {
      sr_error_set_plain (err, "connect_failed", EHOSTUNREACH,
                          "ssh %s (%s): the master connection did not stay up", b->name,
                          b->dest);
      goto fail;
    }
  b->alive_at = sr_now_ns ();
  b->fs = (struct sr_fs_script){ .run = run_script, .ctx = b, .chunk_raw = CHUNK_RAW,
                                 .chunks_per_run = 1 };
  *fs = (struct sr_fsroot){ .ops = &sr_fs_script_ops, .ctx = &b->fs };
  *ret = b;
  return 0;

fail:
  ssh_destroy (b);
  return -1;
}

static bool
ssh_alive (struct sr_backend_box *b)
{
  uint64_t now = sr_now_ns ();

  if (b->alive_at && now - b->alive_at < ALIVE_CACHE_NS)
    {
      struct pollfd p = { .fd = b->master_fd, .events = POLLIN };

      return poll (&p, 1, 0) == 0;
    }
  if (!master_check (b))
    return false;
  b->alive_at = now;
  return true;
}

static pid_t
ssh_pid (const struct sr_backend_box *b)
{
  return b->master;
}

static const char *
ssh_image (const struct sr_backend_box *b)
{
  return b->image;
}

/* None of ours: a command runs in the account's login environment.  */
static char **
ssh_env (const struct sr_backend_box *b)
{
  (void) b;
  return sr_xcalloc (1, sizeof (char *));
}

/* --- the backend's state, and what it refuses --- */

/* Ends the masters of runners that are gone (killed before they could
 * destroy their boxes): their directories are named PID.START.XXXXXX
 * after the runner, whose start time tells it from a later process of
 * the same pid.  */
static void
reclaim (const char *dir)
{
  DIR *d = opendir (dir);
  struct dirent *e;

  if (d == NULL)
    return;
  while ((e = readdir (d)) != NULL)
    {
      long pid;
      unsigned long long start;
      _cleanup_free_ char *sub = NULL, *sock = NULL;

      if (sscanf (e->d_name, "%ld.%llu.", &pid, &start) != 2 || pid <= 0
          || sr_process_start_time ((pid_t) pid) == start)
        continue;
      sub = sr_xasprintf ("%s/%s", dir, e->d_name);
      sock = sr_xasprintf ("%s/s", sub);
      if (access (sock, F_OK) == 0)
        {
          char *argv[] = { (char *) "ssh", (char *) "-F", (char *) "/dev/null", (char *) "-S",
                           sock, (char *) "-O", (char *) "exit", (char *) "--",
                           (char *) "leftover", NULL };
          struct sr_run_options opts = { .timeout_ms = CONTROL_TIMEOUT_MS, .max_output = 4096,
                                         .stdin_fd = -1, .cancel_fd = -1 };
          struct sr_run_result res;

          (void) sr_ssh_run (argv, &opts, NULL, NULL, &res, NULL);
          sr_run_result_done (&res);
          (void) unlink (sock);
        }
      (void) rmdir (sub);
    }
  closedir (d);
}

static int
ssh_open (const struct sr_config *cfg, struct sr_store *store, enum sr_backend_use use,
          void **ret_state, sr_error_t *err)
{
  struct ssh_state *st;
  char *dir;

  (void) store;
  dir = sr_statedir_runtime_sub (cfg->runtime_dir, "ssh", err);
  if (dir == NULL)
    return -1;
  if (use == SR_BACKEND_SESSIONS)
    reclaim (dir);
  st = sr_xcalloc (1, sizeof *st);
  st->cfg = cfg;
  st->dir = dir;
  *ret_state = st;
  return 0;
}

static void
ssh_close (void *state)
{
  struct ssh_state *st = state;

  if (st == NULL)
    return;
  free (st->dir);
  free (st);
}

static int
not_a_sandbox (sr_error_t *err)
{
  return sr_error_set_plain (err, "not_a_sandbox", ENOTSUP,
                             "an SSH machine runs no run_code: it is not a sandbox");
}

static int
ssh_code_dir (void *state, const char *dir, int dirfd, uid_t *uid, gid_t *gid, sr_error_t *err)
{
  (void) state, (void) dir, (void) dirfd, (void) uid, (void) gid;
  return not_a_sandbox (err);
}

static int
ssh_run_begin (void *state, const struct sr_language *l, struct sr_backend_run **ret,
               sr_error_t *err)
{
  (void) state, (void) l, (void) ret;
  return not_a_sandbox (err);
}

const struct sr_backend sr_ssh_backend = {
  .kind = SR_BACKEND_SSH,
  .keeps_warm = false,
  .shell_one_stream = true,
  .takes_ids = false,
  .shares_mounts = false,
  .open = ssh_open,
  .close = ssh_close,
  .code_dir = ssh_code_dir,
  .run_begin = ssh_run_begin,
  .create = ssh_create,
  .destroy = ssh_destroy,
  .alive = ssh_alive,
  .pid = ssh_pid,
  .image = ssh_image,
  .env = ssh_env,
  .exec = ssh_exec,
};
