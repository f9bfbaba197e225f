/* sandbox-runner's settings, from these layers, each overriding the last:
 *
 *   built-in defaults (common/defaults.h)
 *   the files: the one $SANDBOX_CONFIG names (the CLI's --config sets it),
 *     or else /etc/sandbox-runner/sandbox-runner.conf and then
 *     ~/.config/sandbox-runner/sandbox-runner.conf ($XDG_CONFIG_HOME)
 *   SANDBOX_* environment variables (key "memory" -> SANDBOX_MEMORY), and
 *     the names another server read for some settings (aliases, such as
 *     mcp-code-sandbox's SANDBOX_MEMORY_LIMIT), which ours override
 *
 * and then command-line flags, which the commands apply themselves with
 * sr_config_set (origin SR_ORIGIN_FLAG) between sr_config_read and
 * sr_config_check, so that a flag wins over everything and the checks
 * that tie settings together see the final values.  A file holds
 * `key = value` lines and # comments; an unknown key or a bad value is an
 * error that names the file and line; an unknown SANDBOX_* variable is a
 * warning on stderr.  */
#ifndef SR_CONFIG_H
#define SR_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "common/error.h"

/* The variable that names the one config file to read.  */
#define SR_CONFIG_ENV "SANDBOX_CONFIG"
/* SANDBOX_DOCKER_IMAGE_<NAME>: a language's docker_image.  */
#define SR_DOCKER_IMAGE_ENV_PREFIX "SANDBOX_DOCKER_IMAGE_"

enum sr_origin
{
  SR_ORIGIN_DEFAULT,
  SR_ORIGIN_SYSTEM,
  SR_ORIGIN_USER,
  SR_ORIGIN_FILE,     /* the file SANDBOX_CONFIG (--config) names */
  SR_ORIGIN_ENV,
  SR_ORIGIN_FLAG,
};

/* An entry of the language table (keys language.NAME.FIELD).  Commands
 * are split on blanks; no shell runs them.  */
struct sr_language
{
  char *name;
  char *image;        /* a name in the image store */
  char *source;       /* file name of the code, in SR_CODE_DIR */
  char *compile;      /* "" when the language has no compile stage */
  char *run;
  char *description;
  char *docker_image; /* the Docker backend's image; "" when none */
  char *sources;      /* patterns of the other files compiled too (common/defaults.h) */
  char *compile_cpus; /* the compile stage's CPUs; "": the compile_cpus setting */
  char *warm_start;   /* the bootstrap of a pre-started interpreter; "": none */
  char *preload;      /* modules it imports ahead, separated by commas or spaces */
  enum sr_origin origin;
  char *where;        /* file:line or variable of the last change, or NULL */
};

/* An SSH host, a machine the agent may act on (keys ssh.NAME.FIELD; see
 * sandbox/ssh.c).  An empty field is OpenSSH's to decide (its own
 * ~/.ssh/config, or the file ssh_config names); a NAME that has no entry
 * here is handed to ssh as it is, a Host of that configuration.  */
struct sr_ssh_target
{
  char *name;          /* sr_ssh_name_valid */
  char *host;          /* "": NAME itself */
  char *user;
  char *identity_file;
  char *known_hosts;   /* a known_hosts file of its own */
  unsigned port;       /* 0: ssh's choice */
  enum sr_origin origin;
  char *where;         /* file:line of the last change, or NULL */
};

/* Where containers run: the backend setting, parsed once here.  The
 * implementations are sandbox/backend.h's; a kind a binary has no
 * implementation for is refused when a service starts, not here.  */
enum sr_backend_kind
{
  SR_BACKEND_NATIVE,    /* runtime/: our own namespaces and cgroups */
  SR_BACKEND_DOCKER,    /* docker/: a Docker Engine (sandbox-runner-full) */
  SR_BACKEND_SSH,       /* sandbox/ssh.c: SSH hosts, machines but no sandbox: never
                         * the backend setting */
  SR_BACKEND_KIND_MAX,
};

