#include "config.h"

#include "mcp/resources.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/utf8.h"
#include "common/util.h"
#include "mcp/jsonrpc.h"
#include "mcp/resource-uri.h"
#include "mcp/tools-internal.h"
#include "sandbox/files.h"
#include "sandbox/session.h"

#define URI_TEMPLATE SR_MCP_URI_SESSIONS "{session_id}/files/{path}"
/* The subscriptions one connection may hold.  */
#define MAX_SUBSCRIPTIONS 1024u

struct sub
{
  char *uri, *session_id, *path;
};

/* What a connection last saw of one session's files, sorted by path.  */
struct seen
{
  char *session_id;
  struct sr_artifact *v;
  size_t n;
  struct seen *next;
};

struct sr_mcp_resources
{
  sr_mcp_notify_fn notify;
  void *userdata;
  pthread_mutex_t lock;  /* guards what follows */
  bool watching;         /* the client has asked about resources */
  struct sub *subs;
  size_t n_subs;
  struct seen *seen;
};

/* The notifications one observation calls for, sent once no lock is held
 * and no session is.  */
struct pending
{
  bool list_changed;
  char **uris;           /* of notifications/resources/updated */
  size_t n_uris;
};

struct sr_mcp_resources *
sr_mcp_resources_new (sr_mcp_notify_fn notify, void *userdata)
{
  struct sr_mcp_resources *r = sr_xcalloc (1, sizeof *r);

  r->notify = notify;
  r->userdata = userdata;
  pthread_mutex_init (&r->lock, NULL);
  return r;
}

static void
sub_done (struct sub *sub)
{
  free (sub->uri);
  free (sub->session_id);
  free (sub->path);
}

static void
seen_free (struct seen *s)
{
  sr_artifacts_free (s->v, s->n);
  free (s->session_id);
  free (s);
}

void
sr_mcp_resources_free (struct sr_mcp_resources *r)
{
  if (r == NULL)
    return;
  for (size_t i = 0; i < r->n_subs; i++)
    sub_done (&r->subs[i]);
  free (r->subs);
  while (r->seen)
    {
      struct seen *next = r->seen->next;

      seen_free (r->seen);
      r->seen = next;
    }
  pthread_mutex_destroy (&r->lock);
  free (r);
}

cJSON *
sr_mcp_resources_capability (void)
{
  cJSON *o = cJSON_CreateObject ();

  cJSON_AddBoolToObject (o, "subscribe", true);
  cJSON_AddBoolToObject (o, "listChanged", true);
  return o;
}

/* --- what changed --- */

static int
compare_path (const void *a, const void *b)
{
  return strcmp (((const struct sr_artifact *) a)->path, ((const struct sr_artifact *) b)->path);
}

static bool
in_sorted (const struct sr_artifact *v, size_t n, const char *path)
{
  struct sr_artifact key = { .path = (char *) path };

  return n && bsearch (&key, v, n, sizeof *v, compare_path) != NULL;
}

static bool
same_paths (const struct sr_artifact *a, size_t na, const struct sr_artifact *b, size_t nb)
{
  if (na != nb)
    return false;
  for (size_t i = 0; i < na; i++)
    if (strcmp (a[i].path, b[i].path) != 0)
      return false;
  return true;
}

static struct seen *
find_seen_locked (struct sr_mcp_resources *r, const char *session_id, struct seen ***ret_link)
{
  struct seen **pp;

  for (pp = &r->seen; *pp; pp = &(*pp)->next)
    if (strcmp ((*pp)->session_id, session_id) == 0)
      break;
  if (ret_link)
    *ret_link = pp;
  return *pp;
}

/* Records v (listed from fs, and taken over; NULL and gone when the
 * session is no more) as what session_id holds now, and adds to *p the
 * notifications of how it differs from what was seen before.  A session never seen before counts
 * as empty, unless baseline: then v is only recorded (the client is
 * listing it now, nothing is news).  */
static void
observe (struct sr_mcp_resources *r, const char *session_id, const struct sr_fsroot *fs,
         struct sr_artifact *v, size_t n, bool gone, bool baseline, struct pending *p)
{
  struct sr_artifact *changed = NULL;
  size_t n_changed = 0;
  struct seen **link, *s;

