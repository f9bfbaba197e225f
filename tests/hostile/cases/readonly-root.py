# hostile: writes to the read-only root: /etc/passwd, a new file in /usr/bin, chmod, rename, truncate of python3, a new directory
# expected: every change is refused: EROFS, or EACCES where the file's owner (host root) is not mapped
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^append \/etc\/passwd: (EROFS|EACCES)$/m
# expect: stdout=/^truncate python3: (EROFS|EACCES)$/m
# expect: stdout=/^done$/m
import errno, os
def attempt(label, fn):
    try:
        fn()
        print(f"{label}: ALLOWED")
    except OSError as e:
        print(f"{label}: {errno.errorcode.get(e.errno, e.errno)}")
attempt("append /etc/passwd", lambda: open("/etc/passwd", "a").write("evil::0:0::/:/bin/sh\n"))
attempt("create /usr/bin/evil", lambda: open("/usr/bin/evil", "w"))
attempt("chmod /usr/bin/python3", lambda: os.chmod("/usr/bin/python3", 0o4755))
attempt("rename /etc/hostname", lambda: os.rename("/etc/hostname", "/etc/hostname.old"))
attempt("truncate python3", lambda: os.truncate(os.path.realpath("/usr/bin/python3"), 0))
attempt("mkdir /evil", lambda: os.mkdir("/evil"))
attempt("unlink /etc/os-release", lambda: os.unlink("/etc/os-release"))
attempt("symlink in /", lambda: os.symlink("/work", "/evil"))
print("done")
