# hostile: a fork bomb: every process forks forever and ignores the failures
# expected: the pids limit holds it, the timeout ends it, no process survives
# timeout: 2
# expect: status=timeout
# expect: max_ms=12000
# check: no-token-process
# check: server-answers
import ctypes, os
ctypes.CDLL(None).prctl(15, b"@TOKEN@", 0, 0, 0)
while True:
    try:
        os.fork()
    except OSError:
        pass
