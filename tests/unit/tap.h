/* A minimal TAP producer for the C unit tests: each check prints one
 * "ok N - name" or "not ok N - name" line; done_testing() prints the plan
 * and returns the exit status automake's tap-driver expects.  */
#ifndef SR_TAP_H
#define SR_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int tap_count, tap_failed;

static inline bool __attribute__ ((format (printf, 2, 3)))
ok (bool cond, const char *fmt, ...)
{
  va_list ap;

  tap_count++;
  if (!cond)
    tap_failed++;
  printf ("%sok %d - ", cond ? "" : "not ", tap_count);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
  return cond;
}

#define is_str(got, want, name)                                              \
  do {                                                                       \
    const char *_g = (got), *_w = (want);                                    \
    if (!ok (_g && _w ? strcmp (_g, _w) == 0 : _g == _w, "%s", name))        \
      printf ("#   got: '%s'\n#   expected: '%s'\n", _g ? _g : "(null)",   \
              _w ? _w : "(null)");                                           \
  } while (0)

#define is_int(got, want, name)                                              \
  do {                                                                       \
    long long _g = (got), _w = (want);                                       \
    if (!ok (_g == _w, "%s", name))                                          \
      printf ("#   got: %lld\n#   expected: %lld\n", _g, _w);                \
  } while (0)

static inline void
skip_all (const char *reason)
{
  printf ("1..0 # SKIP %s\n", reason);
}

static inline int
done_testing (void)
{
  printf ("1..%d\n", tap_count);
  return tap_failed ? 1 : 0;
}

#endif
