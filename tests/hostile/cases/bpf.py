# hostile: bpf: create an array map and load a socket filter program
# expected: every call is denied
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^bpf MAP_CREATE: denied EPERM$/m
# expect: stdout=/^bpf PROG_LOAD: denied EPERM$/m
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
attr = (ctypes.c_uint32 * 32)(2, 4, 8, 1)  # BPF_MAP_TYPE_ARRAY, key 4, value 8, 1 entry
sc("bpf MAP_CREATE", 321, 0, attr, 128)
prog = (ctypes.c_uint64 * 2)(0x00000000000000b7, 0x0000000000000095)  # r0 = 0; exit
lic = ctypes.create_string_buffer(b"GPL")
pattr = (ctypes.c_uint64 * 16)()
ctypes.memmove(pattr, (ctypes.c_uint32 * 2)(1, 2), 8)  # SOCKET_FILTER, 2 insns
pattr[1] = ctypes.addressof(prog)
pattr[2] = ctypes.addressof(lic)
sc("bpf PROG_LOAD", 321, 5, pattr, 128)
print("done")
