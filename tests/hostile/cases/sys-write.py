# hostile: writes to /sys: uevent_helper, power/state, the loopback's mtu, a cgroup release_agent
# expected: every write is refused: /sys is read-only and no cgroup fs is mounted
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^\/sys\/kernel\/uevent_helper: refused (EROFS|ENOENT|EACCES)$/m
# expect: stdout=/^\/sys\/class\/net\/lo\/mtu: refused EROFS$/m
# expect: stdout=/^cgroup hierarchies visible: 0$/m
# expect: stdout=/^done$/m
import errno, os
for path, data in [("/sys/kernel/uevent_helper", "/work/evil"), ("/sys/power/state", "mem"),
                   ("/sys/class/net/lo/mtu", "1280"), ("/sys/fs/cgroup/release_agent", "/work/evil"),
                   ("/sys/fs/cgroup/memory/release_agent", "/work/evil"), ("/sys/kernel/mm/ksm/run", "1")]:
    try:
        with open(path, "w") as f:
            f.write(data)
        print(f"{path}: ALLOWED")
    except OSError as e:
        print(f"{path}: refused {errno.errorcode.get(e.errno, e.errno)}")
print("cgroup hierarchies visible:", len(os.listdir("/sys/fs/cgroup")) if os.path.isdir("/sys/fs/cgroup") else 0)
print("done")