  pthread_mutex_lock (&r->lock);
  s = find_seen_locked (r, session_id, &link);
  if (s == NULL && baseline)
    goto record;
  sr_artifacts_changed (fs, s ? s->v : NULL, s ? s->n : 0, v, n, &changed, &n_changed);
  if (!same_paths (s ? s->v : NULL, s ? s->n : 0, v, n))
    p->list_changed = true;
  for (size_t i = 0; i < r->n_subs; i++)
    {
      const struct sub *sub = &r->subs[i];

      bool came_or_changed = in_sorted (changed, n_changed, sub->path);
      bool went = s && in_sorted (s->v, s->n, sub->path) && !in_sorted (v, n, sub->path);

      if (strcmp (sub->session_id, session_id) == 0 && (came_or_changed || went))
        {
          p->uris = sr_xrealloc (p->uris, (p->n_uris + 1) * sizeof *p->uris);
          p->uris[p->n_uris++] = sr_xstrdup (sub->uri);
        }
    }
  sr_artifacts_free (changed, n_changed);

record:
  if (gone)
    {
      if (s)
        {
          *link = s->next;
          seen_free (s);
        }
      sr_artifacts_free (v, n);
    }
  else
    {
      if (s == NULL)
        {
          s = sr_xcalloc (1, sizeof *s);
          s->session_id = sr_xstrdup (session_id);
          *link = s;
        }
      sr_artifacts_free (s->v, s->n);
      s->v = v;
      s->n = n;
    }
  pthread_mutex_unlock (&r->lock);
}

static void
send_pending (struct sr_mcp_resources *r, struct pending *p)
{
  for (size_t i = 0; i < p->n_uris; i++)
    {
      cJSON *params = cJSON_CreateObject ();

      cJSON_AddStringToObject (params, "uri", p->uris[i]);
      r->notify (r->userdata, sr_rpc_notification ("notifications/resources/updated", params));
      free (p->uris[i]);
    }
  free (p->uris);
  if (p->list_changed)
    r->notify (r->userdata, sr_rpc_notification ("notifications/resources/list_changed", NULL));
  *p = (struct pending) { 0 };
}

struct page;
static void page_add (struct page *pg, struct sr_session *s, const struct sr_artifact *v,
                      size_t n);

/* The files of a session, with what they mean to r (and, listing them,
 * to the page being made).  */
struct observation
{
  struct sr_mcp_resources *r;
  bool baseline;
  struct page *page;
  struct pending pending;
};

static int
observe_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
              sr_error_t *err)
{
  struct observation *ob = data;
  struct sr_artifact *v = NULL;
  size_t n = 0;
  bool truncated;

  (void) ctx;
  if (sr_files_list (sr_session_fs (s), false, &v, &n, &truncated, err) < 0)
    return -1;
  if (ob->page)
    page_add (ob->page, s, v, n);
  observe (ob->r, sr_session_id (s), sr_session_fs (s), v, n, false, ob->baseline,
           &ob->pending);
  return 0;
}

/* The session of shell shell_id, or NULL.  */
static char *
shell_session (const struct sr_mcp_tool_ctx *ctx, const char *shell_id)
{
  struct sr_shell_info *v = NULL;
  size_t n = 0;
  char *id = NULL;

  if (shell_id == NULL)
    return NULL;
  sr_sessions_shell_list (ctx->sessions, ctx->owner, &v, &n);
  for (size_t i = 0; i < n && id == NULL; i++)
    if (strcmp (v[i].shell_id, shell_id) == 0)
      id = sr_xstrdup (v[i].session_id);
  sr_shell_infos_free (v, n);
  return id;
}

