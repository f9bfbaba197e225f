/* What a run_code asks for: the code, the program's other files, its
 * arguments and stdin, and how to report on it (sandbox/code.h runs it).
 * Types only, so that what reads a request (the code directory, the
 * compile cache) needs no more of run_code than this.  */
#ifndef SR_SANDBOX_CODE_REQUEST_H
#define SR_SANDBOX_CODE_REQUEST_H

#include <stddef.h>
#include <stdint.h>

/* One of a run's other files.  */
struct sr_code_file
{
  const char *name;      /* relative to SR_CODE_DIR, as sr_code_validate checks it */
  const char *content;
  size_t len;
};

struct sr_code_request
{
  const char *language;
  const char *code;
  size_t code_len;
  /* The run stage's stdin; NULL: empty, or stdin_pipe's.  */
  const char *stdin_data;
  size_t stdin_len;
  /* Without stdin_data: the read end of a pipe (above fd 2; the
   * caller's) that the run stage reads as its stdin, fed as it runs (a
   * task's, mcp/stdin-pipe.h); 0: none.  For the native backend, whose
   * program gets this very pipe as its fd 0, so its waits on it can be
   * seen; Docker relays stdin through a pipe of its own.  */
  int stdin_pipe;
  /* The program's arguments, after the run command's own.  */
  char *const *args;
  size_t n_args;
  const struct sr_code_file *files;
  size_t n_files;
  uint64_t timeout_ms;   /* 0: the configured default */
  uint64_t max_output;   /* bytes captured per stream; 0: the configured max_output */
  int cancel_fd;         /* readable cancels the run; -1: none */
  /* Called, on the calling thread, when a stage starts (output_bytes 0,
   * stream and chunk NULL) and as its output arrives: output_bytes of
   * stdout and stderr so far, the chunk that came (len bytes) and its
   * stream, "stdout" or "stderr".  */
  void (*on_progress) (const char *stage, uint64_t output_bytes, const char *stream,
                       const char *chunk, size_t len, void *userdata);
  void *userdata;
};

#endif
