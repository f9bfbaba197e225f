# What runs may leave behind, counted for the fault and load tests
# (tests/integration/faults.sh, load.sh): processes below the test,
# cgroups a runner made, mounts under the test's directory.  Sourced first,
# before lib.sh:
#   . "${SR_SRCDIR}/tests/load/leaks.sh" && sr_become_subreaper "$0" "$@"

# sr_become_subreaper "$0" "$@": runs the test again as a child subreaper
# (the attribute survives execve), so that whatever a runner leaves running
# when it dies is reparented to the test, where descendants sees it.
sr_become_subreaper () {
  [ -n "${SR_SUBREAPER:-}" ] && return 0
  SR_SUBREAPER=$$ exec python3 -c 'import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("prctl(PR_SET_CHILD_SUBREAPER): " + os.strerror(ctypes.get_errno()))
os.execv("/bin/sh", ["/bin/sh"] + sys.argv[1:])' "$@"
}

# descendants: the live processes below the test (zombies and the
# listing's own pipeline excepted), one "pid command line" each.
descendants () {
  SR_TOP=$$ python3 -c 'import os
me, top = os.getpid(), int(os.environ["SR_TOP"])
parent, cmd = {}, {}
for p in os.listdir("/proc"):
    if not p.isdigit():
        continue
    try:
        st = open("/proc/%s/stat" % p).read()
        argv = open("/proc/%s/cmdline" % p, "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        continue
    fields = st[st.rindex(")") + 2:].split()
    if fields[0] in "ZX":
        continue
    parent[int(p)], cmd[int(p)] = int(fields[1]), argv.strip()
mine = set()
p = me
while p in parent and p != top:
    mine.add(p)
    p = parent[p]
for p in sorted(parent):
    q = p
    while q in parent and q != top and q not in mine:
        q = parent[q]
    if q == top and p != top and p not in mine:
        print(p, cmd[p][:120])'
}

# cgroup_dirs [CONTROLLER...]: the test's own cgroup directory in the v1
# hierarchies of memory, pids and cpu and in the v2 one, where a runner it
# starts makes sr-<runner pid>-<n> (src/runtime/cgroup.c); with
# controllers, in their v1 hierarchies only.
cgroup_dirs () {
  python3 -c 'import os, sys
own = {}
for line in open("/proc/self/cgroup"):
    _, ctls, path = line.rstrip("\n").split(":", 2)
    for c in ctls.split(",") if ctls else [""]:
        own[c] = path
seen = set()
for line in open("/proc/self/mountinfo"):
    f = line.split()
    sep = f.index("-")
    fstype, root, mnt, opts = f[sep + 1], f[3], f[4], f[sep + 3].split(",")
    for c in sys.argv[1:] or ("memory", "pids", "cpu", ""):
        if (fstype == "cgroup" and c in opts) or (fstype == "cgroup2" and c == ""):
            if c not in own:
                continue
            rel = own[c]
            if root != "/" and (rel + "/").startswith(root + "/"):
                rel = rel[len(root):]
            d = os.path.normpath(mnt + rel)
            if os.path.isdir(d) and d not in seen:
                seen.add(d)
                print(d)' "$@"
}

# runner_cgroups PID...: the cgroups that the runners PID made and that
# are still there.
runner_cgroups () {
  local d p
  for d in $(cgroup_dirs); do
    for p in "$@"; do
      ls -d "$d/sr-$p-"* 2>/dev/null
    done
  done
}

# mounts_under DIR: how many mounts of this mount namespace are at or
# below DIR.
mounts_under () {
  awk -v d="$1" '$5 == d || index($5, d "/") == 1 { n++ } END { print n + 0 }' /proc/self/mountinfo
}

# is_asan_build: true when $SR_BIN was built with AddressSanitizer.
is_asan_build () {
  grep -q __asan_init "$SR_BIN" 2>/dev/null
}
