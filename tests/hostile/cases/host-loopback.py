# hostile: connects to a TCP listener on the host's 127.0.0.1 (and ::1) and to an abstract unix socket of the host
# expected: refused: the container's lo is its own and abstract sockets are per network namespace; the host listeners see nothing
# expect: status=success
# expect: stdout!=/CONNECTED/
# expect: stdout=/^tcp 127.0.0.1:@HOST_PORT@: ECONNREFUSED$/m
# expect: stdout=/^unix @@HOST_ABSTRACT@: ECONNREFUSED$/m
# expect: stdout=/^done$/m
# check: listener-untouched
import errno, socket
def attempt(label, family, addr):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect(addr)
        print(f"{label}: CONNECTED")
    except OSError as e:
        print(f"{label}: {errno.errorcode.get(e.errno, e) if e.errno else e}")
    finally:
        s.close()
attempt("tcp 127.0.0.1:@HOST_PORT@", socket.AF_INET, ("127.0.0.1", @HOST_PORT@))
attempt("tcp [::1]:@HOST_PORT@", socket.AF_INET6, ("::1", @HOST_PORT@))
attempt("unix @@HOST_ABSTRACT@", socket.AF_UNIX, "\0@HOST_ABSTRACT@")
print("done")
