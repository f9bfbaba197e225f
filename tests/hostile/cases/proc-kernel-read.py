# hostile: reads kernel memory and secrets through /proc: kcore, kmsg, keys, timer_list, kallsyms addresses
# expected: each is masked, empty or refused, and kallsyms shows no addresses
# expect: status=success
# expect: stdout!=/LEAKED/
# expect: stdout=/^\/proc\/kcore: (EACCES|EPERM|ENOENT|0 bytes)$/m
# expect: stdout=/^done$/m
import errno
for path in ("/proc/kcore", "/proc/kmsg", "/proc/keys", "/proc/timer_list", "/proc/sched_debug", "/proc/kallsyms"):
    try:
        with open(path, "rb") as f:
            data = f.read(65536)
        if path == "/proc/kallsyms":
            nonzero = [l for l in data.splitlines()[:100] if not l.startswith(b"0000000000000000")]
            print(f"{path}:", "LEAKED addresses" if nonzero else "addresses hidden")
        else:
            print(f"{path}: {len(data)} bytes" + (" LEAKED" if data and path in ("/proc/kcore", "/proc/kmsg", "/proc/keys") else ""))
    except OSError as e:
        print(f"{path}: {errno.errorcode.get(e.errno, e.errno)}")
print("done")
