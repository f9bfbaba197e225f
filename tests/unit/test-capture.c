#include <config.h>

#include <string.h>

#include "common/run-result.h"
#include "common/util.h"
#include "tap.h"

static struct sr_captured
captured (const char *text, size_t cap)
{
  struct sr_capture c = { .cap = cap };

  sr_capture_add (&c, text, strlen (text));
  return sr_capture_finish (&c);
}

int
main (void)
{
  struct sr_captured c = captured ("0123456789abcdefghijklmno", 10);

  is_str (c.data, "0123456789\n[sandbox-runner: output truncated after 10 bytes; 15 bytes dropped]\n",
          "a capture past its cap ends with the marker");
  ok (sr_captured_output_len (&c) == 10, "the output before the marker is the cap");
  sr_captured_cut (&c, 4);
  is_str (c.data, "0123\n[sandbox-runner: output truncated after 4 bytes; 21 bytes dropped]\n",
          "a cut keeps the head and counts the rest of what was written as dropped");
  ok (c.truncated && sr_captured_output_len (&c) == 4, "and it is still truncated, 4 bytes of output");
  sr_captured_cut (&c, 9);
  ok (sr_captured_output_len (&c) == 4, "a cut to more than it holds changes nothing");
  sr_captured_done (&c);

  c = captured ("short", 10);
  sr_captured_cut (&c, 5);
  is_str (c.data, "short", "output that fits is left as it is");
  sr_captured_cut (&c, 2);
  is_str (c.data, "sh\n[sandbox-runner: output truncated after 2 bytes; 3 bytes dropped]\n",
          "output that did not need the capture's cap gets the marker when cut");
  ok (c.truncated, "and is truncated");
  sr_captured_done (&c);

  c = captured ("x\n[sandbox-runner: output truncated after 1 bytes; 1 bytes dropped]\nmore output", 75);
  ok (sr_captured_output_len (&c) == 75, "the marker found is the last one, not one the program printed");
  sr_captured_done (&c);
  return done_testing ();
}
