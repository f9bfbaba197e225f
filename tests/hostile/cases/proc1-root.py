# hostile: reads the host through /proc/1/root, /proc/SERVER_PID/root and every /proc/*/root and cwd
# expected: /proc shows only the container's own processes (its init and the snippet); the host file is never found
# expect: status=success
# expect: stdout!=/FOUND/
# expect: stdout=/^\/proc\/@SERVER_PID@: absent$/m
# expect: stdout=/^pids visible: 2$/m
# expect: stdout=/^done$/m
import os
target = "@HOST_MARKER@"
pids = [p for p in os.listdir("/proc") if p.isdigit()]
print("pids visible:", len(pids))
print("/proc/@SERVER_PID@:", "present" if os.path.exists("/proc/@SERVER_PID@") else "absent")
for p in pids + ["self", "thread-self", "@SERVER_PID@"]:
    for via in ("root", "cwd"):
        for path in (f"/proc/{p}/{via}{target}", f"/proc/{p}/{via}/../../../..{target}"):
            try:
                print("FOUND", path, open(path).read().strip())
            except OSError:
                pass
print("/proc/self/root lists:", " ".join(sorted(os.listdir("/proc/self/root"))))
try:
    print("/proc/1/root lists:", " ".join(sorted(os.listdir("/proc/1/root"))))
except PermissionError:
    print("/proc/1/root: denied (the container's init is not dumpable)")
print("done")
