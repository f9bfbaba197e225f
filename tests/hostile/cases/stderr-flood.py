# hostile: floods stderr with 256 MiB of lines while stdout says one thing
# expected: stderr truncated, stdout intact
# timeout: 20
# expect: status=success
# expect: stderr_truncated=true
# expect: stdout_truncated=false
# expect: stdout=/^intact\n$/
import os, sys
print("intact", flush=True)
line = b"e" * 1023 + b"\n"
block = line * 1024
for _ in range(256):
    os.write(2, block)
