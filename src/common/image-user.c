/* The user setting, parsed and looked up in an image (image-user.h).  */
#include <config.h>

#include "common/image-user.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/defaults.h"
#include "common/util.h"
#include "common/xalloc.h"

#define NAME_MAX_LEN 32

/* One side of USER:GROUP: an id, or a name to look up.  */
struct part
{
  bool present;
  bool is_id;
  uint32_t id;
  char name[NAME_MAX_LEN + 1];
};

static bool
name_char (char c, bool first)
{
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'
         || c == '.' || (c == '-' && !first);
}

static bool
parse_part (const char *s, size_t len, struct part *p)
{
  bool digits = len > 0;

  if (len == 0 || len > NAME_MAX_LEN)
    return false;
  for (size_t i = 0; i < len; i++)
    {
      if (!name_char (s[i], i == 0))
        return false;
      digits = digits && s[i] >= '0' && s[i] <= '9';
    }
  p->present = true;
  if (digits)
    {
      uint32_t v = 0;

      if (len > 5)
        return false;
      for (size_t i = 0; i < len; i++)
        v = v * 10 + (uint32_t) (s[i] - '0');
      if (v >= SR_ROOT_MAP_COUNT)
        return false;
      p->is_id = true;
      p->id = v;
      return true;
    }
  /* root is uid and gid 0 in every image, one without /etc/passwd too.  */
  if (len == 4 && memcmp (s, "root", 4) == 0)
    {
      p->is_id = true;
      p->id = 0;
      return true;
    }
  memcpy (p->name, s, len);
  p->name[len] = '\0';
  return true;
}

static int
parse (const char *text, struct part *user, struct part *group, sr_error_t *err)
{
  const char *colon = strchr (text, ':');
  size_t ulen = colon ? (size_t) (colon - text) : strlen (text);

  *user = (struct part){ 0 };
  *group = (struct part){ 0 };
  if (parse_part (text, ulen, user)
      && (colon == NULL || parse_part (colon + 1, strlen (colon + 1), group)))
    return 0;
  return sr_error_set_plain (err, "invalid_config", EINVAL,
                             "user '%s': expected root, USER or USER:GROUP, each a name (letters, "
                             "digits, '_', '.', '-', at most %d) or an id below %u",
                             text, NAME_MAX_LEN, SR_ROOT_MAP_COUNT);
}

int
sr_image_user_check (const char *text, sr_error_t *err)
{
  struct part user, group;

  return parse (text, &user, &group, err);
}

bool
sr_image_user_numeric (const char *text)
{
  struct part user, group;

  return parse (text, &user, &group, NULL) == 0 && user.is_id && (!group.present || group.is_id);
}

/* The image's file path (relative to its root) into *ret, NULL when the
 * image has none.  */
