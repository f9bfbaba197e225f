# hostile: reaches out: public resolvers, the host's own addresses, the cloud metadata address, the qemu gateway, IPv6, UDP and DNS
# expected: nothing is reachable: only lo exists, so every connect and send fails at once
# timeout: 10
# expect: status=success
# expect: stdout!=/CONNECTED|SENT|RESOLVED/
# expect: stdout=/^tcp 1.1.1.1:53: ENETUNREACH$/m
# expect: stdout=/^tcp 169.254.169.254:80: ENETUNREACH$/m
# expect: stdout=/^done$/m
# expect: max_ms=15000
# check: listener-untouched
import errno, json, socket
def name(e):
    return errno.errorcode.get(e.errno, str(e)) if e.errno else str(e)
targets = [("1.1.1.1", 53), ("8.8.8.8", 443), ("169.254.169.254", 80), ("10.0.2.2", 22), ("192.168.1.1", 80)]
targets += [(a, @HOST_PORT@) for a in json.loads('@HOST_ADDRS@')] + [(a, 22) for a in json.loads('@HOST_ADDRS@')]
for host, port in targets:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(2)
    try:
        s.connect((host, port))
        print(f"tcp {host}:{port}: CONNECTED")
    except OSError as e:
        print(f"tcp {host}:{port}: {name(e)}")
    s.close()
s6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s6.settimeout(2)
try:
    s6.connect(("2606:4700:4700::1111", 53))
    print("tcp6: CONNECTED")
except OSError as e:
    print(f"tcp6: {name(e)}")
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"x", ("8.8.8.8", 53))
    print("udp 8.8.8.8:53: SENT")
except OSError as e:
    print(f"udp 8.8.8.8:53: {name(e)}")
try:
    print("dns example.com: RESOLVED", socket.getaddrinfo("example.com", 80)[0][4])
except OSError as e:
    print(f"dns example.com: {e}")
print("done")
