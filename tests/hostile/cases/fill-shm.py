# hostile: fills /dev/shm (shared memory outside the memory accounting of files)
# expected: ENOSPC at the 16 MiB size of /dev/shm
# expect: status=success
# expect: stdout=/^wrote ([0-9]|1[0-6]) MiB to \/dev\/shm, then ENOSPC$/m
import errno
block = b"\0" * (1 << 20)
n = 0
try:
    with open("/dev/shm/fill", "wb", buffering=0) as f:
        while n < 4096:
            f.write(block)
            n += 1
    print(f"wrote {n} MiB to /dev/shm and it never filled")
except OSError as e:
    print(f"wrote {n} MiB to /dev/shm, then {errno.errorcode[e.errno]}")
