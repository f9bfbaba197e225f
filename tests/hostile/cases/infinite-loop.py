# hostile: while True: pass
# expected: killed at the 1 s timeout: status timeout
# timeout: 1
# expect: status=timeout
# expect: max_ms=8000
while True:
    pass
