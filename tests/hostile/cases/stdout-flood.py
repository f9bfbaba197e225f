# hostile: writes 1 GiB to stdout as fast as it can
# expected: truncated at 100 KiB with the rest drained and counted, in seconds; the server's memory stays small
# timeout: 20
# expect: status=success
# expect: stdout_truncated=true
# expect: stdout=/output truncated after 102400 bytes; 1073639424 bytes dropped/
# expect: max_ms=25000
# check: server-memory-bounded
# check: server-answers
import sys
block = b"x" * (1 << 20)
for _ in range(1024):
    sys.stdout.buffer.write(block)
