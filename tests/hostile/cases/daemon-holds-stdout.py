# hostile: a daemon keeps the stdout pipe open and writes to it after the parent exits
# expected: the run still ends when the parent exits, and the daemon is gone
# expect: status=success
# expect: stdout=/^parent exits$/m
# expect: max_ms=8000
# check: no-token-process
import ctypes, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(15, b"@TOKEN@", 0, 0, 0)
        while True:
            print("daemon still writing", flush=True)
            time.sleep(0.1)
    os._exit(0)
os.wait()
time.sleep(0.3)
print("parent exits", flush=True)
