# hostile: starts threads until it cannot
# expected: thread creation fails before 64 tasks (the pids limit counts threads)
# expect: status=success
# expect: stdout=/^started ([0-9]|[1-5][0-9]|6[0-3]) threads, then refused$/m
import threading, time
n = 0
ev = threading.Event()
try:
    while n < 10000:
        threading.Thread(target=ev.wait, daemon=True).start()
        n += 1
    print(f"started {n} threads and never failed")
except RuntimeError:
    print(f"started {n} threads, then refused")
ev.set()
