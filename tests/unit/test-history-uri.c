/* Which store history_db names, and how it is shown without a password.  */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/history.h"
#include "tap.h"

static void
kind (const char *db, enum sr_history_kind want, const char *label)
{
  ok (sr_history_kind_of (db) == want, "%s (%s) is %s", label, db ? db : "NULL",
      want == SR_HISTORY_POSTGRESQL ? "PostgreSQL" : "SQLite");
}

static void
shown (const char *db, const char *want, const char *label)
{
  _cleanup_free_ char *s = sr_history_display (db);

  is_str (s, want, label);
}

/* A PostgreSQL history_db that does not answer: the open fails with an
 * error that names it, without its password.  */
static void
unreachable (const char *db, const char *want_in_msg)
{
  struct sr_history *h = NULL;
  sr_error_t err = NULL;

  ok (sr_history_open (db, &h, &err) < 0 && h == NULL, "a database that does not answer fails");
  ok (err && strstr (err->msg, want_in_msg), "the error names it: %s", err ? err->msg : "");
  ok (err && strstr (err->msg, "s3cret") == NULL, "and never its password");
  ok (err && strpbrk (err->msg, "\n\t") == NULL, "on one line");
  is_str (sr_error_code (err), "history_unavailable", "its code is history_unavailable");
  sr_error_free (&err);
}

int
main (void)
{
  kind ("postgresql://runner@db1/runs", SR_HISTORY_POSTGRESQL, "a postgresql URI");
  kind ("postgres://db1:5433/runs?sslmode=require", SR_HISTORY_POSTGRESQL, "a postgres URI");
  kind ("host=/run/postgresql dbname=runs", SR_HISTORY_POSTGRESQL, "a conninfo");
  kind ("dbname = runs", SR_HISTORY_POSTGRESQL, "a conninfo with spaces around =");
  kind ("/var/lib/sandbox-runner/history.db", SR_HISTORY_SQLITE, "an absolute path");
  kind ("history.db", SR_HISTORY_SQLITE, "a relative path");
  kind ("./host=x.db", SR_HISTORY_SQLITE, "a path that has '=' after a slash");
  kind ("Host=x", SR_HISTORY_SQLITE, "an uppercase word is no conninfo keyword");
  kind ("postgresql:/x", SR_HISTORY_SQLITE, "a path that only starts like a URI");
  kind ("", SR_HISTORY_SQLITE, "empty");
  kind (NULL, SR_HISTORY_SQLITE, "NULL");

  shown ("postgresql://runner:s3cret@db1:5432/runs", "postgresql://runner:***@db1:5432/runs",
         "a URI's password is hidden");
  shown ("postgresql://runner@db1/runs", "postgresql://runner@db1/runs",
         "a URI without a password is shown whole");
  shown ("postgres://u:p%40ss@db1/runs?sslmode=require&password=s3cret&application_name=sr",
         "postgres://u:***@db1/runs?sslmode=require&password=***&application_name=sr",
         "a password in the user info and the query is hidden");
  shown ("postgresql://db1/runs?password=s3cret", "postgresql://db1/runs?password=***",
         "a query's password alone is hidden");
  shown ("postgresql://u@[::1]:5432/runs", "postgresql://u@[::1]:5432/runs",
         "an IPv6 host is no password");
  shown ("host=db1 password=s3cret dbname=runs", "host=db1 password=*** dbname=runs",
         "a conninfo's password is hidden");
  shown ("host=db1 password = 'it\\'s s3cret x' dbname=runs",
         "host=db1 password = *** dbname=runs", "a quoted conninfo password is hidden");
  shown ("/var/lib/h.db", "/var/lib/h.db", "a path is shown as it is");

  /* Port 1 of the loopback: nothing listens there.  */
  unreachable ("postgresql://runner:s3cret@127.0.0.1:1/runs", "postgresql://runner:***@127.0.0.1:1/runs");
  unreachable ("host=127.0.0.1 port=1 password=s3cret dbname=runs", "password=*** dbname=runs");
  return done_testing ();
}
