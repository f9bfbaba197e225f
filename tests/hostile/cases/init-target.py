# hostile: attacks the container's init (pid 1), which reports the snippet's end: SIGKILL and SIGSTOP to it, ptrace and process_vm_readv of it, its fds, memory and environment through /proc/1, then dies of SIGTERM
# expected: pid 1 ignores SIGKILL and SIGSTOP from inside and passes other signals on; /proc/1 is closed; the result is the snippet's own death by SIGTERM, not a forged success
# expect: status=error
# expect: exit_code=143
# expect: stdout!=/ALLOWED|KILLED|STOPPED/
# expect: stdout=/^kill -KILL 1: ignored$/m
# expect: stdout=/^kill -STOP 1: ignored$/m
# expect: stdout=/^kill -USR1 1: passed on to the snippet$/m
# expect: stdout=/^ptrace 1: denied EPERM$/m
# expect: stdout=/^process_vm_readv 1: denied EPERM$/m
# expect: stdout=/^\/proc\/1\/fd: denied$/m
# expect: stdout=/^\/proc\/1\/fd\/3: denied$/m
# expect: stdout=/^\/proc\/1\/mem: denied$/m
# expect: stdout=/^\/proc\/1\/environ: denied$/m
# expect: stdout=/^raising SIGTERM$/m
import ctypes, errno, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def state():
    return open("/proc/1/stat").read().rsplit(")", 1)[1].split()[0]
os.kill(1, signal.SIGKILL)
time.sleep(0.1)
print("kill -KILL 1:", "ignored" if os.path.exists("/proc/1") else "KILLED")
os.kill(1, signal.SIGSTOP)
time.sleep(0.1)
print("kill -STOP 1:", "ignored" if state() != "T" else "STOPPED")
got = []
signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
os.kill(1, signal.SIGUSR1)
for _ in range(50):
    if got:
        break
    time.sleep(0.02)
print("kill -USR1 1:", "passed on to the snippet" if got else "lost")
def sc(what, nr, *a):
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(x) for x in a])
    e = ctypes.get_errno()
    print(f"{what}: " + (f"denied {errno.errorcode.get(e, e)}" if r == -1 else f"ALLOWED ({r})"), flush=True)
sc("ptrace 1", 101, 16, 1, 0, 0)  # PTRACE_ATTACH
buf = ctypes.create_string_buffer(16)
class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
local = iovec(ctypes.addressof(buf), 16)
remote = iovec(0x400000, 16)
r = libc.syscall(ctypes.c_long(310), ctypes.c_long(1), ctypes.byref(local), ctypes.c_long(1),
                 ctypes.byref(remote), ctypes.c_long(1), ctypes.c_long(0))
e = ctypes.get_errno()
print("process_vm_readv 1: " + (f"denied {errno.errorcode.get(e, e)}" if r == -1 else f"ALLOWED ({r})"))
for path, op in (("/proc/1/fd", os.listdir), ("/proc/1/fd/3", lambda p: os.open(p, os.O_WRONLY)),
                 ("/proc/1/mem", lambda p: open(p, "rb").read(1)),
                 ("/proc/1/environ", lambda p: open(p, "rb").read())):
    try:
        op(path)
        print(f"{path}: ALLOWED")
    except OSError:
        print(f"{path}: denied")
print("raising SIGTERM", flush=True)
signal.raise_signal(signal.SIGTERM)
print("ALLOWED: alive after SIGTERM")
