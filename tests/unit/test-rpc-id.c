/* The id of an oversized JSON-RPC message, found in its first and last
 * bytes (src/mcp/rpc-id.c).  */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/util.h"
#include "mcp/rpc-id.h"
#include "tap.h"

/* The id found in the whole of msg given as both head and tail, printed
 * as JSON ("7", "\"a\"") or NULL.  */
static char *
found (const char *head, size_t head_len, const char *tail, size_t tail_len)
{
  _cleanup_json_ cJSON *id = sr_rpc_find_id (head, head_len, tail, tail_len);

  return id ? cJSON_PrintUnformatted (id) : NULL;
}

static void
whole (const char *name, const char *msg, const char *want)
{
  _cleanup_free_ char *got = found (msg, strlen (msg), msg, strlen (msg));

  is_str (got, want, name);
}

/* Only the first head bytes and the last tail bytes of msg.  */
static void
cut (const char *name, const char *msg, size_t head, size_t tail, const char *want)
{
  size_t len = strlen (msg);
  _cleanup_free_ char *got = found (msg, head < len ? head : len,
                                    msg + (tail < len ? len - tail : 0), tail < len ? tail : len);

  is_str (got, want, name);
}

/* A request of the official SDK's shape (id last) with a payload of n
 * bytes, fed through the scan in pieces of step bytes.  */
static void
streamed (const char *name, const char *id_json, size_t n, size_t step, const char *want)
{
  _cleanup_free_ char *pad = sr_xmalloc (n + 1);
  _cleanup_free_ char *msg = NULL, *got = NULL;
  struct sr_rpc_id_scan *s = sr_xcalloc (1, sizeof *s);
  cJSON *id;
  size_t len;

  memset (pad, 'A', n);
  pad[n] = '\0';
  msg = sr_xasprintf ("{\"method\":\"tools/call\",\"params\":{\"name\":\"upload_file\","
                      "\"arguments\":{\"content_base64\":\"%s\",\"id\":99}},"
                      "\"jsonrpc\":\"2.0\",\"id\":%s}\n",
                      pad, id_json);
  len = strlen (msg);
  for (size_t off = 0; off < len; off += step)
    sr_rpc_id_scan_feed (s, msg + off, len - off < step ? len - off : step);
  ok (s->total == len, "%s: every byte counted", name);
  id = sr_rpc_id_scan_result (s);
  got = id ? cJSON_PrintUnformatted (id) : NULL;
  cJSON_Delete (id);
  is_str (got, want, name);
  free (s);
}

int
main (void)
{
  /* Whole messages, the id anywhere among the top members.  */
  whole ("a number id first", "{\"id\":7,\"method\":\"ping\"}", "7");
  whole ("a number id last", "{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":42}", "42");
  whole ("a negative, fractional id", "{\"id\": -1.5e3 , \"method\":\"x\"}", "-1500");
  whole ("a string id", "{\"id\":\"abc\",\"method\":\"ping\"}", "\"abc\"");
  whole ("a string id with escaped quotes", "{\"method\":\"x\",\"id\":\"a\\\"b\\\\\"}",
         "\"a\\\"b\\\\\"");
  whole ("a string id with a unicode escape", "{\"id\":\"\\u00e9t\\u00e9\"}",
         "\"\xc3\xa9t\xc3\xa9\"");
  whole ("a key spelled with an escape", "{\"\\u0069d\":5,\"method\":\"x\"}", "5");
  whole ("spaces and newlines", " {\n \"id\" :\t\"x y\" ,\"method\":\"m\" }\r\n",
         "\"x y\"");
  whole ("an id inside params is not the message's", "{\"method\":\"x\",\"params\":{\"id\":3}}",
         NULL);
  whole ("a string that looks like a member", "{\"method\":\"x\",\"params\":\"\\\",\\\"id\\\":4\"}",
         NULL);
  whole ("a nested id before the top one",
         "{\"params\":{\"id\":1,\"a\":[{\"id\":2},\"}\"]},\"id\":3}", "3");
  whole ("an object id is no id", "{\"id\":{\"n\":1},\"method\":\"x\"}", NULL);
  whole ("a null id is no id", "{\"id\":null,\"method\":\"x\"}", NULL);
  whole ("a batch has no id", "[{\"id\":1,\"method\":\"x\"}]", NULL);
  whole ("not JSON", "hello", NULL);
  whole ("empty", "", NULL);

  /* Truncated: only the ends are kept.  */
  cut ("id first, in the head", "{\"id\":\"first\",\"params\":{\"data\":\"xxxxxxxxxxxxxxxxxxxx\"}}",
       20, 5, "\"first\"");
  cut ("a number cut by the head's end is not trusted",
       "{\"id\":12345,\"params\":{\"data\":\"xxxxxxxxxxxxxxxxxxxx\"}}", 9, 3, NULL);
  cut ("a string cut by the head's end is not trusted",
       "{\"id\":\"abcdef\",\"params\":{\"data\":\"xxxxxxxxxxxxxxxxxxxx\"}}", 10, 3, NULL);
  cut ("id last, in the tail",
       "{\"method\":\"x\",\"params\":{\"data\":\"xxxxxxxxxxxxxxxxxxxx\"},\"jsonrpc\":\"2.0\","
       "\"id\":17}",
       12, 10, "17");
  cut ("a string id with an escaped quote, in the tail",
       "{\"params\":{\"data\":\"xxxxxxxxxxxxxxxxxxxx\"},\"id\":\"q\\\"x\"}", 5, 13,
       "\"q\\\"x\"");
  cut ("the tail begins inside the id",
       "{\"params\":{\"data\":\"xxxxxxxxxxxxxxxxxxxx\"},\"id\":\"longer-id\"}", 5, 8, NULL);
  cut ("the tail begins inside the number", "{\"params\":{\"data\":\"xxxxxxxxxxxx\"},\"id\":123456}",
       5, 4, NULL);
  cut ("a last member that is not id", "{\"id\":1,\"params\":{\"data\":\"xxxxxxxxxxxxxxxxx\"},\"x\":2}",
       3, 10, NULL);
  cut ("a payload that ends like an id",
       "{\"params\":{\"data\":\"xxxxxxxxxxxx\",\"id\":5},\"x\":\"y\"}", 3, 20, NULL);
  cut ("a nested id just before the end",
       "{\"params\":{\"data\":\"xxxxxxxxxxxx\",\"id\":5}}", 3, 20, NULL);
  cut ("a tail of backslashes cannot be told", "{\"params\":\"x\",\"id\":\"\\\\\\\\\"}", 3, 6,
       NULL);

  /* Fed in pieces, past the bytes kept.  */
  streamed ("an 8 MiB request in 64 KiB reads, number id", "1234", 8u << 20, 65536, "1234");
  streamed ("a request in 1-byte reads, string id", "\"req-\\\"7\\\"\"", 10000, 1,
            "\"req-\\\"7\\\"\"");
  streamed ("a request smaller than what is kept", "5", 10, 7, "5");
  streamed ("reads larger than what is kept", "\"x\"", 100000, 50000, "\"x\"");
  return done_testing ();
}
