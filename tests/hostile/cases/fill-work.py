# hostile: fills the scratch dir /work with many 8 MiB files
# expected: with a memory cgroup, killed at 256 MiB (tmpfs pages count against it): oom; under rlimits, ENOSPC at the 256 MiB scratch size
# expect[memory=cgroup]: status=oom
# expect[memory=rlimit]: status=success
# expect[memory=rlimit]: stdout=/^wrote (24[0-9]|25[0-6]) MiB to \/work, then ENOSPC$/m
# expect: stdout!=/never filled/
# expect: stdout!=/^wrote (2[7-9][0-9]|[3-9][0-9][0-9]|[0-9]{4,}) MiB/m
# check: server-answers
import errno
block = b"\1" * (8 << 20)
n = 0
try:
    while n < 512:
        with open(f"/work/fill{n}", "wb", buffering=0) as f:
            f.write(block)
        n += 1
        print(f"wrote {8 * n} MiB", flush=True)
    print("/work never filled")
except OSError as e:
    print(f"wrote {8 * n} MiB to /work, then {errno.errorcode[e.errno]}")
