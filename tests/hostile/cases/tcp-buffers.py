# hostile: queues data on hundreds of loopback TCP connections nobody reads (socket buffers are kernel memory)
# expected: the buffers stop at about the 256 MiB memory limit, not at the host's TCP memory
# expect: status=success|oom
# expect: stdout!=/^queued ([3-9][0-9][0-9]|[0-9]{4,}) MiB/m
# skip[memory=rlimit]: socket buffers have no rlimit: only a memory cgroup caps them
# timeout: 30
import socket

srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(512)
port = srv.getsockname()[1]
conns, total, chunk = [], 0, b"x" * 65536
while len(conns) < 300 and total < (1 << 30):
    try:
        c = socket.create_connection(("127.0.0.1", port))
        s, _ = srv.accept()
    except OSError:
        break
    c.setblocking(False)
    conns.append((c, s))
    while total < (1 << 30):
        try:
            total += c.send(chunk)
        except OSError:
            break
print("queued", total >> 20, "MiB in", len(conns), "connections")
