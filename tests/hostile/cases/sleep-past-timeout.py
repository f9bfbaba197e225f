# hostile: sleeps for an hour
# expected: killed at the 1 s timeout: status timeout
# timeout: 1
# expect: status=timeout
# expect: max_ms=8000
import time
print("sleeping", flush=True)
time.sleep(3600)
