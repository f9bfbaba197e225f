# hostile: forks sleeping children until fork fails, and counts them
# expected: fork fails with EAGAIN before 64 processes (the pids limit)
# expect: status=success
# expect: stdout=/^forked ([0-9]|[1-5][0-9]|6[0-3]) children, then EAGAIN$/m
import os, signal, time
n = 0
while n < 10000:
    try:
        pid = os.fork()
    except BlockingIOError:
        print(f"forked {n} children, then EAGAIN")
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    n += 1
else:
    print(f"forked {n} children and fork never failed")
