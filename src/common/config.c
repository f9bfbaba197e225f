#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/config.h"
#include "common/log.h"
#include "common/defaults.h"
#include "common/history-db.h"
#include "common/image-user.h"
#include "common/util.h"

enum setting_type { T_SECONDS, T_SIZE, T_UINT, T_CPUS, T_BOOL, T_STRING, T_BACKEND, T_COMPAT };

/* How the value of an alias becomes the setting's text.  */
enum alias_form
{
  A_SAME,    /* as it is */
  A_MINUTES, /* minutes, of a setting in seconds */
  A_HOST,    /* the HOST of a HOST:PORT setting */
  A_PORT,    /* its PORT */
};

/* A variable another server (mcp-code-sandbox) read for the setting, so
 * that its users' client configurations keep working.  */
struct env_alias
{
  const char *var;
  enum alias_form form;
};

struct setting
{
  const char *key;
  enum setting_type type;
  size_t offset;
  uint64_t def_u;       /* T_SECONDS (ms), T_SIZE, T_UINT, T_BOOL */
  double def_d;         /* T_CPUS */
  const char *def_s;    /* T_STRING, T_BACKEND; NULL: computed by default_path */
  const char *help;
  struct env_alias aliases[2]; /* applied in order; the setting's own variable wins */
};

/* The arguments after the help, if any, are the aliases: { VAR, FORM }, ...  */
#define U(k, t, f, d, h, ...)                                                \
  { k, t, offsetof (struct sr_config, f), d, 0, NULL, h, .aliases = { __VA_ARGS__ } }
#define S(k, f, d, h, ...)                                                   \
  { k, T_STRING, offsetof (struct sr_config, f), 0, 0, d, h, .aliases = { __VA_ARGS__ } }

static const struct setting settings[] = {
  U ("timeout", T_SECONDS, timeout_ms, SR_DEFAULT_TIMEOUT_MS, "default run timeout",
     { "SANDBOX_EXEC_TIMEOUT_S", A_SAME }),
  /* mcp-code-sandbox's timeout was fixed: its users never ask for more.  */
  U ("max_timeout", T_SECONDS, max_timeout_ms, SR_MAX_TIMEOUT_MS, "ceiling for a requested timeout",
     { "SANDBOX_EXEC_TIMEOUT_S", A_SAME }),
  U ("compile_timeout", T_SECONDS, compile_timeout_ms, SR_DEFAULT_COMPILE_TIMEOUT_MS,
     "ceiling of a compile stage"),
  { "compile_cpus", T_CPUS, offsetof (struct sr_config, compile_cpus), 0, 0, NULL,
    "CPU limit of a compile stage (0: all the CPUs the runner may use)", {} },
  U ("compile_cache_size", T_SIZE, compile_cache_size, SR_DEFAULT_COMPILE_CACHE_SIZE,
     "bytes of compiled programs kept for repeated run_code snippets (0: no cache)"),
  U ("max_output", T_SIZE, max_output, SR_DEFAULT_MAX_OUTPUT, "captured bytes per stream",
     { "SANDBOX_MAX_OUTPUT_BYTES", A_SAME }),
  U ("max_output_ceiling", T_SIZE, max_output_ceiling, SR_DEFAULT_MAX_OUTPUT_CEILING,
     "most output a tool call's max_output may ask for"),
  U ("max_code_size", T_SIZE, max_code_size, SR_DEFAULT_MAX_CODE_SIZE, "largest snippet accepted",
     { "SANDBOX_MAX_CODE_BYTES", A_SAME }),
  U ("max_stdin_size", T_SIZE, max_stdin_size, SR_DEFAULT_MAX_STDIN_SIZE,
     "largest stdin a run is given"),
  U ("max_code_file_size", T_SIZE, max_code_file_size, SR_DEFAULT_MAX_CODE_FILE_SIZE,
     "largest of the files a run takes beside its code"),
  U ("max_code_files_size", T_SIZE, max_code_files_size, SR_DEFAULT_MAX_CODE_FILES_SIZE,
     "most bytes of files a run takes beside its code, all together"),
  U ("memory", T_SIZE, memory, SR_DEFAULT_MEMORY, "memory limit per container (0: none)",
     { "SANDBOX_MEMORY_LIMIT", A_SAME }),
  { "cpus", T_CPUS, offsetof (struct sr_config, cpus), 0, SR_DEFAULT_CPUS, NULL,
    "CPU limit per container (0: none)", .aliases = { { "SANDBOX_CPU_LIMIT", A_SAME } } },
  U ("pids", T_UINT, pids, SR_DEFAULT_PIDS, "process limit per container (0: none)"),
  U ("tmp_size", T_SIZE, tmp_size, SR_DEFAULT_TMP_SIZE, "size of the /tmp tmpfs"),
  U ("scratch_size", T_SIZE, scratch_size, SR_DEFAULT_SCRATCH_SIZE, "size of the /work tmpfs"),
  U ("code_dir_size", T_SIZE, code_dir_size, SR_DEFAULT_CODE_DIR_SIZE,
     "size of a one-shot run's /scratch tmpfs, where its code and compiled output are"),
  U ("strict_limits", T_BOOL, strict_limits, 0, "refuse to run when a limit cannot be enforced"),
  S ("seccomp_profile", seccomp_profile, "", "OCI seccomp profile file (empty: built-in)"),
  S ("cap_keep", cap_keep, "", "capabilities kept in containers (empty: none)"),
  S ("user", user, SR_DEFAULT_USER,
     "who run_code's and sessions' commands run as inside: root, USER or USER:GROUP, names "
     "looked up in the image"),
  S ("image_store", image_store, NULL, "image store directory"),
  S ("image_stores_readonly", image_stores_readonly, NULL,
     "other users' image stores searched after image_store, read-only (colon-separated)"),
  U ("max_image_size", T_SIZE, max_image_size, SR_DEFAULT_MAX_IMAGE_SIZE,
     "file data an image's layers may write (0: no cap)"),
  U ("max_image_entries", T_UINT, max_image_entries, SR_DEFAULT_MAX_IMAGE_ENTRIES,
     "files, directories and links an image's layers may make (0: no cap)"),
  S ("history_db", history_db, NULL, "run history database"),
  U ("audit_retention_days", T_UINT, audit_retention_days, SR_DEFAULT_AUDIT_RETENTION_DAYS,
     "days the audit trail of tool calls is kept (0: forever)"),
  S ("runtime_dir", runtime_dir, NULL, "scratch and state of running containers"),
  U ("max_concurrent", T_UINT, max_concurrent, SR_DEFAULT_MAX_CONCURRENT,
     "runs at once (the rest queue)"),
  U ("warm_containers", T_UINT, warm_containers, SR_DEFAULT_WARM_CONTAINERS,
     "containers a server keeps ready per one-stage language"),
  U ("max_message_size", T_SIZE, max_message_size, SR_DEFAULT_MAX_MESSAGE_SIZE,
     "largest MCP message accepted"),
  S ("listen", listen, SR_DEFAULT_LISTEN, "HTTP transport address",
     { "SANDBOX_HTTP_HOST", A_HOST }, { "SANDBOX_HTTP_PORT", A_PORT }),
  S ("token_file", token_file, "", "bearer tokens for HTTP, one per line"),
  S ("allowed_origins", allowed_origins, "", "extra allowed HTTP Origins, comma-separated"),
  S ("log_file", log_file, "", "server log file (empty: stderr)"),
  S ("log_level", log_level, "info", "least level the server logs (debug, info, warning, error)"),
  S ("log_format", log_format, "text", "server log lines: text (logfmt) or json"),
  U ("http_max_connections_per_ip", T_UINT, http_max_connections_per_ip,
     SR_DEFAULT_HTTP_MAX_CONNECTIONS_PER_IP,
     "HTTP connections one client address may hold at once (0: no limit)"),
  U ("http_header_timeout", T_SECONDS, http_header_timeout_ms, SR_DEFAULT_HTTP_HEADER_TIMEOUT_MS,
     "time an HTTP client has to send a request's headers (0: no limit)"),
  U ("http_session_idle_timeout", T_SECONDS, http_session_idle_ms,
     SR_DEFAULT_HTTP_SESSION_IDLE_MS, "idle time before an HTTP Mcp-Session-Id expires"),
  S ("server_id", server_id, "",
     "this server's name in a fleet, in its Mcp-Session-Ids (empty: HOSTNAME-PORT)"),
  U ("drain_grace", T_SECONDS, drain_grace_ms, SR_DEFAULT_DRAIN_GRACE_MS,
     "how long a draining HTTP server (SIGTERM, SIGUSR2) lets its sessions finish"),
  U ("download_url_ttl", T_SECONDS, download_url_ttl_ms, SR_DEFAULT_DOWNLOAD_URL_TTL_MS,
     "how long a signed download_url works without the bearer token"),
  U ("task_after", T_SECONDS, task_after_ms, SR_DEFAULT_TASK_AFTER_MS,
     "a run_code or shell_exec of a client that takes tasks becomes one after this long"),
  U ("task_keep", T_SECONDS, task_keep_ms, SR_DEFAULT_TASK_KEEP_MS,
     "how long an ended task's result is kept for tasks/get"),
  U ("max_sessions", T_UINT, max_sessions, SR_DEFAULT_MAX_SESSIONS, "sessions at once"),
  U ("max_sessions_per_owner", T_UINT, max_sessions_per_owner,
     SR_DEFAULT_MAX_SESSIONS_PER_OWNER,
     "sessions one HTTP client (token, or MCP session) may hold at once (0: max_sessions)"),
  U ("session_idle_timeout", T_SECONDS, session_idle_ms, SR_DEFAULT_SESSION_IDLE_MS,
     "idle time before a session is closed", { "SANDBOX_SESSION_TTL_M", A_MINUTES }),
  U ("session_queue_timeout", T_SECONDS, session_queue_ms, 0,
     "how long a call for a busy session waits for it (0: session_busy at once)"),
  U ("session_data_size", T_SIZE, session_data_size, SR_DEFAULT_SESSION_DATA_SIZE,
     "size of a session's /mnt/data"),
  U ("session_scratch_size", T_SIZE, session_scratch_size, SR_DEFAULT_SESSION_SCRATCH_SIZE,
     "size of a session's /scratch tmpfs, where its code is written"),
  U ("session_scratch_inodes", T_UINT, session_scratch_inodes,
     SR_DEFAULT_SESSION_SCRATCH_INODES, "files and directories a session's /scratch may hold"),
  S ("session_image", session_image, SR_DEFAULT_SESSION_IMAGE,
     "image of a session created without one", { "SANDBOX_IMAGE", A_SAME }),
  U ("max_upload_size", T_SIZE, max_upload_size, SR_DEFAULT_MAX_UPLOAD_SIZE, "largest upload",
     { "SANDBOX_MAX_UPLOAD_BYTES", A_SAME }),
  U ("max_artifact_size", T_SIZE, max_artifact_size, SR_DEFAULT_MAX_ARTIFACT_SIZE,
     "largest artifact read back"),
  U ("max_search_bytes", T_SIZE, max_search_bytes, SR_DEFAULT_MAX_SEARCH_BYTES,
     "most bytes one file_search reads"),
  U ("max_read_size", T_SIZE, max_read_size, SR_DEFAULT_MAX_READ_SIZE,
     "most file text one file_read or file_search returns"),
  U ("resource_page_size", T_UINT, resource_page_size, SR_DEFAULT_RESOURCE_PAGE_SIZE,
     "session files one MCP resources/list page holds"),
  { "backend", T_BACKEND, offsetof (struct sr_config, backend_kind), 0, 0, SR_DEFAULT_BACKEND,
    "native or docker", {} },
  S ("docker_host", docker_host, "", "Docker API socket (empty: DOCKER_HOST or the default)"),
  { "compat_tools", T_COMPAT, offsetof (struct sr_config, compat_tools), 0, 0, "",
    "tool sets of servers replaced, also offered (empty, or mcp-code-sandbox)", {} },
  S ("ssh_config", ssh_config, "", "OpenSSH client config file for SSH machines (empty: ssh's own)"),
};

