/* Untrusted output is arbitrary bytes; JSON needs valid UTF-8.  */
#ifndef SR_UTF8_H
#define SR_UTF8_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

/* Returns a NUL-terminated copy of buf[0..len) in which every byte sequence
 * that is not well-formed UTF-8 (overlong forms, surrogates, code points past
 * U+10FFFF, truncated sequences) and every NUL is replaced by U+FFFD.  */
char *sr_utf8_sanitize (const char *buf, size_t len, size_t *ret_len);

/* Adds text for people (a message that may quote a name) to o as key,
 * sanitized as sr_utf8_sanitize does.  */
void sr_utf8_add_text (cJSON *o, const char *key, const char *text);

/* Whether buf[0..len) is well-formed UTF-8 without NUL.  */
bool sr_utf8_valid (const char *buf, size_t len);

/* The wire form of a name (a path) that is not valid UTF-8: s with each
 * backslash doubled and each byte outside a well-formed sequence written
 * as a backslash, 'x' and two lowercase hex digits (b"bad\xff.txt" gives
 * the text bad\xff.txt), so the text reads like the name and maps back
 * to its bytes.  */
char *sr_utf8_escape_name (const char *s);

/* Adds the name (a path from a container: arbitrary bytes but NUL) to o
 * as key, always valid UTF-8: the name itself when it is valid UTF-8;
 * else key holds sr_utf8_escape_name (name) and "<key>_base64" the
 * name's bytes in base64, which the tools taking that path accept back
 * as "<key>_base64".  The one place names go to JSON.  */
void sr_utf8_add_name (cJSON *o, const char *key, const char *name);

#endif
