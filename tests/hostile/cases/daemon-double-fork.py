# hostile: a classic double-forked daemon (setsid, stdio closed) that outlives its parent
# expected: the run ends when the parent exits, and the daemon is gone with it
# expect: status=success
# expect: stdout=/^parent exits, daemon started$/m
# expect: max_ms=8000
# check: no-token-process
import ctypes, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, b"@TOKEN@", 0, 0, 0)
        fd = os.open("/dev/null", os.O_RDWR)
        for i in (0, 1, 2):
            os.dup2(fd, i)
        time.sleep(600)
    os._exit(0)
os.wait()
time.sleep(0.2)
print("parent exits, daemon started")
