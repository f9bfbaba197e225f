# hostile: perf_event_open of a software clock on itself and of a hardware counter on every CPU
# expected: every call is denied
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^perf_event_open sw clock self: denied EPERM$/m
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
attr = (ctypes.c_uint32 * 32)()
attr[0], attr[1] = 1, 128          # PERF_TYPE_SOFTWARE, size
attr[2] = 0                        # PERF_COUNT_SW_CPU_CLOCK
attr[10] = 1 << 5                  # exclude_kernel
sc("perf_event_open sw clock self", 298, attr, 0, -1, -1, 0)
attr[0], attr[2] = 0, 0            # PERF_TYPE_HARDWARE, cycles
sc("perf_event_open hw all cpus", 298, attr, -1, 0, -1, 0)
print("done")
