/* The container's filesystem, planned in the parent and built in the child.
 *
 * The plan holds only resolved strings and flags, so applying it in the
 * child needs no allocation.  Every mount target is opened with openat2
 * (RESOLVE_IN_ROOT) relative to the rootfs, so a symlink in the image can
 * never redirect a mount outside it.  */
#ifndef SR_MOUNTS_H
#define SR_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

struct sr_bind
{
  char *source;  /* host path */
  char *target;  /* absolute path inside the container */
  bool readonly;
  /* An idmapped mount through the container's user namespace: the owners
   * its files have on the host are the same ids inside (host root is
   * root there).  A root runner's only; see sr_mount_plan_detached.  */
  bool idmap;
  /* The runner's directory for the command (its code): given to the
   * command's user as the writable directories are (sr_fs_config).  */
  bool owned;
};

/* Parses SRC:DST[:OPT[,OPT]...] where each OPT is ro, rw or idmap (SRC
 * must exist on the host, DST absolute).  */
int sr_bind_parse (const char *spec, struct sr_bind *ret, sr_error_t *err);
void sr_bind_done (struct sr_bind *b);

struct sr_fs_config
{
  const char *rootfs;             /* host directory, mounted read-only as / */
  const struct sr_bind *binds;
  size_t n_binds;
  uint64_t tmp_size;              /* tmpfs /tmp, nosuid,nodev,noexec */
  uint64_t shm_size;              /* tmpfs /dev/shm */
  const char *scratch_dir;        /* host dir bound at SR_SCRATCH_DIR, or NULL */
  bool scratch_readonly;
  uint64_t scratch_size;          /* tmpfs at SR_SCRATCH_DIR when scratch_dir is NULL */
  /* Sessions: a tmpfs of this size on SR_DATA_MOUNT holding the writable
   * SR_DATA_DIR, so the session's data has a hard quota and dies with the
   * container; 0: none.  */
  uint64_t data_size;
  /* Sessions: a tmpfs of this size (and at most code_inodes inodes) at
   * SR_CODE_DIR, nosuid and nodev, which the host fills through the
   * container's root fd: no host directory holds the code; 0: none.  */
  uint64_t code_size;
  uint64_t code_inodes;
  /* The command's ids inside, owners of the writable directories
   * (SR_SCRATCH_DIR, SR_CODE_DIR, SR_DATA_DIR); 0, 0: root's.  */
  uid_t owner_uid;
  gid_t owner_gid;
  /* The runner writes into those as itself (a rootless runner, whose
   * commands run as another user): the tmpfs ones are open to all (no
   * one else reaches the container's mounts), and the host directories
   * bound (scratch_dir, an owned bind) to their group, the runner's;
   * both setgid so that what the command makes there stays in that group
   * (with the umask of 002 the command then gets) for the runner to
   * write into and remove.  */
  bool open_to_runner;
};

struct sr_mount_plan;

int sr_mount_plan_new (const struct sr_fs_config *cfg, struct sr_mount_plan **ret, sr_error_t *err);
void sr_mount_plan_free (struct sr_mount_plan *plan);

struct sr_pack;
struct sr_unpack;

/* The plan as bytes, for a process that clones the child from its own
 * copy (runtime/spawner.h), and back.  An unpacked plan points into the
 * message, which must outlive it; sr_mount_plan_free frees it.  unpack
 * fails with EBADMSG on a malformed message.  */
void sr_mount_plan_pack (const struct sr_mount_plan *plan, struct sr_pack *p);
int sr_mount_plan_unpack (struct sr_unpack *u, struct sr_mount_plan **ret);

/* Most binds a plan takes from its caller (--bind and the like).  */
#define SR_MOUNT_MAX_BINDS 32

/* The fds sr_mount_plan_detached gives at most: the rootfs, where it is
 * attached, and each bind (the caller's and the scratch dir).  */
#define SR_MOUNT_MAX_DETACHED (2 + SR_MOUNT_MAX_BINDS + 1)

/* Whether the plan has binds that ask for idmap.  */
bool sr_mount_plan_wants_idmap (const struct sr_mount_plan *plan);

/* In the parent of a root runner, once the container's user namespace
 * (userns_fd) has its maps and before the child (child) builds its tree:
 * what the child must not look up by path itself, as the host paths may
 * lie below directories closed to the container's ids (root's 0700
 * home).  fds[0] is a detached clone (open_tree) of the rootfs, fds[1]
 * the rootfs's directory in the child's mount namespace (where it is
 * attached), then a clone of each bind source, in the plan's order.  The
 * rootfs and the binds that ask for idmap are idmapped through that
 * namespace, so a file the host sees owned by root is root's inside, not
 * nobody's; every clone is private.  The child attaches them in their
 * place (sr_mount_plan_apply).  A rootfs whose file system refuses an
 * idmapped mount (EINVAL, EOPNOTSUPP: tmpfs before Linux 6.3) goes plain,
 * its files nobody's inside as without any (doctor says so); a bind
 * refused is an error naming it.  Returns how many fds it put in fds (at
 * most SR_MOUNT_MAX_DETACHED; 0 where this kernel has no open_tree and
 * no bind asks for idmap), or -1.  */
int sr_mount_plan_detached (const struct sr_mount_plan *plan, pid_t child, int userns_fd,
                            int *fds, sr_error_t *err);

/* In the child, inside the new user and mount namespaces: builds the tree
 * on the rootfs, then pivot_roots into it and detaches the old root.
 * mount_fds are sr_mount_plan_detached's (n_mount_fds 0: none, the rootfs
 * and binds are bound as they are); the child closes them.  Returns 0, or
 * -1 with errno set and errbuf naming the step ("mount proc on /proc").
 * mark_mounts is set when the mounts are done, before pivot_root.  */
int sr_mount_plan_apply (const struct sr_mount_plan *plan, const int *mount_fds,
                         size_t n_mount_fds, char *errbuf, size_t errlen, uint64_t *mark_mounts);

/* A new tmpfs, detached (not attached anywhere yet), nosuid and nodev,
 * with options as NULL-terminated key and value pairs ("size", "65536",
 * ...).  Returns its mount fd (close-on-exec) for move_mount, or -1 with
 * errno.  Only system calls: safe in the child of a raw clone.  */
int sr_mount_tmpfs_detached (const char *const *options);

#endif
