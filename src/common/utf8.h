/* Untrusted output is arbitrary bytes; JSON needs valid UTF-8.  */
#ifndef SR_UTF8_H
#define SR_UTF8_H

#include <stddef.h>

/* Returns a NUL-terminated copy of buf[0..len) in which every byte sequence
 * that is not well-formed UTF-8 (overlong forms, surrogates, code points past
 * U+10FFFF, truncated sequences) and every NUL is replaced by U+FFFD.  */
char *sr_utf8_sanitize (const char *buf, size_t len, size_t *ret_len);

#endif
