# hostile: opens files and pipes until it cannot, tries to raise RLIMIT_NOFILE, and does it in 16 processes at once
# expected: EMFILE at the 1024 open-file limit in each process; the limit cannot be raised
# expect: status=success
# expect: stdout=/^opened 102[0-4] fds, then EMFILE$/m
# expect: stdout=/^raise RLIMIT_NOFILE: refused$/m
# expect: stdout=/^16 children hit EMFILE$/m
import errno, os, resource
def exhaust():
    fds = []
    try:
        while len(fds) < 100000:
            fds.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as e:
        return len(fds), errno.errorcode[e.errno]
    return len(fds), "no limit"
n, why = exhaust()
print(f"opened {n + 3} fds, then {why}")
try:
    resource.setrlimit(resource.RLIMIT_NOFILE, (1 << 20, 1 << 20))
    print("raise RLIMIT_NOFILE: ALLOWED")
except (ValueError, OSError):
    print("raise RLIMIT_NOFILE: refused")
kids = []
for _ in range(16):
    pid = os.fork()
    if pid == 0:
        os._exit(0 if exhaust()[1] == "EMFILE" else 1)
    kids.append(pid)
ok = sum(1 for p in kids if os.waitpid(p, 0)[1] == 0)
print(f"{ok} children hit EMFILE")