_Static_assert (SR_ARRAY_SIZE (settings) <= SR_ARRAY_SIZE (((struct sr_config *) 0)->origin),
                "struct sr_config's origin table is too small");

#define FIELD(cfg, s, type) ((type *) ((char *) (cfg) + (s)->offset))

static const char *const backend_names[SR_BACKEND_KIND_MAX] = {
  [SR_BACKEND_NATIVE] = "native",
  [SR_BACKEND_DOCKER] = "docker",
  [SR_BACKEND_SSH] = "ssh",
};

int
sr_backend_kind_parse (const char *name, enum sr_backend_kind *ret, sr_error_t *err)
{
  if (strcmp (name, backend_names[SR_BACKEND_SSH]) == 0)
    return sr_error_set (err, 0, "'ssh' runs no code: an SSH machine is not a sandbox "
                         "(configure one as ssh.NAME.host); use native or docker");
  for (int k = 0; k < SR_BACKEND_KIND_MAX; k++)
    if (strcmp (name, backend_names[k]) == 0)
      {
        *ret = (enum sr_backend_kind) k;
        return 0;
      }
  return sr_error_set (err, 0, "'%s' is neither native nor docker", name);
}

const char *
sr_backend_kind_name (enum sr_backend_kind kind)
{
  return kind < SR_BACKEND_KIND_MAX ? backend_names[kind] : "unknown";
}

static const char *const compat_names[] = { "mcp-code-sandbox" };

/* A comma-separated list of compat_names into bits.  */
static int
parse_compat (const char *value, unsigned *ret)
{
  unsigned bits = 0;

  for (const char *p = value; *p;)
    {
      size_t n = strcspn (p, ","), i;

      while (n && isspace ((unsigned char) *p))
        p++, n--;
      while (n && isspace ((unsigned char) p[n - 1]))
        n--;
      for (i = 0; n && i < SR_ARRAY_SIZE (compat_names); i++)
        if (strlen (compat_names[i]) == n && strncmp (p, compat_names[i], n) == 0)
          break;
      if (n && i == SR_ARRAY_SIZE (compat_names))
        return -1;
      if (n)
        bits |= 1u << i;
      p += strcspn (p, ",");
      p += *p == ',';
    }
  *ret = bits;
  return 0;
}

static char *
format_compat (unsigned bits)
{
  char *s = sr_xstrdup ("");

  for (size_t i = 0; i < SR_ARRAY_SIZE (compat_names); i++)
    if (bits & (1u << i))
      {
        _cleanup_free_ char *old = s;

        s = sr_xasprintf ("%s%s%s", old, *old ? "," : "", compat_names[i]);
      }
  return s;
}

