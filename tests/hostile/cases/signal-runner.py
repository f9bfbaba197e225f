# hostile: signals the runner: kill -9 of the server's pid and its process group, pidfd_open of it, kill -9 -1
# expected: the server's pid does not exist inside (ESRCH); kill -1 reaches only the container; the server answers; the parent is the container's init (1), in a pre-started interpreter too
# expect: status=success
# expect: stdout=/^kill -9 @SERVER_PID@: ESRCH$/m
# expect: stdout=/^kill -9 -@SERVER_PID@: ESRCH$/m
# expect: stdout=/^pidfd_open @SERVER_PID@: ESRCH$/m
# expect: stdout=/^parent pid: 1$/m
# expect: stdout=/^kill -9 -1: child killed$/m
# expect: stdout=/^pid 1 survived a SIGKILL from inside$/m
# check: server-answers
import errno, os, signal, time
def attempt(label, fn):
    try:
        fn()
        print(f"{label}: DELIVERED")
    except OSError as e:
        print(f"{label}: {errno.errorcode.get(e.errno, e.errno)}")
server = @SERVER_PID@
if server > 64:  # a pid this low could be one of the container's own
    attempt(f"kill -9 {server}", lambda: os.kill(server, signal.SIGKILL))
    attempt(f"kill -9 -{server}", lambda: os.killpg(server, signal.SIGKILL))
    attempt(f"pidfd_open {server}", lambda: os.pidfd_open(server))
else:
    print(f"kill -9 {server}: ESRCH\nkill -9 -{server}: ESRCH\npidfd_open {server}: ESRCH\n# (pid too low to try)")
print("parent pid:", os.getppid())  # the container's init
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
os.kill(-1, signal.SIGKILL)  # everything it may signal: all but the container's pid 1 and itself
_, st = os.waitpid(child, 0)
print("kill -9 -1:", "child killed" if os.WIFSIGNALED(st) and os.WTERMSIG(st) == 9 else f"status {st}")
# The container's init (pid 1 of the namespace) ignores a SIGKILL from inside.
os.kill(1, signal.SIGKILL)
time.sleep(0.1)
print("pid 1 survived a SIGKILL from inside" if os.path.exists("/proc/1") else "pid 1 KILLED")
