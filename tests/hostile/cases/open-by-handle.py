# hostile: the "shocker" escape: name_to_handle_at, then open_by_handle_at with a forged handle of the host root inode
# expected: both calls are denied
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^name_to_handle_at: denied EPERM$/m
# expect: stdout=/^open_by_handle_at forged: denied EPERM$/m
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
import struct
h = ctypes.create_string_buffer(struct.pack("II", 128, 0) + b"\0" * 128)
mnt = ctypes.c_int(0)
sc("name_to_handle_at", 303, -100, b"/", h, ctypes.byref(mnt), 0)
forged = ctypes.create_string_buffer(struct.pack("IIQ", 8, 1, 2))  # FILEID_INO32_GEN, inode 2
sc("open_by_handle_at forged", 304, os.open("/", os.O_RDONLY), forged, 0)
print("done")
