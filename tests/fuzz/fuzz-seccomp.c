/* The seccomp profile parser and compiler (src/runtime/seccomp.c): an
 * OCI linux.seccomp JSON document in, a BPF program or an error naming
 * the problem out.  No cache directory is set, so nothing is written.  */
#include "config.h"

#include <stddef.h> /* seccomp.h uses size_t without it */

#include "runtime/seccomp.h"
#include "tests/fuzz/fuzz.h"

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct sr_seccomp_filter *f = NULL;
  sr_error_t err = NULL;

  if (sr_seccomp_filter_from_json ((const char *) data, size, "fuzz", &f, &err) < 0)
    {
      fuzz_check (f == NULL, "a refused profile produced a filter");
      fuzz_check (err && err->msg && strncmp (err->msg, "seccomp profile fuzz: ", 22) == 0,
                  "the error does not name the profile: %s", err ? err->msg : "(none)");
      sr_error_free (&err);
      return 0;
    }
  fuzz_check (f != NULL && err == NULL, "an accepted profile without a filter");
  sr_seccomp_filter_free (f);
  return 0;
}
