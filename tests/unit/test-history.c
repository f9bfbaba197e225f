#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "common/util.h"
#include "sandbox/service.h"
#include "store/history.h"
#include "tap.h"

static char dir[] = "/tmp/sr-test-history-XXXXXX";

static int
add (struct sr_history *h, const char *lang, const char *status, int64_t ts, const char *session)
{
  struct sr_history_entry e = { .timestamp_ms = ts, .exit_code = 0, .duration_ms = 12 };
  sr_error_t err = NULL;
  int r;

  e.language = sr_xstrdup (lang);
  e.status = sr_xstrdup (status);
  e.source = sr_xstrdup ("cli");
  e.code_preview = sr_xasprintf ("print(%lld)", (long long) ts);
  e.code_sha256 = sr_xstrdup ("sha256:00");
  e.session_id = session ? sr_xstrdup (session) : NULL;
  r = sr_history_add (h, &e, &err);
  if (r < 0)
    {
      printf ("# add: %s\n", err->msg);
      sr_error_free (&err);
    }
  sr_history_entry_done (&e);
  return r;
}

static size_t
count (struct sr_history *h, const struct sr_history_filter *f)
{
  struct sr_history_entry *v = NULL;
  size_t n = 0;
  sr_error_t err = NULL;

  if (sr_history_list (h, f, &v, &n, &err) < 0)
    {
      printf ("# list: %s\n", err->msg);
      sr_error_free (&err);
      return (size_t) -1;
    }
  sr_history_entries_free (v, n);
  return n;
}

static void
check_preview (const char *code, size_t len, size_t want_len, const char *name)
{
  _cleanup_free_ char *p = sr_history_preview (code, len);

  is_int (strlen (p), want_len, name);
}

static size_t
utf8_chars (const char *p)
{
  size_t n = 0;

  for (; *p; p++)
    n += ((unsigned char) *p & 0xC0) != 0x80;
  return n;
}

static void
test_preview (void)
{
  char buf[4096];
  _cleanup_free_ char *p = NULL;

  memset (buf, 'a', sizeof buf);
  check_preview (buf, 700, 500, "preview: 700 ASCII characters keep 500");
  check_preview (buf, 10, 10, "preview: short code is kept whole");
  check_preview ("", 0, 0, "preview: empty code");
  check_preview (buf, 500, 500, "preview: exactly 500 characters are kept whole");

  for (int i = 0; i < 600; i++)
    memcpy (buf + 3 * i, "\xe2\x82\xac", 3);  /* € */
  p = sr_history_preview (buf, 1800);
  ok (utf8_chars (p) == 500 && strlen (p) == 1500, "preview: 500 three-byte characters, whole");
  free (p);
  for (int i = 0; i < 600; i++)
    memcpy (buf + 4 * i, "\xf0\x9f\x98\x80", 4);  /* 😀 */
  p = sr_history_preview (buf, 2400);
  ok (utf8_chars (p) == 500 && strlen (p) == 2000, "preview: 500 four-byte characters, whole");
  free (p);

  p = sr_history_preview ("a\xff" "b\0c", 5);
  is_str (p, "a\xef\xbf\xbd" "b\xef\xbf\xbd" "c", "preview: invalid bytes and NULs become U+FFFD");
  free (p);
  memset (buf, '\xff', sizeof buf);
  p = sr_history_preview (buf, 3000);
  ok (utf8_chars (p) == 500 && strlen (p) == 1500, "preview: invalid bytes count as one character each");
  free (p);
  p = NULL;
}

static void
test_format_time (void)
{
  _cleanup_free_ char *a = sr_history_format_time (1796299200123LL);
  _cleanup_free_ char *b = sr_history_format_time (0);
  _cleanup_free_ char *c = sr_history_format_time (-1);

  is_str (a, "2026-12-03T12:00:00.123Z", "format_time: ISO 8601 UTC with ms");
  is_str (b, "1970-01-01T00:00:00.000Z", "format_time: the epoch");
  is_str (c, "1969-12-31T23:59:59.999Z", "format_time: before the epoch");
}

