#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/run-result.h"
#include "common/statedir.h"
#include "common/utf8.h"
#include "common/util.h"
#include "store/history.h"

struct sr_history
{
  sqlite3 *db;
  char *path;
  pthread_mutex_t lock;  /* serializes every use of db */
};

/* Migration N takes the schema from version N to N + 1, and ends by
 * recording the version it reached.  Each runs in the transaction that
 * read the old version, so concurrent openers migrate once.  */
static const char *const migrations[] = {
  "CREATE TABLE runs ("
  "  id TEXT PRIMARY KEY NOT NULL,"
  "  timestamp_ms INTEGER NOT NULL,"
  "  language TEXT NOT NULL,"
  "  code_preview TEXT,"
  "  code_sha256 TEXT,"
  "  status TEXT NOT NULL,"
  "  exit_code INTEGER NOT NULL,"
  "  duration_ms INTEGER NOT NULL,"
  "  stdout_size INTEGER NOT NULL,"
  "  stderr_size INTEGER NOT NULL,"
  "  session_id TEXT,"
  "  source TEXT NOT NULL);"
  "CREATE INDEX runs_by_time ON runs (timestamp_ms);"
  "CREATE INDEX runs_by_session ON runs (session_id, timestamp_ms);"
  "PRAGMA user_version = 1;",
  /* 2: the audit trail of MCP tool calls.  */
  "CREATE TABLE audit ("
  "  timestamp_ms INTEGER NOT NULL,"
  "  client TEXT NOT NULL,"
  "  machine TEXT NOT NULL,"
  "  tool TEXT NOT NULL,"
  "  status TEXT NOT NULL,"
  "  duration_ms INTEGER NOT NULL,"
  "  args_sha256 TEXT NOT NULL);"
  "CREATE INDEX audit_by_time ON audit (timestamp_ms);"
  "CREATE INDEX audit_by_client ON audit (client, timestamp_ms);"
  "PRAGMA user_version = 2;",
  /* 3: who ran each run, so that a client of a shared server lists its
   * own runs only.  Earlier rows have none: the administrator's.  */
  "ALTER TABLE runs ADD COLUMN owner TEXT;"
  "CREATE INDEX runs_by_owner ON runs (owner, timestamp_ms);"
  "PRAGMA user_version = 3;",
};
_Static_assert (SR_ARRAY_SIZE (migrations) == SR_HISTORY_SCHEMA_VERSION,
                "one migration per schema version");

/* The errno that best describes a failed SQLite call, 0 when none does.  */
static int
errno_of (sqlite3 *db, int rc)
{
  int sys = db ? sqlite3_system_errno (db) : 0;

  switch (rc & 0xff)
    {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return EBUSY;
    case SQLITE_NOMEM:
      return ENOMEM;
    case SQLITE_FULL:
      return sys ? sys : ENOSPC;
    case SQLITE_IOERR:
      return sys ? sys : EIO;
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return sys;
    default:
      return 0;
    }
}

static int
db_error (struct sr_history *h, int rc, const char *what, sr_error_t *err)
{
  return sr_error_set (err, errno_of (h->db, rc), "%s: %s: %s", h->path, what,
                       sqlite3_errmsg (h->db));
}

/* For constant SQL without parameters only.  */
static int
exec_sql (struct sr_history *h, const char *sql, const char *what, sr_error_t *err)
{
  int rc = sqlite3_exec (h->db, sql, NULL, NULL, NULL);

  if (rc != SQLITE_OK)
    return db_error (h, rc, what, err);
  return 0;
}

static void
rollback (struct sr_history *h)
{
  if (!sqlite3_get_autocommit (h->db))
    sqlite3_exec (h->db, "ROLLBACK", NULL, NULL, NULL);
}

static int
prepare (struct sr_history *h, const char *sql, sqlite3_stmt **ret, const char *what,
         sr_error_t *err)
{
  int rc = sqlite3_prepare_v2 (h->db, sql, -1, ret, NULL);

  if (rc != SQLITE_OK)
    return db_error (h, rc, what, err);
  return 0;
}

static int
read_version (struct sr_history *h, int *ret, sr_error_t *err)
{
  sqlite3_stmt *st = NULL;
  int rc;

  if (prepare (h, "PRAGMA user_version", &st, "read the schema version", err) < 0)
    return -1;
  rc = sqlite3_step (st);
  if (rc != SQLITE_ROW)
    {
      db_error (h, rc, "read the schema version", err);
      sqlite3_finalize (st);
      return -1;
    }
  *ret = sqlite3_column_int (st, 0);
  sqlite3_finalize (st);
  return 0;
}

