/* run_code's inputs without a container: which file names, stdin and
 * args sr_code_validate takes and the code each refusal carries, and
 * sr_code_write_inputs writing the files beside the code without
 * following a symlink a session's code may have left in their way.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "sandbox/code-internal.h"
#include "sandbox/code.h"
#include "tap.h"

static struct sr_language python = {
  .name = (char *) "python", .image = (char *) "python", .source = (char *) "main.py",
  .compile = (char *) "", .run = (char *) "python3 /scratch/main.py", .sources = (char *) "",
};

static const struct sr_config cfg = {
  .max_code_size = SR_DEFAULT_MAX_CODE_SIZE, .max_timeout_ms = SR_MAX_TIMEOUT_MS,
  .max_stdin_size = 8, .max_code_file_size = 8, .max_code_files_size = 12,
  .languages = &python, .n_languages = 1,
};

/* The code of validating req with files f[n] (NULL: accepted).  */
static const char *
refusal (struct sr_code_request req, const struct sr_code_file *f, size_t n)
{
  static char code[64];
  const struct sr_language *l;
  sr_error_t err = NULL;

  req.language = "python";
  req.code = "print(1)";
  req.code_len = 8;
  req.files = f;
  req.n_files = n;
  if (sr_code_validate (&cfg, &req, &l, &err) == 0)
    return NULL;
  snprintf (code, sizeof code, "%s", sr_error_code (err) ? sr_error_code (err) : "(none)");
  if (err->errnum != EINVAL)
    snprintf (code, sizeof code, "errnum %d", err->errnum);
  sr_error_free (&err);
  return code;
}

static const char *
name_refusal (const char *name)
{
  struct sr_code_file f = { .name = name, .content = "x", .len = 1 };

  return refusal ((struct sr_code_request){ .cancel_fd = -1 }, &f, 1);
}

