/* What the pieces of the Docker Engine client share, and nobody else:
 *
 *   engine.c                 the connection (endpoint, API version, our
 *                            runner id), images, and the orphans of dead
 *                            runners
 *   engine-http.c            one HTTP exchange with the daemon, its
 *                            errors, and reading its JSON answers
 *   engine-container-json.c  a container's create body, from the policy
 *   engine-container.c       a container's life: create, start, wait,
 *                            kill, remove (sr_docker_run, sr_docker_hold)
 *   engine-stream.c          the multiplexed output stream, read in a
 *                            multi transfer
 *   engine-supervise.c       the timeout, the cancel fd and the kill grace
 *                            of the native supervisor, and the run result
 *                            they make
 *   engine-exec.c            a command in a held container
 *                            (sr_docker_exec), and killing what it leaves
 *   engine-hijack.c          an exec or a run with stdin, over the
 *                            connection the daemon hijacks
 *   engine-manage.c          a held container's stop, start, restart,
 *                            inspect, logs and stats
 *
 * Every file is named engine-*.c so that no object of libsandbox.a shares
 * a name with another area's (runtime/container.o, mcp/http.o).  */
#ifndef SR_DOCKER_ENGINE_INTERNAL_H
#define SR_DOCKER_ENGINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "common/curlbuf.h"
#include "docker/engine.h"

#define CONNECT_TIMEOUT_MS 3000L
/* A control request that takes longer than this means a daemon in
 * trouble; create and remove can be slow on a loaded host.  */
#define CONTROL_TIMEOUT_MS 60000L
/* From the attach request to the stream's headers.  */
#define ATTACH_TIMEOUT_MS 30000u
/* Of an error body, only the start is kept.  */
#define MAX_ERROR_BODY (64u << 10)
#define STREAM_HEADER_LEN 8

/* --- the connection --- */

struct sr_docker
{
  char *endpoint;     /* as given: unix:///var/run/docker.sock */
  char *socket_path;  /* NULL for tcp */
  char *base_url;     /* http://localhost/v1.41 */
  char api[16];
  char *runner;       /* the value of SR_DOCKER_LABEL_RUNNER for ours */
  char hostname[256];
  /* How the daemon enforces limits, for the result's limit report.  */
  enum sr_limit_mechanism limit_mechanism;
};

struct limits
{
  uint64_t memory, nano_cpus;
  uint32_t pids;
};

struct sr_docker_container
{
  struct sr_docker *d;
  char *id;
  char *user;         /* what execs run as, the container's user */
  int init_pid;       /* on the daemon's host */
  struct limits limits;
};

/* --- engine-http.c: the exchange --- */

/* A handle for d's endpoint, errors into errbuf (CURL_ERROR_SIZE); the
 * caller cleans it up.  */
CURL *sr_docker_new_handle_ (const struct sr_docker *d, char *errbuf);
/* Says why a transfer to the daemon failed, in words a person can act on.  */
int sr_docker_transport_error_ (const struct sr_docker *d, CURL *h, CURLcode rc,
                                const char *errbuf, long timeout_ms, sr_error_t *err);
/* Pings the daemon (unversioned) within SR_DOCKER_PING_TIMEOUT_MS; api
 * (api_size bytes) gets the API version it names, "" when none.  */
int sr_docker_ping_ (const struct sr_docker *d, char *api, size_t api_size, sr_error_t *err);
/* method PATH (below the versioned base) with body (NULL: none).  Returns
 * the HTTP status, or -1 when the exchange itself failed.  */
long sr_docker_request_ (const struct sr_docker *d, const char *method, const char *path,
                         const cJSON *body, long timeout_ms, struct sr_buf *resp,
                         sr_error_t *err);
/* An error the daemon answered with: {"message": "..."}.  */
int sr_docker_api_error_ (long status, const struct sr_buf *resp, int errnum, const char *what,
                          sr_error_t *err);
/* sr_docker_api_error_ with the errno that status stands for.  */
int sr_docker_status_error_ (long status, const struct sr_buf *resp, const char *what,
                             sr_error_t *err);
/* GET path and parse the answer into *ret (the caller's).  */
int sr_docker_get_json_ (struct sr_docker *d, const char *path, const char *what, cJSON **ret,
                         sr_error_t *err);
int sr_docker_json_int_ (const cJSON *obj, const char *key, int dflt);
bool sr_docker_json_bool_ (const cJSON *obj, const char *key);
/* Whether the inspect at path says Running (under State when in_state, as
 * a container's does; at the top, as an exec's does): 1 or 0, -1 when
 * the daemon could not be asked.  */
int sr_docker_running_ (struct sr_docker *d, const char *path, bool in_state, const char *what);
/* A query value, percent-encoded; the caller frees it.  */
char *sr_docker_escape_ (const char *s);

/* --- engine.c --- */

/* The error for an image the daemon does not have.  */
int sr_docker_image_missing_ (const char *image, sr_error_t *err);

/* --- engine-container-json.c --- */

void sr_docker_add_strv_ (cJSON *obj, const char *key, char *const *v);
/* "Env": env, or our default environment when NULL.  */
void sr_docker_add_env_ (cJSON *obj, char *const *env);
/* cfg->user, or SR_DOCKER_DEFAULT_USER when NULL.  */
const char *sr_docker_user_of_ (const struct sr_docker_config *cfg);
/* The body of a create request: argv under cfg's policy, with an init
 * as pid 1; held: a held container (nothing attached).  *ret is the
 * caller's.  */