static int
too_new (struct sr_history *h, int version, sr_error_t *err)
{
  return sr_error_set_plain (err, NULL, ENOTSUP,
                             "%s: the history database has schema version %d, newer than this "
                             "sandbox-runner knows (%d); upgrade sandbox-runner or set history_db "
                             "to another file",
                             h->path, version, SR_HISTORY_SCHEMA_VERSION);
}

static int
migrate (struct sr_history *h, sr_error_t *err)
{
  int version;

  if (read_version (h, &version, err) < 0)
    return -1;
  if (version > SR_HISTORY_SCHEMA_VERSION)
    return too_new (h, version, err);
  if (version == SR_HISTORY_SCHEMA_VERSION)
    return 0;

  /* Another runner may be migrating too: read again under the write lock.  */
  if (exec_sql (h, "BEGIN IMMEDIATE", "begin the schema migration", err) < 0)
    return -1;
  if (read_version (h, &version, err) < 0)
    goto fail;
  if (version > SR_HISTORY_SCHEMA_VERSION)
    {
      too_new (h, version, err);
      goto fail;
    }
  for (; version < SR_HISTORY_SCHEMA_VERSION; version++)
    if (exec_sql (h, migrations[version], "migrate the schema", err) < 0)
      {
        sr_error_wrap (err, "to version %d", version + 1);
        goto fail;
      }
  if (exec_sql (h, "COMMIT", "commit the schema migration", err) < 0)
    goto fail;
  return 0;

fail:
  rollback (h);
  return -1;
}

/* Switching a new database to WAL needs it to itself, and SQLite does not
 * wait for that through the busy handler: when other runners are opening
 * it too, try again until the busy timeout.  Once one has switched it,
 * the pragma is a no-op for the others.  */
static int
set_journal_wal (struct sr_history *h, sr_error_t *err)
{
  const struct timespec pause = { 0, 5 * 1000 * 1000 };
  uint64_t deadline = sr_now_ns () + (uint64_t) SR_HISTORY_BUSY_TIMEOUT_MS * 1000000;
  int rc;

  for (;;)
    {
      sqlite3_stmt *st = NULL;

      if (prepare (h, "PRAGMA journal_mode = WAL", &st, "set WAL mode", err) < 0)
        return -1;
      rc = sqlite3_step (st);
      sqlite3_finalize (st);
      if (rc == SQLITE_ROW || rc == SQLITE_DONE)
        break;
      if ((rc & 0xff) != SQLITE_BUSY || sr_now_ns () >= deadline)
        return db_error (h, rc, "set WAL mode", err);
      nanosleep (&pause, NULL);
    }
  /* A file system without shared memory keeps the rollback journal: the
   * history works the same, only with less concurrency.  */
  return 0;
}

/* Creates the file 0600 (and its directory) before SQLite opens it, which
 * would use 0644.  The fd is closed before sqlite3_open: closing a second
 * fd of the file later would drop SQLite's POSIX locks.  */
static int
create_file (const char *path, sr_error_t *err)
{
  _cleanup_free_ char *dir = sr_xstrdup (path);
  char *slash = strrchr (dir, '/');
  struct stat st;
  int fd;

  if (slash && slash != dir)
    {
      *slash = '\0';
      fd = sr_statedir_open (dir, "history_db", 0, err);
      if (fd < 0)
        return -1;
      close (fd);
    }
  fd = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return sr_error_set (err, errno, "open %s", path);
  if (fstat (fd, &st) < 0)
    {
      int e = errno;

      close (fd);
      return sr_error_set (err, e, "stat %s", path);
    }
  close (fd);
  if (!S_ISREG (st.st_mode))
    return sr_error_set_plain (err, NULL, EINVAL, "%s: not a regular file", path);
  return 0;
}

