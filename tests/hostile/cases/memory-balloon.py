# hostile: allocates and touches memory in 16 MiB steps without end
# expected: killed at the 256 MiB memory limit: status oom (MemoryError under rlimits)
# expect[memory=cgroup]: status=oom
# expect[memory=rlimit]: status=error
# expect[memory=rlimit]: stderr=/MemoryError/
# expect: stdout!=/^held (2[89][0-9]|[3-9][0-9][0-9]|[0-9]{4,}) MiB/m
# check: server-answers
import sys
chunks = []
while True:
    chunks.append(bytearray(16 << 20))
    print(f"held {16 * len(chunks)} MiB", flush=True)
