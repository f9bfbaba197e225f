/* The server's log: one line per event (start, listen, each request, an
 * authentication failure, a run, a session opened or closed, shutdown),
 * on stderr, where journald takes it, or in log_file, which serve puts on
 * stderr.  Text (time, level, event, then key=value fields, logfmt) or
 * JSON, one object a line, for log shippers.  Nothing is written before
 * sr_log_setup: the CLI's one-shot commands do not log.  A line is one
 * write(2), so threads do not interleave theirs.  */
#ifndef SR_LOG_H
#define SR_LOG_H

#include <stdbool.h>

#include "common/error.h"

enum sr_log_level
{
  SR_LOG_DEBUG,
  SR_LOG_INFO,
  SR_LOG_WARNING,
  SR_LOG_ERROR,
};

/* The level named name ("debug", "info", "warning", "error"); an error
 * naming the levels otherwise.  */
int sr_log_level_parse (const char *name, enum sr_log_level *ret, sr_error_t *err);
/* The format named name: "text" (false) or "json" (true).  */
int sr_log_format_parse (const char *name, bool *ret_json, sr_error_t *err);

/* Logs events at level and above from now on, as JSON when json.  */
void sr_log_setup (enum sr_log_level level, bool json);

/* Logs event, a word such as "request", with its fields: pairs of key
 * and value strings, ended by NULL (a NULL value leaves its key out).  */
void sr_log (enum sr_log_level level, const char *event, ...) __attribute__ ((sentinel));

#endif
