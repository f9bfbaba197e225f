/* The history in PostgreSQL, for a fleet of servers that share one.
 *
 * libpq is loaded with dlopen at the first open rather than linked: it
 * brings some twenty libraries (GnuTLS, Kerberos, LDAP, ...) that every
 * run of a runner whose history is SQLite would otherwise map and link.
 *
 * The schema is SQLite's (history-sqlite.c), version for version, with a
 * seq column that orders rows added in the same millisecond as SQLite's
 * rowid does; the version is in the table schema_version.  A connection
 * that was lost is made again at the next call, and a call that found it
 * lost is tried once more on the new one, so that writes resume as soon
 * as the database is back.  */
#include <config.h>

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "common/utf8.h"
#include "common/util.h"
#include "store/history-backend.h"

#define PQ_FUNCS(X)                                                                               \
  X (PQconnectdbParams) X (PQstatus) X (PQerrorMessage) X (PQfinish) X (PQreset)                  \
  X (PQexec) X (PQexecParams) X (PQresultStatus) X (PQresultErrorMessage) X (PQclear) X (PQntuples)        \
  X (PQgetvalue) X (PQgetisnull) X (PQcmdTuples) X (PQsetNoticeProcessor)

static struct
{
#define PQ_FIELD(f) __typeof__ (f) *f;
  PQ_FUNCS (PQ_FIELD)
#undef PQ_FIELD
} pq;
static pthread_once_t pq_once = PTHREAD_ONCE_INIT;
static char *pq_problem;  /* why libpq did not load; NULL when it did */