static void
test_names (void)
{
  char long_name[NAME_MAX + 2];

  memset (long_name, 'a', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  is_str (name_refusal ("util.py"), NULL, "a plain name is taken");
  is_str (name_refusal ("pkg/sub/util.py"), NULL, "a name with directories is taken");
  is_str (name_refusal (".hidden"), NULL, "a name starting with a dot is taken");
  is_str (name_refusal (""), "invalid_file_name", "an empty name is refused");
  is_str (name_refusal ("/etc/passwd"), "invalid_file_name", "an absolute name is refused");
  is_str (name_refusal ("../x"), "invalid_file_name", "a .. component is refused");
  is_str (name_refusal ("a/../b"), "invalid_file_name", "a .. inside is refused");
  is_str (name_refusal ("./x"), "invalid_file_name", "a . component is refused");
  is_str (name_refusal ("a//b"), "invalid_file_name", "an empty component is refused");
  is_str (name_refusal ("dir/"), "invalid_file_name", "a trailing slash is refused");
  is_str (name_refusal (long_name), "invalid_file_name", "a component over NAME_MAX is refused");
  is_str (name_refusal ("main.py"), "invalid_file_name", "the entry point's name is refused");
  is_str (name_refusal ("main.py/x"), "invalid_file_name", "a name under the entry point is refused");
  {
    struct sr_code_file f[] = { { "a.py", "x", 1 }, { "a.py", "y", 1 } };

    is_str (refusal ((struct sr_code_request){ 0 }, f, 2), "invalid_file_name",
            "a name given twice is refused");
  }
  {
    struct sr_code_file f[] = { { "pkg/a.py", "x", 1 }, { "pkg", "y", 1 } };

    is_str (refusal ((struct sr_code_request){ 0 }, f, 2), "invalid_file_name",
            "a file where another needs a directory is refused");
  }
}

static void
test_caps (void)
{
  struct sr_code_file big = { "a", "123456789", 9 };
  struct sr_code_file two[] = { { "a", "1234567", 7 }, { "b", "1234567", 7 } };
  struct sr_code_file many[SR_MAX_CODE_FILES + 1];
  char *args[SR_MAX_CODE_ARGS + 1], *huge = sr_xmalloc (SR_MAX_CODE_ARGS_SIZE + 1);

  is_str (refusal ((struct sr_code_request){ .stdin_data = "12345678", .stdin_len = 8 }, NULL, 0),
          NULL, "a stdin at max_stdin_size is taken");
  is_str (refusal ((struct sr_code_request){ .stdin_data = "123456789", .stdin_len = 9 }, NULL, 0),
          "stdin_too_large", "one byte more is stdin_too_large");
  is_str (refusal ((struct sr_code_request){ 0 }, &big, 1), "file_too_large",
          "a file over max_code_file_size is file_too_large");
  is_str (refusal ((struct sr_code_request){ 0 }, two, 2), "files_too_large",
          "files over max_code_files_size together are files_too_large");
  for (size_t i = 0; i <= SR_MAX_CODE_FILES; i++)
    many[i] = (struct sr_code_file){ sr_xasprintf ("f%zu", i), "", 0 };
  is_str (refusal ((struct sr_code_request){ 0 }, many, SR_MAX_CODE_FILES), NULL,
          "SR_MAX_CODE_FILES files are taken");
  is_str (refusal ((struct sr_code_request){ 0 }, many, SR_MAX_CODE_FILES + 1), "too_many_files",
          "one more is too_many_files");
  for (size_t i = 0; i <= SR_MAX_CODE_FILES; i++)
    free ((char *) many[i].name);
  for (size_t i = 0; i <= SR_MAX_CODE_ARGS; i++)
    args[i] = (char *) "";
  is_str (refusal ((struct sr_code_request){ .args = args, .n_args = SR_MAX_CODE_ARGS }, NULL, 0),
          NULL, "SR_MAX_CODE_ARGS args are taken");
  is_str (refusal ((struct sr_code_request){ .args = args, .n_args = SR_MAX_CODE_ARGS + 1 }, NULL,
                   0),
          "too_many_args", "one more is too_many_args");
  memset (huge, 'a', SR_MAX_CODE_ARGS_SIZE);
  huge[SR_MAX_CODE_ARGS_SIZE] = '\0';
  args[0] = huge;
  is_str (refusal ((struct sr_code_request){ .args = args, .n_args = 1 }, NULL, 0), "args_too_large",
          "args over SR_MAX_CODE_ARGS_SIZE (with their NULs) are args_too_large");
  free (huge);
}

static void
test_write (void)
{
  char dir[] = "/tmp/sr-test-code-inputs-XXXXXX", outside[] = "/tmp/sr-test-code-outside-XXXXXX";
  struct sr_code_file f[] = { { "util.py", "u", 1 }, { "pkg/sub/m.py", "m", 1 } };
  struct sr_code_request req = { .code = "c", .code_len = 1, .files = f, .n_files = 2 };
  struct sr_code_file through = { "link/evil.py", "e", 1 };
  int dfd;
  sr_error_t err = NULL;
  struct stat st;
  char buf[4] = { 0 };
  _cleanup_free_ char *evil = NULL;

  if (mkdtemp (dir) == NULL || mkdtemp (outside) == NULL)
    {
      ok (0, "mkdtemp: %s", strerror (errno));
      return;
    }
  dfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ok (sr_code_write_inputs (dfd, &python, &req, getuid (), getgid (), &err) == 0,
      "the code and its files are written");
  sr_error_free (&err);
  {
    int fd = openat (dfd, "pkg/sub/m.py", O_RDONLY);

    ok (fd >= 0 && read (fd, buf, sizeof buf) == 1 && buf[0] == 'm',
        "a file in directories gets them made");
    if (fd >= 0)
      close (fd);
  }
  ok (fstatat (dfd, "main.py", &st, 0) == 0 && st.st_size == 1, "the code is the entry point");

  /* A session's code left a symlink where a file's directory goes.  */
  ok (symlinkat (outside, dfd, "link") == 0, "a symlink stands where a directory goes");
  req.files = &through;
  req.n_files = 1;
  ok (sr_code_write_inputs (dfd, &python, &req, getuid (), getgid (), &err) < 0,
      "writing through it fails");
  sr_error_free (&err);
  evil = sr_xasprintf ("%s/evil.py", outside);
  ok (access (evil, F_OK) < 0 && errno == ENOENT, "and nothing lands outside");

  close (dfd);
  (void) sr_rm_rf_at (AT_FDCWD, dir, NULL);
  (void) sr_rm_rf_at (AT_FDCWD, outside, NULL);
}

int
main (void)
{
  test_names ();
  test_caps ();
  test_write ();
  return done_testing ();
}