void
sr_mcp_resources_after_call (struct sr_mcp_resources *r, const struct sr_mcp_tool_ctx *ctx,
                             const cJSON *args, const cJSON *result)
{
  const cJSON *structured = cJSON_GetObjectItemCaseSensitive (result, "structuredContent");
  const cJSON *named = cJSON_GetObjectItemCaseSensitive (structured, "session_id");
  const char *id = sr_mcp_arg_string (args, "session_id");
  _cleanup_free_ char *shell_id = NULL;
  struct observation ob = { .r = r };
  sr_error_t err = NULL;
  bool watching;

  pthread_mutex_lock (&r->lock);
  watching = r->watching;
  pthread_mutex_unlock (&r->lock);
  if (!watching || ctx->sessions == NULL)
    return;
  /* The session the call named, made (upload_file, create_session), or
   * whose shell it used.  */
  if ((id == NULL || *id == '\0') && cJSON_IsString (named))
    id = named->valuestring;
  if (id == NULL || *id == '\0')
    id = shell_id = shell_session (ctx, sr_mcp_arg_string (args, "shell_id"));
  if (id == NULL)
    return;
  if (sr_mcp_session_do (ctx, id, false, observe_work, &ob, &err) < 0)
    {
      /* Closed, or expired: its files went with it.  A busy session is
       * looked at after the call that holds it.  */
      const char *code = sr_error_code (err);

      if (code && strcmp (code, "session_not_found") == 0)
        observe (r, id, NULL, NULL, 0, true, false, &ob.pending);
      sr_error_free (&err);
    }
  send_pending (r, &ob.pending);
}

/* --- the methods --- */

static char *
error_reply (const cJSON *id, int code, const char *uri, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));
static char *
error_reply (const cJSON *id, int code, const char *uri, const char *fmt, ...)
{
  _cleanup_free_ char *msg = NULL;
  cJSON *data = NULL;
  va_list ap;

  va_start (ap, fmt);
  msg = sr_xvasprintf (fmt, ap);
  va_end (ap);
  if (uri)
    {
      data = cJSON_CreateObject ();
      sr_utf8_add_text (data, "uri", uri);
    }
  return sr_rpc_error (id, code, msg, data);
}

/* params.uri, or NULL.  */
static const char *
uri_param (const cJSON *params)
{
  const cJSON *uri = cJSON_GetObjectItemCaseSensitive (params, "uri");

  return cJSON_IsString (uri) ? uri->valuestring : NULL;
}

/* The session id and path of params.uri (*ret_uri), or the reply that
 * refuses it.  */
static char *
uri_arg (const cJSON *id, const cJSON *params, const char **ret_uri, char **ret_session_id,
         char **ret_path)
{
  sr_error_t err = NULL;
  char *reply;

  *ret_uri = uri_param (params);
  if (*ret_uri == NULL)
    return error_reply (id, SR_RPC_INVALID_PARAMS, NULL, "Invalid params: uri must be a string");
  if (sr_mcp_file_uri_parse (*ret_uri, ret_session_id, ret_path, &err) == 0)
    return NULL;
  reply = error_reply (id, SR_RPC_RESOURCE_NOT_FOUND, *ret_uri, "Resource not found: %s",
                       err->msg);
  sr_error_free (&err);
  return reply;
}

static char *
templates_list (const cJSON *id)
{
  cJSON *result = cJSON_CreateObject ();
  cJSON *list = cJSON_AddArrayToObject (result, "resourceTemplates");
  cJSON *t = cJSON_CreateObject ();

  cJSON_AddStringToObject (t, "uriTemplate", URI_TEMPLATE);
  cJSON_AddStringToObject (t, "name", "session-file");
  cJSON_AddStringToObject (t, "title", "A file of a sandbox session");
  cJSON_AddStringToObject (t, "description",
                           "A file under " SR_DATA_DIR " of a sandbox session: path is relative "
                           "to " SR_DATA_DIR ", each of its segments percent-encoded.");
  cJSON_AddItemToArray (list, t);
  return sr_rpc_result (id, result);
}

/* One page of resources/list.  */
struct page
{
  const char *after_id, *after_path;   /* the cursor's; NULL: from the start */
  size_t max;
  cJSON *list;
  size_t count;
  char *last_id, *last_path;           /* of the last resource in list */
  bool more;                           /* another page follows */
};