const char *
sr_origin_name (enum sr_origin o)
{
  switch (o)
    {
    case SR_ORIGIN_DEFAULT: return "default";
    case SR_ORIGIN_SYSTEM: return "system file";
    case SR_ORIGIN_USER: return "user file";
    case SR_ORIGIN_FILE: return "config file";
    case SR_ORIGIN_ENV: return "environment";
    case SR_ORIGIN_FLAG: return "flag";
    }
  return "unknown";
}

/* Paths differ between root and an ordinary user.  */
static char *
default_path (const char *key)
{
  const char *xdg_data = getenv ("XDG_DATA_HOME"), *xdg_run = getenv ("XDG_RUNTIME_DIR");
  const char *home = getenv ("HOME");
  _cleanup_free_ char *data = NULL;

  if (geteuid () == 0)
    data = sr_xstrdup ("/var/lib/sandbox-runner");
  else if (xdg_data && *xdg_data == '/')
    data = sr_xasprintf ("%s/sandbox-runner", xdg_data);
  else
    data = sr_xasprintf ("%s/.local/share/sandbox-runner", home ? home : "/tmp");

  if (strcmp (key, "image_store") == 0)
    return TAKE_PTR (data);
  /* Root's store, for every other user: its images run without a copy.  */
  if (strcmp (key, "image_stores_readonly") == 0)
    return sr_xstrdup (geteuid () == 0 ? "" : "/var/lib/sandbox-runner");
  if (strcmp (key, "history_db") == 0)
    return sr_xasprintf ("%s/history.db", data);
  if (geteuid () == 0)
    return sr_xstrdup ("/run/sandbox-runner");
  if (xdg_run && *xdg_run == '/')
    return sr_xasprintf ("%s/sandbox-runner", xdg_run);
  return sr_xasprintf ("/tmp/sandbox-runner-%u", (unsigned) geteuid ());
}

/* A number of CPUs, from 0 to 4096.  */
static int
parse_cpus (const char *value, double *ret)
{
  char *end;
  double v;

  errno = 0;
  v = strtod (value, &end);
  if (errno || end == value || *end || !isfinite (v) || v < 0 || v > 4096)
    return -1;
  *ret = v;
  return 0;
}

static int
parse_bool (const char *s, bool *ret)
{
  if (!strcmp (s, "true") || !strcmp (s, "yes") || !strcmp (s, "on") || !strcmp (s, "1"))
    *ret = true;
  else if (!strcmp (s, "false") || !strcmp (s, "no") || !strcmp (s, "off") || !strcmp (s, "0"))
    *ret = false;
  else
    return -1;
  return 0;
}

static int
parse_value (struct sr_config *cfg, const struct setting *s, const char *value, sr_error_t *err)
{
  char *end;

  switch (s->type)
    {
    case T_SECONDS:
      if (sr_parse_seconds (value, FIELD (cfg, s, uint64_t)) < 0)
        return sr_error_set (err, 0, "%s: '%s' is not a number of seconds", s->key, value);
      return 0;
    case T_SIZE:
      if (sr_parse_size (value, FIELD (cfg, s, uint64_t)) < 0)
        return sr_error_set (err, 0, "%s: '%s' is not a size (such as 512, 64k, 256M, 1G)",
                             s->key, value);
      return 0;
    case T_UINT:
      {
        unsigned long long v;

        errno = 0;
        v = strtoull (value, &end, 10);
        if (errno || end == value || *end || *value == '-')
          return sr_error_set (err, 0, "%s: '%s' is not a whole number", s->key, value);
        *FIELD (cfg, s, uint64_t) = v;
        return 0;
      }
    case T_CPUS:
      if (parse_cpus (value, FIELD (cfg, s, double)) < 0)
        return sr_error_set (err, 0, "%s: '%s' is not a number of CPUs", s->key, value);
      return 0;
    case T_BOOL:
      if (parse_bool (value, FIELD (cfg, s, bool)) < 0)
        return sr_error_set (err, 0, "%s: '%s' is not true or false", s->key, value);
      return 0;
    case T_STRING:
      free (*FIELD (cfg, s, char *));
      *FIELD (cfg, s, char *) = sr_xstrdup (value);
      return 0;
    case T_BACKEND:
      if (sr_backend_kind_parse (value, FIELD (cfg, s, enum sr_backend_kind), err) < 0)
        return sr_error_wrap (err, "%s", s->key);
      return 0;
    case T_COMPAT:
      if (parse_compat (value, FIELD (cfg, s, unsigned)) < 0)
        return sr_error_set (err, 0, "%s: '%s' is not empty or mcp-code-sandbox", s->key, value);
      return 0;
    }
  return sr_error_set (err, EINVAL, "%s: unknown type", s->key);
}

static const struct
{
  const char *name, *image, *source, *compile, *run, *description, *docker_image, *sources,
    *warm_start, *preload;
} default_languages[] = { SR_DEFAULT_LANGUAGES };

static const char *const language_fields[] = { "image", "source", "compile", "run",
                                               "description", "docker_image", "sources",
                                               "compile_cpus", "warm_start", "preload" };

static char **
language_field (struct sr_language *l, size_t field)
{
  char **fields[] = { &l->image, &l->source, &l->compile, &l->run, &l->description,
                      &l->docker_image, &l->sources, &l->compile_cpus, &l->warm_start,
                      &l->preload };

  return fields[field];
}

const struct sr_language *
sr_config_language (const struct sr_config *cfg, const char *name)
{
  for (size_t i = 0; i < cfg->n_languages; i++)
    if (strcmp (cfg->languages[i].name, name) == 0)
      return &cfg->languages[i];
  return NULL;
}

double
sr_language_compile_cpus (const struct sr_config *cfg, const struct sr_language *l)
{
  double v;

  return *l->compile_cpus && parse_cpus (l->compile_cpus, &v) == 0 ? v : cfg->compile_cpus;
}

static bool
valid_language_name (const char *s, size_t n)
{
  if (n == 0 || n > 32)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!(islower ((unsigned char) s[i]) || isdigit ((unsigned char) s[i]) || s[i] == '-'
          || s[i] == '+'))
      return false;
  return true;
}

/* A module name as python's import statement takes it.  */
static bool
valid_module_name (const char *s, size_t n)
{
  bool start = true;

  for (size_t i = 0; i < n; i++)
    {
      if (s[i] == '.' && !start)
        start = true;
      else if (isalpha ((unsigned char) s[i]) || s[i] == '_'
               || (!start && isdigit ((unsigned char) s[i])))
        start = false;
      else
        return false;
    }
  return n > 0 && !start;
}

/* warm_start names a bootstrap this runner has, for a language without a
 * compile stage; preload, modules that bootstrap can import.  */
static int
check_warm_start (const struct sr_language *l, sr_error_t *err)
{
  /* The preloads are checked even while warm_start is off: a typo shows
   * before the day it is turned on.  */
  for (const char *p = l->preload;;)
    {
      size_t n;

      p += strspn (p, ", ");
      n = strcspn (p, ", ");
      if (n == 0)
        break;
      if (!valid_module_name (p, n))
        return sr_error_set (err, 0, "preload '%.*s' is not a module name", (int) n, p);
      p += n;
    }
  if (*l->warm_start == '\0')
    return 0;
  if (strcmp (l->warm_start, SR_WARM_START_PYTHON) != 0)
    return sr_error_set (err, 0, "warm_start '%s' is not a bootstrap of this runner (\"\" or "
                         SR_WARM_START_PYTHON ")", l->warm_start);
  if (*l->compile)
    return sr_error_set (err, 0, "warm_start needs a language without a compile stage");
  return 0;
}

