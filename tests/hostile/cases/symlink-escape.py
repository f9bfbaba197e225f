# hostile: symlinks, .. chains and hard links in /work and /tmp that point at a host file and at the host's /
# expected: every path resolves inside the container; the host file is never reached
# expect: status=success
# expect: stdout!=/FOUND/
# expect: stdout=/^\/\.\. is \/: True$/m
# expect: stdout=/^hardlink \/etc\/passwd: refused (EXDEV|EPERM|EROFS)$/m
# expect: stdout=/^done$/m
import errno, os
target = "@HOST_MARKER@"
os.symlink(target, "/work/abs")
os.symlink("../../../../../../../.." + target, "/work/rel")
os.symlink("/proc/self/root/../../..", "/tmp/up")
os.symlink("/work/loop2", "/work/loop1")
os.symlink("/work/loop1", "/work/loop2")
for path in ["/work/abs", "/work/rel", "/tmp/up" + target, "/work/loop1", "/.." + target,
             "/work/../../../.." + target, "/scratch/../.." + target]:
    try:
        print("FOUND", path, open(path).read().strip())
    except OSError as e:
        print(f"{path}: {errno.errorcode.get(e.errno, e.errno)}")
os.chdir("/")
for _ in range(20):
    os.chdir("..")
print("/.. is /:", os.stat("/..") == os.stat("/") and os.getcwd() == "/")
try:
    os.link("/etc/passwd", "/work/passwd")
    print("hardlink /etc/passwd: ALLOWED")
except OSError as e:
    print(f"hardlink /etc/passwd: refused {errno.errorcode.get(e.errno, e.errno)}")
print("done")
