/* The tar entry name sanitiser, sr_layer_clean_path (src/image/layer.c),
 * checked against a model written independently here: the result is the
 * name's components without empty and "." ones, joined by single slashes;
 * a ".." component or a result that does not fit is refused.  The output
 * buffer is a heap block of exactly the size passed, so ASan sees any
 * write past it.  The first input byte picks a small buffer size (1 to
 * 64) tried besides PATH_MAX; the rest is the name.  */
#include "config.h"

#include <limits.h>

#include "image/layer.h"
#include "tests/fuzz/fuzz.h"

/* The model: the expected result in want (which has room for the whole
 * name), or -1 for a ".." component.  */
static int
model (const char *name, char *want)
{
  size_t len = 0;

  want[0] = '\0';
  for (const char *p = name; *p;)
    {
      size_t n = strcspn (p, "/");

      if (n == 2 && p[0] == '.' && p[1] == '.')
        {
          want[len] = '\0';
          return -1;
        }
      if (n > 0 && !(n == 1 && p[0] == '.'))
        {
          if (len)
            want[len++] = '/';
          memcpy (want + len, p, n);
          len += n;
        }
      p += n;
      p += strspn (p, "/");
    }
  want[len] = '\0';
  return 0;
}

static void
check (const char *name, const char *want, int want_r, size_t out_len)
{
  char *out = sr_xmalloc (out_len);
  bool absolute = false, again_absolute = true;
  int r = sr_layer_clean_path (name, out, out_len, &absolute);
  size_t want_len = strlen (want);

  fuzz_check (r == 0 || r == -1, "returned %d", r);
  fuzz_check (absolute == (name[0] == '/'), "absolute flag %d for '%s'", absolute, name);
  if (want_r < 0)
    fuzz_check (r == -1, "accepted '%s' (a .. component) as '%s'", name, out);
  else if (want_len + 1 > out_len || want_len + 1 > PATH_MAX)
    fuzz_check (r == -1, "'%s' does not fit %zu bytes, yet was accepted", name, out_len);
  else
    {
      fuzz_check (r == 0, "refused '%s' (expected '%s')", name, want);
      fuzz_check (strcmp (out, want) == 0, "'%s' became '%s', expected '%s'", name, out, want);
      /* Clean names stay as they are.  */
      {
        char *again = sr_xmalloc (out_len);

        fuzz_check (sr_layer_clean_path (out, again, out_len, &again_absolute) == 0
                        && strcmp (again, out) == 0 && !again_absolute,
                    "cleaning '%s' again changed it", out);
        free (again);
      }
    }
  free (out);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  _cleanup_free_ char *name = NULL, *want = NULL;
  size_t small;
  int want_r;

  if (size == 0)
    return 0;
  small = (size_t) (data[0] % 64) + 1;
  name = fuzz_strndup (data + 1, size - 1);
  want = sr_xmalloc (strlen (name) + 1);
  want_r = model (name, want);
  check (name, want, want_r, PATH_MAX);
  check (name, want, want_r, small);
  return 0;
}