/* language.NAME.FIELD = value: changes an entry or starts a new one.  */
static int
set_language (struct sr_config *cfg, const char *name, size_t name_len, const char *field,
              const char *value, enum sr_origin origin, const char *source, sr_error_t *err)
{
  struct sr_language *l = NULL;
  size_t f;

  if (!valid_language_name (name, name_len))
    return sr_error_set (err, 0,
                         "language name '%.*s': use 1 to 32 of a-z, 0-9, '-' and '+'",
                         (int) name_len, name);
  for (f = 0; f < SR_ARRAY_SIZE (language_fields); f++)
    if (strcmp (field, language_fields[f]) == 0)
      break;
  if (f == SR_ARRAY_SIZE (language_fields))
    return sr_error_set (err, 0, "unknown language field '%s' (image, source, compile, run, "
                         "description, docker_image, sources, compile_cpus, warm_start, "
                         "preload)", field);
  if (strcmp (field, "compile_cpus") == 0 && *value && parse_cpus (value, &(double){ 0 }) < 0)
    return sr_error_set (err, 0, "language %.*s: compile_cpus '%s' is not a number of CPUs",
                         (int) name_len, name, value);
  if (strcmp (field, "source") == 0 && (strchr (value, '/') || *value == '\0' || *value == '.'))
    return sr_error_set (err, 0, "language %.*s: source '%s' must be a plain file name",
                         (int) name_len, name, value);
  for (size_t i = 0; i < cfg->n_languages; i++)
    if (strlen (cfg->languages[i].name) == name_len
        && strncmp (cfg->languages[i].name, name, name_len) == 0)
      l = &cfg->languages[i];
  if (l == NULL)
    {
      cfg->languages = sr_xrealloc (cfg->languages,
                                    (cfg->n_languages + 1) * sizeof *cfg->languages);
      l = &cfg->languages[cfg->n_languages++];
      memset (l, 0, sizeof *l);
      l->name = sr_xasprintf ("%.*s", (int) name_len, name);
      for (size_t i = 0; i < SR_ARRAY_SIZE (language_fields); i++)
        *language_field (l, i) = sr_xstrdup ("");
    }
  free (*language_field (l, f));
  *language_field (l, f) = sr_xstrdup (value);
  l->origin = origin;
  free (l->where);
  l->where = source ? sr_xstrdup (source) : NULL;
  return 0;
}

/* --- SSH machines: ssh.NAME.FIELD.  Values become arguments of ssh
 * (never a shell's words), so what is checked is what ssh would read as
 * something else: an option (a leading '-'), several words of an -o line
 * (blanks, quotes), control characters.  --- */

static const char *const ssh_fields[] = { "host", "port", "user", "identity_file",
                                          "known_hosts" };

bool
sr_ssh_name_valid (const char *name)
{
  size_t n = strlen (name);

  if (n == 0 || n > 32 || name[0] == '-')
    return false;
  for (size_t i = 0; i < n; i++)
    if (!isalnum ((unsigned char) name[i]) && name[i] != '_' && name[i] != '-')
      return false;
  return true;
}

const struct sr_ssh_target *
sr_config_ssh_target (const struct sr_config *cfg, const char *name)
{
  for (size_t i = 0; i < cfg->n_ssh_targets; i++)
    if (strcmp (cfg->ssh_targets[i].name, name) == 0)
      return &cfg->ssh_targets[i];
  return NULL;
}

/* A value ssh takes as one word of one option.  */
static bool
one_word (const char *v)
{
  if (*v == '\0' || *v == '-')
    return false;
  for (const char *p = v; *p; p++)
    if (iscntrl ((unsigned char) *p) || isspace ((unsigned char) *p) || *p == '"'
        || *p == '\'')
      return false;
  return true;
}

static int
check_value (const char *name, const char *field, const char *value, unsigned *ret_port,
             sr_error_t *err)
{
  if (strcmp (field, "port") == 0)
    {
      char *end;
      unsigned long p = strtoul (value, &end, 10);

      if (!isdigit ((unsigned char) *value) || *end || p == 0 || p > 65535)
        return sr_error_set (err, 0, "ssh.%s.port '%s': a port from 1 to 65535", name, value);
      *ret_port = (unsigned) p;
      return 0;
    }
  if (strcmp (field, "user") == 0 && strchr (value, '@'))
    return sr_error_set (err, 0, "ssh.%s.user '%s': a user name has no '@'", name, value);
  if (!one_word (value))
    return sr_error_set (err, 0,
                         "ssh.%s.%s '%s': one word without blanks or quotes, not starting "
                         "with '-'", name, field, value);
  return 0;
}

static char **
target_field (struct sr_ssh_target *t, const char *field)
{
  if (strcmp (field, "host") == 0)
    return &t->host;
  if (strcmp (field, "user") == 0)
    return &t->user;
  if (strcmp (field, "identity_file") == 0)
    return &t->identity_file;
  if (strcmp (field, "known_hosts") == 0)
    return &t->known_hosts;
  return NULL;  /* port */
}

static int
set_ssh (struct sr_config *cfg, const char *key, const char *value,
         enum sr_origin origin, const char *source, sr_error_t *err)
{
  const char *rest = key + strlen ("ssh."), *dot = strchr (rest, '.');
  _cleanup_free_ char *name = NULL;
  struct sr_ssh_target *t;
  unsigned port = 0;
  size_t f;

  if (dot == NULL)
    return sr_error_set (err, 0, "'%s': expected ssh.NAME.FIELD", key);
  name = sr_xasprintf ("%.*s", (int) (dot - rest), rest);
  if (!sr_ssh_name_valid (name))
    return sr_error_set (err, 0, "ssh name '%s': use 1 to 32 of a-z, A-Z, 0-9, '_' and '-', "
                         "not starting with '-'", name);
  for (f = 0; f < SR_ARRAY_SIZE (ssh_fields); f++)
    if (strcmp (dot + 1, ssh_fields[f]) == 0)
      break;
  if (f == SR_ARRAY_SIZE (ssh_fields))
    return sr_error_set (err, 0, "unknown ssh field '%s' (host, port, user, identity_file, "
                         "known_hosts)", dot + 1);
  if (check_value (name, ssh_fields[f], value, &port, err) < 0)
    return -1;

  t = (struct sr_ssh_target *) sr_config_ssh_target (cfg, name);
  if (t == NULL)
    {
      cfg->ssh_targets = sr_xrealloc (cfg->ssh_targets,
                                      (cfg->n_ssh_targets + 1) * sizeof *cfg->ssh_targets);
      t = &cfg->ssh_targets[cfg->n_ssh_targets++];
      *t = (struct sr_ssh_target){ .name = TAKE_PTR (name), .host = sr_xstrdup (""),
                                   .user = sr_xstrdup (""), .identity_file = sr_xstrdup (""),
                                   .known_hosts = sr_xstrdup ("") };
    }
  if (target_field (t, ssh_fields[f]))
    {
      free (*target_field (t, ssh_fields[f]));
      *target_field (t, ssh_fields[f]) = sr_xstrdup (value);
    }
  else
    t->port = port;
  t->origin = origin;
  free (t->where);
  t->where = source ? sr_xstrdup (source) : NULL;
  return 0;
}