static void
add_resource (cJSON *list, struct sr_session *s, const struct sr_artifact *a)
{
  cJSON *e = cJSON_CreateObject ();
  _cleanup_free_ char *uri = sr_mcp_file_uri (sr_session_id (s), a->path);
  _cleanup_free_ char *escaped = NULL, *mime = NULL, *description = NULL;
  uint64_t size;
  int fd = sr_files_open_artifact (sr_session_fs (s), a->path, &size, NULL);

  if (fd >= 0)
    {
      mime = sr_files_mime (fd);
      close (fd);
    }
  if (!sr_utf8_valid (a->path, strlen (a->path)))
    escaped = sr_utf8_escape_name (a->path);
  description = sr_xasprintf (SR_DATA_DIR "/%s in session %s", escaped ? escaped : a->path,
                              sr_session_id (s));
  cJSON_AddStringToObject (e, "uri", uri);
  cJSON_AddStringToObject (e, "name", escaped ? escaped : a->path);
  cJSON_AddStringToObject (e, "description", description);
  if (mime)
    cJSON_AddStringToObject (e, "mimeType", mime);
  cJSON_AddNumberToObject (e, "size", (double) a->size);
  cJSON_AddItemToArray (list, e);
}

/* The files v of session s that come after the cursor, while the page
 * has room.  */
static void
page_add (struct page *pg, struct sr_session *s, const struct sr_artifact *v, size_t n)
{
  const char *id = sr_session_id (s);
  bool resume = pg->after_id && strcmp (id, pg->after_id) == 0;

  for (size_t i = 0; i < n; i++)
    {
      if (resume && strcmp (v[i].path, pg->after_path) <= 0)
        continue;
      if (pg->count == pg->max)
        {
          pg->more = true;
          break;
        }
      add_resource (pg->list, s, &v[i]);
      pg->count++;
      free (pg->last_id);
      free (pg->last_path);
      pg->last_id = sr_xstrdup (id);
      pg->last_path = sr_xstrdup (v[i].path);
    }
}

static int
compare_info (const void *a, const void *b)
{
  return strcmp (((const struct sr_session_info *) a)->id,
                 ((const struct sr_session_info *) b)->id);
}

/* The cursor after session id's file path: opaque to the client.  */
static char *
cursor_make (const char *id, const char *path)
{
  size_t len = strlen (id) + 1 + strlen (path);
  _cleanup_free_ char *raw = sr_xmalloc (len + 1);

  memcpy (stpcpy (raw, id) + 1, path, strlen (path) + 1);
  return sr_base64_encode (raw, len);
}

/* The session id and path of a cursor, pointing into *ret_raw.  */
static int
cursor_parse (const char *cursor, char **ret_raw, const char **ret_id, const char **ret_path)
{
  _cleanup_free_ char *decoded = NULL;
  const char *nul;
  char *raw;
  size_t len;

  if (sr_base64_decode (cursor, strlen (cursor), &decoded, &len) < 0)
    return -1;
  /* "id\0path", both non-empty, no other NUL.  */
  nul = memchr (decoded, '\0', len);
  if (nul == NULL || nul == decoded || nul + 1 == decoded + len
      || memchr (nul + 1, '\0', len - (size_t) (nul + 1 - decoded)))
    return -1;
  raw = sr_xmalloc (len + 1);
  memcpy (raw, decoded, len);
  raw[len] = '\0';
  *ret_raw = raw;
  *ret_id = raw;
  *ret_path = raw + (nul - decoded) + 1;
  return 0;
}

/* Forgets what was seen of sessions that are no more.  */
static void
forget_gone (struct sr_mcp_resources *r, const struct sr_session_info *v, size_t n)
{
  pthread_mutex_lock (&r->lock);
  for (struct seen **pp = &r->seen; *pp;)
    {
      struct sr_session_info key = { 0 };
      struct seen *s = *pp;

      snprintf (key.id, sizeof key.id, "%s", s->session_id);
      if (n && bsearch (&key, v, n, sizeof *v, compare_info))
        pp = &s->next;
      else
        {
          *pp = s->next;
          seen_free (s);
        }
    }
  pthread_mutex_unlock (&r->lock);
}

