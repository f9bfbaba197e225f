/* The subcommands of sandbox-runner; each parses its own arguments and
 * returns the process exit status.  */
#ifndef SR_COMMANDS_H
#define SR_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/error.h"

/* Exit statuses of the runner itself, as env(1) and timeout(1) use them;
 * a compile error takes the free status just below them, so that the
 * runner's own statuses are one band (123-127) a program rarely uses,
 * and a compile error is never mistaken for a program's exit (1).  */
#define SR_EXIT_COMPILE 123
#define SR_EXIT_TIMEOUT 124
#define SR_EXIT_RUNNER  125  /* bad usage or a container that could not be set up */
#define SR_EXIT_NOEXEC  126
#define SR_EXIT_NOTFOUND 127

/* The command dispatcher.  Each binary's own main (main-light.c,
 * main-http.c, main-full.c) registers what that binary carries (the
 * backends, the HTTP transport) and then calls it.  */
int sr_cli_main (int argc, char **argv);

int sr_cmd_run (int argc, char **argv);
int sr_cmd_config (int argc, char **argv);
/* Execs the helper binary name (SR_HELPER_FULL, SR_HELPER_HTTP) with this
 * process's arguments, found beside this binary first (a build tree),
 * then where make install puts it.  Returns only on failure.  */
#define SR_HELPER_FULL "sandbox-runner-full"
#define SR_HELPER_HTTP "sandbox-runner-http"
int sr_cli_exec_helper (const char *name);

int sr_cmd_ps (int argc, char **argv);
int sr_cmd_sessions (int argc, char **argv);
int sr_cmd_kill (int argc, char **argv);
int sr_cmd_image (int argc, char **argv);
int sr_cmd_run_code (int argc, char **argv);
int sr_cmd_history (int argc, char **argv);
int sr_cmd_audit (int argc, char **argv);
/* Up to max characters of the line at text (to its end or a newline),
 * with controls replaced by '?' (a tab by a space), and "..." when cut:
 * what a table shows of a string it did not write (history.c).  */
char *sr_cli_printable (const char *text, size_t max);
/* The --limit N of a listing, from 1 to max, in *ret; prints the error.  */
int sr_cli_parse_limit (const char *arg, size_t max, size_t *ret);
/* "12ms", "1.5s".  */
void sr_cli_format_duration (char *buf, size_t len, int64_t ms);
/* serve: stdio on the native backend in every binary; HTTP in
 * sandbox-runner-http and -full, whose mains set sr_cli_serve_http to
 * sr_cli_serve_mhd (serve_http.c); the Docker backend in
 * sandbox-runner-full (the others hand those over).  */
int sr_cmd_serve (int argc, char **argv);
struct sr_mcp_server;
/* sse: also the HTTP+SSE transport of protocol 2024-11-05 (--transport
 * sse), at /sse and /messages.  */
typedef int (*sr_cli_serve_http_fn) (struct sr_mcp_server *server, const struct sr_config *cfg,
                                     bool sse, int stop_fd, sr_error_t *err);
extern sr_cli_serve_http_fn sr_cli_serve_http;
/* The HTTP transport, with libmicrohttpd (serve_http.c).  */
int sr_cli_serve_mhd (struct sr_mcp_server *server, const struct sr_config *cfg, bool sse,
                      int stop_fd, sr_error_t *err);
int sr_cmd_doctor (int argc, char **argv);
/* image import and image pull; argv[0] is "import" or "pull".  These are
 * in sandbox-runner-full; sandbox-runner hands them over (delegate.c).  */
int sr_cmd_image_import (int argc, char **argv);
int sr_cmd_image_pull (int argc, char **argv);
/* A client of a running serve --transport http (cli/session_*.c, with
 * libcurl): in sandbox-runner-full too.  */
int sr_cmd_session (int argc, char **argv);

/* The command line main() got, for handing a command over.  */
extern char **sr_cli_argv;

struct sr_config;
struct sr_store;
/* Draws the store's progress on stderr (a bar on a terminal, lines
 * otherwise) unless quiet, and prints its warnings.  */
void sr_cli_show_progress (struct sr_store *s, bool quiet);
/* Loads the configuration; prints the error.  For `COMMAND --help` an
 * error is only a warning: cfg then holds the defaults and what was read
 * before it, for the usage text.  On failure cfg is freed (and empty, so
 * a later sr_config_done does nothing).  */
int sr_cli_load_config (struct sr_config *cfg);
/* The same in two steps, for a command whose flags override checked
 * settings (--timeout): reads every layer but the flags (freeing cfg on
 * failure, as sr_cli_load_config), then, once the command has applied its
 * flags to cfg, checks the final values.  */
int sr_cli_read_config (struct sr_config *cfg);
int sr_cli_check_config (const struct sr_config *cfg);
/* Opens the image store the configuration names; prints the error.  Only
 * a command that writes an image (import, pull) creates a missing one.  */
int sr_cli_open_store (const struct sr_config *cfg, bool create, struct sr_store **ret);
/* Where containers are registered for ps and kill (runtime_dir/containers).  */
char *sr_cli_state_dir (const struct sr_config *cfg, sr_error_t *err);

/* A signalfd that becomes readable on SIGINT, SIGTERM or SIGHUP (now
 * blocked), for cancelling a run instead of dying and leaving it behind.  */
int sr_cli_cancel_fd (void);

/* Prints "sandbox-runner: " and the message to stderr.  */
void sr_cli_error (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Parses the value s of option opt as a decimal integer of at least
 * min; on bad input prints an error naming opt and returns -1.  */
int sr_cli_parse_uint (const char *opt, const char *s, uint64_t min, uint64_t *ret);

/* Reads the file path, or stdin when path is NULL or "-" (refused on a
 * terminal), NUL-terminated into *ret: all of it, or max + 1 bytes when
 * it is longer, for the caller to refuse.  Errors start with cmd.  */
int sr_cli_read_input (const char *cmd, const char *path, size_t max, char **ret,
                       size_t *ret_len);

#endif
