# hostile: writes to /proc/sys (core_pattern, hostname, drop_caches, ip_forward, ns_last_pid) and /proc/sysrq-trigger
# expected: no write takes effect: /proc/sys is read-only, core_pattern is masked by /dev/null, sysrq-trigger read-only or absent
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^\/proc\/sys\/kernel\/core_pattern: (refused \w+|swallowed by the mask)$/m
# expect: stdout=/^\/proc\/sys\/kernel\/hostname: refused EROFS$/m
# expect: stdout=/^\/proc\/sysrq-trigger: refused (EROFS|ENOENT)$/m
# expect: stdout=/^done$/m
import errno
for path, data in [("/proc/sys/kernel/core_pattern", "|/work/evil %p"), ("/proc/sys/kernel/hostname", "owned"),
                   ("/proc/sys/vm/drop_caches", "3"), ("/proc/sys/net/ipv4/ip_forward", "1"),
                   ("/proc/sys/kernel/ns_last_pid", "1000"), ("/proc/sys/kernel/modprobe", "/work/evil"),
                   ("/proc/sysrq-trigger", "h")]:
    try:
        with open(path, "w") as f:
            f.write(data)
    except OSError as e:
        print(f"{path}: refused {errno.errorcode.get(e.errno, e.errno)}")
        continue
    # A masked file is /dev/null bound over it: the write lands nowhere.
    back = open(path).read() if path != "/proc/sysrq-trigger" else data
    print(f"{path}: " + ("ALLOWED" if data in back else "swallowed by the mask"))
print("core_pattern now:", open("/proc/sys/kernel/core_pattern").read().strip() or "(masked, empty)")
print("done")
