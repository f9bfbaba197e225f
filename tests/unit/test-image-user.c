/* The user setting (common/image-user.h): its syntax, and its names
 * looked up in an image's own /etc/passwd and /etc/group, below the
 * image's root.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/image-user.h"
#include "common/util.h"
#include "tap.h"

static char dir[] = "/tmp/sr-test-image-user-XXXXXX";

static void
put (const char *rel, const char *text)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/%s", dir, rel);
  FILE *f = fopen (path, "w");

  if (f == NULL)
    abort ();
  fputs (text, f);
  fclose (f);
}

/* text resolved in the image at dir: "uid:gid", or the error's code and
 * message.  */
static char *
resolve (const char *text)
{
  _cleanup_close_ int rootfd = open (dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
  sr_error_t err = NULL;
  uid_t u;
  gid_t g;
  char *r;

  if (sr_image_user_resolve (text, rootfd, "test", &u, &g, &err) == 0)
    return sr_xasprintf ("%u:%u", (unsigned) u, (unsigned) g);
  r = sr_xasprintf ("%s: %s", sr_error_code (err) ? sr_error_code (err) : "-", err->msg);
  sr_error_free (&err);
  return r;
}

static void
is_resolved (const char *text, const char *want, const char *name)
{
  _cleanup_free_ char *got = resolve (text);

  is_str (got, want, name);
}

static void
test_syntax (void)
{
  sr_error_t err = NULL;

  ok (sr_image_user_check ("root", NULL) == 0, "root is a user");
  ok (sr_image_user_check ("1000", NULL) == 0, "a uid is a user");
  ok (sr_image_user_check ("sandbox", NULL) == 0, "a name is a user (whether it exists, only "
                                                  "an image says)");
  ok (sr_image_user_check ("sandbox:users", NULL) == 0, "NAME:GROUP");
  ok (sr_image_user_check ("sandbox:100", NULL) == 0, "NAME:GID");
  ok (sr_image_user_check ("1000:users", NULL) == 0, "UID:GROUP");
  ok (sr_image_user_check ("www-data", NULL) == 0, "a name with '-'");
  ok (sr_image_user_check ("-1", NULL) < 0, "a negative id is refused");
  ok (sr_image_user_check ("65536", NULL) < 0, "an id beyond the containers' map is refused");
  ok (sr_image_user_check ("", NULL) < 0, "an empty user is refused");
  ok (sr_image_user_check ("a:", NULL) < 0, "an empty group is refused");
  ok (sr_image_user_check ("a:b:c", NULL) < 0, "a second colon is refused");
  ok (sr_image_user_check ("a/../b", NULL) < 0, "a name with '/' is refused");
  ok (sr_image_user_check ("abcdefghijabcdefghijabcdefghijabc", NULL) < 0,
      "a name over 32 characters is refused");
  ok (sr_image_user_check ("al ice", &err) < 0 && strcmp (sr_error_code (err), "invalid_config") == 0
          && strstr (err->msg, "user 'al ice'") != NULL,
      "a malformed user is invalid_config, naming it");
  sr_error_free (&err);
  ok (sr_image_user_numeric ("1000:100") && sr_image_user_numeric ("root")
          && !sr_image_user_numeric ("sandbox") && !sr_image_user_numeric ("1000:users"),
      "numeric: no name to look up");
}

static void
test_no_image (void)
{
  sr_error_t err = NULL;
  uid_t u = 9;
  gid_t g = 9;

  ok (sr_image_user_resolve ("root", -1, NULL, &u, &g, NULL) == 0 && u == 0 && g == 0,
      "without an image, root is 0:0");
  ok (sr_image_user_resolve ("1000", -1, NULL, &u, &g, NULL) == 0 && u == 1000 && g == 1000,
      "without an image, a uid alone has the gid of the same number");
  ok (sr_image_user_resolve ("1001:100", -1, NULL, &u, &g, NULL) == 0 && u == 1001 && g == 100,
      "UID:GID");
  ok (sr_image_user_resolve ("sandbox", -1, NULL, &u, &g, &err) < 0
          && strstr (err->msg, "none is known") != NULL,
      "without an image, a name is an error that says why");
  sr_error_free (&err);
}

static void
test_lookup (void)
{
  put ("etc/passwd", "# a comment:x:5:5\n"
                     "\n"
                     "+nis::7:7\n"
                     "root:x:0:0:root:/root:/bin/sh\n"
                     "short:x:3\n"
                     "badid:x:12a:5:::\n"
                     "huge:x:99999999999:5:::\n"
                     "sandbox:x:1000:1000:Sandbox:/work:/bin/sh\n"
                     "sandbox:x:1500:1500:second entry:/:/bin/sh\n"
                     "odd:x:1200:100\n"
                     "far:x:70000:70000::/:/bin/sh\n"
                     "last:x:1300:1301::/:/bin/sh");
  put ("etc/group", "root:x:0:\nusers:x:100:sandbox\nstaff::50\n");
  is_resolved ("sandbox", "1000:1000", "a name takes its passwd entry's uid and primary gid");
  is_resolved ("odd", "1200:100", "an entry with only four fields is read");
  is_resolved ("last", "1300:1301", "the last line without a newline is read");
  is_resolved ("sandbox:users", "1000:100", "NAME:GROUP looks the group up in /etc/group");
  is_resolved ("sandbox:77", "1000:77", "NAME:GID");
  is_resolved ("1200:staff", "1200:50", "UID:GROUP");
  is_resolved ("1200", "1200:100", "a uid the image lists takes its primary gid");
  is_resolved ("4242", "4242:4242", "a uid the image does not list has the gid of its number");
  is_resolved ("root", "0:0", "root");
  is_resolved ("nosuch", "invalid_config: user 'nosuch' is not in the /etc/passwd of image test",
               "a name the image lacks is invalid_config, naming the user and the image");
  is_resolved ("short", "invalid_config: user 'short' is not in the /etc/passwd of image test",
               "an entry with too few fields is passed over");
  is_resolved ("badid", "invalid_config: user 'badid' is not in the /etc/passwd of image test",
               "an entry whose uid is not a number is passed over");
  is_resolved ("huge", "invalid_config: user 'huge' is not in the /etc/passwd of image test",
               "an entry whose uid overflows is passed over");
  is_resolved ("nis", "invalid_config: user 'nis' is not in the /etc/passwd of image test",
               "NIS lines are passed over");
  is_resolved ("sandbox:nogroup",
               "invalid_config: group 'nogroup' is not in the /etc/group of image test",
               "a group the image lacks is named");
  is_resolved ("far", "invalid_config: user 'far' is 70000:70000 in image test, outside the ids "
                      "a container maps (below 65536)",
               "an image's entry beyond the containers' map is refused");
}

static void
test_long_lines (void)
{
  size_t n = 100000;
  char *gecos = malloc (n + 1);
  _cleanup_free_ char *text = NULL;

  memset (gecos, 'g', n);
  gecos[n] = '\0';
  text = sr_xasprintf ("big:x:1:1:%s:/:/bin/sh\nafter:x:1400:1400::/:/bin/sh\n", gecos);
  put ("etc/passwd", text);
  free (gecos);
  is_resolved ("after", "1400:1400", "an entry after a 100 kB line is found");
  is_resolved ("big", "1:1", "a 100 kB entry is read whole");
}

static void
test_bounds (void)
{
  _cleanup_free_ char *path = sr_xasprintf ("%s/etc/passwd", dir);
  _cleanup_free_ char *grp = sr_xasprintf ("%s/etc/group", dir);
  _cleanup_free_ char *outside = sr_xasprintf ("%s-outside", dir);
  _cleanup_free_ char *outside_passwd = sr_xasprintf ("%s/passwd", outside);
  FILE *f;

  /* Over the bound.  */
  f = fopen (path, "w");
  for (unsigned i = 0; f && i < SR_IMAGE_USER_MAX_FILE / 32 + 1; i++)
    fprintf (f, "u%07u:x:%05u:1:pad:/:/bin/sh\n", i, i % 60000);
  if (f)
    fclose (f);
  is_resolved ("sandbox", "invalid_config: /etc/passwd of image test is over 1048576 bytes",
               "a passwd file over the bound is refused");

  /* Not a regular file.  */
  unlink (path);
  mkfifo (path, 0600);
  is_resolved ("sandbox", "invalid_config: /etc/passwd of image test is not a regular file",
               "a FIFO for /etc/passwd is refused, without hanging");

  /* Missing.  */
  unlink (path);
  is_resolved ("sandbox", "invalid_config: user 'sandbox': image test has no /etc/passwd to look "
                          "it up in",
               "a name in an image without /etc/passwd is an error that says so");
  is_resolved ("1000", "1000:1000", "a uid in an image without /etc/passwd has the gid of its "
                                    "number");

  /* A symlink that points out of the image resolves inside it.  */
  mkdir (outside, 0700);
  f = fopen (outside_passwd, "w");
  if (f)
    {
      fputs ("escaped:x:4444:4444::/:/bin/sh\n", f);
      fclose (f);
    }
  {
    _cleanup_free_ char *target = sr_xasprintf ("../../../../../../..%s", outside_passwd);

    ok (symlink (target, path) == 0, "a relative symlink out of the image");
    is_resolved ("escaped", "invalid_config: user 'escaped': image test has no /etc/passwd to "
                            "look it up in",
                 "a relative symlinked /etc/passwd does not escape the image");
    unlink (path);
    ok (symlink (outside_passwd, path) == 0, "an absolute symlink out of the image");
    is_resolved ("escaped", "invalid_config: user 'escaped': image test has no /etc/passwd to "
                            "look it up in",
                 "an absolute symlinked /etc/passwd does not escape the image");
    unlink (path);
  }
  /* A symlink within the image is followed there.  */
  put ("etc/passwd.real", "inside:x:1600:1601::/:/bin/sh\n");
  ok (symlink ("/etc/passwd.real", path) == 0, "a symlink within the image");
  is_resolved ("inside", "1600:1601", "a symlinked /etc/passwd is read inside the image");
  unlink (grp);
  is_resolved ("inside:users", "invalid_config: group 'users' is not in the /etc/group of image "
                               "test",
               "a group in an image without /etc/group is named");
  unlink (outside_passwd);
  rmdir (outside);
}

int
main (void)
{
  _cleanup_free_ char *etc = NULL;

  if (mkdtemp (dir) == NULL)
    return 1;
  etc = sr_xasprintf ("%s/etc", dir);
  mkdir (etc, 0755);
  test_syntax ();
  test_no_image ();
  test_lookup ();
  test_long_lines ();
  test_bounds ();
  {
    _cleanup_free_ char *cmd = sr_xasprintf ("rm -rf '%s'", dir);

    if (system (cmd) != 0)
      ok (false, "remove %s", dir);
  }
  return done_testing ();
}