/* The tool sets of servers sandbox-runner replaces, which tools/list
 * also offers when the compat_tools setting names them (a bit each).  */
enum sr_compat
{
  SR_COMPAT_CODE_SANDBOX = 1 << 0, /* mcp-code-sandbox's sandbox_* tools */
};

struct sr_config
{
  /* runs */
  uint64_t timeout_ms;
  uint64_t max_timeout_ms;
  uint64_t compile_timeout_ms;
  double compile_cpus;         /* a compile stage's CPU limit; 0: the runner's CPUs */
  uint64_t compile_cache_size; /* bytes of the compile cache; 0: none */
  uint64_t max_output;
  uint64_t max_output_ceiling; /* the most a tool call's max_output may ask */
  uint64_t max_code_size;
  uint64_t max_stdin_size;       /* run_code's stdin */
  uint64_t max_code_file_size;   /* one of run_code's files */
  uint64_t max_code_files_size;  /* all of them */
  /* limits */
  uint64_t memory;
  double cpus;
  uint64_t pids;
  uint64_t tmp_size;
  uint64_t scratch_size;
  uint64_t code_dir_size;  /* a one-shot run's SR_CODE_DIR tmpfs (root only) */
  bool strict_limits;
  /* kernel policy */
  char *seccomp_profile;   /* "" or NULL: the built-in profile; "unconfined" */
  char *cap_keep;          /* comma-separated capability names */
  char *user;              /* who commands are inside: image-user.h */
  /* where things live */
  char *image_store;
  char *image_stores_readonly; /* colon-separated; "": none */
  uint64_t max_image_size;    /* file data one image's layers may write */
  uint64_t max_image_entries; /* names they may make */
  char *history_db;
  uint64_t audit_retention_days; /* audit rows older are pruned (0: kept) */
  char *runtime_dir;
  /* server */
  uint64_t max_concurrent;
  uint64_t warm_containers;  /* ready containers per one-stage language */
  uint64_t max_message_size;
  char *listen;
  char *token_file;
  char *allowed_origins;   /* comma-separated */
  char *log_file;
  char *log_level;           /* sr_log_level_parse's names */
  char *log_format;          /* text or json */
  uint64_t http_session_idle_ms;  /* an unused Mcp-Session-Id expires */
  char *server_id;                /* in Mcp-Session-Ids, for a balancer; "": HOSTNAME-PORT */
  uint64_t drain_grace_ms;        /* a draining server's sessions have this long */
  uint64_t download_url_ttl_ms;   /* a signed download_url works this long */
  uint64_t task_after_ms;         /* a run still going then becomes a task */
  uint64_t task_keep_ms;          /* an ended task's result is kept this long */
  /* sessions and files */
  uint64_t max_sessions;
  uint64_t http_max_connections_per_ip; /* 0: no limit */
  uint64_t http_header_timeout_ms;      /* 0: no deadline */
  uint64_t max_sessions_per_owner; /* 0: max_sessions alone */
  uint64_t session_idle_ms;
  uint64_t session_queue_ms;  /* a call for a busy session waits this long */
  uint64_t session_data_size;
  uint64_t session_scratch_size;    /* a session's SR_CODE_DIR tmpfs */
  uint64_t session_scratch_inodes;
  char *session_image;     /* the image of a session created without one */
  uint64_t max_upload_size;
  uint64_t max_artifact_size;
  uint64_t max_search_bytes;  /* file_search stops, truncated, past it */
  uint64_t max_read_size;     /* file text one file_read or file_search returns */
  uint64_t resource_page_size; /* files per resources/list page */
  /* backend */
  enum sr_backend_kind backend_kind;
  char *docker_host;
  unsigned compat_tools;   /* enum sr_compat bits */
  char *ssh_config;        /* ssh -F FILE; "": OpenSSH's own */