static void
test_from_code (void)
{
  struct sr_code_request req = { .language = "python", .code = "print(1)\n", .code_len = 9 };
  struct sr_code_result res = { .status = SR_CODE_ERROR, .duration_ms = 42 };
  struct sr_history_entry e;

  res.run.signal = 9;
  res.run.out.total = 100;
  res.run.err.total = 7;
  sr_service_history_entry (&e, &req, &res, "mcp");
  is_str (e.language, "python", "from_code: language");
  is_str (e.code_preview, "print(1)\n", "from_code: preview");
  is_str (e.code_sha256, "sha256:cc42155088fca5730758db72b2a5bca33112a941dfaa2d43098ec422ce4ea213",
          "from_code: sha256 of the code");
  is_str (e.status, "error", "from_code: status name");
  is_int (e.exit_code, 137, "from_code: a signal is 128+N");
  is_int (e.duration_ms, 42, "from_code: duration");
  is_int (e.stdout_size, 100, "from_code: stdout size");
  is_int (e.stderr_size, 7, "from_code: stderr size");
  is_str (e.source, "mcp", "from_code: source");
  ok (e.session_id == NULL && e.id[0] == '\0' && e.timestamp_ms == 0,
      "from_code: no session, id or time yet");
  sr_history_entry_done (&e);
}

struct writer
{
  struct sr_history *shared;  /* NULL: open a handle of its own */
  const char *path;
  int failures;
};

static void *
writer_main (void *arg)
{
  struct writer *w = arg;
  struct sr_history *h = w->shared;
  sr_error_t err = NULL;

  if (h == NULL && sr_history_open (w->path, &h, &err) < 0)
    {
      printf ("# open: %s\n", err->msg);
      sr_error_free (&err);
      w->failures = 25;
      return NULL;
    }
  for (int i = 0; i < 25; i++)
    if (add (h, "cpp", "success", 0, "threads") < 0)
      w->failures++;
  if (w->shared == NULL)
    sr_history_close (h);
  return NULL;
}

static void
test_threads (const char *path, struct sr_history *shared)
{
  pthread_t t[8];
  struct writer w[8];
  struct sr_history_filter f = { .session_id = "threads", .limit = 1000 };
  int failures = 0;

  for (int i = 0; i < 8; i++)
    {
      w[i] = (struct writer) { .shared = i < 4 ? shared : NULL, .path = path };
      pthread_create (&t[i], NULL, writer_main, &w[i]);
    }
  for (int i = 0; i < 8; i++)
    {
      pthread_join (t[i], NULL);
      failures += w[i].failures;
    }
  is_int (failures, 0, "threads: 200 concurrent adds, shared and own handles, none fails");
  is_int (count (shared, &f), 200, "threads: all 200 are recorded");
}

static int
audit_add (struct sr_history *h, const char *client, const char *machine, const char *tool,
           const char *status, int64_t ts)
{
  struct sr_audit_entry e = { .timestamp_ms = ts, .duration_ms = 3 };
  sr_error_t err = NULL;
  int r;

  e.client = sr_xstrdup (client);
  e.machine = sr_xstrdup (machine);
  e.tool = sr_xstrdup (tool);
  e.status = sr_xstrdup (status);
  e.args_sha256 = sr_xstrdup ("sha256:00");
  r = sr_history_audit_add (h, &e, &err);
  if (r < 0)
    {
      printf ("# audit add: %s\n", err->msg);
      sr_error_free (&err);
    }
  sr_audit_entry_done (&e);
  return r;
}

static size_t
audit_count (struct sr_history *h, const struct sr_audit_filter *f)
{
  struct sr_audit_entry *v = NULL;
  size_t n = 0;
  sr_error_t err = NULL;

  if (sr_history_audit_list (h, f, &v, &n, &err) < 0)
    {
      printf ("# audit list: %s\n", err->msg);
      sr_error_free (&err);
      return (size_t) -1;
    }
  sr_audit_entries_free (v, n);
  return n;
}

