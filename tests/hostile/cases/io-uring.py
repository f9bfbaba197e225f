# hostile: io_uring: set up a ring (a path around seccomp for the calls it carries)
# expected: io_uring_setup, _enter and _register are denied
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^io_uring_setup: denied EPERM$/m
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
params = ctypes.create_string_buffer(120)
fd = sc("io_uring_setup", 425, 8, params)
sc("io_uring_enter", 426, fd if fd >= 0 else 0, 0, 0, 0, 0, 0)
sc("io_uring_register", 427, fd if fd >= 0 else 0, 0, 0, 0)
print("done")