static void
print_ssh (const struct sr_config *cfg, FILE *f, cJSON *json)
{
  cJSON *all = json && cfg->n_ssh_targets ? cJSON_AddObjectToObject (json, "ssh") : NULL;

  for (size_t i = 0; i < cfg->n_ssh_targets; i++)
    {
      struct sr_ssh_target *t = &cfg->ssh_targets[i];
      cJSON *o = all ? cJSON_AddObjectToObject (all, t->name) : NULL;

      if (o)
        {
          cJSON_AddStringToObject (o, "origin", sr_origin_name (t->origin));
          if (t->where)
            cJSON_AddStringToObject (o, "source_of_setting", t->where);
        }
      for (size_t k = 0; k < SR_ARRAY_SIZE (ssh_fields); k++)
        {
          char **v = target_field (t, ssh_fields[k]);
          _cleanup_free_ char *key = sr_xasprintf ("ssh.%s.%s", t->name, ssh_fields[k]);
          _cleanup_free_ char *value = v ? sr_xasprintf ("\"%s\"", *v)
                                         : sr_xasprintf ("%u", t->port);

          if (o && v)
            cJSON_AddStringToObject (o, ssh_fields[k], *v);
          else if (o)
            cJSON_AddNumberToObject (o, ssh_fields[k], t->port);
          else
            fprintf (f, "%-22s = %-28s # %s%s%s%s\n", key, value, sr_origin_name (t->origin),
                     t->where ? " (" : "", t->where ? t->where : "", t->where ? ")" : "");
        }
    }
}

static void
ssh_done (struct sr_config *cfg)
{
  for (size_t i = 0; i < cfg->n_ssh_targets; i++)
    {
      struct sr_ssh_target *t = &cfg->ssh_targets[i];

      free (t->name);
      free (t->host);
      free (t->user);
      free (t->identity_file);
      free (t->known_hosts);
      free (t->where);
    }
  free (cfg->ssh_targets);
}

static const struct setting *
find_setting (const char *key, size_t *ret_index)
{
  for (size_t i = 0; i < SR_ARRAY_SIZE (settings); i++)
    if (strcmp (settings[i].key, key) == 0)
      {
        *ret_index = i;
        return &settings[i];
      }
  return NULL;
}

int
sr_config_set (struct sr_config *cfg, const char *key, const char *value, enum sr_origin origin,
               const char *source, sr_error_t *err)
{
  size_t i = 0;
  const struct setting *s = find_setting (key, &i);

  if (strncmp (key, "language.", 9) == 0)
    {
      const char *name = key + 9, *dot = strchr (name, '.');

      if (dot == NULL)
        return sr_error_set (err, 0, "'%s': expected language.NAME.FIELD", key);
      return set_language (cfg, name, (size_t) (dot - name), dot + 1, value, origin, source,
                           err);
    }
  if (strncmp (key, "ssh.", 4) == 0)
    return set_ssh (cfg, key, value, origin, source, err);
  if (s == NULL)
    return sr_error_set (err, 0, "unknown setting '%s' (see 'sandbox-runner config show')", key);
  if (parse_value (cfg, s, value, err) < 0)
    return -1;
  cfg->origin[i] = origin;
  free (cfg->source[i]);
  cfg->source[i] = source ? sr_xstrdup (source) : NULL;
  return 0;
}

static char *
trim (char *s)
{
  char *end;

  while (isspace ((unsigned char) *s))
    s++;
  end = s + strlen (s);
  while (end > s && isspace ((unsigned char) end[-1]))
    *--end = '\0';
  return s;
}

/* Strips one pair of matching quotes, so paths with spaces can be written
 * "like this".  */
static char *
unquote (char *s)
{
  size_t len = strlen (s);

  if (len >= 2 && (s[0] == '"' || s[0] == '\'') && s[len - 1] == s[0])
    {
      s[len - 1] = '\0';
      return s + 1;
    }
  return s;
}

static int
load_file (struct sr_config *cfg, const char *path, enum sr_origin origin, sr_error_t *err)
{
  _cleanup_free_ char *text = NULL;
  char *line, *next;
  unsigned lineno = 0;

  if (sr_read_file (path, &text, NULL, NULL) < 0)
    {
      if (errno == ENOENT)
        return 0;
      return sr_error_set (err, errno, "read %s", path);
    }
  for (line = text; line; line = next)
    {
      char *eq, *key, *value;
      _cleanup_free_ char *where = NULL;

      next = strchr (line, '\n');
      if (next)
        *next++ = '\0';
      lineno++;
      line = trim (line);
      if (*line == '\0' || *line == '#')
        continue;
      eq = strchr (line, '=');
      if (eq == NULL)
        return sr_error_set (err, 0, "%s:%u: expected 'key = value'", path, lineno);
      *eq = '\0';
      key = trim (line);
      value = unquote (trim (eq + 1));
      where = sr_xasprintf ("%s:%u", path, lineno);
      if (sr_config_set (cfg, key, value, origin, where, err) < 0)
        return sr_error_wrap (err, "%s", where);
    }
  return 0;
}

extern char **environ;

/* SANDBOX_LANGUAGE_<NAME>_<FIELD>=value, NAME in upper case with '_'
 * for '-' (python-data: PYTHON_DATA), as SANDBOX_DOCKER_IMAGE_<NAME> has
 * it: a variable's name cannot hold a '-', nor a language's a '_'.  */
static int
load_language_env (struct sr_config *cfg, sr_error_t *err)
{
  static const char prefix[] = "SANDBOX_LANGUAGE_";

  for (char **e = environ; e && *e; e++)
    {
      const char *eq = strchr (*e, '='), *name = *e + strlen (prefix);
      _cleanup_free_ char *var = NULL, *lower = NULL;
      size_t f = SR_ARRAY_SIZE (language_fields), n;

      if (strncmp (*e, prefix, strlen (prefix)) != 0 || eq == NULL)
        continue;
      var = sr_xasprintf ("%.*s", (int) (eq - *e), *e);
      /* The longest field that ends the name: _DOCKER_IMAGE, not _IMAGE.  */
      for (size_t i = 0; i < SR_ARRAY_SIZE (language_fields); i++)
        {
          size_t fl = strlen (language_fields[i]);

          n = (size_t) (eq - name);
          if (n > fl + 1 && name[n - fl - 1] == '_'
              && strncasecmp (name + n - fl, language_fields[i], fl) == 0
              && (f == SR_ARRAY_SIZE (language_fields) || fl > strlen (language_fields[f])))
            f = i;
        }
      if (f == SR_ARRAY_SIZE (language_fields))
        return sr_error_set (err, 0, "environment variable %s: expected SANDBOX_LANGUAGE_<NAME>_"
                             "<IMAGE|SOURCE|COMPILE|RUN|DESCRIPTION|DOCKER_IMAGE|SOURCES|WARM_START|"
                             "PRELOAD>", var);
      n = (size_t) (eq - name) - strlen (language_fields[f]) - 1;
      lower = sr_xasprintf ("%.*s", (int) n, name);
      for (char *p = lower; *p; p++)
        *p = *p == '_' ? '-' : (char) tolower ((unsigned char) *p);
      if (set_language (cfg, lower, n, language_fields[f], eq + 1, SR_ORIGIN_ENV, var, err) < 0)
        return sr_error_wrap (err, "environment variable %s", var);
    }
  return 0;
}