/* The audit trail: filters, order, retention.  */
static void
test_audit (struct sr_history *h)
{
  struct sr_audit_filter f = { 0 };
  struct sr_audit_entry *v = NULL;
  size_t n = 0, deleted = 0;
  sr_error_t err = NULL;

  ok (audit_add (h, "stdio", "", "run_code", "ok", 1000) == 0, "audit: add a call");
  audit_add (h, "stdio", "s1", "file_read", "ok", 2000);
  audit_add (h, "client:aa", "s1", "file_write", "lint_failed", 3000);
  audit_add (h, "client:bb", "s2", "file_write", "ok", 4000);
  ok (sr_history_audit_list (h, NULL, &v, &n, &err) == 0 && n == 4, "audit: list every call");
  if (n == 4)
    {
      ok (v[0].timestamp_ms == 4000 && v[3].timestamp_ms == 1000, "audit: newest first");
      is_str (v[1].status, "lint_failed", "audit: the status comes back");
      is_str (v[1].client, "client:aa", "audit: the client comes back");
      is_str (v[3].machine, "", "audit: no machine is empty");
    }
  sr_audit_entries_free (v, n);
  f = (struct sr_audit_filter) { .tool = "file_write" };
  is_int (audit_count (h, &f), 2, "audit filter: tool");
  f = (struct sr_audit_filter) { .machine = "s1" };
  is_int (audit_count (h, &f), 2, "audit filter: machine");
  f = (struct sr_audit_filter) { .status = "ok", .client = "stdio" };
  is_int (audit_count (h, &f), 2, "audit filter: status and client");
  f = (struct sr_audit_filter) { .since_ms = 2000 };
  is_int (audit_count (h, &f), 3, "audit filter: since");
  f = (struct sr_audit_filter) { .limit = 1 };
  is_int (audit_count (h, &f), 1, "audit filter: limit");

  ok (sr_history_audit_prune (h, 2500, &deleted, &err) == 0 && deleted == 2,
      "audit: prune deletes the rows older than its time");
  is_int (audit_count (h, NULL), 2, "audit: and keeps the newer ones");
}

static void
test_since (void)
{
  int64_t ms = 0;
  sr_error_t err = NULL;

  ok (sr_history_parse_since ("2026-12-05T01:00:00Z", 0, &ms, NULL) == 0
        && ms == 1796432400000LL, "since: ISO 8601 with Z");
  ok (sr_history_parse_since ("2026-12-05T01:00:00.250+00:00", 0, &ms, NULL) == 0
        && ms == 1796432400250LL, "since: fractional seconds and +00:00");
  ok (sr_history_parse_since ("2026-12-05", 0, &ms, NULL) == 0 && ms == 1796428800000LL,
      "since: a date alone is its midnight UTC");
  ok (sr_history_parse_since ("3600", 10000000, &ms, NULL) == 0 && ms == 10000000 - 3600000,
      "since: a number is seconds back");
  ok (sr_history_parse_since ("yesterday", 0, &ms, &err) < 0 && err
        && strstr (err->msg, "yesterday"), "since: anything else is refused, named");
  sr_error_free (&err);
  ok (sr_history_parse_since ("2026-12-05T01:00:00+02:00", 0, &ms, NULL) < 0,
      "since: an offset other than UTC is refused");
}

/* Runs carry who ran them; a filter by owner lists that owner's only,
 * none lists everyone's.  */
static void
test_owner (void)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/owners.db", dir);
  struct sr_history *h = NULL;
  struct sr_history_filter mine = { .owner = "token:aaaa" };
  struct sr_history_filter theirs = { .owner = "token:bbbb" };
  struct sr_history_entry *v = NULL;
  size_t n = 0;
  sr_error_t err = NULL;

  if (!ok (sr_history_open (path, &h, &err) == 0, "owners: open"))
    return;
  for (int i = 0; i < 3; i++)
    {
      struct sr_history_entry e = { .exit_code = 0 };

      e.language = sr_xstrdup ("python");
      e.status = sr_xstrdup ("success");
      e.source = sr_xstrdup ("mcp");
      e.owner = i == 0 ? sr_xstrdup ("token:aaaa") : i == 1 ? sr_xstrdup ("token:bbbb") : NULL;
      ok (sr_history_add (h, &e, &err) == 0, "owners: run %d added", i);
      sr_history_entry_done (&e);
    }
  is_int (count (h, &mine), 1, "an owner lists its own run only");
  is_int (count (h, &theirs), 1, "and another owner its own");
  is_int (count (h, NULL), 3, "no owner in the filter lists every run");
  if (sr_history_list (h, &mine, &v, &n, &err) == 0 && n == 1)
    is_str (v[0].owner, "token:aaaa", "a listed run says who ran it");
  sr_history_entries_free (v, n);
  sr_history_close (h);
}