int sr_docker_container_json_ (const struct sr_docker *d, const struct sr_docker_config *cfg,
                               char *const *argv, char *const *env, const char *cwd, bool held,
                               cJSON **ret, sr_error_t *err);

/* --- engine-container.c --- */

/* Force-removes container id; errors are ignored.  */
void sr_docker_remove_container_ (struct sr_docker *d, const char *id);
/* SIGKILLs container id; errors are ignored.  */
void sr_docker_kill_container_ (struct sr_docker *d, const char *id);

/* --- engine-stream.c: the output stream --- */

struct stream
{
  const struct sr_run_options *opts;
  struct sr_capture out, err;
  long status;          /* of the stream request */
  bool headers_done;
  struct sr_buf body;      /* the body of a failed stream request */
  unsigned char head[STREAM_HEADER_LEN];
  size_t head_len;
  uint32_t left;        /* payload bytes left in the current frame */
  int type;             /* of the current frame */
};

/* n bytes of the current frame's stream (s->type) to the caller's
 * callback and capture.  */
void sr_docker_stream_deliver_ (struct stream *s, const char *p, size_t n);
/* A curl write callback: demultiplexes frames into s.  */
size_t sr_docker_on_stream_data_ (char *ptr, size_t size, size_t nmemb, void *userdata);

/* A streaming POST in a multi handle of its own.  */
struct xfer
{
  CURLM *multi;
  CURL *h;
  struct curl_slist *headers;
  char *body_text;
  char errbuf[CURL_ERROR_SIZE];
  bool added, done;
  CURLcode result;
};

/* POSTs body (NULL: empty) to path, its answer going to s.  */
void sr_docker_xfer_start_ (const struct sr_docker *d, struct xfer *x, const char *path,
                            const cJSON *body, struct stream *s);
/* Ends a command's output: x, and s's captures into result.  */
void sr_docker_stream_finish_ (struct xfer *x, struct stream *s, struct sr_run_result *result);
/* Moves the transfer on; true once it has ended.  */
bool sr_docker_xfer_step_ (struct xfer *x);
/* Waits for the transfer, cancel_fd (when >= 0) or at most wait_ms.
 * Returns true when cancel_fd is readable.  */
bool sr_docker_xfer_wait_ (struct xfer *x, int cancel_fd, int wait_ms);
/* Drives the transfer until the daemon has sent the response headers, so
 * that it is attached before anything starts.  */
int sr_docker_xfer_until_headers_ (const struct sr_docker *d, struct xfer *x, struct stream *s,
                                   const char *what, sr_error_t *err);

/* --- engine-supervise.c --- */

struct supervise
{
  uint64_t t0;               /* when the command was started */
  uint64_t deadline;         /* of its timeout; 0: none */
  uint64_t give_up;          /* on its output, once killed */
  bool killed, timed_out, cancelled;
  void (*kill) (void *ctx);
  void *kill_ctx;
};

/* Sets the deadline from sv->t0 and opts->timeout_ms.  */
void sr_docker_supervise_start_ (struct supervise *sv, const struct sr_run_options *opts);
/* Kills the command (sv->kill) and starts the grace for its output.  */
void sr_docker_supervise_kill_ (struct supervise *sv);
/* The rules of the native supervisor, one step of them: kills the command
 * at its deadline, and returns false once it was killed KILL_GRACE_MS ago
 * and its output has still not ended.  Else *wait_ms gets how long the
 * caller may wait for its next event.  */
bool sr_docker_supervise_tick_ (struct supervise *sv, int *wait_ms);
/* Reads the stream to its end, enforcing the timeout and the cancel fd.  */
int sr_docker_supervise_stream_ (const struct sr_docker *d, struct xfer *x,
                                 const struct sr_run_options *opts, struct supervise *sv,
                                 sr_error_t *err);
/* Clears r and fills in its limits report.  */
void sr_docker_result_init_ (const struct sr_docker *d, struct sr_run_result *r,
                             struct limits l);
/* r's exit code or signal from the code the daemon reports.  */
void sr_docker_set_exit_ (struct sr_run_result *r, int code);
void sr_docker_set_status_ (struct sr_run_result *r, const struct supervise *sv, bool oom);

/* --- engine-hijack.c --- */

/* Starts exec_id (start_path, start) on a hijacked connection and relays
 * until its output ends: opts->stdin_fd to the command's stdin, its
 * output to s; tty: stdin is a terminal.  */
int sr_docker_relay_exec_ (struct sr_docker_container *c, const char *exec_id,
                           const char *start_path, const cJSON *start,
                           const struct sr_run_options *opts, bool tty, struct stream *s,
                           struct supervise *sv, sr_error_t *err);
/* A fresh container id made with its stdin open (OpenStdin, StdinOnce):
 * attaches to it on a hijacked connection, calls start (which starts the
 * container, sv->t0 set) and relays as above until its output ends, the
 * end of opts->stdin_fd closing the command's stdin.  */
int sr_docker_relay_attach_ (struct sr_docker *d, const char *id,
                             int (*start) (void *ctx, sr_error_t *err), void *start_ctx,
                             const struct sr_run_options *opts, struct stream *s,
                             struct supervise *sv, sr_error_t *err);

#endif
