/* What crosses to the spawner (runtime/spawner.h): the packer's values,
 * a mount plan and a seccomp program come back as they went, and a
 * message cut short or forged is refused, never read past its end.  */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/pack.h"
#include "common/util.h"
#include "runtime/mounts.h"
#include "runtime/seccomp.h"
#include "tap.h"

/* Whether p's bytes equal q's.  */
static bool
same (const struct sr_pack *p, const struct sr_pack *q)
{
  return p->len == q->len && memcmp (p->buf, q->buf, p->len) == 0;
}

static void
test_values (void)
{
  struct sr_pack p = { 0 };
  struct sr_unpack u;
  char big[3000];
  const char *s;

  memset (big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  sr_pack_u64 (&p, 42);
  sr_pack_str (&p, "tmpfs");
  sr_pack_str (&p, NULL);
  sr_pack_str (&p, "");
  sr_pack_str (&p, big);
  sr_unpack_init (&u, p.buf, p.len);
  is_int (sr_unpack_u64 (&u), 42, "a number comes back");
  is_str (sr_unpack_str (&u), "tmpfs", "a string comes back");
  ok (sr_unpack_str (&u) == NULL && !u.bad, "NULL comes back as NULL");
  s = sr_unpack_str (&u);
  ok (s && *s == '\0', "and \"\" as \"\"");
  s = sr_unpack_str (&u);
  ok (s && strcmp (s, big) == 0, "a string past the first buffer's size comes back");
  ok (!u.bad && u.left == 0, "and the message is read to its end");
  is_int (sr_unpack_u64 (&u), 0, "a read past the end gives 0");
  ok (u.bad, "and marks the message bad");

  /* A string whose length runs past the message, or without its NUL, or
   * with one inside.  */
  for (int c = 0; c < 3; c++)
    {
      struct sr_pack q = { 0 };

      sr_pack_u64 (&q, c == 0 ? 1000 : 4);
      sr_pack_bytes (&q, c == 1 ? "abcd" : "ab\0d", 4);
      sr_unpack_init (&u, q.buf, q.len);
      ok (sr_unpack_str (&u) == NULL && u.bad, "a forged string is refused (%s)",
          c == 0 ? "too long" : c == 1 ? "no NUL" : "a NUL inside");
      free (q.buf);
    }
  free (p.buf);
}

static void
test_mount_plan (void)
{
  struct sr_bind binds[2] = {
    { .source = (char *) "/etc", .target = (char *) "/opt/etc", .readonly = true },
    { .source = (char *) "/tmp", .target = (char *) "/work", .owned = true },
  };
  struct sr_fs_config fs = { .rootfs = "/usr", .binds = binds, .n_binds = 2, .tmp_size = 1 << 20,
                             .shm_size = 1 << 20, .scratch_size = 1 << 20, .data_size = 1 << 20,
                             .code_size = 1 << 20, .code_inodes = 100, .owner_uid = 1000,
                             .owner_gid = 1000 };
  struct sr_mount_plan *plan = NULL, *back = NULL;
  struct sr_pack p = { 0 }, q = { 0 };
  struct sr_unpack u;
  sr_error_t err = NULL;
  size_t refused = 0;

  if (!ok (sr_mount_plan_new (&fs, &plan, &err) == 0, "a plan with binds and every tmpfs"))
    {
      printf ("# %s\n", err->msg);
      sr_error_free (&err);
      return;
    }
  sr_mount_plan_pack (plan, &p);
  sr_unpack_init (&u, p.buf, p.len);
  ok (sr_mount_plan_unpack (&u, &back) == 0 && u.left == 0, "packs and unpacks (%zu bytes)", p.len);
  if (back)
    sr_mount_plan_pack (back, &q);
  ok (same (&p, &q), "unpacked, it packs to the same bytes");
  ok (sr_mount_plan_wants_idmap (back) == sr_mount_plan_wants_idmap (plan),
      "and asks for idmap as the original does");
  sr_mount_plan_free (back);

  for (size_t len = 0; len < p.len; len++)
    {
      char *cut = sr_xmalloc (len ? len : 1);

      memcpy (cut, p.buf, len);
      sr_unpack_init (&u, cut, len);
      back = NULL;
      errno = 0;
      if (sr_mount_plan_unpack (&u, &back) < 0 && errno == EBADMSG && back == NULL)
        refused++;
      else
        sr_mount_plan_free (back);
      free (cut);
    }
  is_int (refused, p.len, "every message cut short is refused with EBADMSG");
  free (p.buf);
  free (q.buf);
  sr_mount_plan_free (plan);
}

static void
test_seccomp (void)
{
  struct sr_seccomp_filter *f = NULL, *back = NULL;
  struct sr_pack p = { 0 }, q = { 0 };
  struct sr_unpack u;
  sr_error_t err = NULL;
  size_t refused = 0;

  if (!ok (sr_seccomp_filter_default (&f, &err) == 0, "the default profile compiles"))
    {
      printf ("# %s\n", err->msg);
      sr_error_free (&err);
      return;
    }
  sr_seccomp_filter_pack (f, &p);
  sr_unpack_init (&u, p.buf, p.len);
  ok (sr_seccomp_filter_unpack (&u, &back) == 0 && u.left == 0, "its program packs and unpacks (%zu bytes)",
      p.len);
  if (back)
    sr_seccomp_filter_pack (back, &q);
  ok (same (&p, &q), "unpacked, it packs to the same bytes");
  sr_seccomp_filter_free (back);
  /* Every length short of the whole, from the flags to the last
   * instruction.  */
  for (size_t len = 0; len < p.len; len++)
    {
      sr_unpack_init (&u, p.buf, len);
      back = NULL;
      if (sr_seccomp_filter_unpack (&u, &back) < 0 && errno == EBADMSG && back == NULL)
        refused++;
      else
        sr_seccomp_filter_free (back);
    }
  is_int (refused, p.len, "every program cut short is refused with EBADMSG");
  {
    struct sr_pack forged = { 0 };

    sr_pack_u64 (&forged, 0);
    sr_pack_u64 (&forged, 70000);
    sr_pack_bytes (&forged, p.buf + 16, p.len - 16);
    sr_unpack_init (&u, forged.buf, forged.len);
    ok (sr_seccomp_filter_unpack (&u, &back) < 0 && errno == EBADMSG,
        "a program longer than the kernel takes is refused");
    free (forged.buf);
  }
  free (p.buf);
  free (q.buf);
  sr_seccomp_filter_free (f);
}

int
main (void)
{
  test_values ();
  test_mount_plan ();
  test_seccomp ();
  return done_testing ();
}
