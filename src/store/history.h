/* The run history: one row per run, in the store the history_db setting
 * names: a SQLite file (the default, for one host) or a PostgreSQL
 * database (a URI or conninfo, shared by a fleet).  Both keep the same
 * schema, versioned and migrated up at open, and answer the same queries.
 *
 * SQLite: WAL mode, the schema version in PRAGMA user_version; several
 * runner processes write to one file at once, every write one IMMEDIATE
 * transaction that waits for the others (busy_timeout) rather than failing
 * with SQLITE_BUSY.  The file is created 0600, its directory 0700.
 *
 * PostgreSQL (history-pg.c): libpq is loaded at the first open, so that a
 * runner whose history is SQLite never maps it; the version is in the
 * table schema_version; a lost connection is made again at the next call.
 *
 * One handle may be shared by the threads of a process: its calls are
 * serialized.  */
#ifndef SR_STORE_HISTORY_H
#define SR_STORE_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/history-db.h"

#define SR_HISTORY_SCHEMA_VERSION 3
#define SR_HISTORY_PREVIEW_MAX 500  /* characters of the code kept as its preview */
#define SR_HISTORY_LIMIT_DEFAULT 20
#define SR_HISTORY_LIMIT_MAX 1000
/* How long a write waits for the other writers before it fails.  */
#define SR_HISTORY_BUSY_TIMEOUT_MS 10000

struct sr_history_entry
{
  char id[37];            /* UUID v4; "" until added */
  int64_t timestamp_ms;   /* UTC, ms since the epoch; 0 until added */
  char *language;
  char *code_preview;     /* valid UTF-8, its first SR_HISTORY_PREVIEW_MAX characters */
  char *code_sha256;      /* "sha256:<hex>" of the whole code */
  char *status;           /* a name of sr_code_status_name */
  int exit_code;          /* 128+N when signal N killed it */
  int64_t duration_ms;
  int64_t stdout_size, stderr_size; /* bytes the program wrote */
  char *session_id;       /* NULL for a one-shot run */
  char *source;           /* "cli" or "mcp" */
  char *owner;            /* who ran it over HTTP (a token's or an MCP
                           * session's id); NULL over stdio and the CLI */
};
/* Frees the strings of e and clears it; accepts NULL.  */
void sr_history_entry_done (struct sr_history_entry *e);
void sr_history_entries_free (struct sr_history_entry *v, size_t n);

struct sr_history_filter
{
  size_t limit;           /* 0: SR_HISTORY_LIMIT_DEFAULT; at most SR_HISTORY_LIMIT_MAX */
  const char *status;     /* NULL: any */
  const char *language;   /* NULL: any */
  const char *session_id; /* NULL: any */
  const char *owner;      /* NULL: anyone's; else only this owner's runs */
};

struct sr_history;

/* Opens the database db names (sr_history_kind_of), creating a SQLite
 * file (and its directory) when missing, and brings its schema up to
 * SR_HISTORY_SCHEMA_VERSION.  A database of a newer schema than this build
 * knows is refused.  Errors name db as sr_history_display shows it.  */
int sr_history_open (const char *db, struct sr_history **ret, sr_error_t *err);
/* Accepts NULL.  */
void sr_history_close (struct sr_history *h);

/* Records e; fills e->id and e->timestamp_ms when they are empty.
 * language, status and source are required, and status must be a known
 * name.  */
int sr_history_add (struct sr_history *h, struct sr_history_entry *e, sr_error_t *err);

/* The entries that match f (NULL: no filter), newest first, in a new
 * array of *ret_n entries (NULL when there are none).  */
int sr_history_list (struct sr_history *h, const struct sr_history_filter *f,
                     struct sr_history_entry **ret, size_t *ret_n, sr_error_t *err);

/* 0 when status is a name of sr_code_status_name; else an EINVAL error
 * that lists the valid names.  */
int sr_history_check_status (const char *status, sr_error_t *err);

/* The audit trail: one row per MCP tool call, in the same database.  It
 * holds no code and no file contents: the client is already hashed by
 * the caller and the arguments are a digest.  */
#define SR_AUDIT_LIMIT_DEFAULT 50
#define SR_AUDIT_LIMIT_MAX 1000

struct sr_audit_entry
{
  int64_t timestamp_ms;   /* UTC, ms since the epoch; 0: now, when added */
  char *client;           /* who called: "stdio", or a hashed identity */
  char *machine;          /* where the tool acted: a session id, or "" */
  char *tool;
  char *status;           /* "ok", or the code of the refusal */
  int64_t duration_ms;
  char *args_sha256;      /* "sha256:<hex>" of the canonical arguments JSON */
};
void sr_audit_entry_done (struct sr_audit_entry *e);
void sr_audit_entries_free (struct sr_audit_entry *v, size_t n);

struct sr_audit_filter
{
  size_t limit;           /* 0: SR_AUDIT_LIMIT_DEFAULT; at most SR_AUDIT_LIMIT_MAX */
  const char *client;     /* NULL: any */
  const char *machine;    /* NULL: any */
  const char *tool;       /* NULL: any */
  const char *status;     /* NULL: any */
  int64_t since_ms;       /* 0: any time */
};

/* Records e (client, machine, tool, status and args_sha256 required);
 * fills e->timestamp_ms when it is 0.  */
int sr_history_audit_add (struct sr_history *h, struct sr_audit_entry *e, sr_error_t *err);
/* The audit rows that match f (NULL: none), newest first; as
 * sr_history_list.  */
int sr_history_audit_list (struct sr_history *h, const struct sr_audit_filter *f,
                           struct sr_audit_entry **ret, size_t *ret_n, sr_error_t *err);
/* Deletes the audit rows older than before_ms; *ret_deleted (may be NULL)
 * says how many.  */
int sr_history_audit_prune (struct sr_history *h, int64_t before_ms, size_t *ret_deleted,
                            sr_error_t *err);

/* A "since" of a query: an ISO 8601 UTC time ("2026-12-05T01:00:00Z",
 * fractional seconds and a "+00:00" offset allowed, or a date alone), or
 * a whole number of seconds back from now_ms ("3600").  */
int sr_history_parse_since (const char *s, int64_t now_ms, int64_t *ret_ms, sr_error_t *err);

/* "2026-12-03T12:00:00.123Z".  */
char *sr_history_format_time (int64_t ms);

/* The preview of code: valid UTF-8 (invalid bytes and NULs become
 * U+FFFD), its first SR_HISTORY_PREVIEW_MAX characters.  */
char *sr_history_preview (const char *code, size_t len);

#endif
