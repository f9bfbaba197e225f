/* Compiles an OCI `linux.seccomp` profile into a BPF program.
 *
 * What is accepted, beyond the runtime-spec fields (defaultAction,
 * defaultErrnoRet, architectures, flags, syscalls[].names/action/errnoRet/
 * args): Docker's "archMap" (the entry for the native architecture adds its
 * subArchitectures) and the per-rule "includes"/"excludes" (arches,
 * minKernel, caps) and "comment".  Capabilities are judged as if the
 * container had none, which is what it gets by default: a rule that
 * includes a capability never applies and a rule that excludes one is kept.
 * Any other field is an error, so a typo such as "arg" for "args" cannot
 * silently widen a rule.
 *
 * Choices that differ from runc: a syscall name libseccomp does not know is
 * an error (a name it knows but this architecture lacks is fine); several
 * comparisons on one argument in one rule are an error rather than runc's
 * silent OR; numbers must be integers up to 2^53, what a JSON double holds
 * exactly.  A syscall from an architecture the filter does not list (i386
 * through int 0x80, x32 through the 0x40000000 bit on x86_64) kills the
 * process with SIGSYS.  */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cJSON.h>
#include <seccomp.h>

#include "common/json.h"
#include "common/pack.h"
#include "common/statedir.h"
#include "common/util.h"
#include "runtime/seccomp.h"

/* Longest JSON path in a message ("syscalls[12].includes.arches[3]").  */
#define PATH_LEN 128
/* The largest integer a JSON number parsed into a double holds exactly.  */
#define MAX_EXACT_INT 9007199254740992.0
#define MAX_ERRNO 4095
#define MAX_TRACE_MSG 0xffff

struct sr_seccomp_filter
{
  struct sock_fprog prog;   /* prog.filter is a heap copy of the BPF */
  unsigned int flags;       /* SECCOMP_FILTER_FLAG_* for seccomp(2) */
};

/* What the whole profile compiles against.  */
struct compiler
{
  scmp_filter_ctx ctx;
  uint32_t native;          /* SCMP_ARCH_* of this process */
  uint32_t default_action;
  struct utsname uts;       /* machine names the native arch, release the kernel */
  unsigned int kernel[2];   /* major, minor */
  unsigned int flags;
};

struct action_name
{
  const char *name;
  uint32_t action;
  uint32_t max_ret;         /* 0: takes no errnoRet */
};

