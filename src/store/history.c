/* The backend-neutral history: picks the store history_db names, checks
 * what is written, and serializes the calls on one handle.  */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/run-result.h"
#include "common/utf8.h"
#include "common/util.h"
#include "store/history-backend.h"
#include "store/history.h"

struct sr_history
{
  const struct sr_history_ops *ops;
  void *db;
  char *shown;           /* history_db without a password, for errors */
  pthread_mutex_t lock;  /* serializes every use of db */
};

void *
sr_history_grow (void *v, size_t n, size_t *alloc, size_t size)
{
  if (n == *alloc)
    {
      *alloc = *alloc ? *alloc * 2 : 16;
      v = sr_xrealloc (v, *alloc * size);
    }
  memset ((char *) v + n * size, 0, size);
  return v;
}

static int
too_new (const char *shown, int version, sr_error_t *err)
{
  return sr_error_set_plain (err, NULL, ENOTSUP,
                             "%s: the history database has schema version %d, newer than this "
                             "sandbox-runner knows (%d); upgrade sandbox-runner or set history_db "
                             "to another database",
                             shown, version, SR_HISTORY_SCHEMA_VERSION);
}

int
sr_history_migrate (const struct sr_history_schema_ops *ops, void *db, const char *shown,
                    sr_error_t *err)
{
  int version;

  if (ops->read_version (db, &version, err) < 0)
    return -1;
  if (version > SR_HISTORY_SCHEMA_VERSION)
    return too_new (shown, version, err);
  if (version == SR_HISTORY_SCHEMA_VERSION)
    return 0;

  /* Another runner may be migrating too: read again under the lock.  */
  if (ops->lock (db, err) < 0)
    return -1;
  if (ops->read_version (db, &version, err) < 0)
    goto fail;
  if (version > SR_HISTORY_SCHEMA_VERSION)
    {
      too_new (shown, version, err);
      goto fail;
    }
  for (; version < SR_HISTORY_SCHEMA_VERSION; version++)
    if (ops->apply (db, version, err) < 0)
      {
        sr_error_wrap (err, "to version %d", version + 1);
        goto fail;
      }
  if (ops->commit (db, err) < 0)
    goto fail;
  return 0;

fail:
  ops->rollback (db);
  return -1;
}

int
sr_history_open (const char *db, struct sr_history **ret, sr_error_t *err)
{
  struct sr_history *h;

  if (db == NULL || *db == '\0')
    return sr_error_set_plain (err, NULL, EINVAL,
                               "no history database path (history_db is empty)");
  h = sr_xcalloc (1, sizeof *h);
  h->ops = sr_history_kind_of (db) == SR_HISTORY_POSTGRESQL ? &sr_history_pg_ops
                                                            : &sr_history_sqlite_ops;
  h->shown = sr_history_display (db);
  pthread_mutex_init (&h->lock, NULL);
  if (h->ops->open (db, h->shown, &h->db, err) < 0)
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
  if (h->db)
    h->ops->close (h->db);
  pthread_mutex_destroy (&h->lock);
  free (h->shown);
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

int
sr_history_add (struct sr_history *h, struct sr_history_entry *e, sr_error_t *err)
{
  char id[37];
  int64_t ts = e->timestamp_ms ? e->timestamp_ms : sr_now_realtime_ms ();
  int r;

  if (e->language == NULL || e->status == NULL || e->source == NULL)
    return sr_error_set_plain (err, NULL, EINVAL,
                               "%s: a run needs a language, a status and a source", h->shown);
  if (sr_history_check_status (e->status, err) < 0)
    return -1;
  if (e->id[0])
    snprintf (id, sizeof id, "%s", e->id);
  else if (make_uuid (id, err) < 0)
    return -1;

  pthread_mutex_lock (&h->lock);
  r = h->ops->add (h->db, e, id, ts, err);
  pthread_mutex_unlock (&h->lock);
  if (r < 0)
    return -1;
  memcpy (e->id, id, sizeof id);
  e->timestamp_ms = ts;
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
  r = h->ops->list (h->db, f, limit, ret, ret_n, err);
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

int
sr_history_audit_add (struct sr_history *h, struct sr_audit_entry *e, sr_error_t *err)
{
  int64_t ts = e->timestamp_ms ? e->timestamp_ms : sr_now_realtime_ms ();
  int r;

  if (e->client == NULL || e->machine == NULL || e->tool == NULL || e->status == NULL
      || e->args_sha256 == NULL)
    return sr_error_set_plain (err, NULL, EINVAL,
                               "%s: an audit row needs a client, a machine, a tool, a status "
                               "and an arguments digest",
                               h->shown);
  pthread_mutex_lock (&h->lock);
  r = h->ops->audit_add (h->db, e, ts, err);
  pthread_mutex_unlock (&h->lock);
  if (r == 0)
    e->timestamp_ms = ts;
  return r;
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
  r = h->ops->audit_list (h->db, f, limit, ret, ret_n, err);
  pthread_mutex_unlock (&h->lock);
  return r;
}

int
sr_history_audit_prune (struct sr_history *h, int64_t before_ms, size_t *ret_deleted,
                        sr_error_t *err)
{
  size_t deleted = 0;
  int r;

  pthread_mutex_lock (&h->lock);
  r = h->ops->audit_prune (h->db, before_ms, &deleted, err);
  pthread_mutex_unlock (&h->lock);
  if (r == 0 && ret_deleted)
    *ret_deleted = deleted;
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