char *
sr_language_docker_variable (const char *name)
{
  char *var = sr_xasprintf (SR_DOCKER_IMAGE_ENV_PREFIX "%s", name);

  for (char *p = var + strlen (SR_DOCKER_IMAGE_ENV_PREFIX); *p; p++)
    *p = isalnum ((unsigned char) *p) ? (char) toupper ((unsigned char) *p) : '_';
  return var;
}

/* SANDBOX_DOCKER_IMAGE_<NAME>, for each language of the table so far; an
 * empty value is ignored, as before the setting had a file key.  */
static void
load_docker_image_env (struct sr_config *cfg)
{
  for (size_t i = 0; i < cfg->n_languages; i++)
    {
      struct sr_language *l = &cfg->languages[i];
      _cleanup_free_ char *var = sr_language_docker_variable (l->name);
      const char *value = getenv (var);

      if (value == NULL || *value == '\0')
        continue;
      free (l->docker_image);
      l->docker_image = sr_xstrdup (value);
      l->origin = SR_ORIGIN_ENV;
      free (l->where);
      l->where = TAKE_PTR (var);
    }
}

/* "memory" -> "SANDBOX_MEMORY", into name (64 bytes).  */
static void
env_name (const struct setting *s, char name[static 64])
{
  size_t n = strlen (strcpy (name, "SANDBOX_"));

  for (const char *k = s->key; *k && n + 1 < 64; k++)
    name[n++] = (char) toupper ((unsigned char) *k);
  name[n] = '\0';
}

/* The SANDBOX_ variables this project reads that are not settings: the
 * config file's name, the session client's server (SR_CLIENT_URL_ENV of
 * cli/session_client.h), and the prefixes of the language table's.  */
static const char *const other_variables[] = { "SANDBOX_CONFIG", "SANDBOX_RUNNER_URL" };
static const char *const other_prefixes[] = { "SANDBOX_LANGUAGE_", SR_DOCKER_IMAGE_ENV_PREFIX };

static size_t
edit_distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b), row[65], diag, up;

  if (lb >= SR_ARRAY_SIZE (row))
    return SIZE_MAX;
  for (size_t j = 0; j <= lb; j++)
    row[j] = j;
  for (size_t i = 1; i <= la; i++)
    {
      diag = row[0];
      row[0] = i;
      for (size_t j = 1; j <= lb; j++)
        {
          size_t best = diag + (a[i - 1] != b[j - 1]);

          up = row[j];
          if (up + 1 < best)
            best = up + 1;
          if (row[j - 1] + 1 < best)
            best = row[j - 1] + 1;
          diag = up;
          row[j] = best;
        }
    }
  return row[lb];
}

bool
sr_config_variable_known (const char *var)
{
  char name[64];

  for (size_t i = 0; i < SR_ARRAY_SIZE (other_prefixes); i++)
    if (strncmp (var, other_prefixes[i], strlen (other_prefixes[i])) == 0)
      return true;
  for (size_t i = 0; i < SR_ARRAY_SIZE (other_variables); i++)
    if (strcmp (var, other_variables[i]) == 0)
      return true;
  for (size_t i = 0; i < SR_ARRAY_SIZE (settings); i++)
    {
      env_name (&settings[i], name);
      if (strcmp (var, name) == 0)
        return true;
      for (size_t a = 0; a < SR_ARRAY_SIZE (settings[i].aliases); a++)
        if (settings[i].aliases[a].var && strcmp (var, settings[i].aliases[a].var) == 0)
          return true;
    }
  return false;
}

bool
sr_config_alias_overridden (const char *var)
{
  char name[64];

  for (size_t i = 0; i < SR_ARRAY_SIZE (settings); i++)
    for (size_t a = 0; a < SR_ARRAY_SIZE (settings[i].aliases); a++)
      if (settings[i].aliases[a].var && strcmp (var, settings[i].aliases[a].var) == 0)
        {
          env_name (&settings[i], name);
          return getenv (name) != NULL;
        }
  return false;
}

static bool env_warned;

bool
sr_config_env_warned (void)
{
  return env_warned;
}

/* One warning on stderr for each SANDBOX_ variable nothing reads (a typo
 * like SANDBOX_MEMROY would otherwise go unnoticed), with the nearest
 * known name when it is at most 2 edits away.  Not an error: the prefix
 * is not ours alone.  */
static void
warn_unknown_env (void)
{
  env_warned = true;
  for (char **e = environ; e && *e; e++)
    {
      const char *eq = strchr (*e, '=');
      _cleanup_free_ char *var = NULL;
      char name[64], nearest[64] = "";
      size_t best = 3;

      if (strncmp (*e, "SANDBOX_", 8) != 0)
        continue;
      var = eq ? sr_xasprintf ("%.*s", (int) (eq - *e), *e) : sr_xstrdup (*e);
      if (sr_config_variable_known (var))
        continue;
      for (size_t i = 0; i < SR_ARRAY_SIZE (settings); i++)
        {
          size_t d;

          env_name (&settings[i], name);
          d = edit_distance (var, name);
          if (d < best)
            {
              best = d;
              strcpy (nearest, name);
            }
        }
      if (*nearest)
        fprintf (stderr, "sandbox-runner: warning: unknown variable %s ignored "
                 "(did you mean %s?)\n", var, nearest);
      else
        fprintf (stderr, "sandbox-runner: warning: unknown variable %s ignored\n", var);
    }
}

/* HOST:PORT (or [IPV6]:PORT) with its host or its port replaced by part;
 * NULL when current has no port.  */
static char *
replace_host_port (const char *current, const char *part, enum alias_form form)
{
  const char *colon = strrchr (current, ':');

  if (colon == NULL)
    return NULL;
  if (form == A_PORT)
    return sr_xasprintf ("%.*s:%s", (int) (colon - current), current, part);
  if (strchr (part, ':') && *part != '[')
    return sr_xasprintf ("[%s]%s", part, colon);
  return sr_xasprintf ("%s%s", part, colon);
}

/* The text of setting s that alias a gives it with value, or NULL with
 * *err set.  */
static char *
alias_text (const struct sr_config *cfg, const struct setting *s, const struct env_alias *a,
            const char *value, sr_error_t *err)
{
  char *end, *text = NULL;
  double v;

  switch (a->form)
    {
    case A_SAME:
      return sr_xstrdup (value);
    case A_MINUTES:
      errno = 0;
      v = strtod (value, &end);
      if (errno == 0 && end != value && *end == '\0' && isfinite (v) && v >= 0 && v <= 1e7)
        return sr_xasprintf ("%.17g", v * 60);
      sr_error_set (err, 0, "'%s' is not a number of minutes", value);
      return NULL;
    case A_HOST:
    case A_PORT:
      if (*value && !strchr (value, ' ') && (a->form == A_HOST || !strchr (value, ':')))
        text = replace_host_port (*FIELD (cfg, s, char *), value, a->form);
      if (text == NULL)
        sr_error_set (err, 0, "'%s' is not a %s", value, a->form == A_HOST ? "host" : "port");
      return text;
    }
  sr_error_set (err, EINVAL, "unknown alias form");
  return NULL;
}

/* Setting i from the environment: its aliases that are set, in order, and
 * then its own variable, which wins over them (the aliases it overrides
 * are named in a warning and in config show's source).  */
