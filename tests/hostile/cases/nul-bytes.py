# hostile: output that is text but for NUL bytes in it
# expected: nothing cut at the NUL: the bytes come back exactly (base64)
# expect: status=success
# expect: stdout_encoding=base64
# expect: stdout=/^before\x00after\x00\n$/
import sys
sys.stdout.buffer.write(b"before\0after\0\n")
