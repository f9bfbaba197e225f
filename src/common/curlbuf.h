/* A growing byte buffer, and the write callback that fills one from a
 * libcurl transfer: the HTTP bodies of the registry client
 * (image/registry*.c) and the Docker client (docker/engine*.c).  The
 * callback has libcurl's CURLOPT_WRITEFUNCTION signature but needs no
 * libcurl header, so this file links without it.  Also the parsing of
 * the header lines a CURLOPT_HEADERFUNCTION gets, for the same clients
 * and the session client (cli/session_*.c).  */
#ifndef SR_COMMON_CURLBUF_H
#define SR_COMMON_CURLBUF_H

#include <stdbool.h>
#include <stddef.h>

struct sr_buf
{
  char *data;           /* NUL-terminated past len; NULL while empty */
  size_t len, cap;
  size_t max;           /* for sr_buf_curl_write: 0, no limit */
};

void sr_buf_append (struct sr_buf *b, const void *d, size_t n);
/* Frees the data; max is kept.  */
void sr_buf_done (struct sr_buf *b);

/* CURLOPT_WRITEFUNCTION with CURLOPT_WRITEDATA a struct sr_buf: appends,
 * and fails the transfer (returns 0) past b->max.  */
size_t sr_buf_curl_write (char *ptr, size_t size, size_t nmemb, void *userdata);

/* When line (len bytes, as libcurl hands a header line over: not
 * NUL-terminated, CRLF at the end) is the header "name: value", name in
 * any case, returns the value (malloc'd) without the blanks around it;
 * else NULL.  */
char *sr_curl_header_value (const char *line, size_t len, const char *name);
/* The same, when line is that header, replaces *field (freed) with its
 * value and returns true.  */
bool sr_curl_header_take (const char *line, size_t len, const char *name, char **field);

#endif
