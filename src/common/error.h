/* Errors travel upward as an sr_error_t: errno plus a message that carries
 * its context ("mount proc on /proc: Operation not permitted").  A function
 * that can fail takes `sr_error_t *err` last and returns a negative value
 * (or NULL); on success it never touches *err.  Library code never prints:
 * only main() does.  */
#ifndef SR_ERROR_H
#define SR_ERROR_H

#include <stdarg.h>

struct sr_error_s
{
  int errnum; /* errno value, 0 when the failure did not come from errno.  */
  char *msg;
};
typedef struct sr_error_s *sr_error_t;

/* Sets *err (if err is not NULL) to the formatted message, followed by
 * ": strerror(errnum)" when errnum is not 0.  Returns -1 always, so callers
 * can write `return sr_error_set (err, errno, "open %s", path);`.  */
int sr_error_set (sr_error_t *err, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
int sr_error_setv (sr_error_t *err, int errnum, const char *fmt, va_list ap)
  __attribute__ ((format (printf, 3, 0)));

/* Prefixes an existing error with "context: ".  Returns -1.  */
int sr_error_wrap (sr_error_t *err, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Frees *err and sets it to NULL; accepts NULL and an unset error.  */
void sr_error_free (sr_error_t *err);

/* Hands the error in *from over to *err, or frees it when err is NULL:
 * for callers that inspect an error before passing it on.  *from ends
 * empty.  */
void sr_error_move (sr_error_t *err, sr_error_t *from);

#endif
