# hostile: 3-byte characters across the 100 KiB output cap, so the cap cuts one in half
# expected: a well-formed result: truncated, in base64 or in valid UTF-8, and the server answers
# expect: status=success
# expect: stdout_truncated=true
# check: server-answers
import sys
sys.stdout.write("xx" + "\u20ac" * 60000)
