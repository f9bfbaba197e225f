# hostile: setns into the namespaces of /proc/self/ns and /proc/1/ns, and through a pidfd
# expected: every call is denied
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^setns user: denied EPERM$/m
# expect: stdout=/^setns pidfd: denied EPERM$/m
# expect: stdout=/^open \/proc\/1\/ns\/user: Permission denied$/m
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
# The container's init (pid 1) is not dumpable: its /proc/1/ns cannot
# even be opened.  The snippet's own are the container's too.
for pid in ("1", "self"):
    for ns in ("user", "mnt", "net", "pid", "uts", "ipc", "cgroup"):
        try:
            fd = os.open(f"/proc/{pid}/ns/{ns}", os.O_RDONLY)
        except OSError as e:
            print(f"open /proc/{pid}/ns/{ns}: {e.strerror}")
            continue
        sc(f"setns {ns}", 308, fd, 0)
        os.close(fd)
pidfd = os.pidfd_open(os.getpid())
sc("setns pidfd", 308, pidfd, 0x10000000 | 0x20000)
print("done")
