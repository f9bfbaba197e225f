/* The history in SQLite: WAL mode, the schema versioned with PRAGMA
 * user_version, in the file history_db names (see history.h).  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/statedir.h"
#include "common/utf8.h"
#include "common/util.h"
#include "store/history-backend.h"

struct db
{
  sqlite3 *db;
  char *path;
  /* The writes of every run and every call, prepared once (their SQL
   * parsed once per connection, not per row); NULL until first used.  */
  sqlite3_stmt *insert_st, *audit_st;
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
db_error (struct db *h, int rc, const char *what, sr_error_t *err)
{
  return sr_error_set (err, errno_of (h->db, rc), "%s: %s: %s", h->path, what,
                       sqlite3_errmsg (h->db));
}

/* For constant SQL without parameters only.  */
static int
exec_sql (struct db *h, const char *sql, const char *what, sr_error_t *err)
{
  int rc = sqlite3_exec (h->db, sql, NULL, NULL, NULL);

  if (rc != SQLITE_OK)
    return db_error (h, rc, what, err);
  return 0;
}

static void
rollback (struct db *h)
{
  if (!sqlite3_get_autocommit (h->db))
    sqlite3_exec (h->db, "ROLLBACK", NULL, NULL, NULL);
}

static int
prepare (struct db *h, const char *sql, sqlite3_stmt **ret, const char *what,
         sr_error_t *err)
{
  int rc = sqlite3_prepare_v2 (h->db, sql, -1, ret, NULL);

  if (rc != SQLITE_OK)
    return db_error (h, rc, what, err);
  return 0;
}

