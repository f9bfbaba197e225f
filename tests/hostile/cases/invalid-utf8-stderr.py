# hostile: valid UTF-8 on stdout, raw bytes on stderr
# expected: stdout comes back as UTF-8 text and stderr as base64, both exact
# expect: status=success
# expect: stdout_encoding=utf-8
# expect: stderr_encoding=base64
# expect: stdout=/^caf\u00e9 \u2028 \u{1F600}\n$/u
# expect: stderr=/^\xfe\xff\x00bin$/
import sys
sys.stdout.write("caf\u00e9 \u2028 \U0001F600\n")
sys.stdout.flush()
sys.stderr.buffer.write(b"\xfe\xff\x00bin")