static int
load_env_setting (struct sr_config *cfg, size_t i, sr_error_t *err)
{
  const struct setting *s = &settings[i];
  _cleanup_free_ char *used = NULL, *ignored = NULL, *source = NULL;
  char name[64];
  const char *own;

  env_name (s, name);
  own = getenv (name);
  for (size_t k = 0; k < SR_ARRAY_SIZE (s->aliases) && s->aliases[k].var; k++)
    {
      const struct env_alias *a = &s->aliases[k];
      const char *value = getenv (a->var);
      _cleanup_free_ char *text = NULL, *old = NULL;

      if (value == NULL)
        continue;
      if (own)
        {
          fprintf (stderr, "sandbox-runner: warning: %s ignored for %s: %s is set\n", a->var,
                   s->key, name);
          old = ignored;
          ignored = sr_xasprintf ("%s%s%s", old ? old : "", old ? ", " : "", a->var);
          continue;
        }
      if ((text = alias_text (cfg, s, a, value, err)) == NULL)
        return sr_error_wrap (err, "environment variable %s", a->var);
      old = used;
      used = sr_xasprintf ("%s%s%s", old ? old : "", old ? ", " : "", a->var);
      if (sr_config_set (cfg, s->key, text, SR_ORIGIN_ENV, used, err) < 0)
        return sr_error_wrap (err, "environment variable %s", a->var);
    }
  if (own == NULL)
    return 0;
  source = ignored ? sr_xasprintf ("%s; %s ignored", name, ignored) : sr_xstrdup (name);
  if (sr_config_set (cfg, s->key, own, SR_ORIGIN_ENV, source, err) < 0)
    return sr_error_wrap (err, "environment variable %s", name);
  return 0;
}

static int
load_env (struct sr_config *cfg, sr_error_t *err)
{
  warn_unknown_env ();
  for (size_t i = 0; i < SR_ARRAY_SIZE (settings); i++)
    if (load_env_setting (cfg, i, err) < 0)
      return -1;
  return 0;
}

static void
set_defaults (struct sr_config *cfg)
{
  memset (cfg, 0, sizeof *cfg);
  for (size_t i = 0; i < SR_ARRAY_SIZE (settings); i++)
    {
      const struct setting *s = &settings[i];

      switch (s->type)
        {
        case T_SECONDS:
        case T_SIZE:
        case T_UINT:
          *FIELD (cfg, s, uint64_t) = s->def_u;
          break;
        case T_CPUS:
          *FIELD (cfg, s, double) = s->def_d;
          break;
        case T_BOOL:
          *FIELD (cfg, s, bool) = s->def_u != 0;
          break;
        case T_STRING:
          *FIELD (cfg, s, char *) = s->def_s ? sr_xstrdup (s->def_s) : default_path (s->key);
          break;
        case T_BACKEND:
          /* A built-in name: it parses.  */
          (void) sr_backend_kind_parse (s->def_s, FIELD (cfg, s, enum sr_backend_kind), NULL);
          break;
        case T_COMPAT:
          *FIELD (cfg, s, unsigned) = 0;
          break;
        }
    }
  cfg->n_languages = SR_ARRAY_SIZE (default_languages);
  cfg->languages = sr_xcalloc (cfg->n_languages, sizeof *cfg->languages);
  for (size_t i = 0; i < cfg->n_languages; i++)
    cfg->languages[i] = (struct sr_language) {
      .name = sr_xstrdup (default_languages[i].name),
      .image = sr_xstrdup (default_languages[i].image),
      .source = sr_xstrdup (default_languages[i].source),
      .compile = sr_xstrdup (default_languages[i].compile),
      .run = sr_xstrdup (default_languages[i].run),
      .description = sr_xstrdup (default_languages[i].description),
      .docker_image = sr_xstrdup (default_languages[i].docker_image),
      .sources = sr_xstrdup (default_languages[i].sources),
      .compile_cpus = sr_xstrdup (""),
      .warm_start = sr_xstrdup (default_languages[i].warm_start),
      .preload = sr_xstrdup (default_languages[i].preload),
      .origin = SR_ORIGIN_DEFAULT,
    };
}

/* The files: the one SANDBOX_CONFIG names (--config sets it), or the
 * system file and then the user file; NULL arguments mean the usual
 * places.  */
static int
load_files (struct sr_config *cfg, const char *system_file, const char *user_file,
            sr_error_t *err)
{
  _cleanup_free_ char *user_default = NULL;
  const char *named = getenv (SR_CONFIG_ENV);

  if (system_file == NULL && user_file == NULL && named && *named)
    {
      if (access (named, F_OK) < 0)
        return sr_error_set (err, errno, "config file %s (" SR_CONFIG_ENV " or --config)",
                             named);
      return load_file (cfg, named, SR_ORIGIN_FILE, err);
    }
  if (system_file == NULL)
    system_file = SR_SYSCONFDIR "/sandbox-runner/sandbox-runner.conf";
  if (user_file == NULL)
    {
      const char *xdg = getenv ("XDG_CONFIG_HOME"), *home = getenv ("HOME");

      if (xdg && *xdg == '/')
        user_default = sr_xasprintf ("%s/sandbox-runner/sandbox-runner.conf", xdg);
      else if (home && *home)
        user_default = sr_xasprintf ("%s/.config/sandbox-runner/sandbox-runner.conf", home);
      user_file = user_default;
    }
  if (load_file (cfg, system_file, SR_ORIGIN_SYSTEM, err) < 0)
    return -1;
  if (user_file && load_file (cfg, user_file, SR_ORIGIN_USER, err) < 0)
    return -1;
  return 0;
}

int
sr_config_read (struct sr_config *cfg, const char *system_file, const char *user_file,
                sr_error_t *err)
{
  set_defaults (cfg);
  if (load_files (cfg, system_file, user_file, err) < 0)
    return -1;
  if (load_env (cfg, err) < 0 || load_language_env (cfg, err) < 0)
    return -1;
  load_docker_image_env (cfg);
  return 0;
}

