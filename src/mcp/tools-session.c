/* The tools of sessions: create_session, close_session, list_sessions,
 * upload_file, list_artifacts and read_artifact.  Their refusals carry
 * the codes of sandbox/session.h and sandbox/files.h.  */
#include "config.h"

#include "mcp/tools-internal.h"

#include <stdlib.h>
#include <string.h>

#include "common/defaults.h"
#include "common/utf8.h"
#include "common/util.h"
#include "mcp/resource-uri.h"
#include "sandbox/files.h"
#include "sandbox/session.h"
#include "sandbox/service.h"

int
sr_mcp_session_do (const struct sr_mcp_tool_ctx *ctx, const char *id, bool create,
                   sr_mcp_session_work_fn work, void *data, sr_error_t *err)
{
  struct sr_session *s = NULL;
  int r;

  if (!create && *id == '\0')
    return sr_error_set_code (err, "invalid_arguments", 0, "session_id must not be empty");
  if (sr_sessions_acquire (ctx->sessions, ctx->owner, id, NULL, ctx->cancel_fd, &s, err) < 0)
    return -1;
  r = work (ctx, s, data, err);
  sr_session_release (s);
  return r;
}

cJSON *
sr_mcp_with_session (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, bool create,
                     sr_mcp_session_work_fn work, void *data)
{
  const char *id = sr_mcp_arg_string (args, "session_id");
  _cleanup_free_ char *def = NULL, *def_shell = NULL;
  sr_error_t err = NULL;

  if (id == NULL && !create)
    {
      sr_sessions_default_get (ctx->sessions, ctx->owner, &def, &def_shell);
      if (def == NULL)
        return sr_mcp_tool_error ("invalid_arguments",
                                  "name the machine: session_id (or machine), or set a default "
                                  "one with default_set");
      id = def;
    }
  if (sr_mcp_session_do (ctx, id, create, work, data, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  return NULL;
}

void
sr_mcp_sessions_visible (const struct sr_mcp_tool_ctx *ctx, struct sr_session_info **ret,
                         size_t *ret_n)
{
  struct sr_session_info *v;
  size_t n, kept = 0;

  sr_sessions_list (ctx->sessions, ctx->owner, &v, &n);
  /* An SSH machine has no data directory, no artifacts: machine_list
   * shows it.  */
  for (size_t i = 0; i < n; i++)
    if (v[i].sandbox)
      v[kept++] = v[i];
    else
      free (v[i].image);
  *ret = v;
  *ret_n = kept;
}

cJSON *
sr_mcp_call_create_session (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                            bool *ret_cancelled)
{
  const char *image = sr_mcp_arg_string (args, "image");
  struct sr_session *s = NULL;
  sr_error_t err = NULL;
  cJSON *o;

  if (sr_sessions_acquire (ctx->sessions, ctx->owner, NULL, image, ctx->cancel_fd, &s, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "session_id", sr_session_id (s));
  cJSON_AddStringToObject (o, "image", sr_session_image (s));
  cJSON_AddStringToObject (o, "data_dir", SR_DATA_DIR);
  cJSON_AddNumberToObject (o, "data_size", (double) ctx->cfg->session_data_size);
  cJSON_AddNumberToObject (o, "idle_timeout_seconds", (double) ctx->cfg->session_idle_ms / 1000);
  sr_session_release (s);
  return sr_mcp_tool_result (o, false);
}

cJSON *
sr_mcp_call_close_session (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                           bool *ret_cancelled)
{
  const char *id = sr_mcp_arg_string (args, "session_id");
  sr_error_t err = NULL;
  cJSON *o;

  if (sr_sessions_close (ctx->sessions, ctx->owner, id, &err) < 0)
    return sr_mcp_tool_refusal (&err);
  o = cJSON_CreateObject ();
  cJSON_AddStringToObject (o, "session_id", id);
  cJSON_AddBoolToObject (o, "closed", true);
  return sr_mcp_tool_result (o, false);
}

cJSON *
sr_mcp_call_list_sessions (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                           bool *ret_cancelled)
{
  struct sr_session_info *v = NULL;
  size_t n = 0;
  cJSON *o, *list;

  sr_mcp_sessions_visible (ctx, &v, &n);
  o = cJSON_CreateObject ();
  list = cJSON_AddArrayToObject (o, "sessions");
  for (size_t i = 0; i < n; i++)
    {
      cJSON *e = cJSON_CreateObject ();
      _cleanup_free_ char *when = sr_history_format_time (v[i].created * 1000);

      cJSON_AddStringToObject (e, "session_id", v[i].id);
      cJSON_AddStringToObject (e, "image", v[i].image);
      cJSON_AddStringToObject (e, "created", when);
      cJSON_AddNumberToObject (e, "idle_seconds", (double) v[i].idle_ms / 1000);
      cJSON_AddBoolToObject (e, "busy", v[i].busy);
      cJSON_AddItemToArray (list, e);
    }
  sr_session_infos_free (v, n);
  return sr_mcp_tool_result (o, false);
}

struct upload
{
  const char *filename;
  const char *data;
  size_t len;
  bool overwrite;
  bool piece;           /* offset given: a piece after the first */
  uint64_t offset, max_size;
  char *path;
  char *session_id;
};

static int
upload_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data, sr_error_t *err)
{
  struct upload *u = data;

  (void) ctx;
  /* Known even when the upload fails: the session may be new.  */
  u->session_id = sr_xstrdup (sr_session_id (s));
  if (u->piece)
    return sr_files_append (sr_session_fs (s), u->filename, u->offset, u->data, u->len,
                            u->max_size, &u->path, err);
  return sr_files_upload (sr_session_fs (s), u->filename, u->data, u->len, u->overwrite,
                          &u->path, err);
}

cJSON *
sr_mcp_call_upload_file (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                         bool *ret_cancelled)
{
  const char *content = sr_mcp_arg_string (args, "content_base64");
  const char *session_id = sr_mcp_arg_string (args, "session_id");
  uint64_t offset = sr_mcp_arg_count (args, "offset", 0);
  _cleanup_free_ char *data = NULL;
  struct upload u = { 0 };
  size_t len;
  cJSON *o;

  /* Refused before any session is made for it.  */
  if (offset + strlen (content) / 4 * 3 > ctx->cfg->max_upload_size + 3)
    return sr_mcp_tool_error ("file_too_large", "the file is over the upload limit of %llu bytes",
                              (unsigned long long) ctx->cfg->max_upload_size);
  if (sr_base64_decode (content, strlen (content), &data, &len) < 0)
    return sr_mcp_tool_error ("invalid_arguments", "content_base64 is not valid base64");
  if (offset + len > ctx->cfg->max_upload_size)
    return sr_mcp_tool_error ("file_too_large",
                              "the file is %llu bytes, over the upload limit of %llu bytes",
                              (unsigned long long) (offset + len),
                              (unsigned long long) ctx->cfg->max_upload_size);
  if (offset > 0 && (session_id == NULL || *session_id == '\0'))
    return sr_mcp_tool_error ("invalid_arguments",
                              "a piece at an offset goes to the session of the first piece: "
                              "give its session_id");
  u = (struct upload) { .filename = sr_mcp_arg_string (args, "filename"), .data = data,
                        .len = len, .overwrite = sr_mcp_arg_bool (args, "overwrite", false),
                        .piece = offset > 0, .offset = offset,
                        .max_size = ctx->cfg->max_upload_size };
  if ((o = sr_mcp_with_session (ctx, args, true, upload_work, &u)) == NULL)
    {
      o = cJSON_CreateObject ();
      cJSON_AddStringToObject (o, "session_id", u.session_id);
      cJSON_AddStringToObject (o, "path", u.path);
      cJSON_AddNumberToObject (o, "size", (double) (offset + len));
      o = sr_mcp_tool_result (o, false);
    }
  free (u.path);
  free (u.session_id);
  return o;
}

/* The result is made in the session: it names it.  */
static int
list_artifacts_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                     sr_error_t *err)
{
  cJSON **ret = data;
  struct sr_artifact *v = NULL;
  size_t n = 0;
  bool truncated = false;

  if (sr_files_list (sr_session_fs (s), true, &v, &n, &truncated, err) < 0)
    return -1;
  *ret = cJSON_CreateObject ();
  cJSON_AddStringToObject (*ret, "session_id", sr_session_id (s));
  sr_mcp_add_artifacts (*ret, ctx, sr_session_id (s), v, n);
  cJSON_AddBoolToObject (*ret, "truncated", truncated);
  sr_artifacts_free (v, n);
  return 0;
}

cJSON *
sr_mcp_call_list_artifacts (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                            bool *ret_cancelled)
{
  cJSON *o = NULL, *bad;

  if ((bad = sr_mcp_with_session (ctx, args, false, list_artifacts_work, &o)))
    return bad;
  return sr_mcp_tool_result (o, false);
}

struct read_artifact
{
  const char *path;
  uint64_t offset;
  size_t length;         /* at most this many bytes from offset */
  char *data, *mime;
  size_t len;
  uint64_t size;         /* the whole file's */
};

static int
read_artifact_work (const struct sr_mcp_tool_ctx *ctx, struct sr_session *s, void *data,
                    sr_error_t *err)
{
  struct read_artifact *a = data;

  return sr_files_read_piece (sr_session_fs (s), a->path, ctx->cfg->max_artifact_size,
                              a->offset, a->length, &a->data, &a->len, &a->size, &a->mime, err);
}

/* MIME types that clients show as images (the ones model APIs accept);
 * other image types (SVG) go as text or bytes.  */
static bool
shown_as_image (const char *mime)
{
  static const char *const types[] = { "image/png", "image/jpeg", "image/gif", "image/webp" };

  for (size_t i = 0; i < SR_ARRAY_SIZE (types); i++)
    if (strcmp (mime, types[i]) == 0)
      return true;
  return false;
}

/* Text a person can read: valid UTF-8 without control characters other
 * than tab, newlines and form feed.  */
static bool
readable_text (const char *data, size_t len)
{
  for (size_t i = 0; i < len; i++)
    {
      unsigned char ch = (unsigned char) data[i];

      if ((ch < 0x20 && !strchr ("\t\n\r\f", ch)) || ch == 0x7f)
        return false;
    }
  return sr_utf8_valid (data, len);
}

/* An embedded resource holding a's bytes as a blob.  */
static cJSON *
resource_block (const char *session_id, const struct read_artifact *a)
{
  _cleanup_free_ char *uri = sr_mcp_file_uri (session_id, a->path);
  _cleanup_free_ char *b64 = sr_base64_encode (a->data, a->len);
  cJSON *b = cJSON_CreateObject (), *res;

  cJSON_AddStringToObject (b, "type", "resource");
  res = cJSON_AddObjectToObject (b, "resource");
  cJSON_AddStringToObject (res, "uri", uri);
  cJSON_AddStringToObject (res, "mimeType", a->mime);
  cJSON_AddStringToObject (res, "blob", b64);
  return b;
}

/* The block that carries a's bytes, and in *ret_delivery its kind:
 * "image", "text", "resource" (an embedded blob) or, over
 * SR_MCP_INLINE_MAX, "link" (a resource_link to fetch them by).  A
 * piece (a->offset or a->length given) is always a resource: a piece of
 * an image is no image, nor need a piece of text end on a character.  */
static cJSON *
artifact_block (const char *session_id, const struct read_artifact *a, bool piece,
                const char **ret_delivery)
{
  _cleanup_free_ char *b64 = NULL, *text = NULL;
  cJSON *b;

  if (!piece && a->size > SR_MCP_INLINE_MAX)
    {
      *ret_delivery = "link";
      return sr_mcp_resource_link (session_id, a->path, a->mime, a->size);
    }
  *ret_delivery = "resource";
  if (piece)
    return resource_block (session_id, a);
  b = cJSON_CreateObject ();
  if (readable_text (a->data, a->len))
    {
      *ret_delivery = "text";
      text = sr_xasprintf ("%.*s", (int) a->len, a->data ? a->data : "");
      cJSON_AddStringToObject (b, "type", "text");
      cJSON_AddStringToObject (b, "text", text);
      return b;
    }
  b64 = sr_base64_encode (a->data, a->len);
  if (shown_as_image (a->mime))
    {
      *ret_delivery = "image";
      cJSON_AddStringToObject (b, "type", "image");
      cJSON_AddStringToObject (b, "data", b64);
      cJSON_AddStringToObject (b, "mimeType", a->mime);
      return b;
    }
  cJSON_Delete (b);
  return resource_block (session_id, a);
}

/* Reads the file args name into a, a->length bytes from a->offset (a->path
 * is *path, the caller's to free with a->data and a->mime).  NULL, or the
 * refusal.  */
static cJSON *
read_artifact (const struct sr_mcp_tool_ctx *ctx, const cJSON *args, struct read_artifact *a,
               char **path)
{
  cJSON *bad;

  if ((bad = sr_mcp_path_arg (args, "path", path)))
    return bad;
  a->path = *path;
  return sr_mcp_with_session (ctx, args, false, read_artifact_work, a);
}

/* The fields of a read artifact every result has.  */
static cJSON *
artifact_fields (const char *session_id, const struct read_artifact *a)
{
  _cleanup_free_ char *uri = sr_mcp_file_uri (session_id, a->path);
  cJSON *o = cJSON_CreateObject ();

  sr_utf8_add_name (o, "path", a->path);
  cJSON_AddStringToObject (o, "mime_type", a->mime);
  cJSON_AddNumberToObject (o, "size", (double) a->size);
  cJSON_AddStringToObject (o, "uri", uri);
  return o;
}

/* The bytes travel once, in their content block: structuredContent says
 * which kind (delivery) and where they live (uri), not the bytes again.
 * Without offset and length the whole file comes back (over
 * SR_MCP_INLINE_MAX as a link, so no more of it is read); with either,
 * one piece of at most SR_MAX_PIECE_SIZE bytes, with where it lies and
 * whether it ends the file.  */
cJSON *
sr_mcp_call_read_artifact (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                           bool *ret_cancelled)
{
  const char *session_id = sr_mcp_arg_string (args, "session_id"), *delivery;
  bool piece = sr_mcp_arg (args, "offset") || sr_mcp_arg (args, "length");
  uint64_t length = sr_mcp_arg_count (args, "length", SR_MAX_PIECE_SIZE);
  _cleanup_free_ char *path = NULL;
  struct read_artifact a = { 0 };
  cJSON *o, *r, *block, *bad;
  bool link;

  (void) ret_cancelled;
  a.offset = sr_mcp_arg_count (args, "offset", 0);
  a.length = !piece                       ? SR_MCP_INLINE_MAX + 1
             : length < SR_MAX_PIECE_SIZE ? (size_t) length
                                          : SR_MAX_PIECE_SIZE;
  bad = read_artifact (ctx, args, &a, &path);
  if (bad == NULL)
    {
      block = artifact_block (session_id, &a, piece, &delivery);
      link = strcmp (delivery, "link") == 0;
      o = artifact_fields (session_id, &a);
      cJSON_AddStringToObject (o, "delivery", delivery);
      cJSON_AddNumberToObject (o, "offset", (double) a.offset);
      cJSON_AddNumberToObject (o, "length", link ? 0 : (double) a.len);
      cJSON_AddBoolToObject (o, "eof", !link && a.offset + a.len >= a.size);
      r = sr_mcp_tool_result (o, false);
      sr_mcp_result_add (r, block);
    }
  free (a.data);
  free (a.mime);
  return bad ? bad : r;
}

/* The bytes in structuredContent as base64 (content_base64), for the
 * drop-in tool whose users' code reads them from there.  */
cJSON *
sr_mcp_call_read_artifact_base64 (const struct sr_mcp_tool_ctx *ctx, const cJSON *args,
                                  bool *ret_cancelled)
{
  _cleanup_free_ char *path = NULL, *b64 = NULL;
  struct read_artifact a = { .length = SIZE_MAX };
  cJSON *o = NULL, *bad;

  (void) ret_cancelled;
  bad = read_artifact (ctx, args, &a, &path);
  if (bad == NULL)
    {
      o = artifact_fields (sr_mcp_arg_string (args, "session_id"), &a);
      b64 = sr_base64_encode (a.data, a.len);
      cJSON_AddStringToObject (o, "content_base64", b64);
    }
  free (a.data);
  free (a.mime);
  return bad ? bad : sr_mcp_tool_result (o, false);
}
