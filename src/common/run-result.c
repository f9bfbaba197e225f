#include <config.h>

#include "common/run-result.h"

#include <stdlib.h>
#include <string.h>

#include "common/defaults.h"
#include "common/util.h"

const char *
sr_run_status_name (enum sr_run_status s)
{
  switch (s)
    {
    case SR_RUN_SUCCESS: return "success";
    case SR_RUN_ERROR: return "error";
    case SR_RUN_TIMEOUT: return "timeout";
    case SR_RUN_OOM: return "oom";
    case SR_RUN_CANCELLED: return "cancelled";
    }
  return "unknown";
}

void
sr_run_result_done (struct sr_run_result *r)
{
  sr_captured_done (&r->out);
  sr_captured_done (&r->err);
}

void
sr_capture_add (struct sr_capture *cap, const char *buf, size_t len)
{
  size_t room = cap->cap - cap->c.len;
  size_t keep = len < room ? len : room;

  cap->c.total += len;
  if (keep < len)
    cap->c.truncated = true;
  if (keep == 0)
    return;
  if (cap->c.len + keep + 1 > cap->alloc)
    {
      size_t want = cap->alloc ? cap->alloc * 2 : 4096;

      while (want < cap->c.len + keep + 1)
        want *= 2;
      if (want > cap->cap + 1)
        want = cap->cap + 1;
      cap->c.data = sr_xrealloc (cap->c.data, want);
      cap->alloc = want;
    }
  memcpy (cap->c.data + cap->c.len, buf, keep);
  cap->c.len += keep;
  cap->c.data[cap->c.len] = '\0';
}

/* Ends c's first len bytes with the truncation marker.  */
static void
add_marker (struct sr_captured *c, size_t len)
{
  _cleanup_free_ char *marker = sr_xasprintf (SR_TRUNCATION_MARKER_FMT, len,
                                              (unsigned long long) (c->total - len));
  size_t mlen = strlen (marker);

  c->data = sr_xrealloc (c->data, len + mlen + 1);
  memcpy (c->data + len, marker, mlen + 1);
  c->len = len + mlen;
  c->truncated = true;
}

struct sr_captured
sr_capture_finish (struct sr_capture *cap)
{
  struct sr_captured c;

  if (cap->c.data == NULL)
    cap->c.data = sr_xstrdup ("");
  if (cap->c.truncated)
    add_marker (&cap->c, cap->c.len);
  c = cap->c;
  memset (cap, 0, sizeof *cap);
  return c;
}

size_t
sr_captured_output_len (const struct sr_captured *c)
{
  /* The marker's fixed start: the format up to its first conversion.  */
  size_t plen = strcspn (SR_TRUNCATION_MARKER_FMT, "%");

  if (!c->truncated)
    return c->len;
  /* The last one: the output itself may hold the text.  */
  for (size_t at = c->len >= plen ? c->len - plen + 1 : 0; at-- > 0;)
    if (memcmp (c->data + at, SR_TRUNCATION_MARKER_FMT, plen) == 0)
      return at;
  return c->len;
}

void
sr_captured_cut (struct sr_captured *c, size_t keep)
{
  if (keep >= sr_captured_output_len (c))
    return;
  add_marker (c, keep);
}

void
sr_captured_done (struct sr_captured *c)
{
  free (c->data);
  memset (c, 0, sizeof *c);
}

const char *
sr_limit_mechanism_name (enum sr_limit_mechanism m)
{
  switch (m)
    {
    case SR_LIMIT_CGROUP2:
      return "cgroup2";
    case SR_LIMIT_CGROUP1:
      return "cgroup1";
    case SR_LIMIT_RLIMIT:
      return "rlimit";
    case SR_LIMIT_NONE:
      break;
    }
  return "none";
}

const char *
sr_code_status_name (enum sr_code_status s)
{
  switch (s)
    {
    case SR_CODE_SUCCESS: return "success";
    case SR_CODE_ERROR: return "error";
    case SR_CODE_TIMEOUT: return "timeout";
    case SR_CODE_COMPILE_ERROR: return "compile_error";
    case SR_CODE_OOM: return "oom";
    case SR_CODE_CANCELLED: return "cancelled";
    }
  return "unknown";
}