/* The insert of a run is prepared once and kept: a row it refuses (an id
 * already there) leaves nothing behind and the next row goes in.  */
static void
test_kept_insert (void)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/kept.db", dir);
  struct sr_history *h = NULL;
  sr_error_t err = NULL;
  char first[37] = "";

  if (!ok (sr_history_open (path, &h, &err) == 0, "kept insert: open"))
    return;
  for (int i = 0; i < 3; i++)
    {
      struct sr_history_entry e = { .exit_code = i };
      int r;

      e.language = sr_xstrdup ("python");
      e.status = sr_xstrdup ("success");
      e.source = sr_xstrdup ("mcp");
      if (i == 1)
        memcpy (e.id, first, sizeof e.id);
      r = sr_history_add (h, &e, &err);
      if (i == 0)
        {
          ok (r == 0, "kept insert: a first run is added");
          memcpy (first, e.id, sizeof first);
        }
      else if (i == 1)
        {
          ok (r < 0 && err && strstr (err->msg, "insert a run"),
              "kept insert: a run with an id already there is refused, saying so");
          sr_error_free (&err);
        }
      else
        ok (r == 0, "kept insert: the next run is added after the refusal");
      sr_history_entry_done (&e);
    }
  is_int (count (h, NULL), 2, "kept insert: the refused run left no row");
  sr_history_close (h);
}

/* A database of schema version 1 (before the audit trail) keeps its runs
 * and gains the audit table.  */
static void
test_migrate_v1 (void)
{
  _cleanup_free_ char *old = sr_xasprintf ("%s/v1.db", dir);
  struct sr_history *h = NULL;
  sr_error_t err = NULL;
  sqlite3 *db;

  sqlite3_open (old, &db);
  sqlite3_exec (db,
                "CREATE TABLE runs (id TEXT PRIMARY KEY NOT NULL, timestamp_ms INTEGER NOT NULL,"
                " language TEXT NOT NULL, code_preview TEXT, code_sha256 TEXT,"
                " status TEXT NOT NULL, exit_code INTEGER NOT NULL, duration_ms INTEGER NOT NULL,"
                " stdout_size INTEGER NOT NULL, stderr_size INTEGER NOT NULL, session_id TEXT,"
                " source TEXT NOT NULL);"
                "INSERT INTO runs VALUES ('r1', 1, 'python', 'x', NULL, 'success', 0, 1, 0, 0,"
                " NULL, 'cli');"
                "PRAGMA user_version = 1;",
                NULL, NULL, NULL);
  sqlite3_close (db);
  if (!ok (sr_history_open (old, &h, &err) == 0, "a version 1 database opens"))
    {
      printf ("# %s\n", err->msg);
      sr_error_free (&err);
      return;
    }
  is_int (count (h, NULL), 1, "migrated: its runs are kept");
  ok (audit_add (h, "stdio", "", "run_code", "ok", 5) == 0, "migrated: it takes audit rows");
  sr_history_close (h);
}

/* One-shot runners (a connection per run, no checkpoint when it closes)
 * leave a WAL the next one reads back whole on open: it stays bounded
 * near 256 frames, where it once grew by every run.  */
static void
test_wal_bounded (void)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/oneshot.db", dir);
  _cleanup_free_ char *wal = sr_xasprintf ("%s-wal", path);
  struct sr_history *h = NULL;
  sr_error_t err = NULL;
  struct stat st;
  int added = 0;

  for (int i = 0; i < 150; i++)
    {
      if (sr_history_open (path, &h, &err) < 0)
        {
          printf ("# open: %s\n", err->msg);
          sr_error_free (&err);
          break;
        }
      added += add (h, "cpp", "success", 1000 + i, NULL) == 0;
      sr_history_close (h);
    }
  is_int (added, 150, "one-shot: 150 runs added, a connection each");
  ok (stat (wal, &st) == 0, "one-shot: the WAL stays after the last close");
  /* A page is a frame of 24 + 4096 bytes; a run writes a few pages.  */
  ok (st.st_size <= 300 * (24 + 4096), "one-shot: the WAL is bounded (%lld bytes)",
      (long long) st.st_size);
}

