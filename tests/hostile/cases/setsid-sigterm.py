# hostile: a child in its own session that ignores SIGTERM and SIGHUP, while the parent sleeps past the timeout
# expected: timeout, and the child dies with the container
# timeout: 1
# expect: status=timeout
# expect: max_ms=8000
# check: no-token-process
import ctypes, os, signal, time
if os.fork() == 0:
    os.setsid()
    for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(s, signal.SIG_IGN)
    ctypes.CDLL(None).prctl(15, b"@TOKEN@", 0, 0, 0)
    while True:
        time.sleep(1)
print("child started", flush=True)
time.sleep(3600)
