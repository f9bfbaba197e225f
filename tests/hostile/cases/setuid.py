# hostile: looks for setuid/setgid files in the image and runs a setuid-root copy of cat made in /work
# expected: the image has none (cleared on import); the copy gains no capability (nosuid, no_new_privs)
# expect: status=success
# expect: stdout=/^setuid or setgid files in the image: 0$/m
# expect: stdout=/^CapEff:\s+0000000000000000$/m
# expect: stdout=/^CapPrm:\s+0000000000000000$/m
# expect: stdout=/^NoNewPrivs:\s+1$/m
import os, shutil, stat, subprocess
found = []
for top in ("/usr", "/bin", "/sbin", "/etc", "/opt", "/var"):
    for d, _, files in os.walk(top):
        for f in files:
            try:
                m = os.lstat(os.path.join(d, f)).st_mode
            except OSError:
                continue
            if stat.S_ISREG(m) and m & (stat.S_ISUID | stat.S_ISGID):
                found.append(os.path.join(d, f))
print("setuid or setgid files in the image:", len(found), *found[:5])
shutil.copy("/usr/bin/cat", "/work/cat")
os.chmod("/work/cat", 0o6755)
print("mode of /work/cat:", oct(os.stat("/work/cat").st_mode))
out = subprocess.run(["/work/cat", "/proc/self/status"], capture_output=True, text=True).stdout
print("\n".join(l for l in out.splitlines() if l.startswith(("Uid", "Cap", "NoNewPrivs"))))
