#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/xalloc.h"

/* The one place an error is made: code may be NULL; strerror (errnum) follows the
 * message when with_strerror and errnum is not 0.  */
static int __attribute__ ((format (printf, 5, 0)))
error_make (sr_error_t *err, const char *code, int errnum, bool with_strerror, const char *fmt,
            va_list ap)
{
  _cleanup_free_ char *text = NULL;
  struct sr_error_s *e;

  if (err == NULL)
    return -1;
  if (vasprintf (&text, fmt, ap) < 0)
    sr_oom ();
  e = sr_xmalloc (sizeof *e);
  e->errnum = errnum;
  e->code = code;
  if (with_strerror && errnum != 0)
    e->msg = sr_xasprintf ("%s: %s", text, strerror (errnum));
  else
    e->msg = TAKE_PTR (text);
  sr_error_free (err);
  *err = e;
  return -1;
}

int
sr_error_setv (sr_error_t *err, int errnum, const char *fmt, va_list ap)
{
  return error_make (err, NULL, errnum, true, fmt, ap);
}

int
sr_error_set (sr_error_t *err, int errnum, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  error_make (err, NULL, errnum, true, fmt, ap);
  va_end (ap);
  return -1;
}

int
sr_error_set_code (sr_error_t *err, const char *code, int errnum, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  error_make (err, code, errnum, true, fmt, ap);
  va_end (ap);
  return -1;
}

int
sr_error_set_plain (sr_error_t *err, const char *code, int errnum, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  error_make (err, code, errnum, false, fmt, ap);
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

int
sr_error_recode (sr_error_t *err, const char *code)
{
  if (err && *err)
    (*err)->code = code;
  return -1;
}

const char *
sr_error_code (sr_error_t err)
{
  return err ? err->code : NULL;
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
