/* The contract between the backend-neutral history (history.c) and the
 * stores that keep it: history-sqlite.c (a file) and history-pg.c
 * (PostgreSQL).  history.c picks one once, from history_db, validates
 * every argument, fills ids and times and serializes the calls on one
 * handle; a backend only stores and reads, with the same schema and the
 * same queries, and names its target in its errors (a URI without its
 * password: never the password).  */
#ifndef SR_STORE_HISTORY_BACKEND_H
#define SR_STORE_HISTORY_BACKEND_H

#include "store/history.h"

struct sr_history_ops
{
  /* target: history_db as given; shown: as errors may show it.  */
  int (*open) (const char *target, const char *shown, void **ret, sr_error_t *err);
  void (*close) (void *db);
  int (*add) (void *db, const struct sr_history_entry *e, const char *id, int64_t ts,
              sr_error_t *err);
  /* limit is already clamped; f may be NULL.  */
  int (*list) (void *db, const struct sr_history_filter *f, size_t limit,
               struct sr_history_entry **ret, size_t *ret_n, sr_error_t *err);
  int (*audit_add) (void *db, const struct sr_audit_entry *e, int64_t ts, sr_error_t *err);
  int (*audit_list) (void *db, const struct sr_audit_filter *f, size_t limit,
                     struct sr_audit_entry **ret, size_t *ret_n, sr_error_t *err);
  int (*audit_prune) (void *db, int64_t before_ms, size_t *ret_deleted, sr_error_t *err);
};

extern const struct sr_history_ops sr_history_sqlite_ops;
extern const struct sr_history_ops sr_history_pg_ops;

/* v (an array of n used of *alloc elements of size bytes), grown when
 * full, with element n zeroed.  */
void *sr_history_grow (void *v, size_t n, size_t *alloc, size_t size);

/* How a backend takes its schema up, one version at a time.  */
struct sr_history_schema_ops
{
  /* 0 for an empty database.  */
  int (*read_version) (void *db, int *ret, sr_error_t *err);
  /* Begins the migration's transaction, which other migrators wait for.  */
  int (*lock) (void *db, sr_error_t *err);
  /* Takes the schema from version to version + 1, and records it.  */
  int (*apply) (void *db, int version, sr_error_t *err);
  int (*commit) (void *db, sr_error_t *err);
  void (*rollback) (void *db);
};

/* Brings db's schema up to SR_HISTORY_SCHEMA_VERSION; refuses a newer
 * one.  Runners that open one database at once migrate it once.  */
int sr_history_migrate (const struct sr_history_schema_ops *ops, void *db, const char *shown,
                        sr_error_t *err);

#endif