static int
read_db (int rootfd, const char *path, const char *image, char **ret, sr_error_t *err)
{
  _cleanup_close_ int fd = -1;
  struct stat st;
  size_t len;

  *ret = NULL;
  /* O_NONBLOCK: a FIFO there must not hang the open.  */
  fd = sr_openat2 (rootfd, path, O_RDONLY | O_NOCTTY | O_NONBLOCK,
                   RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
  if (fd < 0 && errno == ENOENT)
    return 0;
  if (fd < 0)
    return sr_error_set (err, errno, "open /%s of image %s", path, image);
  if (fstat (fd, &st) < 0)
    return sr_error_set (err, errno, "stat /%s of image %s", path, image);
  if (!S_ISREG (st.st_mode))
    return sr_error_set_plain (err, "invalid_config", EINVAL,
                               "/%s of image %s is not a regular file", path, image);
  if (sr_read_fd (fd, SR_IMAGE_USER_MAX_FILE + 1, ret, &len) < 0)
    return sr_error_set (err, errno, "read /%s of image %s", path, image);
  if (len > SR_IMAGE_USER_MAX_FILE)
    {
      free (*ret);
      *ret = NULL;
      return sr_error_set_plain (err, "invalid_config", EFBIG,
                                 "/%s of image %s is over %u bytes", path, image,
                                 SR_IMAGE_USER_MAX_FILE);
    }
  return 0;
}

/* A decimal field of [s, end) into *ret.  */
static bool
parse_field_id (const char *s, const char *end, uint32_t *ret)
{
  uint64_t v = 0;

  if (s == end || end - s > 10)
    return false;
  for (; s < end; s++)
    {
      if (*s < '0' || *s > '9')
        return false;
      v = v * 10 + (uint64_t) (*s - '0');
    }
  if (v > UINT32_MAX)
    return false;
  *ret = (uint32_t) v;
  return true;
}

/* In the colon-separated database db (passwd: name:pw:uid:gid:...,
 * group: name:pw:gid:...), the first well-formed entry whose name is
 * name or, name NULL, whose field 2 is key: fields 2 .. 2+n_ids-1 into
 * ids.  Comments, blank lines, NIS +/- lines and entries with too few
 * fields or ids that are not numbers are passed over, as glibc does.  */
static bool
find_entry (const char *db, const char *name, uint32_t key, unsigned n_ids, uint32_t ids[2])
{
  for (const char *line = db; line && *line;)
    {
      const char *eol = strchr (line, '\n');
      const char *end = eol ? eol : line + strlen (line);
      const char *f[5];
      unsigned n = 0;
      uint32_t v[2];
      bool ok = true;

      f[n++] = line;
      for (const char *c = line; c < end && n < 5; c++)
        if (*c == ':')
          f[n++] = c + 1;
      if (n >= 2 + n_ids && *line != '#' && *line != '+' && *line != '-')
        {
          for (unsigned i = 0; i < n_ids && ok; i++)
            {
              const char *fend = i + 3 < n ? f[i + 3] - 1 : end;

              ok = parse_field_id (f[i + 2], fend, &v[i]);
            }
          if (ok
              && (name ? (size_t) (f[1] - 1 - line) == strlen (name)
                           && memcmp (line, name, strlen (name)) == 0
                       : v[0] == key))
            {
              memcpy (ids, v, n_ids * sizeof *ids);
              return true;
            }
        }
      line = eol ? eol + 1 : NULL;
    }
  return false;
}

int
sr_image_user_resolve (const char *text, int rootfd, const char *image, uid_t *ret_uid,
                       gid_t *ret_gid, sr_error_t *err)
{
  _cleanup_free_ char *passwd = NULL, *group_db = NULL;
  struct part user, group;
  uint32_t ids[2], uid, gid;

  if (parse (text, &user, &group, err) < 0)
    return -1;
  if (rootfd < 0)
    {
      if (!user.is_id || (group.present && !group.is_id))
        return sr_error_set_plain (err, "invalid_config", EINVAL,
                                   "user '%s': a name is looked up in an image, and none is "
                                   "known here",
                                   text);
      *ret_uid = (uid_t) user.id;
      *ret_gid = (gid_t) (group.present ? group.id : user.id);
      return 0;
    }
  if ((!user.is_id || !group.present) && read_db (rootfd, "etc/passwd", image, &passwd, err) < 0)
    return -1;
  if (!user.is_id)
    {
      if (passwd == NULL)
        return sr_error_set_plain (err, "invalid_config", ENOENT,
                                   "user '%s': image %s has no /etc/passwd to look it up in",
                                   user.name, image);
      if (!find_entry (passwd, user.name, 0, 2, ids))
        return sr_error_set_plain (err, "invalid_config", ENOENT,
                                   "user '%s' is not in the /etc/passwd of image %s", user.name,
                                   image);
      uid = ids[0];
      gid = ids[1];
    }
  else
    {
      uid = user.id;
      gid = passwd && find_entry (passwd, NULL, uid, 2, ids) ? ids[1] : uid;
    }
  if (group.present && group.is_id)
    gid = group.id;
  else if (group.present)
    {
      if (read_db (rootfd, "etc/group", image, &group_db, err) < 0)
        return -1;
      if (group_db == NULL || !find_entry (group_db, group.name, 0, 1, ids))
        return sr_error_set_plain (err, "invalid_config", ENOENT,
                                   "group '%s' is not in the /etc/group of image %s", group.name,
                                   image);
      gid = ids[0];
    }
  if (uid >= SR_ROOT_MAP_COUNT || gid >= SR_ROOT_MAP_COUNT)
    return sr_error_set_plain (err, "invalid_config", ERANGE,
                               "user '%s' is %u:%u in image %s, outside the ids a container "
                               "maps (below %u)",
                               text, uid, gid, image, SR_ROOT_MAP_COUNT);
  *ret_uid = (uid_t) uid;
  *ret_gid = (gid_t) gid;
  return 0;
}

int
sr_image_user_resolve_path (const char *text, const char *rootfs, const char *image,
                            uid_t *ret_uid, gid_t *ret_gid, sr_error_t *err)
{
  _cleanup_close_ int rootfd = open (rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);

  if (rootfd < 0)
    return sr_error_set (err, errno, "rootfs %s", rootfs);
  return sr_image_user_resolve (text, rootfd, image, ret_uid, ret_gid, err);
}
