# hostile: native AIO: io_setup contexts until fs.aio-max-nr runs out for the whole host
# expected: io_setup and the other io_* calls are denied (io_setup is refused inside)
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^io_setup: denied EPERM$/m
# expect: stdout=/^io_submit: denied EPERM$/m
# expect: stdout=/^done$/m
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sc(what, nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *(ctypes.c_long(x) if isinstance(x, int) else x for x in a))
    e = ctypes.get_errno()
    print(f"{what}: " + (f"denied {errno.errorcode.get(e, e)}" if r == -1 else f"ALLOWED ({r})"), flush=True)
    return r
# Each context reserves nr_events of the host's fs.aio-max-nr: take them all.
contexts = 0
while contexts < 4096:
    ctx = ctypes.c_ulong(0)
    if libc.syscall(ctypes.c_long(206), ctypes.c_long(1024), ctypes.byref(ctx)) != 0:
        break
    contexts += 1
e = ctypes.get_errno()
print(f"io_setup: " + (f"denied {errno.errorcode.get(e, e)}" if contexts == 0 else f"ALLOWED ({contexts} contexts, then {errno.errorcode.get(e, e)})"), flush=True)
sc("io_submit", 209, ctx.value, 0, 0)
sc("io_getevents", 208, ctx.value, 0, 0, 0, 0)
sc("io_destroy", 207, ctx.value)
print("done")
