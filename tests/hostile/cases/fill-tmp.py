# hostile: writes to /tmp until the disk is full
# expected: ENOSPC at the 64 MiB size of the /tmp tmpfs; nothing left on the host
# expect: status=success
# expect: stdout=/^wrote ([0-9]|[1-5][0-9]|6[0-4]) MiB to \/tmp, then ENOSPC$/m
import errno
block = b"\0" * (1 << 20)
n = 0
try:
    with open("/tmp/fill", "wb", buffering=0) as f:
        while n < 4096:
            f.write(block)
            n += 1
    print(f"wrote {n} MiB to /tmp and it never filled")
except OSError as e:
    print(f"wrote {n} MiB to /tmp, then {errno.errorcode[e.errno]}")