  struct sr_language *languages;
  size_t n_languages;
  struct sr_ssh_target *ssh_targets;
  size_t n_ssh_targets;

  enum sr_origin origin[96]; /* per setting, indexed as the table in config.c */
  char *source[64];          /* file:line or variable name, for config show */
};

/* Fills cfg from every layer but the flags, without sr_config_check.
 * system_file/user_file: NULL for the usual places, or the file
 * $SANDBOX_CONFIG names when both are NULL (tests pass their own).  A
 * named file that is missing is an error; the usual ones may be.  The
 * caller frees cfg with sr_config_done even on failure.  */
int sr_config_read (struct sr_config *cfg, const char *system_file, const char *user_file,
                    sr_error_t *err);
/* The checks that tie settings together (timeout at most max_timeout,
 * every language complete, ...), on the final values.  */
int sr_config_check (const struct sr_config *cfg, sr_error_t *err);
/* Whether id may be a server_id: 1 to SR_SERVER_ID_MAX letters, digits,
 * '-' or '_' (a name HAProxy takes, without the '.' that ends it in an
 * Mcp-Session-Id); code invalid_config naming it when not.  */
int sr_config_check_server_id (const char *id, sr_error_t *err);
/* sr_config_read and then sr_config_check, for callers without flags
 * that change checked settings.  */
int sr_config_load (struct sr_config *cfg, const char *system_file, const char *user_file,
                    sr_error_t *err);
void sr_config_done (struct sr_config *cfg);

/* Sets one setting by key from text (as a flag would).  */
int sr_config_set (struct sr_config *cfg, const char *key, const char *value,
                   enum sr_origin origin, const char *source, sr_error_t *err);

/* Prints every setting with its value and where it came from; JSON when
 * json is true.  */
void sr_config_print (const struct sr_config *cfg, FILE *f, bool json);

const char *sr_origin_name (enum sr_origin o);

/* The backend kind named name ("native", "docker"), into *ret; an
 * unknown name is an error saying which names there are.  The one place a
 * backend's name is compared: the backend setting and the CLI's --backend
 * both go through it (via sr_config_set).  */
int sr_backend_kind_parse (const char *name, enum sr_backend_kind *ret, sr_error_t *err);
/* The name of kind, for messages ("native", "docker").  */
const char *sr_backend_kind_name (enum sr_backend_kind kind);

/* Whether the environment variable var (a name, "SANDBOX_MEMORY") is one
 * this project reads: the settings' and their aliases, SANDBOX_CONFIG, SANDBOX_RUNNER_URL,
 * SANDBOX_LANGUAGE_* and SANDBOX_DOCKER_IMAGE_*.  sr_config_read warns
 * about the other SANDBOX_ ones.  */
bool sr_config_variable_known (const char *var);
/* Whether var is an alias that the setting's own variable, being set
 * too, overrides (sr_config_read warns about it).  */
bool sr_config_alias_overridden (const char *var);
/* Whether this process has warned about the others already.  */
bool sr_config_env_warned (void);

/* SANDBOX_DOCKER_IMAGE_<NAME> for the language name ("c++" ->
 * SANDBOX_DOCKER_IMAGE_C__), the caller's to free.  */
char *sr_language_docker_variable (const char *name);

/* An SSH machine's name: 1 to 32 of a-z, A-Z, 0-9, '_' and '-', not
 * starting with '-' (it becomes an argument of ssh).  */
bool sr_ssh_name_valid (const char *name);
/* The ssh.NAME entry, or NULL.  */
const struct sr_ssh_target *sr_config_ssh_target (const struct sr_config *cfg, const char *name);

/* The CPUs of l's compile stage: its compile_cpus, else the setting's
 * (0: all the runner may use, sandbox/policy.h).  */
double sr_language_compile_cpus (const struct sr_config *cfg, const struct sr_language *l);
/* The entry for name, or NULL.  */
const struct sr_language *sr_config_language (const struct sr_config *cfg, const char *name);

#endif
