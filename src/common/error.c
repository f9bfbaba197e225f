#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/util.h"

int
sr_error_setv (sr_error_t *err, int errnum, const char *fmt, va_list ap)
{
  _cleanup_free_ char *text = NULL;
  struct sr_error_s *e;

  if (err == NULL)
    return -1;
  if (vasprintf (&text, fmt, ap) < 0)
    sr_oom ();
  e = sr_xmalloc (sizeof *e);
  e->errnum = errnum;
  if (errnum != 0)
    e->msg = sr_xasprintf ("%s: %s", text, strerror (errnum));
  else
    e->msg = TAKE_PTR (text);
  sr_error_free (err);
  *err = e;
  return -1;
}

int
sr_error_set (sr_error_t *err, int errnum, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  sr_error_setv (err, errnum, fmt, ap);
  va_end (ap);
  return -1;
}

int
sr_error_wrap (sr_error_t *err, const char *fmt, ...)
{
  _cleanup_free_ char *context = NULL;
  va_list ap;
  char *msg;

  if (err == NULL || *err == NULL)
    return -1;
  va_start (ap, fmt);
  if (vasprintf (&context, fmt, ap) < 0)
    sr_oom ();
  va_end (ap);
  msg = sr_xasprintf ("%s: %s", context, (*err)->msg);
  free ((*err)->msg);
  (*err)->msg = msg;
  return -1;
}

void
sr_error_free (sr_error_t *err)
{
  if (err == NULL || *err == NULL)
    return;
  free ((*err)->msg);
  free (*err);
  *err = NULL;
}

void
sr_error_move (sr_error_t *err, sr_error_t *from)
{
  if (err)
    {
      sr_error_free (err);
      *err = *from;
      *from = NULL;
    }
  else
    sr_error_free (from);
}
