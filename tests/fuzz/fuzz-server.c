/* The MCP dispatcher (src/mcp/server.c) as a transport drives it: the
 * input is a session, one message a line, handed to sr_mcp_conn_handle on
 * one connection, which is then closed.  run_code goes to the stand-in of
 * fake-run.h (no container starts); list_supported_languages and
 * get_execution_history run for real against an empty image store and a
 * SQLite history under a private temporary directory.
 *
 * Every message the server sends must be one line holding a JSON-RPC 2.0
 * object.  */
#include "config.h"

#include <pthread.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "mcp/server.h"
#include "sandbox/backend.h"
#include "tests/fuzz/fake-run.h"
#include "tests/fuzz/fuzz.h"

/* Inputs between two fresh servers, so the history stays small.  */
#define RENEW_EVERY 512

static struct sr_config cfg;
static char *dir;
static struct sr_mcp_server *server;
static unsigned int inputs;

struct session
{
  pthread_mutex_t lock;
  size_t sent;
};

static void
on_send (void *transport, const cJSON *related_id, const char *json)
{
  struct session *s = transport;
  cJSON *o = cJSON_Parse (json);
  const cJSON *v;

  fuzz_check (cJSON_IsObject (o), "the server sent something that is not an object: %s", json);
  v = cJSON_GetObjectItemCaseSensitive (o, "jsonrpc");
  fuzz_check (cJSON_IsString (v) && strcmp (v->valuestring, "2.0") == 0, "no jsonrpc 2.0: %s",
              json);
  fuzz_check (cJSON_HasObjectItem (o, "method") || cJSON_HasObjectItem (o, "id"),
              "neither a notification nor a response: %s", json);
  fuzz_check (strchr (json, '\n') == NULL, "a newline inside a message breaks stdio: %s", json);
  cJSON_Delete (o);
  pthread_mutex_lock (&s->lock);
  s->sent++;
  pthread_mutex_unlock (&s->lock);
}

static void
server_renew (void)
{
  _cleanup_free_ char *db = sr_xasprintf ("%s/history.db", dir);
  _cleanup_free_ char *wal = sr_xasprintf ("%s/history.db-wal", dir);
  _cleanup_free_ char *shm = sr_xasprintf ("%s/history.db-shm", dir);
  sr_error_t err = NULL;

  sr_mcp_server_free (server);
  server = NULL;
  unlink (db);
  unlink (wal);
  unlink (shm);
  if (sr_mcp_server_new (&cfg, &server, &err) < 0)
    fuzz_die ("sr_mcp_server_new", &err);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  /* What a binary's main registers (cli/main-light.c).  */
  sr_backend_register (&sr_native_backend);
  dir = fuzz_tmpdir ("server");
  fuzz_config (&cfg, dir);
  /* Messages over the limit are refused before parsing: keep the limit
   * within what the fuzzer makes, so both paths run.  */
  cfg.max_message_size = 2048;
  server_renew ();
  return 0;
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct session s = { .lock = PTHREAD_MUTEX_INITIALIZER };
  struct sr_mcp_conn *c;
  const char *p = (const char *) data, *end = p + size;

  if (++inputs % RENEW_EVERY == 0)
    server_renew ();
  c = sr_mcp_conn_new (server, on_send, &s);
  while (p < end)
    {
      const char *nl = memchr (p, '\n', (size_t) (end - p));
      size_t len = nl ? (size_t) (nl - p) : (size_t) (end - p);

      /* The transport hands over a copy it owns, as stdio.c does.  */
      if (len > 0)
        {
          _cleanup_free_ char *msg = sr_xmalloc (len);

          memcpy (msg, p, len);
          sr_mcp_conn_handle (c, msg, len);
        }
      p += len + (nl ? 1 : 0);
    }
  sr_mcp_conn_close (c);
  pthread_mutex_destroy (&s.lock);
  return 0;
}