static char *
resources_list (struct sr_mcp_resources *r, const struct sr_mcp_tool_ctx *ctx, const cJSON *id,
                const cJSON *params)
{
  const cJSON *cursor = cJSON_GetObjectItemCaseSensitive (params, "cursor");
  struct page pg = { .max = ctx->cfg->resource_page_size };
  struct observation ob = { .r = r, .baseline = true, .page = &pg };
  _cleanup_free_ char *raw = NULL;
  struct sr_session_info *v = NULL;
  size_t n = 0;
  cJSON *result;

  if (cursor && !cJSON_IsNull (cursor)
      && (!cJSON_IsString (cursor)
          || cursor_parse (cursor->valuestring, &raw, &pg.after_id, &pg.after_path) < 0))
    return error_reply (id, SR_RPC_INVALID_PARAMS, NULL, "Invalid params: cursor is not one "
                        "this server gave");
  result = cJSON_CreateObject ();
  pg.list = cJSON_AddArrayToObject (result, "resources");
  if (ctx->sessions)
    sr_mcp_sessions_visible (ctx, &v, &n);
  /* In the order of their ids, so that a cursor still places itself when
   * sessions came or went meanwhile.  */
  if (n)
    qsort (v, n, sizeof *v, compare_info);
  for (size_t i = 0; i < n && !pg.more; i++)
    {
      sr_error_t err = NULL;

      if (pg.after_id && strcmp (v[i].id, pg.after_id) < 0)
        continue;
      /* A session busy with a call is left out rather than waited for;
       * its files are seen after that call.  */
      if (v[i].busy || sr_mcp_session_do (ctx, v[i].id, false, observe_work, &ob, &err) < 0)
        sr_error_free (&err);
    }
  forget_gone (r, v, n);
  sr_session_infos_free (v, n);
  if (pg.more)
    {
      _cleanup_free_ char *next = cursor_make (pg.last_id, pg.last_path);

      cJSON_AddStringToObject (result, "nextCursor", next);
    }
  free (pg.last_id);
  free (pg.last_path);
  send_pending (r, &ob.pending);
  return sr_rpc_result (id, result);
}

/* The codes of a file or session that is not there to read.  */
static bool
not_found (const char *code)
{
  static const char *const codes[] = {
    "session_not_found", "not_found", "invalid_path", "path_outside_sandbox", "not_a_file",
    "invalid_arguments", NULL,
  };

  for (size_t i = 0; code && codes[i]; i++)
    if (strcmp (code, codes[i]) == 0)
      return true;
  return false;
}

struct reading
{
  const char *path;
  char *data, *mime;
  size_t len;
};

static int
read_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data, sr_error_t *err)
{
  struct reading *rd = data;

  return sr_files_read_artifact (sr_session_fs (s), rd->path, ctx->cfg->max_artifact_size,
                                 &rd->data, &rd->len, &rd->mime, err);
}

static char *
resources_read (const struct sr_mcp_tool_ctx *ctx, const cJSON *id, const cJSON *params)
{
  _cleanup_free_ char *session_id = NULL, *path = NULL;
  struct reading rd = { 0 };
  sr_error_t err = NULL;
  cJSON *result, *contents, *c;
  const char *uri;
  char *reply;

  if ((reply = uri_arg (id, params, &uri, &session_id, &path)))
    return reply;
  if (ctx->sessions == NULL)
    return error_reply (id, SR_RPC_RESOURCE_NOT_FOUND, uri,
                        "Resource not found: this server has no sessions");
  rd.path = path;
  if (sr_mcp_session_do (ctx, session_id, false, read_work, &rd, &err) < 0)
    {
      const char *code = sr_error_code (err);

      reply = error_reply (id, not_found (code) ? SR_RPC_RESOURCE_NOT_FOUND
                                                : SR_RPC_INTERNAL_ERROR,
                           uri, "%s%s", not_found (code) ? "Resource not found: " : "",
                           err->msg);
      sr_error_free (&err);
      return reply;
    }
  result = cJSON_CreateObject ();
  contents = cJSON_AddArrayToObject (result, "contents");
  c = cJSON_CreateObject ();
  cJSON_AddStringToObject (c, "uri", uri);
  cJSON_AddStringToObject (c, "mimeType", rd.mime);
  /* Text when JSON can carry it as it is, else the bytes in base64.  */
  if (sr_utf8_valid (rd.data, rd.len))
    cJSON_AddStringToObject (c, "text", rd.data);
  else
    {
      _cleanup_free_ char *b64 = sr_base64_encode (rd.data, rd.len);

      cJSON_AddStringToObject (c, "blob", b64);
    }
  cJSON_AddItemToArray (contents, c);
  free (rd.data);
  free (rd.mime);
  return sr_rpc_result (id, result);
}