int
sr_config_check_server_id (const char *id, sr_error_t *err)
{
  size_t n = id ? strlen (id) : 0;

  if (n == 0 || n > SR_SERVER_ID_MAX
      || strspn (id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != n)
    return sr_error_set_code (err, "invalid_config", 0,
                              "server_id '%s' is not 1 to %d letters, digits, '-' or '_'",
                              id ? id : "", SR_SERVER_ID_MAX);
  return 0;
}

int
sr_config_check (const struct sr_config *cfg, sr_error_t *err)
{
  enum sr_log_level level;
  bool json;

  if (sr_log_level_parse (cfg->log_level, &level, err) < 0
      || sr_log_format_parse (cfg->log_format, &json, err) < 0)
    return -1;
  for (size_t i = 0; i < cfg->n_languages; i++)
    {
      const struct sr_language *l = &cfg->languages[i];

      if (!*l->image || !*l->source || !*l->run)
        return sr_error_set (err, 0, "language %s%s%s%s: image, source and run must all be set",
                             l->name, l->where ? " (" : "", l->where ? l->where : "",
                             l->where ? ")" : "");
      if (check_warm_start (l, err) < 0)
        return sr_error_wrap (err, "language %s%s%s%s", l->name, l->where ? " (" : "",
                              l->where ? l->where : "", l->where ? ")" : "");
    }
  if (cfg->timeout_ms == 0 || cfg->timeout_ms > cfg->max_timeout_ms)
    return sr_error_set (err, 0, "timeout %.3g s must be above 0 and at most max_timeout %.3g s",
                         (double) cfg->timeout_ms / 1000, (double) cfg->max_timeout_ms / 1000);
  if (cfg->max_output == 0 || cfg->max_output > SR_MAX_OUTPUT_CEILING)
    return sr_error_set (err, 0, "max_output %llu must be from 1 byte to %lluM",
                         (unsigned long long) cfg->max_output,
                         (unsigned long long) (SR_MAX_OUTPUT_CEILING >> 20));
  if (cfg->max_output_ceiling == 0 || cfg->max_output_ceiling > SR_MAX_OUTPUT_CEILING_BOUND)
    return sr_error_set (err, 0, "max_output_ceiling %llu must be from 1 byte to %lluK",
                         (unsigned long long) cfg->max_output_ceiling,
                         (unsigned long long) (SR_MAX_OUTPUT_CEILING_BOUND >> 10));
  if (cfg->max_read_size == 0 || cfg->max_read_size > SR_MAX_READ_SIZE_BOUND)
    return sr_error_set (err, 0, "max_read_size %llu must be from 1 byte to %lluK",
                         (unsigned long long) cfg->max_read_size,
                         (unsigned long long) (SR_MAX_READ_SIZE_BOUND >> 10));
  if (cfg->max_concurrent == 0)
    return sr_error_set (err, 0, "max_concurrent must be at least 1");
  /* A one-shot run's code directory holds what a request brings, and
   * then what its compiler writes (0: no size but the memory's).  */
  if (cfg->code_dir_size && cfg->code_dir_size < cfg->max_code_size + cfg->max_code_files_size)
    return sr_error_set (err, 0,
                         "code_dir_size %llu is below what a request may bring: max_code_size "
                         "plus max_code_files_size, %llu bytes",
                         (unsigned long long) cfg->code_dir_size,
                         (unsigned long long) (cfg->max_code_size + cfg->max_code_files_size));
  /* A page of none would never move on.  */
  if (cfg->resource_page_size == 0)
    return sr_error_set (err, 0, "resource_page_size must be at least 1");
  if (sr_image_user_check (cfg->user, err) < 0)
    return -1;
  /* Empty: the server makes one of its host name and port.  */
  if (cfg->server_id[0] && sr_config_check_server_id (cfg->server_id, err) < 0)
    return -1;
  return 0;
}

int
sr_config_load (struct sr_config *cfg, const char *system_file, const char *user_file,
                sr_error_t *err)
{
  if (sr_config_read (cfg, system_file, user_file, err) < 0)
    return -1;
  return sr_config_check (cfg, err);
}

void
sr_config_done (struct sr_config *cfg)
{
  for (size_t i = 0; i < SR_ARRAY_SIZE (settings); i++)
    {
      if (settings[i].type == T_STRING)
        free (*FIELD (cfg, &settings[i], char *));
      free (cfg->source[i]);
    }
  for (size_t i = 0; i < cfg->n_languages; i++)
    {
      struct sr_language *l = &cfg->languages[i];

      free (l->name);
      for (size_t f = 0; f < SR_ARRAY_SIZE (language_fields); f++)
        free (*language_field (l, f));
      free (l->where);
    }
  free (cfg->languages);
  ssh_done (cfg);
  memset (cfg, 0, sizeof *cfg);
}

static char *
format_value (const struct sr_config *cfg, const struct setting *s)
{
  switch (s->type)
    {
    case T_SECONDS:
      return sr_xasprintf ("%g", (double) *FIELD (cfg, s, uint64_t) / 1000.0);
    case T_SIZE:
      {
        uint64_t v = *FIELD (cfg, s, uint64_t);
        static const char units[] = "GMK";

        for (int shift = 30, i = 0; shift > 0; shift -= 10, i++)
          if (v && v % (1ULL << shift) == 0)
            return sr_xasprintf ("%llu%c", (unsigned long long) (v >> shift), units[i]);
        return sr_xasprintf ("%llu", (unsigned long long) v);
      }
    case T_UINT:
      return sr_xasprintf ("%llu", (unsigned long long) *FIELD (cfg, s, uint64_t));
    case T_CPUS:
      return sr_xasprintf ("%g", *FIELD (cfg, s, double));
    case T_BOOL:
      return sr_xstrdup (*FIELD (cfg, s, bool) ? "true" : "false");
    case T_STRING:
      return sr_xstrdup (*FIELD (cfg, s, char *));
    case T_BACKEND:
      return sr_xstrdup (sr_backend_kind_name (*FIELD (cfg, s, enum sr_backend_kind)));
    case T_COMPAT:
      return format_compat (*FIELD (cfg, s, unsigned));
    }
  return sr_xstrdup ("");
}

void
sr_config_print (const struct sr_config *cfg, FILE *f, bool json)
{
  cJSON *root = json ? cJSON_CreateObject () : NULL;

  for (size_t i = 0; i < SR_ARRAY_SIZE (settings); i++)
    {
      const struct setting *s = &settings[i];
      _cleanup_free_ char *value = format_value (cfg, s);
      const char *origin = sr_origin_name (cfg->origin[i]);

      /* A PostgreSQL history_db may hold a password: never shown.  */
      if (strcmp (s->key, "history_db") == 0)
        {
          char *shown = sr_history_display (value);

          free (value);
          value = shown;
        }

      if (root)
        {
          cJSON *o = cJSON_AddObjectToObject (root, s->key);

          cJSON_AddStringToObject (o, "value", value);
          cJSON_AddStringToObject (o, "origin", origin);
          if (cfg->source[i])
            cJSON_AddStringToObject (o, "source", cfg->source[i]);
          cJSON_AddStringToObject (o, "description", s->help);
        }
      else if (cfg->source[i])
        fprintf (f, "%-22s = %-28s # %s (%s)\n", s->key, value, origin, cfg->source[i]);
      else
        fprintf (f, "%-22s = %-28s # %s\n", s->key, value, origin);
    }
  for (size_t i = 0; i < cfg->n_languages; i++)
    {
      struct sr_language *l = &cfg->languages[i];
      cJSON *o = NULL;

      if (root)
        {
          cJSON *langs = cJSON_GetObjectItemCaseSensitive (root, "languages");

          if (langs == NULL)
            langs = cJSON_AddObjectToObject (root, "languages");
          o = cJSON_AddObjectToObject (langs, l->name);
          cJSON_AddStringToObject (o, "origin", sr_origin_name (l->origin));
          if (l->where)
            cJSON_AddStringToObject (o, "source_of_setting", l->where);
        }
      for (size_t k = 0; k < SR_ARRAY_SIZE (language_fields); k++)
        {
          _cleanup_free_ char *key = sr_xasprintf ("language.%s.%s", l->name, language_fields[k]);
          _cleanup_free_ char *quoted = sr_xasprintf ("\"%s\"", *language_field (l, k));

          if (o)
            cJSON_AddStringToObject (o, language_fields[k], *language_field (l, k));
          else if (l->where)
            fprintf (f, "%-22s = %-28s # %s (%s)\n", key, quoted, sr_origin_name (l->origin),
                     l->where);
          else
            fprintf (f, "%-22s = %-28s # %s\n", key, quoted, sr_origin_name (l->origin));
        }
    }
  print_ssh (cfg, f, root);
  if (root)
    {
      _cleanup_free_ char *text = cJSON_Print (root);

      fprintf (f, "%s\n", text);
      cJSON_Delete (root);
    }
}
