/* What the history_db setting names, decided here once for the history
 * (store/history.c) and for what shows the setting (config show): a
 * SQLite file or a PostgreSQL database, and how to show it without its
 * password.  */
#ifndef SR_COMMON_HISTORY_DB_H
#define SR_COMMON_HISTORY_DB_H

enum sr_history_kind
{
  SR_HISTORY_SQLITE,
  SR_HISTORY_POSTGRESQL,
};
/* PostgreSQL when db is a URI ("postgresql://", "postgres://") or a libpq
 * conninfo ("host=db1 dbname=runs": a lowercase keyword and '=' first);
 * else the path of a SQLite file.  */
enum sr_history_kind sr_history_kind_of (const char *db);
/* db as messages may show it: the password of a URI (user:PASSWORD@, or
 * ?password=) or of a conninfo (password=) replaced by "***".  */
char *sr_history_display (const char *db);

#endif