static const struct action_name actions[] = {
  { "SCMP_ACT_KILL", SCMP_ACT_KILL, 0 },
  { "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, 0 },
  { "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, 0 },
  { "SCMP_ACT_TRAP", SCMP_ACT_TRAP, 0 },
  { "SCMP_ACT_ERRNO", SCMP_ACT_ERRNO (0), MAX_ERRNO },
  { "SCMP_ACT_TRACE", SCMP_ACT_TRACE (0), MAX_TRACE_MSG },
  { "SCMP_ACT_LOG", SCMP_ACT_LOG, 0 },
  { "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, 0 },
};

static const struct
{
  const char *name;
  enum scmp_compare op;
} operators[] = {
  { "SCMP_CMP_NE", SCMP_CMP_NE },
  { "SCMP_CMP_LT", SCMP_CMP_LT },
  { "SCMP_CMP_LE", SCMP_CMP_LE },
  { "SCMP_CMP_EQ", SCMP_CMP_EQ },
  { "SCMP_CMP_GE", SCMP_CMP_GE },
  { "SCMP_CMP_GT", SCMP_CMP_GT },
  { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

static const struct
{
  const char *name;
  unsigned int flag;
} filter_flags[] = {
  /* The child is single-threaded when it installs the filter, and there is
   * no seccomp agent: these two have nothing to do.  */
  { "SECCOMP_FILTER_FLAG_TSYNC", 0 },
  { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", 0 },
  { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
  { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
};

/* Docker's "includes"/"excludes" name architectures as Go does.  */
static const struct
{
  uint32_t token;
  const char *go_name;
} go_arches[] = {
  { SCMP_ARCH_X86_64, "amd64" }, { SCMP_ARCH_X86, "386" },
  { SCMP_ARCH_AARCH64, "arm64" }, { SCMP_ARCH_ARM, "arm" },
  { SCMP_ARCH_PPC64LE, "ppc64le" }, { SCMP_ARCH_S390X, "s390x" },
  { SCMP_ARCH_RISCV64, "riscv64" },
};

static const char *const profile_fields[] = {
  "defaultAction", "defaultErrnoRet", "architectures", "archMap", "syscalls",
  "flags", "comment", NULL,
};
static const char *const rule_fields[] = {
  "names", "action", "errnoRet", "args", "comment", "includes", "excludes", NULL,
};
static const char *const arg_fields[] = { "index", "value", "valueTwo", "op", NULL };
static const char *const arch_map_fields[] = { "architecture", "subArchitectures", NULL };
static const char *const condition_fields[] = { "caps", "arches", "minKernel", NULL };

/* JSON paths for messages: "syscalls[3]" + "names" -> "syscalls[3].names".
 * A path too long for the buffer ends in "..." rather than misleading.  */
static const char *
path_clip (char buf[PATH_LEN], int n)
{
  if (n < 0 || n >= PATH_LEN)
    strcpy (buf + PATH_LEN - 4, "...");
  return buf;
}

static const char *
path_field (char buf[PATH_LEN], const char *path, const char *key)
{
  return path_clip (buf, snprintf (buf, PATH_LEN, "%s%s%s", path, *path ? "." : "", key));
}

static const char *
path_index (char buf[PATH_LEN], const char *path, size_t i)
{
  return path_clip (buf, snprintf (buf, PATH_LEN, "%s[%zu]", path, i));
}

static int __attribute__ ((format (printf, 3, 4)))
path_error (sr_error_t *err, const char *path, const char *fmt, ...)
{
  _cleanup_free_ char *text = NULL;
  va_list ap;

  va_start (ap, fmt);
  text = sr_xvasprintf (fmt, ap);
  va_end (ap);
  if (*path)
    return sr_error_set (err, 0, "%s: %s", path, text);
  return sr_error_set (err, 0, "%s", text);
}

static bool
strv_contains (const char *const *v, const char *s)
{
  for (; *v; v++)
    if (strcmp (*v, s) == 0)
      return true;
  return false;
}

static int
check_object (const cJSON *obj, const char *path, const char *const *known, sr_error_t *err)
{
  if (!cJSON_IsObject (obj))
    return path_error (err, path, "expected an object");
  for (const cJSON *it = obj->child; it; it = it->next)
    if (!strv_contains (known, it->string))
      return path_error (err, path, "unknown field '%s'", it->string);
  return 0;
}

/* Optional members return 0 and leave *ret alone when the key is absent.  */
static int
get_string (const cJSON *obj, const char *path, const char *key, bool required,
            const char **ret, sr_error_t *err)
{
  const cJSON *item = cJSON_GetObjectItemCaseSensitive (obj, key);
  char p[PATH_LEN];

  if (item == NULL && !required)
    return 0;
  if (item == NULL)
    return path_error (err, path_field (p, path, key), "missing");
  if (!cJSON_IsString (item))
    return path_error (err, path_field (p, path, key), "expected a string");
  *ret = item->valuestring;
  return 0;
}

static int
get_uint (const cJSON *obj, const char *path, const char *key, bool required, uint64_t max,
          uint64_t *ret, sr_error_t *err)
{
  const cJSON *item = cJSON_GetObjectItemCaseSensitive (obj, key);
  char p[PATH_LEN];
  double d;

  if (item == NULL && !required)
    return 0;
  if (item == NULL)
    return path_error (err, path_field (p, path, key), "missing");
  d = item->valuedouble;
  if (!cJSON_IsNumber (item) || !(d >= 0 && d <= (double) max && d <= MAX_EXACT_INT)
      || (double) (uint64_t) d != d)
    return path_error (err, path_field (p, path, key), "expected an integer from 0 to %llu",
                       (unsigned long long) (max < MAX_EXACT_INT ? max : (uint64_t) MAX_EXACT_INT));
  *ret = (uint64_t) d;
  return 0;
}

/* An optional array of strings; null counts as empty, as Docker writes it.  */
static int
get_string_array (const cJSON *obj, const char *path, const char *key, const cJSON **ret,
                  sr_error_t *err)
{
  const cJSON *item = cJSON_GetObjectItemCaseSensitive (obj, key), *it;
  char p[PATH_LEN], q[PATH_LEN];
  size_t i = 0;

  *ret = NULL;
  if (item == NULL || cJSON_IsNull (item))
    return 0;
  path_field (p, path, key);
  if (!cJSON_IsArray (item))
    return path_error (err, p, "expected an array of strings");
  cJSON_ArrayForEach (it, item)
    {
      if (!cJSON_IsString (it))
        return path_error (err, path_index (q, p, i), "expected a string");
      i++;
    }
  *ret = item;
  return 0;
}

static bool
array_contains (const cJSON *array, const char *s)
{
  const cJSON *it;

  cJSON_ArrayForEach (it, array)
    if (strcmp (it->valuestring, s) == 0)
      return true;
  return false;
}

/* "action" plus "errnoRet" (or "defaultAction" plus "defaultErrnoRet").  */
static int
parse_action (const cJSON *obj, const char *path, const char *key, const char *ret_key,
              uint32_t *ret, sr_error_t *err)
{
  const char *name = NULL;
  uint64_t value = EPERM;
  char p[PATH_LEN];

  if (get_string (obj, path, key, true, &name, err) < 0)
    return -1;
  for (size_t i = 0; i < SR_ARRAY_SIZE (actions); i++)
    {
      if (strcmp (actions[i].name, name) != 0)
        continue;
      if (actions[i].max_ret == 0 && cJSON_GetObjectItemCaseSensitive (obj, ret_key))
        return path_error (err, path_field (p, path, ret_key), "not used by %s", name);
      if (get_uint (obj, path, ret_key, false, actions[i].max_ret, &value, err) < 0)
        return -1;
      *ret = actions[i].max_ret ? actions[i].action | (uint32_t) value : actions[i].action;
      return 0;
    }
  if (strcmp (name, "SCMP_ACT_NOTIFY") == 0)
    return path_error (err, path_field (p, path, key), "%s is not supported: there is no seccomp agent",
                       name);
  return path_error (err, path_field (p, path, key), "unknown action '%s'", name);
}

/* "SCMP_ARCH_X86_64" -> libseccomp's "x86_64".  */
static int
parse_arch (const char *name, const char *path, uint32_t *ret, sr_error_t *err)
{
  static const char prefix[] = "SCMP_ARCH_";
  char lower[32];
  size_t n = 0;

  if (strncmp (name, prefix, sizeof prefix - 1) == 0)
    for (const char *s = name + sizeof prefix - 1; *s && n < sizeof lower - 1; s++)
      lower[n++] = (char) (*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
  lower[n] = '\0';
  *ret = n ? seccomp_arch_resolve_name (lower) : 0;
  if (*ret == 0)
    return path_error (err, path, "unknown architecture '%s'", name);
  return 0;
}

static int
add_arches (struct compiler *c, const cJSON *names, const char *path, sr_error_t *err)
{
  const cJSON *it;
  char p[PATH_LEN];
  size_t i = 0;

  cJSON_ArrayForEach (it, names)
    {
      uint32_t arch;
      int r;

      path_index (p, path, i++);
      if (parse_arch (it->valuestring, p, &arch, err) < 0)
        return -1;
      r = seccomp_arch_add (c->ctx, arch);
      if (r < 0 && r != -EEXIST)
        return sr_error_set (err, -r, "%s: seccomp_arch_add %s", p, it->valuestring);
    }
  return 0;
}

static int
parse_architectures (struct compiler *c, const cJSON *root, sr_error_t *err)
{
  const cJSON *names, *map, *entry;
  size_t i = 0;

  if (get_string_array (root, "", "architectures", &names, err) < 0
      || add_arches (c, names, "architectures", err) < 0)
    return -1;
  map = cJSON_GetObjectItemCaseSensitive (root, "archMap");
  if (map == NULL)
    return 0;
  if (!cJSON_IsArray (map))
    return path_error (err, "archMap", "expected an array");
  cJSON_ArrayForEach (entry, map)
    {
      const char *name = NULL;
      char p[PATH_LEN], q[PATH_LEN];
      const cJSON *subs;
      uint32_t arch;

      path_index (p, "archMap", i++);
      if (check_object (entry, p, arch_map_fields, err) < 0
          || get_string (entry, p, "architecture", true, &name, err) < 0
          || parse_arch (name, path_field (q, p, "architecture"), &arch, err) < 0
          || get_string_array (entry, p, "subArchitectures", &subs, err) < 0)
        return -1;
      if (arch == c->native && add_arches (c, subs, path_field (q, p, "subArchitectures"), err) < 0)
        return -1;
    }
  return 0;
}

static int
parse_flags (struct compiler *c, const cJSON *root, sr_error_t *err)
{
  const cJSON *names, *it;
  char p[PATH_LEN];
  size_t i = 0;

  if (get_string_array (root, "", "flags", &names, err) < 0)
    return -1;
  cJSON_ArrayForEach (it, names)
    {
      size_t k = 0;

      while (k < SR_ARRAY_SIZE (filter_flags) && strcmp (filter_flags[k].name, it->valuestring) != 0)
        k++;
      if (k == SR_ARRAY_SIZE (filter_flags))
        return path_error (err, path_index (p, "flags", i), "unknown flag '%s'", it->valuestring);
      c->flags |= filter_flags[k].flag;
      i++;
    }
  return 0;
}

static int
parse_arg (const cJSON *arg, const char *path, struct scmp_arg_cmp *ret, sr_error_t *err)
{
  uint64_t argno = 0, value = 0, value_two = 0;
  const char *op = NULL;
  char p[PATH_LEN];

  if (check_object (arg, path, arg_fields, err) < 0
      || get_uint (arg, path, "index", true, 5, &argno, err) < 0
      || get_uint (arg, path, "value", true, UINT64_MAX, &value, err) < 0
      || get_uint (arg, path, "valueTwo", false, UINT64_MAX, &value_two, err) < 0
      || get_string (arg, path, "op", true, &op, err) < 0)
    return -1;
  for (size_t i = 0; i < SR_ARRAY_SIZE (operators); i++)
    if (strcmp (operators[i].name, op) == 0)
      {
        /* For SCMP_CMP_MASKED_EQ, value is the mask and valueTwo the datum,
         * in the order libseccomp takes them.  */
        *ret = (struct scmp_arg_cmp) { .arg = (unsigned int) argno, .op = operators[i].op,
                                       .datum_a = value, .datum_b = value_two };
        return 0;
      }
  return path_error (err, path_field (p, path, "op"), "unknown operator '%s'", op);
}

static int
parse_args (const cJSON *rule, const char *path, struct scmp_arg_cmp conds[6],
            unsigned int *ret_n, sr_error_t *err)
{
  const cJSON *args = cJSON_GetObjectItemCaseSensitive (rule, "args"), *it;
  char p[PATH_LEN], q[PATH_LEN];
  unsigned int n = 0, seen = 0;

  if (args == NULL || cJSON_IsNull (args))
    {
      *ret_n = 0;
      return 0;
    }
  path_field (p, path, "args");
  if (!cJSON_IsArray (args))
    return path_error (err, p, "expected an array");
  cJSON_ArrayForEach (it, args)
    {
      path_index (q, p, n);
      if (n == 6)
        return path_error (err, q, "more than 6 comparisons");
      if (parse_arg (it, q, &conds[n], err) < 0)
        return -1;
      /* runc turns this into an OR of one-comparison rules, while the
       * spec reads as an AND: refuse rather than guess.  */
      if (seen & (1u << conds[n].arg))
        return path_error (err, q, "argument %u is already compared in this rule; "
                           "write one rule per comparison", conds[n].arg);
      seen |= 1u << conds[n].arg;
      n++;
    }
  *ret_n = n;
  return 0;
}

/* Whether the running kernel is at least "major.minor".  */
static int
kernel_at_least (const struct compiler *c, const char *version, const char *path, bool *ret,
                 sr_error_t *err)
{
  unsigned int major, minor;
  char tail;

  if (sscanf (version, "%u.%u%c", &major, &minor, &tail) != 2)
    return path_error (err, path, "expected a kernel version such as \"4.8\"");
  *ret = c->kernel[0] > major || (c->kernel[0] == major && c->kernel[1] >= minor);
  return 0;
}

static bool
lists_native_arch (const struct compiler *c, const cJSON *arches)
{
  for (size_t i = 0; i < SR_ARRAY_SIZE (go_arches); i++)
    if (go_arches[i].token == c->native && array_contains (arches, go_arches[i].go_name))
      return true;
  return array_contains (arches, c->uts.machine);
}

/* Docker's "includes" (every condition must hold) or "excludes" (any
 * condition drops the rule) member; *ret says whether the rule stays.  */
static int
check_condition (const struct compiler *c, const cJSON *rule, const char *path, const char *key,
                 bool *ret, sr_error_t *err)
{
  const cJSON *cond = cJSON_GetObjectItemCaseSensitive (rule, key), *caps, *arches;
  bool includes = strcmp (key, "includes") == 0, kernel_ok = false;
  const char *min_kernel = NULL;
  char p[PATH_LEN], q[PATH_LEN];

  *ret = true;
  if (cond == NULL || cJSON_IsNull (cond))
    return 0;
  path_field (p, path, key);
  if (check_object (cond, p, condition_fields, err) < 0
      || get_string_array (cond, p, "caps", &caps, err) < 0
      || get_string_array (cond, p, "arches", &arches, err) < 0
      || get_string (cond, p, "minKernel", false, &min_kernel, err) < 0)
    return -1;
  if (min_kernel && kernel_at_least (c, min_kernel, path_field (q, p, "minKernel"), &kernel_ok, err) < 0)
    return -1;
  /* The container holds no capability: includes.caps never holds and
   * excludes.caps never excludes.  */
  if (includes)
    *ret = cJSON_GetArraySize (caps) == 0
           && (cJSON_GetArraySize (arches) == 0 || lists_native_arch (c, arches))
           && (min_kernel == NULL || kernel_ok);
  else
    *ret = !(cJSON_GetArraySize (arches) > 0 && lists_native_arch (c, arches))
           && !(min_kernel && kernel_ok);
  return 0;
}

static int
compile_rule (struct compiler *c, const cJSON *rule, const char *path, sr_error_t *err)
{
  struct scmp_arg_cmp conds[6];
  const cJSON *names, *it;
  bool included, kept;
  char p[PATH_LEN], q[PATH_LEN];
  unsigned int n_conds = 0;
  uint32_t action;
  size_t i = 0;

  if (check_object (rule, path, rule_fields, err) < 0
      || parse_action (rule, path, "action", "errnoRet", &action, err) < 0
      || parse_args (rule, path, conds, &n_conds, err) < 0
      || check_condition (c, rule, path, "includes", &included, err) < 0
      || check_condition (c, rule, path, "excludes", &kept, err) < 0
      || get_string_array (rule, path, "names", &names, err) < 0)
    return -1;
  path_field (p, path, "names");
  if (cJSON_GetArraySize (names) == 0)
    return path_error (err, p, "expected a non-empty array of syscall names");
  cJSON_ArrayForEach (it, names)
    {
      int nr = seccomp_syscall_resolve_name (it->valuestring), r;

      path_index (q, p, i++);
      if (nr == __NR_SCMP_ERROR)
        return path_error (err, q, "unknown syscall '%s'", it->valuestring);
      /* libseccomp refuses a rule that repeats the default action; such a
       * rule changes nothing anyway.  */
      if (!included || !kept || action == c->default_action)
        continue;
      r = seccomp_rule_add_array (c->ctx, action, nr, n_conds, conds);
      if (r < 0)
        return sr_error_set (err, -r, "%s: cannot add a rule for '%s'", q, it->valuestring);
    }
  return 0;
}

static int
compile_rules (struct compiler *c, const cJSON *root, sr_error_t *err)
{
  const cJSON *rules = cJSON_GetObjectItemCaseSensitive (root, "syscalls"), *it;
  char p[PATH_LEN];
  size_t i = 0;

  if (rules == NULL || cJSON_IsNull (rules))
    return 0;
  if (!cJSON_IsArray (rules))
    return path_error (err, "syscalls", "expected an array");
  cJSON_ArrayForEach (it, rules)
    if (compile_rule (c, it, path_index (p, "syscalls", i++), err) < 0)
      return -1;
  return 0;
}

/* Reads exactly len bytes at off; a file that ends early is EIO.  */
static int
pread_exact (int fd, void *buf, size_t len, off_t off)
{
  size_t done = 0;

  while (done < len)
    {
      ssize_t n = pread (fd, (char *) buf + done, len - done, off + (off_t) done);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          if (n == 0)
            errno = EIO;
          return -1;
        }
      done += (size_t) n;
    }
  return 0;
}

/* libseccomp 2.5 exports only to a file descriptor: go through a memfd and
 * read the program back.  */
static int
export_program (scmp_filter_ctx ctx, struct sock_fprog *ret, sr_error_t *err)
{
  _cleanup_close_ int fd = memfd_create ("seccomp-bpf", MFD_CLOEXEC);
  _cleanup_free_ struct sock_filter *insns = NULL;
  size_t size;
  struct stat st;
  int r;

  if (fd < 0)
    return sr_error_set (err, errno, "memfd_create");
  r = seccomp_export_bpf (ctx, fd);
  if (r < 0)
    return sr_error_set (err, -r, "seccomp_export_bpf");
  if (fstat (fd, &st) < 0)
    return sr_error_set (err, errno, "fstat the exported filter");
  size = (size_t) st.st_size;
  if (size == 0 || size % sizeof *insns != 0 || size / sizeof *insns > BPF_MAXINSNS)
    return sr_error_set (err, 0, "the compiled filter has %zu bytes, more than the kernel's "
                         "%d instructions or not whole ones", size, BPF_MAXINSNS);
  insns = sr_xmalloc (size);
  if (pread_exact (fd, insns, size, 0) < 0)
    return sr_error_set (err, errno, "read the exported filter");
  ret->len = (unsigned short) (size / sizeof *insns);
  ret->filter = TAKE_PTR (insns);
  return 0;
}

static int
compiler_init (struct compiler *c, const cJSON *root, sr_error_t *err)
{
  int r;

  if (uname (&c->uts) < 0)
    return sr_error_set (err, errno, "uname");
  if (sscanf (c->uts.release, "%u.%u", &c->kernel[0], &c->kernel[1]) != 2)
    return sr_error_set (err, 0, "cannot read the kernel version from '%s'", c->uts.release);
  c->native = seccomp_arch_native ();
  if (parse_action (root, "", "defaultAction", "defaultErrnoRet", &c->default_action, err) < 0)
    return -1;
  c->ctx = seccomp_init (c->default_action);
  if (c->ctx == NULL)
    return sr_error_set (err, 0, "defaultAction: seccomp_init failed");
  r = seccomp_attr_set (c->ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  /* A binary tree of syscall numbers instead of a linear scan: the
   * default profile allows a few hundred.  */
  if (r == 0)
    r = seccomp_attr_set (c->ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
  if (r < 0)
    return sr_error_set (err, -r, "seccomp_attr_set");
  return 0;
}

static void
compiler_done (struct compiler *c)
{
  if (c->ctx)
    seccomp_release (c->ctx);
}

static int
compile_profile (const cJSON *root, struct sr_seccomp_filter **ret, sr_error_t *err)
{
  _cleanup_ (compiler_done) struct compiler c = { 0 };
  struct sr_seccomp_filter *f;
  struct sock_fprog prog;

  if (!cJSON_IsObject (root))
    return sr_error_set (err, 0, "expected a JSON object");
  if (check_object (root, "", profile_fields, err) < 0 || compiler_init (&c, root, err) < 0
      || parse_architectures (&c, root, err) < 0 || parse_flags (&c, root, err) < 0
      || compile_rules (&c, root, err) < 0 || export_program (c.ctx, &prog, err) < 0)
    return -1;
  f = sr_xmalloc (sizeof *f);
  f->prog = prog;
  f->flags = c.flags;
  *ret = f;
  return 0;
}

static unsigned int
line_of (const char *text, size_t pos)
{
  unsigned int line = 1;

  for (size_t i = 0; i < pos; i++)
    line += text[i] == '\n';
  return line;
}

static int
parse_json (const char *json, size_t len, cJSON **ret, sr_error_t *err)
{
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts (json, len, &end, false);
  size_t pos = end && end >= json && end <= json + len ? (size_t) (end - json) : len;

  if (root)
    while (pos < len && strchr (" \t\r\n", json[pos]))
      pos++;
  if (root == NULL || pos < len)
    {
      cJSON_Delete (root);
      return sr_error_set (err, 0, "not valid JSON near line %u", line_of (json, pos));
    }
  *ret = root;
  return 0;
}

static char *cache_dir;

void
sr_seccomp_set_cache_dir (const char *dir)
{
  /* Setting the same directory again is a no-op, so that threads that
   * each set it after the first did never touch it.  */
  if ((dir == NULL && cache_dir == NULL) || (dir && cache_dir && strcmp (dir, cache_dir) == 0))
    return;
  free (cache_dir);
  cache_dir = dir ? sr_xstrdup (dir) : NULL;
}

#define CACHE_MAGIC "SRBPF01"

/* The header of a cache file, followed by the instructions.  */
struct cache_header
{
  char magic[8];
  uint32_t flags;
  uint32_t n_insns;
  uint64_t json_len;
  uint64_t check;          /* a second hash of the key, seeded differently */
};

/* Two FNV-1a hashes, differently seeded, over the same bytes: the first
 * names the cache file, the second is checked inside it.  */
static void
fnv1a_pair (uint64_t h[2], const void *data, size_t len)
{
  const unsigned char *p = data;

  for (size_t i = 0; i < len; i++)
    for (int k = 0; k < 2; k++)
      h[k] = (h[k] ^ p[i]) * 0x100000001b3ull;
}

/* Everything the compiled program depends on.  */
static void
cache_keys (const char *json, size_t len, uint64_t keys[2])
{
  const struct scmp_version *v = seccomp_version ();
  struct utsname uts;

  keys[0] = 0xcbf29ce484222325ull;
  keys[1] = 0x9e3779b97f4a7c15ull;
  if (uname (&uts) == 0)
    {
      fnv1a_pair (keys, uts.release, strlen (uts.release) + 1);
      fnv1a_pair (keys, uts.machine, strlen (uts.machine) + 1);
    }
  if (v)
    fnv1a_pair (keys, v, sizeof *v);
  fnv1a_pair (keys, json, len);
}

/* Ours alone: owned by us and writable by nobody else.  */
static bool
private_to_us (const struct stat *st)
{
  return st->st_uid == geteuid () && (st->st_mode & 022) == 0;
}

static char *
cache_path (const char *json, size_t len, uint64_t *check)
{
  int fd;

  if (!cache_dir)
    return NULL;
  fd = sr_statedir_open (cache_dir, "runtime_dir", SR_STATEDIR_PRIVATE, NULL);
  if (fd < 0)
    return NULL;
  close (fd);
  uint64_t keys[2];
  cache_keys (json, len, keys);
  *check = keys[1];
  return sr_xasprintf ("%s/%016llx.bpf", cache_dir, (unsigned long long) keys[0]);
}

static struct sr_seccomp_filter *
cache_load (const char *path, size_t json_len, uint64_t check)
{
  _cleanup_close_ int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  _cleanup_free_ struct sock_filter *insns = NULL;
  struct cache_header h;
  struct sr_seccomp_filter *f;
  struct stat st;

  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || !private_to_us (&st))
    return NULL;
  if (pread_exact (fd, &h, sizeof h, 0) < 0 || memcmp (h.magic, CACHE_MAGIC, sizeof h.magic) != 0
      || h.json_len != json_len || h.check != check || h.n_insns == 0
      || h.n_insns > BPF_MAXINSNS
      || (uint64_t) st.st_size != sizeof h + (uint64_t) h.n_insns * sizeof *insns)
    return NULL;
  insns = sr_xmalloc (h.n_insns * sizeof *insns);
  if (pread_exact (fd, insns, h.n_insns * sizeof *insns, sizeof h) < 0)
    return NULL;
  f = sr_xmalloc (sizeof *f);
  f->prog.len = (unsigned short) h.n_insns;
  f->prog.filter = TAKE_PTR (insns);
  f->flags = h.flags;
  return f;
}

/* Best effort: a cache that cannot be written only costs the next runner
 * a compile.  Written aside and renamed, so readers never see half.  */
static void
cache_store (const char *path, const struct sr_seccomp_filter *f, size_t json_len,
             uint64_t check)
{
  _cleanup_free_ char *tmp = sr_xasprintf ("%s.XXXXXX", path);
  struct cache_header h = { .flags = f->flags, .n_insns = f->prog.len, .json_len = json_len,
                            .check = check };
  int fd = mkostemp (tmp, O_CLOEXEC);

  if (fd < 0)
    return;
  memcpy (h.magic, CACHE_MAGIC, sizeof h.magic);
  bool written = sr_write_all (fd, &h, sizeof h) == 0
                 && sr_write_all (fd, f->prog.filter, f->prog.len * sizeof *f->prog.filter) == 0;
  if (close (fd) < 0 || !written || rename (tmp, path) < 0)
    unlink (tmp);
}

int
sr_seccomp_filter_from_json (const char *json, size_t len, const char *origin,
                             struct sr_seccomp_filter **ret, sr_error_t *err)
{
  _cleanup_json_ cJSON *root = NULL;
  uint64_t check = 0;
  _cleanup_free_ char *cached = cache_path (json, len, &check);

  if (cached && (*ret = cache_load (cached, len, check)))
    return 0;
  if (parse_json (json, len, &root, err) < 0 || compile_profile (root, ret, err) < 0)
    return sr_error_wrap (err, "seccomp profile %s", origin);
  if (cached)
    cache_store (cached, *ret, len, check);
  return 0;
}

int
sr_seccomp_filter_from_file (const char *path, struct sr_seccomp_filter **ret, sr_error_t *err)
{
  _cleanup_free_ char *json = NULL;
  size_t len;

  if (sr_read_file (path, &json, &len, err) < 0)
    return sr_error_wrap (err, "seccomp profile");
  return sr_seccomp_filter_from_json (json, len, path, ret, err);
}

void
sr_seccomp_filter_free (struct sr_seccomp_filter *f)
{
  if (f == NULL)
    return;
  free (f->prog.filter);
  free (f);
}

void
sr_seccomp_filter_pack (const struct sr_seccomp_filter *f, struct sr_pack *p)
{
  sr_pack_u64 (p, f->flags);
  sr_pack_u64 (p, f->prog.len);
  sr_pack_bytes (p, f->prog.filter, f->prog.len * sizeof *f->prog.filter);
}

int
sr_seccomp_filter_unpack (struct sr_unpack *u, struct sr_seccomp_filter **ret)
{
  struct sr_seccomp_filter *f;
  uint64_t flags = sr_unpack_u64 (u), len = sr_unpack_u64 (u);

  /* The kernel takes at most BPF_MAXINSNS instructions.  */
  if (u->bad || len == 0 || len > BPF_MAXINSNS || len * sizeof (struct sock_filter) > u->left)
    {
      errno = EBADMSG;
      return -1;
    }
  f = sr_xcalloc (1, sizeof *f);
  f->flags = (unsigned int) flags;
  f->prog.len = (unsigned short) len;
  f->prog.filter = sr_xmalloc (len * sizeof *f->prog.filter);
  sr_unpack_bytes (u, f->prog.filter, len * sizeof *f->prog.filter);
  *ret = f;
  return 0;
}

int
sr_seccomp_filter_install (const struct sr_seccomp_filter *f)
{
  return syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, f->flags, &f->prog) < 0 ? -1 : 0;
}
