/* Allocation that cannot fail: on exhaustion the process says so and
 * aborts, as there is nothing sensible a caller could do instead.  */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xalloc.h"

void
sr_oom (void)
{
  static const char msg[] = "sandbox-runner: out of memory\n";

  (void) !write (STDERR_FILENO, msg, sizeof msg - 1);
  abort ();
}

void *
sr_xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);

  if (p == NULL)
    sr_oom ();
  return p;
}

void *
sr_xcalloc (size_t n, size_t size)
{
  void *p = calloc (n ? n : 1, size ? size : 1);

  if (p == NULL)
    sr_oom ();
  return p;
}

void *
sr_xrealloc (void *p, size_t n)
{
  p = realloc (p, n ? n : 1);
  if (p == NULL)
    sr_oom ();
  return p;
}

char *
sr_xstrdup (const char *s)
{
  char *p = strdup (s);

  if (p == NULL)
    sr_oom ();
  return p;
}

char *
sr_xvasprintf (const char *fmt, va_list ap)
{
  char *s;

  if (vasprintf (&s, fmt, ap) < 0)
    sr_oom ();
  return s;
}

char *
sr_xasprintf (const char *fmt, ...)
{
  va_list ap;
  char *s;

  va_start (ap, fmt);
  s = sr_xvasprintf (fmt, ap);
  va_end (ap);
  return s;
}
