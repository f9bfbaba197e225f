# hostile: writes every byte value 0..255 to stdout
# expected: the output comes back as base64, byte for byte
# expect: status=success
# expect: stdout_encoding=base64
# check: all-bytes
import sys
sys.stdout.buffer.write(bytes(range(256)))