static int
read_version (void *p, int *ret, sr_error_t *err)
{
  struct db *h = p;
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

/* IMMEDIATE: the write lock, which the other openers wait for.  */
static int
schema_lock (void *p, sr_error_t *err)
{
  return exec_sql (p, "BEGIN IMMEDIATE", "begin the schema migration", err);
}

/* Each migration ends by recording the version it reached.  */
static int
schema_apply (void *p, int version, sr_error_t *err)
{
  return exec_sql (p, migrations[version], "migrate the schema", err);
}

static int
schema_commit (void *p, sr_error_t *err)
{
  return exec_sql (p, "COMMIT", "commit the schema migration", err);
}

static void
schema_rollback (void *p)
{
  rollback (p);
}

static const struct sr_history_schema_ops schema_ops = {
  .read_version = read_version,
  .lock = schema_lock,
  .apply = schema_apply,
  .commit = schema_commit,
  .rollback = schema_rollback,
};

/* Switching a new database to WAL needs it to itself, and SQLite does not
 * wait for that through the busy handler: when other runners are opening
 * it too, try again until the busy timeout.  Once one has switched it,
 * the pragma is a no-op for the others.  */
static int
set_journal_wal (struct db *h, sr_error_t *err)
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

static void
db_close (void *p)
{
  struct db *h = p;

  sqlite3_finalize (h->insert_st);
  sqlite3_finalize (h->audit_st);
  sqlite3_close_v2 (h->db);
  free (h->path);
  free (h);
}

/* The WAL's frames past which a commit truncates it.  */
#define WAL_MAX_FRAMES 256

/* SQLite's own checkpoint after a commit (PASSIVE, past 1000 frames)
 * copies the WAL into the database but leaves it whole, to be reused
 * from its start by the next write of a connection that saw the
 * checkpoint.  A one-shot runner's connection never does: the next
 * runner rebuilds the WAL's index from the file (it lives only while a
 * connection does) and appends after it, so the WAL grew by every run,
 * and every open read it back whole (2.5 MB and 0.6 ms of a cached C++
 * run's 6 after 500 runs, without end).  Past WAL_MAX_FRAMES (1 MiB,
 * some 50 runs) a commit checkpoints and truncates it: three fsyncs
 * shared by those runs, against 0.15 ms of reading back on average.  A
 * reader in the way (a server's listing) is not waited for: the
 * checkpoint copies what it can and the next commit tries again.  */
static int
wal_truncate (void *arg, sqlite3 *db, const char *name, int frames)
{
  (void) arg;
  if (frames >= WAL_MAX_FRAMES)
    {
      sqlite3_busy_timeout (db, 0);
      sqlite3_wal_checkpoint_v2 (db, name, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
      sqlite3_busy_timeout (db, SR_HISTORY_BUSY_TIMEOUT_MS);
    }
  return SQLITE_OK;
}

static int
db_open (const char *path, const char *shown, void **ret, sr_error_t *err)
{
  struct db *h;
  int rc;

  if (create_file (path, err) < 0)
    return -1;
  h = sr_xcalloc (1, sizeof *h);
  h->path = sr_xstrdup (path);
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
      db_close (h);
      return -1;
    }
  sqlite3_extended_result_codes (h->db, 1);
  sqlite3_busy_timeout (h->db, SR_HISTORY_BUSY_TIMEOUT_MS);
  /* A one-shot runner opens the history for one run, and the checkpoint
   * SQLite makes when the last connection closes cost each such run four
   * fsyncs after its result (1 ms here, 20 ms on a busy disk): the WAL
   * stays for the next connection instead, checkpointed as it grows past
   * wal_autocheckpoint, as a server's, whose connection never closes.  A
   * run's record is then as durable as a server's run's: synchronous
   * NORMAL syncs the WAL at checkpoints, so a power loss may take the
   * records since the last one; a crash of the runner takes none.  */
  sqlite3_db_config (h->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
  sqlite3_wal_hook (h->db, wal_truncate, NULL);

  if (set_journal_wal (h, err) < 0
      || exec_sql (h, "PRAGMA synchronous = NORMAL", "set synchronous mode", err) < 0
      || sr_history_migrate (&schema_ops, h, path, err) < 0)
    {
      db_close (h);
      return -1;
    }
  *ret = h;
  return 0;
}

static const char insert_sql[] =
  "INSERT INTO runs (id, timestamp_ms, language, code_preview, code_sha256, status, exit_code,"
  " duration_ms, stdout_size, stderr_size, session_id, source, owner)"
  " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";

/* *st, prepared at its first use and kept for the next (step_kept resets
 * it; each use binds every parameter again).  */
static int
prepared (struct db *h, sqlite3_stmt **st, const char *sql, const char *what, sr_error_t *err)
{
  int rc;

  if (*st)
    return 0;
  rc = sqlite3_prepare_v3 (h->db, sql, -1, SQLITE_PREPARE_PERSISTENT, st, NULL);
  if (rc != SQLITE_OK)
    return db_error (h, rc, what, err);
  return 0;
}

/* Runs st, a kept statement that writes one row, and resets it: one
 * statement outside a transaction is atomic and waits for the other
 * writers through the busy handler, with no BEGIN and COMMIT to parse
 * and run.  */
static int
step_kept (struct db *h, sqlite3_stmt *st, const char *what, sr_error_t *err)
{
  int rc = sqlite3_step (st);
  int r = rc == SQLITE_DONE ? 0 : db_error (h, rc, what, err);

  sqlite3_reset (st);
  return r;
}

static int
insert (struct db *h, const struct sr_history_entry *e, const char *id, int64_t ts,
        sr_error_t *err)
{
  sqlite3_stmt *st;

  if (prepared (h, &h->insert_st, insert_sql, "prepare insert", err) < 0)
    return -1;
  st = h->insert_st;
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
  return step_kept (h, st, "insert a run", err);
}

static int
db_add (void *p, const struct sr_history_entry *e, const char *id, int64_t ts, sr_error_t *err)
{
  return insert (p, e, id, ts, err);
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
db_list (void *p, const struct sr_history_filter *f, size_t limit,
         struct sr_history_entry **ret, size_t *ret_n, sr_error_t *err)
{
  struct db *h = p;
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

      v = sr_history_grow (v, n, &alloc, sizeof *v);
      e = &v[n++];
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

/* Runs st, a statement that returns no row, and finalizes it.  One
 * statement outside a transaction is atomic and waits for the other
 * writers through the busy handler.  */
static int
step_done (struct db *h, sqlite3_stmt *st, const char *what, sr_error_t *err)
{
  int rc = sqlite3_step (st);

  sqlite3_finalize (st);
  if (rc != SQLITE_DONE)
    return db_error (h, rc, what, err);
  return 0;
}

static int
db_audit_add (void *p, const struct sr_audit_entry *e, int64_t ts, sr_error_t *err)
{
  static const char sql[] = "INSERT INTO audit (timestamp_ms, client, machine, tool, status,"
                            " duration_ms, args_sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
  struct db *h = p;
  sqlite3_stmt *st;

  if (prepared (h, &h->audit_st, sql, "prepare the audit insert", err) < 0)
    return -1;
  st = h->audit_st;
  sqlite3_bind_int64 (st, 1, ts);
  sqlite3_bind_text (st, 2, e->client, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 3, e->machine, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 4, e->tool, -1, SQLITE_STATIC);
  sqlite3_bind_text (st, 5, e->status, -1, SQLITE_STATIC);
  sqlite3_bind_int64 (st, 6, e->duration_ms);
  sqlite3_bind_text (st, 7, e->args_sha256, -1, SQLITE_STATIC);
  return step_kept (h, st, "record a tool call", err);
}

static const char audit_select_sql[] =
  "SELECT timestamp_ms, client, machine, tool, status, duration_ms, args_sha256 FROM audit"
  " WHERE (?1 IS NULL OR client = ?1) AND (?2 IS NULL OR machine = ?2)"
  " AND (?3 IS NULL OR tool = ?3) AND (?4 IS NULL OR status = ?4) AND timestamp_ms >= ?5"
  " ORDER BY timestamp_ms DESC, rowid DESC LIMIT ?6";

static int
db_audit_list (void *p, const struct sr_audit_filter *f, size_t limit,
               struct sr_audit_entry **ret, size_t *ret_n, sr_error_t *err)
{
  struct db *h = p;
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

      v = sr_history_grow (v, n, &alloc, sizeof *v);
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

static int
db_audit_prune (void *p, int64_t before_ms, size_t *ret_deleted, sr_error_t *err)
{
  struct db *h = p;
  sqlite3_stmt *st = NULL;

  if (prepare (h, "DELETE FROM audit WHERE timestamp_ms < ?1", &st, "prepare the audit prune",
               err)
      < 0)
    return -1;
  sqlite3_bind_int64 (st, 1, before_ms);
  if (step_done (h, st, "prune the audit trail", err) < 0)
    return -1;
  *ret_deleted = (size_t) sqlite3_changes (h->db);
  return 0;
}

const struct sr_history_ops sr_history_sqlite_ops = {
  .open = db_open,
  .close = db_close,
  .add = db_add,
  .list = db_list,
  .audit_add = db_audit_add,
  .audit_list = db_audit_list,
  .audit_prune = db_audit_prune,
};
