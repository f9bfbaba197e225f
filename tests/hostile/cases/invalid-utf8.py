# hostile: ill-formed UTF-8 on stdout: overlong, surrogate, truncated, past U+10FFFF, a lone continuation byte
# expected: base64, byte for byte (never a broken JSON string)
# expect: status=success
# expect: stdout_encoding=base64
# expect: stdout=/^A\xc0\xafB\xed\xa0\x80C\xe2\x82D\xf4\x90\x80\x80E\x80F\xff$/
import sys
sys.stdout.buffer.write(b"A\xc0\xafB\xed\xa0\x80C\xe2\x82D\xf4\x90\x80\x80E\x80F\xff")
