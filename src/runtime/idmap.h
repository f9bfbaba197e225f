/* Who the container's ids are on the host.  Decided in the parent before
 * clone, written into /proc/PID/{uid,gid}_map after it.
 *
 *   root runner:      0..N-1 -> an unprivileged range (never host uid 0),
 *                     one slot of root's range, leased to one container
 *   rootless + subid: 0 -> caller, 1..N -> the caller's /etc/subuid range
 *                     (written by the setuid newuidmap/newgidmap helpers)
 *   rootless:         0 -> caller only, setgroups denied
 *
 * A root runner's range (root's in /etc/subuid, else SR_ROOT_MAP_SLOTS
 * slots from SR_ROOT_MAP_BASE) holds slots of SR_ROOT_MAP_COUNT ids.  Each
 * container (a run's stages, a warm container, a session) leases a slot
 * of its own, so no two live sandboxes share a host uid: per-user kernel
 * accounting (pipe buffers, RLIMIT_NPROC, inotify instances, signals)
 * charges each sandbox alone, and a process of one can never signal or
 * trace another's.  A rootless runner's containers are the caller's own
 * ids, as every other process of the caller.  */
#ifndef SR_IDMAP_H
#define SR_IDMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

enum sr_idmap_mode
{
  SR_IDMAP_ROOT,
  SR_IDMAP_SUBID,
  SR_IDMAP_SINGLE,
};

struct sr_idmap
{
  enum sr_idmap_mode mode;
  uid_t caller_uid;
  gid_t caller_gid;
  uint32_t uid_base, uid_count; /* host range (ROOT, SUBID) */
  uint32_t gid_base, gid_count;
  uint32_t slots;               /* ROOT: ranges of uid_count from uid_base (and gid_base) */
  int lease_fd;                 /* the lease's lock (sr_idmap_lease); -1: none */
};

/* Chooses the mapping for this process.  subid_file/subgid_file are
 * normally /etc/subuid and /etc/subgid (parameters for the tests).  */
int sr_idmap_plan (struct sr_idmap *ret, const char *subuid_file, const char *subgid_file,
                   sr_error_t *err);

/* Looks up the first range of `user` (name or numeric uid) in a subid file.
 * Returns 1 when found, 0 when not, -1 on a read error.  */
int sr_subid_lookup (const char *path, const char *user_name, uid_t uid,
                     uint32_t *ret_start, uint32_t *ret_count, sr_error_t *err);

/* The size of the range sr_subid_free_range finds, and the id it starts
 * above (where useradd starts its ranges).  */
#define SR_SUBID_RANGE 65536u
#define SR_SUBID_FLOOR 100000u

/* A free range for a user without one: the first SR_SUBID_RANGE ids that
 * start at a multiple of SR_SUBID_RANGE above SR_SUBID_FLOOR and overlap
 * no entry of either text (the contents of /etc/subuid and /etc/subgid;
 * NULL when missing), whoever the entry is for, by name or by uid: ranges
 * that overlap let two users' containers share host uids.  Returns its
 * start, or 0 when no such range is left below 2^32.  */
uint32_t sr_subid_free_range (const char *subuid_text, const char *subgid_text);

/* Moves a ROOT plan of more than one slot to a slot no other live lease
 * under lock_dir holds (a lock on lock_dir/<slot>, the lowest free
 * slot), and keeps the lease in m->lease_fd: the slot is free again once
 * every copy of the fd is closed, the caller's (its to close) and the one
 * the container's init keeps for its life, so a slot outlives neither
 * its runner nor its container.  Any other plan stays as it is, with
 * lease_fd -1.  Runners that share lock_dir (every root runner of a host
 * with the default runtime_dir) share the slots.  Error code
 * ids_exhausted when every slot is leased.  */
int sr_idmap_lease (struct sr_idmap *m, const char *lock_dir, sr_error_t *err);

/* May the container call setgroups()?  (Only when a privileged writer set
 * the gid map.)  */
bool sr_idmap_setgroups_allowed (const struct sr_idmap *m);

/* Whether uid and gid exist inside a container with this mapping
 * (0 always; a single-id map has nothing else).  */
bool sr_idmap_maps (const struct sr_idmap *m, uid_t uid, gid_t gid);

/* Writes the maps for pid.  */
int sr_idmap_apply (const struct sr_idmap *m, pid_t pid, sr_error_t *err);

/* A detached clone of the mount tree at path, with its submounts,
 * private (nothing mounted on it propagates anywhere), idmapped through
 * the user namespace userns_fd (-1: plain): files owned by host id N show
 * as the id N maps to in that namespace.  Returns the fd, or -1 with
 * errno set.  */
int sr_idmap_clone_tree (const char *path, int userns_fd);

/* Whether the tree at path can be idmapped as sr_idmap_clone_tree does it
 * for a container (through a user namespace of a child made for the
 * probe): 0, or the errno that refused it.  Root only.  */
int sr_idmap_mount_probe (const char *path);

/* A short name of the mode, for results and messages.  */
const char *sr_idmap_mode_name (enum sr_idmap_mode mode);

#endif
