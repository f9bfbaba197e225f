/* The error object (src/common/error.h): the code it carries through
 * wrap and move, strerror in the message or not, and a NULL err.  */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "common/error.h"
#include "tap.h"

static void
test_set (void)
{
  sr_error_t err = NULL;

  ok (sr_error_set (&err, ENOENT, "open %s", "x") == -1, "sr_error_set returns -1");
  is_str (err->msg, "open x: No such file or directory", "the message ends in strerror");
  is_int (err->errnum, ENOENT, "errnum is kept");
  ok (sr_error_code (err) == NULL, "sr_error_set gives no code");
  sr_error_set (&err, 0, "plain");
  is_str (err->msg, "plain", "errnum 0: no strerror");
  sr_error_free (&err);
  ok (err == NULL, "sr_error_free empties it");
}

static void
test_code (void)
{
  sr_error_t err = NULL, other = NULL;

  ok (sr_error_set_code (&err, "quota_exceeded", ENOSPC, "write %s", "f") == -1,
      "sr_error_set_code returns -1");
  is_str (sr_error_code (err), "quota_exceeded", "the code is kept");
  is_str (err->msg, "write f: No space left on device", "the message ends in strerror");

  sr_error_wrap (&err, "session %s", "s1");
  is_str (err->msg, "session s1: write f: No space left on device", "wrap prefixes the message");
  is_str (sr_error_code (err), "quota_exceeded", "wrap keeps the code");
  is_int (err->errnum, ENOSPC, "wrap keeps errnum");

  sr_error_move (&other, &err);
  ok (err == NULL, "move empties the source");
  is_str (sr_error_code (other), "quota_exceeded", "move keeps the code");

  sr_error_recode (&other, "sandbox_error");
  is_str (sr_error_code (other), "sandbox_error", "recode replaces the code");
  is_str (other->msg, "session s1: write f: No space left on device", "... not the message");
  sr_error_recode (&other, NULL);
  ok (sr_error_code (other) == NULL, "recode NULL takes it away");

  sr_error_set (&other, EIO, "again");
  ok (sr_error_code (other) == NULL, "a new error replaces the old one and its code");
  sr_error_free (&other);
}

static void
test_plain (void)
{
  sr_error_t err = NULL;

  ok (sr_error_set_plain (&err, "unknown_language", EINVAL, "unknown language '%s'", "cobol")
          == -1,
      "sr_error_set_plain returns -1");
  is_str (err->msg, "unknown language 'cobol'", "the message has no strerror");
  is_int (err->errnum, EINVAL, "errnum is kept all the same");
  is_str (sr_error_code (err), "unknown_language", "so is the code");
  sr_error_free (&err);

  sr_error_set_plain (&err, NULL, EBADMSG, "digest mismatch");
  ok (sr_error_code (err) == NULL && err->errnum == EBADMSG, "a plain error without a code");
  sr_error_free (&err);
}

static void
test_null (void)
{
  sr_error_t err = NULL;

  ok (sr_error_set (NULL, EIO, "x") == -1, "sr_error_set accepts a NULL err");
  ok (sr_error_set_code (NULL, "io_error", EIO, "x") == -1, "so does sr_error_set_code");
  ok (sr_error_set_plain (NULL, "io_error", EIO, "x") == -1, "so does sr_error_set_plain");
  ok (sr_error_wrap (NULL, "x") == -1 && sr_error_wrap (&err, "x") == -1 && err == NULL,
      "wrap accepts a NULL err and an unset one");
  ok (sr_error_recode (NULL, "x") == -1 && sr_error_recode (&err, "x") == -1 && err == NULL,
      "so does recode");
  ok (sr_error_code (NULL) == NULL, "sr_error_code (NULL) is NULL");
  sr_error_set_code (&err, "session_busy", 0, "busy");
  sr_error_move (NULL, &err);
  ok (err == NULL, "move to NULL frees the error");
  sr_error_free (NULL);
  sr_error_free (&err);
  ok (true, "sr_error_free accepts NULL and an unset error");
}

int
main (void)
{
  test_set ();
  test_code ();
  test_plain ();
  test_null ();
  return done_testing ();
}