static void
pq_load (void)
{
  void *lib = dlopen ("libpq.so.5", RTLD_NOW | RTLD_LOCAL);

  if (lib == NULL)
    {
      pq_problem = sr_xasprintf ("%s (install libpq5)", dlerror ());
      return;
    }
#define PQ_SYM(f)                                                                                 \
  if ((pq.f = (__typeof__ (pq.f)) dlsym (lib, #f)) == NULL)                                       \
    {                                                                                             \
      pq_problem = sr_xasprintf ("libpq.so.5 has no %s", #f);                                     \
      return;                                                                                     \
    }
  PQ_FUNCS (PQ_SYM)
#undef PQ_SYM
  /* The library stays loaded: the process may open the history again.  */
}

struct db
{
  PGconn *conn;
  bool in_tx;       /* in the migration's transaction: a lost one is not retried */
  char *target;
  char *shown;
};

/* libpq's message on one line: it ends lines with a hint on the next,
 * indented with a tab.  */
static int
pg_error (struct db *h, const char *msg, const char *what, sr_error_t *err)
{
  _cleanup_free_ char *line = sr_xstrdup (msg);
  char *out = line;

  for (const char *p = msg; *p; p++)
    if (!isspace ((unsigned char) *p))
      *out++ = *p;
    else if (out > line && out[-1] != ' ')
      *out++ = ' ';
  while (out > line && out[-1] == ' ')
    out--;
  *out = '\0';
  return sr_error_set_plain (err, "history_unavailable", EIO, "%s: %s: %s", h->shown, what, line);
}

static void
quiet (void *arg, const char *message)
{
  /* NOTICEs ("relation exists, skipping") are not the runner's output.  */
}

/* A live connection, made (again) when there is none.  */
static int
connect_db (struct db *h, sr_error_t *err)
{
  /* Defaults the URI may override: a database down or gone from the
   * network must not stall the runs that record into it for libpq's
   * unbounded defaults (seconds to connect, ms unacknowledged).  */
  const char *const keys[] = { "connect_timeout", "tcp_user_timeout", "dbname", NULL };
  const char *const values[] = { "5", "10000", h->target, NULL };

  if (h->conn && pq.PQstatus (h->conn) == CONNECTION_OK)
    return 0;
  if (h->conn)
    pq.PQreset (h->conn);
  else
    h->conn = pq.PQconnectdbParams (keys, values, 1);
  if (h->conn == NULL)
    return sr_error_set (err, ENOMEM, "%s: connect", h->shown);
  if (pq.PQstatus (h->conn) != CONNECTION_OK)
    return pg_error (h, pq.PQerrorMessage (h->conn), "cannot connect", err);
  pq.PQsetNoticeProcessor (h->conn, quiet, NULL);
  return 0;
}

/* Runs sql with its n text parameters (NULL: SQL NULL; none: sql may be
 * several statements) and returns its result when its status is want;
 * tried once more on a new connection when the connection was found
 * lost outside a transaction.  */
static PGresult *
run (struct db *h, const char *sql, int n, const char *const *params, ExecStatusType want,
     const char *what, sr_error_t *err)
{
  for (int attempt = 0;; attempt++)
    {
      PGresult *res;

      if (connect_db (h, err) < 0)
        return NULL;
      res = n == 0 ? pq.PQexec (h->conn, sql)
                   : pq.PQexecParams (h->conn, sql, n, NULL, params, NULL, NULL, 0);
      if (res && pq.PQresultStatus (res) == want)
        return res;
      if (attempt == 0 && !h->in_tx && pq.PQstatus (h->conn) != CONNECTION_OK)
        {
          pq.PQclear (res);
          continue;
        }
      pg_error (h, res ? pq.PQresultErrorMessage (res) : pq.PQerrorMessage (h->conn), what,
                err);
      pq.PQclear (res);
      return NULL;
    }
}

static int
run_command (struct db *h, const char *sql, const char *what, sr_error_t *err)
{
  PGresult *res = run (h, sql, 0, NULL, PGRES_COMMAND_OK, what, err);

  pq.PQclear (res);
  return res ? 0 : -1;
}

/* Migration N takes the schema from version N to N + 1, as SQLite's.  */
static const char *const migrations[] = {
  "CREATE TABLE runs ("
  "  seq BIGSERIAL NOT NULL,"
  "  id TEXT PRIMARY KEY NOT NULL,"
  "  timestamp_ms BIGINT NOT NULL,"
  "  language TEXT NOT NULL,"
  "  code_preview TEXT,"
  "  code_sha256 TEXT,"
  "  status TEXT NOT NULL,"
  "  exit_code INTEGER NOT NULL,"
  "  duration_ms BIGINT NOT NULL,"
  "  stdout_size BIGINT NOT NULL,"
  "  stderr_size BIGINT NOT NULL,"
  "  session_id TEXT,"
  "  source TEXT NOT NULL);"
  "CREATE INDEX runs_by_time ON runs (timestamp_ms);"
  "CREATE INDEX runs_by_session ON runs (session_id, timestamp_ms);",
  "CREATE TABLE audit ("
  "  seq BIGSERIAL NOT NULL,"
  "  timestamp_ms BIGINT NOT NULL,"
  "  client TEXT NOT NULL,"
  "  machine TEXT NOT NULL,"
  "  tool TEXT NOT NULL,"
  "  status TEXT NOT NULL,"
  "  duration_ms BIGINT NOT NULL,"
  "  args_sha256 TEXT NOT NULL);"
  "CREATE INDEX audit_by_time ON audit (timestamp_ms);"
  "CREATE INDEX audit_by_client ON audit (client, timestamp_ms);",
  "ALTER TABLE runs ADD COLUMN owner TEXT;"
  "CREATE INDEX runs_by_owner ON runs (owner, timestamp_ms);",
};
_Static_assert (SR_ARRAY_SIZE (migrations) == SR_HISTORY_SCHEMA_VERSION,
                "one migration per schema version");

/* The one value of a query that returns one row.  */
static int
query_int (struct db *h, const char *sql, const char *what, int *ret, sr_error_t *err)
{
  PGresult *res = run (h, sql, 0, NULL, PGRES_TUPLES_OK, what, err);

  if (res == NULL)
    return -1;
  *ret = pq.PQntuples (res) == 1 ? atoi (pq.PQgetvalue (res, 0, 0)) : 0;
  pq.PQclear (res);
  return 0;
}

/* The schema version, 0 for a database without our tables.  */
static int
read_version (void *p, int *ret, sr_error_t *err)
{
  struct db *h = p;
  int exists;

  *ret = 0;
  if (query_int (h, "SELECT (to_regclass ('schema_version') IS NOT NULL)::integer",
                 "read the schema version", &exists, err) < 0)
    return -1;
  if (!exists)
    return 0;
  return query_int (h, "SELECT coalesce (max (version), 0) FROM schema_version",
                    "read the schema version", ret, err);
}

/* The others wait for the lock of this transaction, then find the
 * version it reached.  */
static int
schema_lock (void *p, sr_error_t *err)
{
  struct db *h = p;

  if (run_command (h, "BEGIN", "begin the schema migration", err) < 0)
    return -1;
  h->in_tx = true;
  return run_command (h,
                      "SELECT pg_advisory_xact_lock (7321900130);"
                      "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)",
                      "lock the schema", err);
}

static int
schema_apply (void *p, int version, sr_error_t *err)
{
  struct db *h = p;
  char v[16];
  const char *params[] = { v };
  PGresult *res;

  snprintf (v, sizeof v, "%d", version + 1);
  if (run_command (h, migrations[version], "migrate the schema", err) < 0
      || run_command (h, "DELETE FROM schema_version", "record the schema version", err) < 0)
    return -1;
  res = run (h, "INSERT INTO schema_version (version) VALUES ($1::integer)", 1, params,
             PGRES_COMMAND_OK, "record the schema version", err);
  pq.PQclear (res);
  return res ? 0 : -1;
}

static int
schema_commit (void *p, sr_error_t *err)
{
  struct db *h = p;
  int r = run_command (h, "COMMIT", "commit the schema migration", err);

  h->in_tx = false;
  return r;
}

static void
schema_rollback (void *p)
{
  struct db *h = p;

  if (h->in_tx && pq.PQstatus (h->conn) == CONNECTION_OK)
    pq.PQclear (pq.PQexec (h->conn, "ROLLBACK"));
  h->in_tx = false;
}

static const struct sr_history_schema_ops schema_ops = {
  .read_version = read_version,
  .lock = schema_lock,
  .apply = schema_apply,
  .commit = schema_commit,
  .rollback = schema_rollback,
};

static void
db_close (void *p)
{
  struct db *h = p;

  if (h->conn)
    pq.PQfinish (h->conn);
  free (h->target);
  free (h->shown);
  free (h);
}

/* Connects and migrates: a database that is down fails the open, which
 * the service tries again (service.c).  */
static int
db_open (const char *target, const char *shown, void **ret, sr_error_t *err)
{
  struct db *h;

  pthread_once (&pq_once, pq_load);
  if (pq_problem)
    return sr_error_set_plain (err, "history_unavailable", ENOENT,
                               "%s: a PostgreSQL history needs libpq: %s", shown, pq_problem);
  h = sr_xcalloc (1, sizeof *h);
  h->target = sr_xstrdup (target);
  h->shown = sr_xstrdup (shown);
  if (connect_db (h, err) < 0 || sr_history_migrate (&schema_ops, h, shown, err) < 0)
    {
      db_close (h);
      return -1;
    }
  *ret = h;
  return 0;
}

static int
db_add (void *p, const struct sr_history_entry *e, const char *id, int64_t ts, sr_error_t *err)
{
  static const char sql[] =
    "INSERT INTO runs (id, timestamp_ms, language, code_preview, code_sha256, status, exit_code,"
    " duration_ms, stdout_size, stderr_size, session_id, source, owner)"
    " VALUES ($1, $2::bigint, $3, $4, $5, $6, $7::integer, $8::bigint, $9::bigint, $10::bigint,"
    " $11, $12, $13)";
  char t[24], code[16], dur[24], out[24], errsz[24];
  const char *params[] = { id, t, e->language, e->code_preview, e->code_sha256, e->status,
                           code, dur, out, errsz, e->session_id, e->source, e->owner };
  PGresult *res;

  snprintf (t, sizeof t, "%" PRId64, ts);
  snprintf (code, sizeof code, "%d", e->exit_code);
  snprintf (dur, sizeof dur, "%" PRId64, e->duration_ms);
  snprintf (out, sizeof out, "%" PRId64, e->stdout_size);
  snprintf (errsz, sizeof errsz, "%" PRId64, e->stderr_size);
  res = run (p, sql, SR_ARRAY_SIZE (params), params, PGRES_COMMAND_OK, "insert a run", err);
  pq.PQclear (res);
  return res ? 0 : -1;
}

/* NULL stays NULL; text is made valid UTF-8, whoever wrote the row.  */
static char *
text_at (const PGresult *res, int row, int col)
{
  const char *s;

  if (pq.PQgetisnull (res, row, col))
    return NULL;
  s = pq.PQgetvalue (res, row, col);
  return sr_utf8_sanitize (s, strlen (s), NULL);
}

static int64_t
int_at (const PGresult *res, int row, int col)
{
  return strtoll (pq.PQgetvalue (res, row, col), NULL, 10);
}

static int
db_list (void *p, const struct sr_history_filter *f, size_t limit,
         struct sr_history_entry **ret, size_t *ret_n, sr_error_t *err)
{
  static const char sql[] =
    "SELECT id, timestamp_ms, language, code_preview, code_sha256, status, exit_code,"
    " duration_ms, stdout_size, stderr_size, session_id, source, owner FROM runs"
    " WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR language = $2)"
    " AND ($3::text IS NULL OR session_id = $3) AND ($5::text IS NULL OR owner = $5)"
    " ORDER BY timestamp_ms DESC, seq DESC LIMIT $4::bigint";
  char lim[24];
  const char *params[] = { f ? f->status : NULL, f ? f->language : NULL,
                           f ? f->session_id : NULL, lim, f ? f->owner : NULL };
  struct sr_history_entry *v;
  PGresult *res;
  int n;

  snprintf (lim, sizeof lim, "%zu", limit);
  res = run (p, sql, SR_ARRAY_SIZE (params), params, PGRES_TUPLES_OK, "list runs", err);
  if (res == NULL)
    return -1;
  n = pq.PQntuples (res);
  v = n ? sr_xcalloc ((size_t) n, sizeof *v) : NULL;
  for (int i = 0; i < n; i++)
    {
      struct sr_history_entry *e = &v[i];

      snprintf (e->id, sizeof e->id, "%s", pq.PQgetvalue (res, i, 0));
      e->timestamp_ms = int_at (res, i, 1);
      e->language = text_at (res, i, 2);
      e->code_preview = text_at (res, i, 3);
      e->code_sha256 = text_at (res, i, 4);
      e->status = text_at (res, i, 5);
      e->exit_code = (int) int_at (res, i, 6);
      e->duration_ms = int_at (res, i, 7);
      e->stdout_size = int_at (res, i, 8);
      e->stderr_size = int_at (res, i, 9);
      e->session_id = text_at (res, i, 10);
      e->source = text_at (res, i, 11);
      e->owner = text_at (res, i, 12);
    }
  pq.PQclear (res);
  *ret = v;
  *ret_n = (size_t) n;
  return 0;
}

static int
db_audit_add (void *p, const struct sr_audit_entry *e, int64_t ts, sr_error_t *err)
{
  static const char sql[] = "INSERT INTO audit (timestamp_ms, client, machine, tool, status,"
                            " duration_ms, args_sha256)"
                            " VALUES ($1::bigint, $2, $3, $4, $5, $6::bigint, $7)";
  char t[24], dur[24];
  const char *params[] = { t, e->client, e->machine, e->tool, e->status, dur, e->args_sha256 };
  PGresult *res;

  snprintf (t, sizeof t, "%" PRId64, ts);
  snprintf (dur, sizeof dur, "%" PRId64, e->duration_ms);
  res = run (p, sql, SR_ARRAY_SIZE (params), params, PGRES_COMMAND_OK, "record a tool call",
             err);
  pq.PQclear (res);
  return res ? 0 : -1;
}

static int
db_audit_list (void *p, const struct sr_audit_filter *f, size_t limit,
               struct sr_audit_entry **ret, size_t *ret_n, sr_error_t *err)
{
  static const char sql[] =
    "SELECT timestamp_ms, client, machine, tool, status, duration_ms, args_sha256 FROM audit"
    " WHERE ($1::text IS NULL OR client = $1) AND ($2::text IS NULL OR machine = $2)"
    " AND ($3::text IS NULL OR tool = $3) AND ($4::text IS NULL OR status = $4)"
    " AND timestamp_ms >= $5::bigint ORDER BY timestamp_ms DESC, seq DESC LIMIT $6::bigint";
  char since[24], lim[24];
  const char *params[] = { f ? f->client : NULL, f ? f->machine : NULL, f ? f->tool : NULL,
                           f ? f->status : NULL, since, lim };
  struct sr_audit_entry *v;
  PGresult *res;
  int n;

  snprintf (since, sizeof since, "%" PRId64, f ? f->since_ms : 0);
  snprintf (lim, sizeof lim, "%zu", limit);
  res = run (p, sql, SR_ARRAY_SIZE (params), params, PGRES_TUPLES_OK, "list the audit trail",
             err);
  if (res == NULL)
    return -1;
  n = pq.PQntuples (res);
  v = n ? sr_xcalloc ((size_t) n, sizeof *v) : NULL;
  for (int i = 0; i < n; i++)
    {
      struct sr_audit_entry *e = &v[i];

      e->timestamp_ms = int_at (res, i, 0);
      e->client = text_at (res, i, 1);
      e->machine = text_at (res, i, 2);
      e->tool = text_at (res, i, 3);
      e->status = text_at (res, i, 4);
      e->duration_ms = int_at (res, i, 5);
      e->args_sha256 = text_at (res, i, 6);
    }
  pq.PQclear (res);
  *ret = v;
  *ret_n = (size_t) n;
  return 0;
}

static int
db_audit_prune (void *p, int64_t before_ms, size_t *ret_deleted, sr_error_t *err)
{
  char before[24];
  const char *params[] = { before };
  PGresult *res;

  snprintf (before, sizeof before, "%" PRId64, before_ms);
  res = run (p, "DELETE FROM audit WHERE timestamp_ms < $1::bigint", 1, params,
             PGRES_COMMAND_OK, "prune the audit trail", err);
  if (res == NULL)
    return -1;
  *ret_deleted = (size_t) strtoull (pq.PQcmdTuples (res), NULL, 10);
  pq.PQclear (res);
  return 0;
}

const struct sr_history_ops sr_history_pg_ops = {
  .open = db_open,
  .close = db_close,
  .add = db_add,
  .list = db_list,
  .audit_add = db_audit_add,
  .audit_list = db_audit_list,
  .audit_prune = db_audit_prune,
};