int
sr_history_open (const char *path, struct sr_history **ret, sr_error_t *err)
{
  struct sr_history *h;
  int rc;

  if (path == NULL || *path == '\0')
    return sr_error_set_plain (err, NULL, EINVAL,
                               "no history database path (history_db is empty)");
  if (create_file (path, err) < 0)
    return -1;

  h = sr_xcalloc (1, sizeof *h);
  h->path = sr_xstrdup (path);
  pthread_mutex_init (&h->lock, NULL);
  rc = sqlite3_open_v2 (path, &h->db,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW
                          | SQLITE_OPEN_NOMUTEX,
                        NULL);
  if (rc != SQLITE_OK)
    {
      if (h->db == NULL)
        sr_error_set (err, ENOMEM, "%s: sqlite3_open", path);
      else
        db_error (h, rc, "open", err);
      sr_history_close (h);
      return -1;
    }
  sqlite3_extended_result_codes (h->db, 1);
  sqlite3_busy_timeout (h->db, SR_HISTORY_BUSY_TIMEOUT_MS);

  if (set_journal_wal (h, err) < 0
      || exec_sql (h, "PRAGMA synchronous = NORMAL", "set synchronous mode", err) < 0
      || migrate (h, err) < 0)
    {
      sr_history_close (h);
      return -1;
    }
  *ret = h;
  return 0;
}

void
sr_history_close (struct sr_history *h)
{
  if (h == NULL)
    return;
  sqlite3_close_v2 (h->db);
  pthread_mutex_destroy (&h->lock);
  free (h->path);
  free (h);
}

void
sr_history_entry_done (struct sr_history_entry *e)
{
  if (e == NULL)
    return;
  free (e->language);
  free (e->code_preview);
  free (e->code_sha256);
  free (e->status);
  free (e->session_id);
  free (e->source);
  free (e->owner);
  memset (e, 0, sizeof *e);
}

void
sr_history_entries_free (struct sr_history_entry *v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    sr_history_entry_done (&v[i]);
  free (v);
}

int
sr_history_check_status (const char *status, sr_error_t *err)
{
  _cleanup_free_ char *names = NULL;

  for (enum sr_code_status s = SR_CODE_SUCCESS; s <= SR_CODE_STATUS_LAST; s++)
    if (status && strcmp (status, sr_code_status_name (s)) == 0)
      return 0;
  for (enum sr_code_status s = SR_CODE_SUCCESS; s <= SR_CODE_STATUS_LAST; s++)
    {
      char *n = sr_xasprintf ("%s%s%s", names ? names : "", names ? ", " : "",
                              sr_code_status_name (s));

      free (names);
      names = n;
    }
  return sr_error_set_plain (err, NULL, EINVAL, "unknown status '%s' (valid: %s)",
                             status ? status : "(null)", names);
}

static int
make_uuid (char out[37], sr_error_t *err)
{
  unsigned char b[16];

  if (sr_random_bytes (b, sizeof b, err) < 0)
    return -1;
  b[6] = (b[6] & 0x0f) | 0x40;  /* version 4 */
  b[8] = (b[8] & 0x3f) | 0x80;  /* variant 10 */
  snprintf (out, 37,
            "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
            b[13], b[14], b[15]);
  return 0;
}

static const char insert_sql[] =
  "INSERT INTO runs (id, timestamp_ms, language, code_preview, code_sha256, status, exit_code,"
  " duration_ms, stdout_size, stderr_size, session_id, source, owner)"
  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";

static int
insert (struct sr_history *h, const struct sr_history_entry *e, const char *id, int64_t ts,
        sr_error_t *err)
{
  sqlite3_stmt *st = NULL;
  int rc;

  if (exec_sql (h, "BEGIN IMMEDIATE", "begin", err) < 0)
    return -1;
  if (prepare (h, insert_sql, &st, "prepare insert", err) < 0)
    goto fail;
  sqlite3_bind_text (st, 1, id, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 2, ts);
  sqlite3_bind_text (st, 3, e->language, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 4, e->code_preview, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 5, e->code_sha256, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 6, e->status, -1, SQLITE_STATIC);
  sqlite3_bind_int (st, 7, e->exit_code);
  sqlite3_bind_int64 (st, 8, e->duration_ms);
  sqlite3_bind_int64 (st, 9, e->stdout_size);
  sqlite3_bind_int64 (st, 10, e->stderr_size);
  sqlite3_bind_text (st, 11, e->session_id, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 12, e->source, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 13, e->owner, -1, SQLITE_STATIC);
  rc = sqlite3_step (st);
  if (rc != SQLITE_DONE)
    {
      db_error (h, rc, "insert a run", err);
      goto fail;
    }
  sqlite3_finalize (st);
  st = NULL;
  if (exec_sql (h, "COMMIT", "commit", err) < 0)
    goto fail;
  return 0;

fail:
  sqlite3_finalize (st);
  rollback (h);
  return -1;
}

