/* Errors travel upward as an sr_error_t: errno plus a message that carries
 * its context ("mount proc on /proc: Operation not permitted"), and for a
 * failure that programs act on, a machine-readable code ("session_busy").
 * A function that can fail takes `sr_error_t *err` last and returns a
 * negative value (or NULL); on success it never touches *err.  Library
 * code never prints: only main() does.
 *
 * The code says what failed for the caller of the service (an MCP
 * refusal's "code", run-code's "failure"): the function that knows sets it
 * with the error, wrapping and moving keep it, and the few places that
 * answer a client read it with sr_error_code.  */
#ifndef SR_ERROR_H
#define SR_ERROR_H

#include <stdarg.h>

struct sr_error_s
{
  int errnum;       /* errno value, 0 when the failure did not come from errno.  */
  const char *code; /* a static name for programs, NULL when the failure has none */
  char *msg;
};
typedef struct sr_error_s *sr_error_t;

/* Sets *err (if err is not NULL) to the formatted message, followed by
 * ": strerror(errnum)" when errnum is not 0, without a code.  Returns -1
 * always, so callers can write `return sr_error_set (err, errno, "open
 * %s", path);`.  An error already in *err is replaced.  */
int sr_error_set (sr_error_t *err, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
int sr_error_setv (sr_error_t *err, int errnum, const char *fmt, va_list ap)
  __attribute__ ((format (printf, 3, 0)));

/* sr_error_set with a code: a string that lives as long as the program
 * ("path_outside_sandbox"), or NULL.  Returns -1.  */
int sr_error_set_code (sr_error_t *err, const char *code, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

/* As sr_error_set_code, but the message is fmt's alone, never followed by
 * strerror: for a failure that did not come from a system call, where
 * errnum only classifies it for callers that test it (EINVAL: the request
 * itself is wrong; ENOENT: what it names is not there) and its strerror
 * text would mislead.  Returns -1.  */
int sr_error_set_plain (sr_error_t *err, const char *code, int errnum, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

/* Prefixes an existing error with "context: ", keeping its errnum and
 * code.  Returns -1.  */
int sr_error_wrap (sr_error_t *err, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Gives the error in *err the code instead of its own (NULL: none), for a
 * caller that knows better than its callee what failed.  Accepts NULL and
 * an unset error.  Returns -1.  */
int sr_error_recode (sr_error_t *err, const char *code);

/* The code of err; NULL when it has none or err is NULL.  */
const char *sr_error_code (sr_error_t err);

/* Frees *err and sets it to NULL; accepts NULL and an unset error.  */
void sr_error_free (sr_error_t *err);

/* Hands the error in *from over to *err (message, errnum and code), or
 * frees it when err is NULL: for callers that inspect an error before
 * passing it on.  *from ends empty.  */
void sr_error_move (sr_error_t *err, sr_error_t *from);

#endif
