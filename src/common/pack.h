/* Plain data to bytes and back, for a message to a process that has no
 * pointer of ours: numbers in host order (both ends are one binary on
 * one machine), strings with their length, NULL kept apart from "".
 * An unpacker never reads past its buffer: a short or malformed message
 * sets bad, and every later read gives 0 or NULL.  */
#ifndef SR_COMMON_PACK_H
#define SR_COMMON_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sr_pack
{
  char *buf;   /* the caller's, free (buf) */
  size_t len;
  size_t cap;
};

void sr_pack_bytes (struct sr_pack *p, const void *data, size_t n);
void sr_pack_u64 (struct sr_pack *p, uint64_t v);
/* s may be NULL.  */
void sr_pack_str (struct sr_pack *p, const char *s);

struct sr_unpack
{
  const char *at;
  size_t left;
  bool bad;
};

void sr_unpack_init (struct sr_unpack *u, const void *buf, size_t len);
bool sr_unpack_bytes (struct sr_unpack *u, void *out, size_t n);
uint64_t sr_unpack_u64 (struct sr_unpack *u);
/* A string as packed (NULL for NULL), pointing into the buffer, which
 * must outlive it.  */
const char *sr_unpack_str (struct sr_unpack *u);

#endif
