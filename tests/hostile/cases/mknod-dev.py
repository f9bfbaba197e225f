# hostile: device nodes: mknod of /dev/mem, /dev/sda and /dev/kmsg in /work and /tmp, and opening host devices
# expected: mknod is refused (no CAP_MKNOD, nodev mounts) and no host device exists
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^mknod \/work\/mem: EPERM$/m
# expect: stdout=/^open \/dev\/mem: ENOENT$/m
# expect: stdout=/^done$/m
import errno, os, stat
def attempt(label, fn):
    try:
        fn()
        print(f"{label}: ALLOWED")
    except OSError as e:
        print(f"{label}: {errno.errorcode.get(e.errno, e.errno)}")
for path, major, minor in [("/work/mem", 1, 1), ("/tmp/sda", 8, 0), ("/work/kmsg", 1, 11)]:
    attempt(f"mknod {path}", lambda: os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(major, minor)))
for dev in ("/dev/mem", "/dev/kmem", "/dev/port", "/dev/kmsg", "/dev/sda", "/dev/vda", "/dev/nvme0n1"):
    attempt(f"open {dev}", lambda: os.close(os.open(dev, os.O_RDONLY)))
print("done")