static char *
subscribe (struct sr_mcp_resources *r, const struct sr_mcp_tool_ctx *ctx, const cJSON *id,
           const cJSON *params)
{
  _cleanup_free_ char *session_id = NULL, *path = NULL;
  struct observation ob = { .r = r, .baseline = true };
  sr_error_t err = NULL;
  bool known = false, seen;
  const char *uri;
  char *reply;

  if ((reply = uri_arg (id, params, &uri, &session_id, &path)))
    return reply;
  pthread_mutex_lock (&r->lock);
  for (size_t i = 0; i < r->n_subs && !known; i++)
    known = strcmp (r->subs[i].uri, uri) == 0;
  if (!known && r->n_subs >= MAX_SUBSCRIPTIONS)
    {
      pthread_mutex_unlock (&r->lock);
      return error_reply (id, SR_RPC_INVALID_PARAMS, uri,
                          "Invalid params: %u subscriptions are the most a client may hold",
                          MAX_SUBSCRIPTIONS);
    }
  if (!known)
    {
      r->subs = sr_xrealloc (r->subs, (r->n_subs + 1) * sizeof *r->subs);
      r->subs[r->n_subs++] = (struct sub) { sr_xstrdup (uri), sr_xstrdup (session_id),
                                            sr_xstrdup (path) };
    }
  seen = find_seen_locked (r, session_id, NULL) != NULL;
  pthread_mutex_unlock (&r->lock);
  /* What the session holds now, so that the first change after this is
   * news and what was there before is not.  A file not there yet may be
   * subscribed to: its creation is its first update.  */
  if (!seen && ctx->sessions)
    {
      if (sr_mcp_session_do (ctx, session_id, false, observe_work, &ob, &err) < 0)
        sr_error_free (&err);
      send_pending (r, &ob.pending);
    }
  return sr_rpc_result (id, NULL);
}

static char *
unsubscribe (struct sr_mcp_resources *r, const cJSON *id, const cJSON *params)
{
  const char *uri = uri_param (params);

  if (uri == NULL)
    return error_reply (id, SR_RPC_INVALID_PARAMS, NULL, "Invalid params: uri must be a string");
  pthread_mutex_lock (&r->lock);
  for (size_t i = 0; i < r->n_subs; i++)
    if (strcmp (r->subs[i].uri, uri) == 0)
      {
        sub_done (&r->subs[i]);
        r->subs[i] = r->subs[--r->n_subs];
        break;
      }
  pthread_mutex_unlock (&r->lock);
  return sr_rpc_result (id, NULL);
}

char *
sr_mcp_resources_handle (struct sr_mcp_resources *r, const struct sr_mcp_tool_ctx *ctx,
                         const char *method, const cJSON *id, const cJSON *params)
{
  char *reply;

  if (strcmp (method, "resources/templates/list") == 0)
    reply = templates_list (id);
  else if (strcmp (method, "resources/list") == 0)
    reply = resources_list (r, ctx, id, params);
  else if (strcmp (method, "resources/read") == 0)
    reply = resources_read (ctx, id, params);
  else if (strcmp (method, "resources/subscribe") == 0)
    reply = subscribe (r, ctx, id, params);
  else if (strcmp (method, "resources/unsubscribe") == 0)
    reply = unsubscribe (r, id, params);
  else
    return NULL;
  /* From now on the connection's calls are followed.  */
  pthread_mutex_lock (&r->lock);
  r->watching = true;
  pthread_mutex_unlock (&r->lock);
  return reply;
}