int
sr_history_add (struct sr_history *h, struct sr_history_entry *e, sr_error_t *err)
{
  char id[37];
  int64_t ts = e->timestamp_ms ? e->timestamp_ms : sr_now_realtime_ms ();
  int r;

  if (e->language == NULL || e->status == NULL || e->source == NULL)
    return sr_error_set_plain (err, NULL, EINVAL,
                               "%s: a run needs a language, a status and a source", h->path);
  if (sr_history_check_status (e->status, err) < 0)
    return -1;
  if (e->id[0])
    snprintf (id, sizeof id, "%s", e->id);
  else if (make_uuid (id, err) < 0)
    return -1;

  pthread_mutex_lock (&h->lock);
  r = insert (h, e, id, ts, err);
  pthread_mutex_unlock (&h->lock);
  if (r < 0)
    return -1;
  memcpy (e->id, id, sizeof id);
  e->timestamp_ms = ts;
  return 0;
}

/* NULL stays NULL; text is made valid UTF-8, whoever wrote the file.  */
static char *
column_text (sqlite3_stmt *st, int i)
{
  const char *s = (const char *) sqlite3_column_text (st, i);

  if (s == NULL)
    return NULL;
  return sr_utf8_sanitize (s, (size_t) sqlite3_column_bytes (st, i), NULL);
}

static const char select_sql[] =
  "SELECT id, timestamp_ms, language, code_preview, code_sha256, status, exit_code,"
  " duration_ms, stdout_size, stderr_size, session_id, source, owner FROM runs"
  " WHERE (?1 IS NULL OR status = ?1) AND (?2 IS NULL OR language = ?2)"
  " AND (?3 IS NULL OR session_id = ?3) AND (?5 IS NULL OR owner = ?5)"
  " ORDER BY timestamp_ms DESC, rowid DESC LIMIT ?4";

static int
select_runs (struct sr_history *h, const struct sr_history_filter *f, size_t limit,
             struct sr_history_entry **ret, size_t *ret_n, sr_error_t *err)
{
  sqlite3_stmt *st = NULL;
  struct sr_history_entry *v = NULL;
  size_t n = 0, alloc = 0;
  int rc;

  if (prepare (h, select_sql, &st, "prepare select", err) < 0)
    return -1;
  sqlite3_bind_text (st, 1, f ? f->status : NULL, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, f ? f->language : NULL, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 3, f ? f->session_id : NULL, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 4, (sqlite3_int64) limit);
  sqlite3_bind_text (st, 5, f ? f->owner : NULL, -1, SQLITE_STATIC);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      struct sr_history_entry *e;
      const char *id = (const char *) sqlite3_column_text (st, 0);

      if (n == alloc)
        {
          alloc = alloc ? alloc * 2 : 16;
          v = sr_xrealloc (v, alloc * sizeof *v);
        }
      e = &v[n++];
      memset (e, 0, sizeof *e);
      snprintf (e->id, sizeof e->id, "%s", id ? id : "");
      e->timestamp_ms = sqlite3_column_int64 (st, 1);
      e->language = column_text (st, 2);
      e->code_preview = column_text (st, 3);
      e->code_sha256 = column_text (st, 4);
      e->status = column_text (st, 5);
      e->exit_code = sqlite3_column_int (st, 6);
      e->duration_ms = sqlite3_column_int64 (st, 7);
      e->stdout_size = sqlite3_column_int64 (st, 8);
      e->stderr_size = sqlite3_column_int64 (st, 9);
      e->session_id = column_text (st, 10);
      e->source = column_text (st, 11);
      e->owner = column_text (st, 12);
    }
  if (rc != SQLITE_DONE)
    {
      db_error (h, rc, "list runs", err);
      sqlite3_finalize (st);
      sr_history_entries_free (v, n);
      return -1;
    }
  sqlite3_finalize (st);
  if (n == 0)
    {
      free (v);
      v = NULL;
    }
  *ret = v;
  *ret_n = n;
  return 0;
}

int
sr_history_list (struct sr_history *h, const struct sr_history_filter *f,
                 struct sr_history_entry **ret, size_t *ret_n, sr_error_t *err)
{
  size_t limit = f && f->limit ? f->limit : SR_HISTORY_LIMIT_DEFAULT;
  int r;

  if (limit > SR_HISTORY_LIMIT_MAX)
    limit = SR_HISTORY_LIMIT_MAX;
  if (f && f->status && sr_history_check_status (f->status, err) < 0)
    return -1;
  pthread_mutex_lock (&h->lock);
  r = select_runs (h, f, limit, ret, ret_n, err);
  pthread_mutex_unlock (&h->lock);
  return r;
}

