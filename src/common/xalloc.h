/* Memory: allocation that never returns NULL (sr_oom () reports and
 * aborts), the cleanup attribute and the hand-off of a pointer.  A module
 * of its own, below error.c and util.c, which both allocate.  */
#ifndef SR_COMMON_XALLOC_H
#define SR_COMMON_XALLOC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#define _cleanup_(f) __attribute__ ((cleanup (f)))
#define _cleanup_free_ _cleanup_ (sr_freep)

/* Hands ownership over: returns the value and leaves the variable empty.  */
#define TAKE_PTR(p) ({ __typeof__ (p) _tp = (p); (p) = NULL; _tp; })

static inline void
sr_freep (void *p)
{
  free (*(void **) p);
}

__attribute__ ((noreturn)) void sr_oom (void);
void *sr_xmalloc (size_t n);
void *sr_xcalloc (size_t n, size_t size);
void *sr_xrealloc (void *p, size_t n);
char *sr_xstrdup (const char *s);
char *sr_xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));
char *sr_xvasprintf (const char *fmt, va_list ap) __attribute__ ((format (printf, 1, 0)));

#endif
