/* A stand-in for sr_code_run, linked with -Wl,--wrap=sr_code_run: the
 * server and tools harnesses drive everything around a run (argument
 * checks, progress, cancellation, results, history) without starting
 * containers.  The "run" echoes the code as its stdout, so that fuzzed
 * code bytes (invalid UTF-8 among them) reach the result encoding, and
 * derives its outcome from the code's first byte.  */
#ifndef SR_FUZZ_FAKE_RUN_H
#define SR_FUZZ_FAKE_RUN_H

#include <poll.h>

#include "sandbox/code.h"
#include "tests/fuzz/fuzz.h"

int __wrap_sr_code_run (const struct sr_config *cfg, struct sr_store *store,
                        const struct sr_code_request *req, struct sr_code_result *res,
                        sr_error_t *err);

int
__wrap_sr_code_run (const struct sr_config *cfg, struct sr_store *store,
                    const struct sr_code_request *req, struct sr_code_result *res,
                    sr_error_t *err)
{
  const struct sr_language *l;
  unsigned char first = req->code_len ? (unsigned char) req->code[0] : 0;
  struct pollfd pfd = { .fd = req->cancel_fd, .events = POLLIN };

  memset (res, 0, sizeof *res);
  /* The real one validates first; so must every caller before it.  */
  if (sr_code_validate (cfg, req, &l, err) < 0)
    return -1;
  if (first == 'F')
    return sr_error_set_code (err, "image_missing", ENOENT, "image %s is not installed", l->image);
  if (req->on_progress)
    {
      req->on_progress ("run", 0, NULL, NULL, 0, req->userdata);
      req->on_progress ("run", req->code_len, "stdout", req->code, req->code_len,
                        req->userdata);
    }
  res->language = sr_xstrdup (l->name);
  res->status = (enum sr_code_status) (first % (SR_CODE_CANCELLED + 1));
  if (req->cancel_fd >= 0 && poll (&pfd, 1, 0) == 1)
    res->status = SR_CODE_CANCELLED;
  res->compiled = l->compile[0] != '\0';
  res->run.exit_code = first & 0x7f;
  res->run.signal = first & 0x80 ? first & 0x1f : 0;
  res->run.out.data = sr_xmalloc (req->code_len + 1);
  memcpy (res->run.out.data, req->code, req->code_len);
  res->run.out.data[req->code_len] = '\0';
  res->run.out.len = res->run.out.total = req->code_len;
  res->run.out.truncated = first & 1;
  res->run.err.data = sr_xstrdup (req->language);
  res->run.err.len = res->run.err.total = strlen (req->language);
  res->duration_ms = req->code_len;
  return 0;
}

#endif
