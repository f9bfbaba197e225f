/* The container's seccomp filter.  The policy is an OCI runtime-spec
 * `linux.seccomp` JSON document (the format of Docker's and Podman's default
 * profiles); it is parsed with cJSON and compiled with libseccomp in the
 * parent, and the resulting BPF program is installed by the child as the
 * very last step before execve.  */
#ifndef SR_SECCOMP_H
#define SR_SECCOMP_H

#include <stddef.h>

#include "common/error.h"

struct sr_seccomp_filter;

/* Parses the profile at path and compiles it for the native architecture
 * (plus whatever "architectures" the profile lists).  A malformed profile is
 * rejected with the JSON path of the problem ("syscalls[3].names[0]: unknown
 * syscall 'foo'").  */
int sr_seccomp_filter_from_file (const char *path, struct sr_seccomp_filter **ret, sr_error_t *err);
/* The same from a profile held in memory (len bytes, not NUL-terminated).  */
int sr_seccomp_filter_from_json (const char *json, size_t len, const char *origin,
                                 struct sr_seccomp_filter **ret, sr_error_t *err);
void sr_seccomp_filter_free (struct sr_seccomp_filter *f);

/* Compiling a profile costs a few milliseconds, a large part of a
 * container's start.  With a cache directory set, compiled programs are
 * kept there, keyed by the profile's text, the kernel release, the machine
 * and the libseccomp version, and reused by the next runner.  The
 * directory is created 0700 and used only while it and its files belong
 * to this user and nobody else may write them.  NULL (the default): no
 * cache.  Set it before threads start; setting the same directory again
 * is a no-op.  */
void sr_seccomp_set_cache_dir (const char *dir);

/* The built-in default profile: seccomp/default.json, embedded in the
 * binary at build time (src/runtime/seccomp-default.c).  */
/* The built-in profile's JSON text (not NUL-terminated).  */
const char *sr_seccomp_default_json (size_t *len);

int sr_seccomp_filter_default (struct sr_seccomp_filter **ret, sr_error_t *err);

struct sr_pack;
struct sr_unpack;

/* The compiled program as bytes, for a process that clones the child from
 * its own copy (runtime/spawner.h), and back (EBADMSG: malformed).  */
void sr_seccomp_filter_pack (const struct sr_seccomp_filter *f, struct sr_pack *p);
int sr_seccomp_filter_unpack (struct sr_unpack *u, struct sr_seccomp_filter **ret);

/* In the child, after PR_SET_NO_NEW_PRIVS: installs the compiled program
 * with seccomp(SECCOMP_SET_MODE_FILTER).  Allocates nothing.  Returns 0, or
 * -1 with errno set.  */
int sr_seccomp_filter_install (const struct sr_seccomp_filter *f);

#endif
