# hostile: mount: a tmpfs, a bind of /, a read-write remount of /, proc, cgroup, an umount of /proc, and the new mount API
# expected: every call is denied (seccomp and no CAP_SYS_ADMIN)
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^mount tmpfs: denied EPERM$/m
# expect: stdout=/^remount \/ rw: denied EPERM$/m
# expect: stdout=/^umount \/proc: denied EPERM$/m
# expect: stdout=/^fsopen: denied EPERM$/m
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
MS_BIND, MS_REMOUNT, MS_REC = 4096, 32, 16384
os.makedirs("/work/m", exist_ok=True)
sc("mount tmpfs", 165, b"none", b"/work/m", b"tmpfs", 0, 0)
sc("bind /", 165, b"/", b"/work/m", 0, MS_BIND | MS_REC, 0)
sc("remount / rw", 165, 0, b"/", 0, MS_REMOUNT, 0)
sc("mount proc", 165, b"proc", b"/work/m", b"proc", 0, 0)
sc("mount cgroup", 165, b"cgroup", b"/work/m", b"cgroup", 0, b"memory")
sc("umount /proc", 166, b"/proc", 2)
sc("fsopen", 430, b"tmpfs", 0)
sc("open_tree", 428, -100, b"/", 1)
sc("move_mount", 429, -100, b"/tmp", -100, b"/work/m", 0)
sc("pivot_root", 155, b"/work", b"/work/m")
sc("chroot", 161, b"/work")
print("done")
