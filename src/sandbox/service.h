/* The service: the one entry mcp/ and cli/ use to run code.
 *
 * sr_service_open reclaims what dead runners left, then opens what running
 * code needs and owns all of it: the image store, the run history and, for
 * a server, the seccomp cache directory, the warm pool and the session
 * manager.  sr_service_close closes all of it, once.
 *
 * sr_service_run_code routes a request to its session, a warm container
 * or a fresh one, and records the run in the history: the one place a run
 * is recorded, for the MCP tools and the CLI alike.  */
#ifndef SR_SANDBOX_SERVICE_H
#define SR_SANDBOX_SERVICE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/config.h"
#include "common/error.h"
#include "common/run-result.h"
#include "sandbox/code.h"
#include "sandbox/files.h"
#include "store/history.h"

struct sr_service;
struct sr_sessions;

enum sr_service_mode
{
  /* A long-lived server (MCP): the history opens now (a history that
   * cannot open costs the history, never the runs), the seccomp cache is
   * set, the warm pool and the session manager start (each may fail
   * alone: runs go on without).  */
  SR_SERVICE_SERVER,
  /* One run of the CLI: the store now, the history at its first use.  */
  SR_SERVICE_ONE_SHOT,
};

/* cfg must outlive the service.  Fails only when the image store cannot
 * open.  source ("mcp", "cli") is what the history records.  */
int sr_service_open (const struct sr_config *cfg, enum sr_service_mode mode, const char *source,
                     struct sr_service **ret, sr_error_t *err);
/* Closes the sessions, the pool, the history and the store.  Accepts
 * NULL.  */
void sr_service_close (struct sr_service *s);

/* The session manager, or NULL when sessions are unavailable (one-shot
 * mode, or they failed to start: sr_service_sessions_problem says why).  */
struct sr_sessions *sr_service_sessions (struct sr_service *s);
const char *sr_service_sessions_problem (const struct sr_service *s);
/* Why the history is not open (NULL when it is, or has not been tried).  */
const char *sr_service_history_problem (struct sr_service *s);

/* Whether the image is in the store; *ret_version gets what its build
 * said of the language's version (the org.opencontainers.image.version
 * label: "Python 3.13.5"), the caller's to free, or NULL.  */
bool sr_service_image_available (struct sr_service *s, const char *image, char **ret_version);

/* What sr_service_run_code did.  */
struct sr_service_run
{
  struct sr_code_result code;
  char *session_id;             /* the session it ran in; NULL: one-shot */
  struct sr_artifact *artifacts; /* files of the session the run created or changed */
  size_t n_artifacts;
  char run_id[37];              /* its history entry; "" when not recorded */
  char *history_problem;        /* why it was not recorded; NULL when it was */
  bool history_failed;          /* the history could not record it just now: warn */
};
void sr_service_run_done (struct sr_service_run *run);

/* Runs req in session session_id (NULL: none) when owner may see it
 * (sandbox/session.h), else in a warm container
 * when the pool has one for it, else in a fresh container; records a run
 * that happened in the history (a history that fails costs the record,
 * never the run).  -1 when nothing ran, the error's code saying why for
 * programs (sessions_unavailable, session_busy, image_missing, ...).  req
 * must have been checked with sr_code_validate.  */
int sr_service_run_code (struct sr_service *s, const struct sr_code_request *req,
                         const char *owner, const char *session_id, struct sr_service_run *run,
                         sr_error_t *err);

/* The history entries that match f, as sr_history_list; an error when the
 * history is unavailable (one-shot mode opens it here if need be).  */
int sr_service_history_list (struct sr_service *s, const struct sr_history_filter *f,
                             struct sr_history_entry **ret, size_t *ret_n, sr_error_t *err);

/* The same without a service, for the CLI: the database cfg names, which
 * is not created when missing (no database is an empty history).  */
int sr_service_history_query (const struct sr_config *cfg, const struct sr_history_filter *f,
                              struct sr_history_entry **ret, size_t *ret_n, sr_error_t *err);

/* --- the audit trail of MCP tool calls (src/store/history.h) --- */

/* How a caller's identity is recorded, in a new string: "stdio" as it
 * is; anything else (a token id, an MCP session id) as "client:" and 16
 * hex digits of its SHA-256, so the trail never holds a credential.  */
char *sr_service_audit_client (const char *identity);

struct sr_service_call
{
  const char *client;      /* as sr_service_audit_client made it */
  const char *machine;     /* NULL or "": none */
  const char *tool;
  const char *status;      /* "ok" or the refusal's code */
  int64_t duration_ms;
  const char *args_json;   /* the canonical arguments JSON: only its digest is kept */
};

/* Records a tool call; rows older than audit_retention_days are pruned
 * when the server opens and then at most once an hour.  */
int sr_service_audit (struct sr_service *s, const struct sr_service_call *call, sr_error_t *err);
/* The audit rows that match f, as sr_history_audit_list.  */
int sr_service_audit_list (struct sr_service *s, const struct sr_audit_filter *f,
                           struct sr_audit_entry **ret, size_t *ret_n, sr_error_t *err);
/* The same without a service, for the CLI (prunes first, as a server
 * does; a missing database is an empty trail).  */
int sr_service_audit_query (const struct sr_config *cfg, const struct sr_audit_filter *f,
                            struct sr_audit_entry **ret, size_t *ret_n, sr_error_t *err);

/* The history entry of a run (id and timestamp empty, no session).  */
void sr_service_history_entry (struct sr_history_entry *e, const struct sr_code_request *req,
                               const struct sr_code_result *res, const char *source);

#endif