char *
sr_history_format_time (int64_t ms)
{
  int64_t sec = ms / 1000, frac = ms % 1000;
  time_t t;
  struct tm tm;
  char buf[64];

  if (frac < 0)
    {
      frac += 1000;
      sec--;
    }
  t = (time_t) sec;
  if (gmtime_r (&t, &tm) == NULL || strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
    return sr_xasprintf ("@%lld", (long long) ms);
  return sr_xasprintf ("%s.%03dZ", buf, (int) frac);
}

char *
sr_history_preview (const char *code, size_t len)
{
  /* A character is at most 4 bytes, and every invalid byte becomes one
   * character: this many bytes hold more than the characters we keep.  */
  size_t take = len < 4 * SR_HISTORY_PREVIEW_MAX + 4 ? len : 4 * SR_HISTORY_PREVIEW_MAX + 4;
  size_t clean_len, chars = 0, i;
  char *s = sr_utf8_sanitize (code ? code : "", code ? take : 0, &clean_len);

  for (i = 0; i < clean_len; i++)
    if (((unsigned char) s[i] & 0xC0) != 0x80 && chars++ == SR_HISTORY_PREVIEW_MAX)
      break;
  s[i] = '\0';
  return s;
}

/* --- the audit trail --- */

void
sr_audit_entry_done (struct sr_audit_entry *e)
{
  if (e == NULL)
    return;
  free (e->client);
  free (e->machine);
  free (e->tool);
  free (e->status);
  free (e->args_sha256);
  memset (e, 0, sizeof *e);
}

void
sr_audit_entries_free (struct sr_audit_entry *v, size_t n)
{
  for (size_t i = 0; v && i < n; i++)
    sr_audit_entry_done (&v[i]);
  free (v);
}

/* Runs st, a statement that returns no row, and finalizes it.  One
 * statement outside a transaction is atomic and waits for the other
 * writers through the busy handler.  h->lock held.  */
static int
step_done (struct sr_history *h, sqlite3_stmt *st, const char *what, sr_error_t *err)
{
  int rc = sqlite3_step (st);

  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    return db_error (h, rc, what, err);
  return 0;
}

int
sr_history_audit_add (struct sr_history *h, struct sr_audit_entry *e, sr_error_t *err)
{
  static const char sql[] = "INSERT INTO audit (timestamp_ms, client, machine, tool, status,"
                            " duration_ms, args_sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
  int64_t ts = e->timestamp_ms ? e->timestamp_ms : sr_now_realtime_ms ();
  sqlite3_stmt *st = NULL;
  int r = -1;

  if (e->client == NULL || e->machine == NULL || e->tool == NULL || e->status == NULL
      || e->args_sha256 == NULL)
    return sr_error_set_plain (err, NULL, EINVAL,
                               "%s: an audit row needs a client, a machine, a tool, a status "
                               "and an arguments digest",
                               h->path);
  pthread_mutex_lock (&h->lock);
  if (prepare (h, sql, &st, "prepare the audit insert", err) == 0)
    {
      sqlite3_bind_int64 (st, 1, ts);
      sqlite3_bind_text (st, 2, e->client, -1, SQLITE_STATIC);
      sqlite3_bind_text (st, 3, e->machine, -1, SQLITE_STATIC);
      sqlite3_bind_text (st, 4, e->tool, -1, SQLITE_STATIC);
      sqlite3_bind_text (st, 5, e->status, -1, SQLITE_STATIC);
      sqlite3_bind_int64 (st, 6, e->duration_ms);
      sqlite3_bind_text (st, 7, e->args_sha256, -1, SQLITE_STATIC);
      r = step_done (h, st, "record a tool call", err);
    }
  pthread_mutex_unlock (&h->lock);
  if (r == 0)
    e->timestamp_ms = ts;
  return r;
}

static const char audit_select_sql[] =
  "SELECT timestamp_ms, client, machine, tool, status, duration_ms, args_sha256 FROM audit"
  " WHERE (?1 IS NULL OR client = ?1) AND (?2 IS NULL OR machine = ?2)"
  " AND (?3 IS NULL OR tool = ?3) AND (?4 IS NULL OR status = ?4) AND timestamp_ms >= ?5"
  " ORDER BY timestamp_ms DESC, rowid DESC LIMIT ?6";

static int
select_audit (struct sr_history *h, const struct sr_audit_filter *f, size_t limit,
              struct sr_audit_entry **ret, size_t *ret_n, sr_error_t *err)
{
  sqlite3_stmt *st = NULL;
  struct sr_audit_entry *v = NULL;
  size_t n = 0, alloc = 0;
  int rc;

  if (prepare (h, audit_select_sql, &st, "prepare the audit select", err) < 0)
    return -1;
  sqlite3_bind_text (st, 1, f ? f->client : NULL, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 2, f ? f->machine : NULL, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 3, f ? f->tool : NULL, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 4, f ? f->status : NULL, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 5, f ? f->since_ms : 0);
  sqlite3_bind_int64 (st, 6, (sqlite3_int64) limit);
  while ((rc = sqlite3_step (st)) == SQLITE_ROW)
    {
      struct sr_audit_entry *e;

      if (n == alloc)
        {
          alloc = alloc ? alloc * 2 : 16;
          v = sr_xrealloc (v, alloc * sizeof *v);
        }
      e = &v[n++];
      e->timestamp_ms = sqlite3_column_int64 (st, 0);
      e->client = column_text (st, 1);
      e->machine = column_text (st, 2);
      e->tool = column_text (st, 3);
      e->status = column_text (st, 4);
      e->duration_ms = sqlite3_column_int64 (st, 5);
      e->args_sha256 = column_text (st, 6);
    }
  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    {
      sr_audit_entries_free (v, n);
      return db_error (h, rc, "list the audit trail", err);
    }
  if (n == 0)
    {
      free (v);
      v = NULL;
    }
  *ret = v;
  *ret_n = n;
  return 0;
}

int
sr_history_audit_list (struct sr_history *h, const struct sr_audit_filter *f,
                       struct sr_audit_entry **ret, size_t *ret_n, sr_error_t *err)
{
  size_t limit = f && f->limit ? f->limit : SR_AUDIT_LIMIT_DEFAULT;
  int r;

  if (limit > SR_AUDIT_LIMIT_MAX)
    limit = SR_AUDIT_LIMIT_MAX;
  pthread_mutex_lock (&h->lock);
  r = select_audit (h, f, limit, ret, ret_n, err);
  pthread_mutex_unlock (&h->lock);
  return r;
}

int
sr_history_audit_prune (struct sr_history *h, int64_t before_ms, size_t *ret_deleted,
                        sr_error_t *err)
{
  sqlite3_stmt *st = NULL;
  int r = -1;

  pthread_mutex_lock (&h->lock);
  if (prepare (h, "DELETE FROM audit WHERE timestamp_ms < ?1", &st, "prepare the audit prune",
               err)
      == 0)
    {
      sqlite3_bind_int64 (st, 1, before_ms);
      r = step_done (h, st, "prune the audit trail", err);
      if (r == 0 && ret_deleted)
        *ret_deleted = (size_t) sqlite3_changes (h->db);
    }
  pthread_mutex_unlock (&h->lock);
  return r;
}

int
sr_history_parse_since (const char *s, int64_t now_ms, int64_t *ret_ms, sr_error_t *err)
{
  struct tm tm = { 0 };
  const char *p;
  char *end;
  long long secs;
  int ms = 0;

  if (s == NULL || *s == '\0')
    goto bad;
  if (*s >= '0' && *s <= '9' && strchr (s, '-') == NULL)
    {
      errno = 0;
      secs = strtoll (s, &end, 10);
      if (errno || *end || secs > now_ms / 1000)
        goto bad;
      *ret_ms = now_ms - (int64_t) secs * 1000;
      return 0;
    }
  p = strptime (s, "%Y-%m-%d", &tm);
  if (p == NULL)
    goto bad;
  if (*p == 'T' || *p == ' ')
    {
      p = strptime (p + 1, "%H:%M:%S", &tm);
      if (p == NULL)
        goto bad;
      if (*p == '.')
        {
          int digits = 0;

          for (p++; *p >= '0' && *p <= '9'; p++, digits++)
            if (digits < 3)
              ms = ms * 10 + (*p - '0');
          if (digits == 0)
            goto bad;
          for (; digits < 3; digits++)
            ms *= 10;
        }
      if (*p == 'Z')
        p++;
      else if (strcmp (p, "+00:00") == 0)
        p += 6;
    }
  if (*p)
    goto bad;
  *ret_ms = (int64_t) timegm (&tm) * 1000 + ms;
  return 0;

bad:
  return sr_error_set_plain (err, NULL, EINVAL,
                             "invalid since '%s': expected an ISO 8601 UTC time "
                             "(2026-12-05T01:00:00Z) or a number of seconds back",
                             s ? s : "");
}
