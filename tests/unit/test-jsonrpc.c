/* The JSON-RPC parse's finding of a string that held a NUL (\u0000),
 * which cJSON ends the string at: the member it is under is named, so
 * that the tool refuses it rather than take it cut short.  */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/jsonrpc.h"
#include "tests/unit/tap.h"

/* The nul_member of the request with params params_text (NULL: want
 * none).  */
static void
check (const char *params_text, const char *want, const char *name)
{
  char json[512], *error = NULL;
  struct sr_rpc_message m;

  snprintf (json, sizeof json, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
            "\"params\":%s}", params_text);
  if (!ok (sr_rpc_parse (json, strlen (json), &m, &error) == 0, "%s: it parses", name))
    {
      free (error);
      return;
    }
  is_str (m.nul_member, want, name);
  sr_rpc_message_done (&m);
}

int
main (void)
{
  char *error = NULL;
  struct sr_rpc_message m;
  static const char notification[] =
    "{\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"x\":\"\\u0000\"}}";

  check ("{\"name\":\"file_write\",\"arguments\":{\"content\":\"text\"}}", NULL,
         "no NUL: none named");
  check ("{\"name\":\"file_write\",\"arguments\":{\"path\":\"p\",\"content\":\"a\\u0000b\"}}",
         "content", "a NUL in a value names its member");
  check ("{\"arguments\":{\"content\" : \"\\u00001\",\"path\":\"p\"}}", "content",
         "... with blanks around the colon, and a NUL first");
  check ("{\"arguments\":{\"content\":\"a\\\\u0000b\"}}", NULL,
         "an escaped backslash before u0000 is no NUL");
  check ("{\"arguments\":{\"content\":\"\\\"\\\\\\u0000\"}}", "content",
         "escaped quote and backslash, then a NUL");
  check ("{\"arguments\":{\"o\":{\"deep\":\"\\u0000\"}}}", "deep",
         "in a nested object, the innermost member");
  check ("{\"arguments\":{\"list\":[\"ok\",\"\\u0000\"]}}", "list",
         "in an array, the array's member");
  check ("{\"arguments\":{\"s\":\"\\u00e9\\u0001\"}}", NULL, "other escapes are no NUL");

  ok (sr_rpc_parse (notification, strlen (notification), &m, &error) == 0
      && m.nul_member == NULL, "a notification is not searched (nothing refuses it)");
  sr_rpc_message_done (&m);

  for (int i = 0; i < 4; i++)
    {
      cJSON *id = cJSON_CreateNumber (7);
      char *text = i == 0   ? sr_rpc_result (id, NULL)
                   : i == 1 ? sr_rpc_error (id, -32600, "no", NULL)
                   : i == 2 ? sr_rpc_error (NULL, -32700, "no", NULL)
                            : sr_rpc_notification ("notifications/progress",
                                                   cJSON_CreateObject ());

      ok (sr_rpc_is_notification (text) == (i == 3), "%s: %s a notification", text,
          i == 3 ? "is" : "is not");
      free (text);
      cJSON_Delete (id);
    }
  return done_testing ();
}