int
main (void)
{
  _cleanup_free_ char *path = NULL, *newer = NULL, *junk = NULL, *parent = NULL;
  struct sr_history *h = NULL;
  struct sr_history_entry *v = NULL;
  struct sr_history_filter f = { 0 };
  size_t n = 0;
  sr_error_t err = NULL;
  struct stat st;
  sqlite3 *db;

  if (mkdtemp (dir) == NULL)
    return 1;
  test_preview ();
  test_format_time ();
  test_from_code ();
  test_since ();
  test_migrate_v1 ();
  test_owner ();
  test_kept_insert ();
  test_wal_bounded ();

  parent = sr_xasprintf ("%s/a/b", dir);
  path = sr_xasprintf ("%s/history.db", parent);
  if (!ok (sr_history_open (path, &h, &err) == 0, "open creates the database"))
    {
      printf ("# %s\n", err->msg);
      return 1;
    }
  ok (stat (path, &st) == 0 && (st.st_mode & 0777) == 0600, "the file is 0600");
  ok (stat (parent, &st) == 0 && S_ISDIR (st.st_mode) && (st.st_mode & 0777) == 0700,
      "its missing directory is created 0700");

  test_audit (h);
  ok (add (h, "python", "success", 1000, NULL) == 0, "add a run");
  add (h, "cpp", "error", 2000, NULL);
  add (h, "python", "timeout", 3000, NULL);
  add (h, "python", "success", 4000, "sess-1");
  add (h, "cpp", "compile_error", 5000, "sess-1");

  ok (sr_history_list (h, NULL, &v, &n, &err) == 0, "list without a filter");
  is_int (n, 5, "list: every run");
  if (n == 5)
    {
      ok (v[0].timestamp_ms == 5000 && v[4].timestamp_ms == 1000, "list: newest first");
      is_str (v[0].status, "compile_error", "list: the status comes back");
      is_str (v[0].session_id, "sess-1", "list: the session comes back");
      ok (v[4].session_id == NULL, "list: no session is NULL");
      is_str (v[4].code_preview, "print(1000)", "list: the preview comes back");
      is_str (v[4].source, "cli", "list: the source comes back");
      is_int (v[4].duration_ms, 12, "list: the duration comes back");
      is_int (strlen (v[0].id), 36, "add fills a 36-character id");
      ok (v[0].id[14] == '4' && strchr ("89ab", v[0].id[19]) != NULL, "the id is a UUID v4");
      ok (strcmp (v[0].id, v[1].id) != 0, "ids differ");
    }
  sr_history_entries_free (v, n);
  v = NULL;

  f = (struct sr_history_filter) { .status = "success" };
  is_int (count (h, &f), 2, "filter: status");
  f = (struct sr_history_filter) { .language = "cpp" };
  is_int (count (h, &f), 2, "filter: language");
  f = (struct sr_history_filter) { .session_id = "sess-1" };
  is_int (count (h, &f), 2, "filter: session");
  f = (struct sr_history_filter) { .language = "python", .status = "success" };
  is_int (count (h, &f), 2, "filter: language and status");
  f = (struct sr_history_filter) { .language = "python", .session_id = "sess-1" };
  is_int (count (h, &f), 1, "filter: language and session");
  f = (struct sr_history_filter) { .status = "oom" };
  is_int (count (h, &f), 0, "filter: a status with no runs");

  f = (struct sr_history_filter) { .status = "bogus" };
  ok (sr_history_list (h, &f, &v, &n, &err) < 0, "filter: an unknown status is refused");
  if (err)
    {
      ok (err->errnum == EINVAL && strstr (err->msg, "unknown status 'bogus'")
            && strstr (err->msg, "success, error, timeout, compile_error, oom, cancelled"),
          "listing the valid ones");
      printf ("# %s\n", err->msg);
      sr_error_free (&err);
    }
  {
    struct sr_history_entry e = { 0 };

    e.language = sr_xstrdup ("python");
    e.status = sr_xstrdup ("weird");
    e.source = sr_xstrdup ("cli");
    ok (sr_history_add (h, &e, &err) < 0 && err && err->errnum == EINVAL,
        "add: an unknown status is refused");
    sr_error_free (&err);
    free (e.source);
    e.source = NULL;
    free (e.status);
    e.status = sr_xstrdup ("success");
    ok (sr_history_add (h, &e, &err) < 0 && err && strstr (err->msg, path),
        "add: a run without a source is refused, naming the file");
    sr_error_free (&err);
    ok (e.id[0] == '\0' && e.timestamp_ms == 0, "add: a refused entry is left as it was");
    sr_history_entry_done (&e);
  }

  /* The same millisecond: the later add comes first.  */
  add (h, "tie", "success", 9000, NULL);
  add (h, "tie", "error", 9000, NULL);
  f = (struct sr_history_filter) { .language = "tie" };
  if (sr_history_list (h, &f, &v, &n, &err) == 0 && n == 2)
    is_str (v[0].status, "error", "order: ties go by insertion, newest first");
  else
    ok (0, "order: ties go by insertion, newest first");
  sr_history_entries_free (v, n);
  v = NULL;

  for (int i = 0; i < 30; i++)
    add (h, "many", "success", 0, NULL);
  f = (struct sr_history_filter) { .language = "many" };
  is_int (count (h, &f), SR_HISTORY_LIMIT_DEFAULT, "limit: 20 by default");
  f.limit = 5;
  is_int (count (h, &f), 5, "limit: as asked");
  f.limit = 100000;
  is_int (count (h, &f), 30, "limit: a huge limit is capped, not refused");

  test_threads (path, h);

  sr_history_close (h);
  h = NULL;
  ok (sr_history_open (path, &h, &err) == 0, "reopen");
  f = (struct sr_history_filter) { .limit = 1000 };
  is_int (count (h, &f), 5 + 2 + 30 + 200, "reopen: the rows are kept");
  sr_history_close (h);
  h = NULL;

  ok (sqlite3_open (path, &db) == SQLITE_OK, "the file is SQLite");
  {
    sqlite3_stmt *q = NULL;

    sqlite3_prepare_v2 (db, "PRAGMA journal_mode", -1, &q, NULL);
    ok (sqlite3_step (q) == SQLITE_ROW
          && strcmp ((const char *) sqlite3_column_text (q, 0), "wal") == 0,
        "in WAL mode");
    sqlite3_finalize (q);
    sqlite3_prepare_v2 (db, "PRAGMA user_version", -1, &q, NULL);
    ok (sqlite3_step (q) == SQLITE_ROW && sqlite3_column_int (q, 0) == SR_HISTORY_SCHEMA_VERSION,
        "at schema version %d", SR_HISTORY_SCHEMA_VERSION);
    sqlite3_finalize (q);
  }
  sqlite3_close (db);

  newer = sr_xasprintf ("%s/newer.db", dir);
  sqlite3_open (newer, &db);
  sqlite3_exec (db, "PRAGMA user_version = 99", NULL, NULL, NULL);
  sqlite3_close (db);
  ok (sr_history_open (newer, &h, &err) < 0, "a database of schema version 99 is refused");
  if (err)
    {
      ok (strstr (err->msg, newer) && strstr (err->msg, "schema version 99")
            && strstr (err->msg, "newer than this sandbox-runner knows (3)"),
          "with a message naming the file and both versions");
      printf ("# %s\n", err->msg);
      sr_error_free (&err);
    }
  ok (h == NULL, "and no handle");

  junk = sr_xasprintf ("%s/junk.db", dir);
  {
    FILE *jf = fopen (junk, "w");

    for (int i = 0; i < 200; i++)
      fputs ("this is not a database\n", jf);
    fclose (jf);
  }
  ok (sr_history_open (junk, &h, &err) < 0, "a file that is not SQLite is refused");
  if (err)
    {
      ok (strstr (err->msg, junk) && strstr (err->msg, "not a database"),
          "with SQLite's message and the file");
      printf ("# %s\n", err->msg);
      sr_error_free (&err);
    }

  {
    _cleanup_free_ char *cmd = sr_xasprintf ("rm -rf '%s'", dir);

    if (system (cmd) != 0)
      printf ("# could not remove %s\n", dir);
  }
  return done_testing ();
}
