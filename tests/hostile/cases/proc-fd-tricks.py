# hostile: looks for inherited fds and walks out through /proc/self/fd, /proc/self/exe and /proc/self/root
# expected: only fds 0-2 are open, none is a host directory, and the host file is never reached
# expect: status=success
# expect: stdout!=/FOUND/
# expect: stdout=/^open fds: 0 1 2$/m
# expect: stdout=/^done$/m
import os
# The listing's own directory fd is closed again by the time of readlink.
fds = sorted(int(f) for f in os.listdir("/proc/self/fd") if os.path.lexists(f"/proc/self/fd/{f}"))
print("open fds:", " ".join(map(str, fds)))
for f in fds:
    print(f"fd {f} ->", os.readlink(f"/proc/self/fd/{f}"))
target = "@HOST_MARKER@"
for path in [f"/proc/self/fd/{f}/{target}" for f in range(3)] + [
        f"/proc/self/exe/..{target}", f"/proc/self/root/..{target}", f"/proc/self/root/../../..{target}",
        f"/proc/self/cwd/../../..{target}", f"/proc/1/fd/0/../..{target}"]:
    try:
        print("FOUND", path, open(path).read().strip())
    except OSError:
        pass
for n in range(3, 256):
    try:
        os.fstat(n)
        print("FOUND an fd", n)
    except OSError:
        pass
print("done")
