# hostile: the kernel keyring: join a session keyring, add_key, request_key, read /proc/keys
# expected: every call is denied, /proc/keys reads empty
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^keyctl JOIN_SESSION_KEYRING: denied EPERM$/m
# expect: stdout=/^add_key: denied EPERM$/m
# expect: stdout=/^request_key: denied EPERM$/m
# expect: stdout=/^\/proc\/keys: 0 bytes$/m
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
sc("keyctl JOIN_SESSION_KEYRING", 250, 1, b"hostile")
sc("keyctl GET_KEYRING_ID", 250, 0, -3, 1)
sc("add_key", 248, b"user", b"hostile", b"secret", 6, -3)
sc("request_key", 249, b"user", b"hostile", 0, 0)
print(f"/proc/keys: {len(open('/proc/keys', 'rb').read())} bytes")
print("done")
