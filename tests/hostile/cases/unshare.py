# hostile: new namespaces: unshare of user, mount, net, pid, cgroup; clone with CLONE_NEWUSER; clone3
# expected: every call is denied (unshare EPERM, namespace flags of clone EPERM, clone3 ENOSYS)
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^unshare CLONE_NEWUSER: denied EPERM$/m
# expect: stdout=/^unshare CLONE_NEWNS: denied EPERM$/m
# expect: stdout=/^clone CLONE_NEWUSER: denied EPERM$/m
# expect: stdout=/^clone3: denied ENOSYS$/m
# expect: stdout=/^done$/m
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def arg(a):
    return ctypes.c_long(a) if isinstance(a, int) else a
def sc(what, nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *map(arg, a))
    e = ctypes.get_errno()
    print(f"{what}: " + (f"denied {errno.errorcode.get(e, e)}" if r == -1 else f"ALLOWED ({r})"), flush=True)
    return r
for name, flag in [("CLONE_NEWUSER", 0x10000000), ("CLONE_NEWNS", 0x20000), ("CLONE_NEWNET", 0x40000000),
                   ("CLONE_NEWPID", 0x20000000), ("CLONE_NEWCGROUP", 0x02000000), ("CLONE_NEWUTS", 0x04000000),
                   ("CLONE_NEWIPC", 0x08000000)]:
    sc(f"unshare {name}", 272, flag)
# clone(CLONE_NEWUSER|SIGCHLD): a child that got through would exit at once.
r = sc("clone CLONE_NEWUSER", 56, 0x10000000 | 17, 0, 0, 0, 0)
if r == 0:
    os._exit(0)
args = (ctypes.c_uint64 * 11)(0x10000000, 0, 0, 0, 17)
r = sc("clone3", 435, args, 88)
if r == 0:
    os._exit(0)
print("done")
