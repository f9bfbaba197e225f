# hostile: TIOCSTI and TIOCLINUX on stdin, stdout, stderr and a fresh pty, and an open of /dev/tty
# expected: the ioctls are denied (seccomp) and there is no controlling terminal
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^TIOCSTI fd 0: denied EPERM$/m
# expect: stdout=/^TIOCSTI pty: denied EPERM$/m
# expect: stdout=/^\/dev\/tty: ENXIO$/m
# expect: stdout=/^done$/m
import errno, fcntl, os, pty
def attempt(label, fd, req, arg):
    try:
        fcntl.ioctl(fd, req, arg)
        print(f"{label}: ALLOWED")
    except OSError as e:
        print(f"{label}: denied {errno.errorcode.get(e.errno, e.errno)}")
for fd in (0, 1, 2):
    attempt(f"TIOCSTI fd {fd}", fd, 0x5412, b"x")
    attempt(f"TIOCLINUX fd {fd}", fd, 0x541C, b"\x0c")
master, slave = pty.openpty()
attempt("TIOCSTI pty", slave, 0x5412, b"x")
try:
    os.open("/dev/tty", os.O_RDWR)
    print("/dev/tty: ALLOWED")
except OSError as e:
    print(f"/dev/tty: {errno.errorcode.get(e.errno, e.errno)}")
print("done")
