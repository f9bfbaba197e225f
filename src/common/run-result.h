/* What a run returns, whichever backend ran it (the native runtime,
 * Docker): the command to run, how to run it, and its outcome with the
 * captured output.  Backend-neutral, so that runtime/ and docker/ both
 * fill it without knowing each other.  */
#ifndef SR_COMMON_RUN_RESULT_H
#define SR_COMMON_RUN_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sr_exec_spec
{
  char *const *argv;  /* argv[0] is looked up in the container's PATH */
  char *const *env;   /* complete environment (NULL: PATH, HOME, LANG) */
  const char *cwd;    /* NULL: SR_DEFAULT_WORKDIR */
};

enum sr_run_status
{
  SR_RUN_SUCCESS,    /* exited 0 */
  SR_RUN_ERROR,      /* exited non-zero or killed by a signal */
  SR_RUN_TIMEOUT,
  SR_RUN_OOM,
  SR_RUN_CANCELLED,
};
const char *sr_run_status_name (enum sr_run_status s);

/* The outcome of a run-code request (compile and run stages): the names
 * are the status the MCP tool, the CLI and the history report.  */
enum sr_code_status
{
  SR_CODE_SUCCESS,
  SR_CODE_ERROR,
  SR_CODE_TIMEOUT,
  SR_CODE_COMPILE_ERROR,
  SR_CODE_OOM,
  SR_CODE_CANCELLED,
};
#define SR_CODE_STATUS_LAST SR_CODE_CANCELLED
const char *sr_code_status_name (enum sr_code_status s);

enum sr_stream { SR_STREAM_STDOUT = 1, SR_STREAM_STDERR = 2 };

/* Called for every chunk of output as it arrives (before capping), from
 * the supervising thread.  */
typedef void (*sr_output_cb) (enum sr_stream stream, const char *buf, size_t len, void *userdata);

struct sr_run_options
{
  uint64_t timeout_ms;   /* 0: no timeout */
  size_t max_output;     /* cap per stream; 0: SR_DEFAULT_MAX_OUTPUT */
  int stdin_fd;          /* -1: /dev/null */
  int cancel_fd;         /* readable means cancel (eventfd, signalfd); -1: none */
  sr_output_cb on_output;
  void *userdata;
};

struct sr_captured
{
  char *data;           /* NUL-terminated, at most max_output bytes */
  size_t len;
  uint64_t total;       /* bytes the process wrote */
  bool truncated;
};
void sr_captured_done (struct sr_captured *c);
/* The bytes of output c holds, before the truncation marker that ends a
 * truncated one.  */
size_t sr_captured_output_len (const struct sr_captured *c);
/* Keeps the first keep bytes of c's output, ended by the truncation
 * marker, which counts the rest of what the process wrote as dropped;
 * nothing when c holds no more than that.  */
void sr_captured_cut (struct sr_captured *c, size_t keep);

/* A stream's output as it comes, kept up to cap bytes (the rest counted
 * in c.total): what every backend keeps, so their results agree.  Set
 * cap, zero the rest.  */
struct sr_capture
{
  struct sr_captured c;
  size_t cap;
  size_t alloc;
};
void sr_capture_add (struct sr_capture *cap, const char *buf, size_t len);
/* The text kept ("" when none), ending with the truncation marker when
 * output was cut; *cap is left empty.  */
struct sr_captured sr_capture_finish (struct sr_capture *cap);

/* How a limit was enforced.  */
enum sr_limit_mechanism
{
  SR_LIMIT_NONE = 0,   /* not enforced */
  SR_LIMIT_CGROUP2,
  SR_LIMIT_CGROUP1,
  SR_LIMIT_RLIMIT,
};

const char *sr_limit_mechanism_name (enum sr_limit_mechanism m); /* "cgroup2", ... "none" */

/* Which mechanism each limit got.  */
struct sr_limit_report
{
  enum sr_limit_mechanism memory, cpu, pids;
};

/* Timing points of the container setup, CLOCK_MONOTONIC ns (the native
 * backend fills them; others leave them 0).  The child's points travel to
 * the parent in READY and EXEC.  */
enum sr_mark
{
  SR_MARK_LIMITS,       /* parent, before creating the cgroups */
  SR_MARK_CLONE,        /* parent, just before clone */
  SR_MARK_CHILD_START,  /* child, first instruction after clone */
  SR_MARK_ATTACHED,     /* parent, the child is in its cgroups */
  SR_MARK_IDMAP,        /* parent, maps written */
  SR_MARK_MOUNTS,       /* child, all mounts done */
  SR_MARK_PIVOT,        /* child, pivot_root done and old root detached */
  SR_MARK_NET,          /* child, lo up and hostname set */
  SR_MARK_READY,        /* child, about to wait for START */
  SR_MARK_START,        /* parent, START sent */
  SR_MARK_CAPS,         /* child, capabilities dropped, fds closed */
  SR_MARK_SECCOMP,      /* child, filter loaded: execve is next */
  SR_MARK_EXEC,         /* parent, saw EOF after EXEC */
  SR_MARK_MAX
};

struct sr_run_result
{
  enum sr_run_status status;
  int exit_code;         /* valid when signal == 0 */
  int signal;            /* terminating signal, 0 if it exited */
  struct sr_captured out, err;
  uint64_t duration_ns;  /* start to the last process gone */
  uint64_t cpu_ns;       /* user + system time of the init and what it reaped */
  uint64_t marks[SR_MARK_MAX];
  struct sr_limit_report limits;
  uint64_t memory_limit; /* what was asked, for messages */
  uint64_t memory_peak;
};
void sr_run_result_done (struct sr_run_result *r);

#endif
