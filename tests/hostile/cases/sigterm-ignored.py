# hostile: the program ignores SIGTERM, SIGINT and SIGHUP and loops past its timeout
# expected: killed anyway at the 1 s timeout: status timeout
# timeout: 1
# expect: status=timeout
# expect: max_ms=8000
import signal
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)
while True:
    pass
