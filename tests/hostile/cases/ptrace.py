# hostile: ptrace: attach to a child, PTRACE_TRACEME, and read its memory with process_vm_readv
# expected: every call is denied (seccomp: EPERM)
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^PTRACE_ATTACH: denied EPERM$/m
# expect: stdout=/^PTRACE_TRACEME: denied EPERM$/m
# expect: stdout=/^process_vm_readv: denied EPERM$/m
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
import time
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
sc("PTRACE_ATTACH", 101, 16, child, 0, 0)
sc("PTRACE_SEIZE", 101, 0x4206, child, 0, 0)
if os.fork() == 0:
    sc("PTRACE_TRACEME", 101, 0, 0, 0, 0)
    os._exit(0)
os.wait()
buf = ctypes.create_string_buffer(16)
iov = (ctypes.c_void_p * 2)(ctypes.cast(buf, ctypes.c_void_p), 16)
sc("process_vm_readv", 310, child, iov, 1, iov, 1, 0)
os.kill(child, 9)
print("done")
