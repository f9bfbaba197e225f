# hostile: raw and exotic sockets: raw IPv4/IPv6, packet, ICMP ping, vsock, AF_ALG, AF_KEY, and netlink to add an address
# expected: every one is refused (no CAP_NET_RAW or CAP_NET_ADMIN, families outside the seccomp allow list)
# expect: status=success
# expect: stdout!=/ALLOWED/
# expect: stdout=/^AF_INET SOCK_RAW: refused EPERM$/m
# expect: stdout=/^AF_PACKET SOCK_RAW: refused EPERM$/m
# expect: stdout=/^AF_VSOCK: refused EPERM$/m
# expect: stdout=/^netlink RTM_NEWADDR: refused EPERM$/m
# expect: stdout=/^done$/m
import errno, socket, struct
def attempt(label, *args):
    try:
        socket.socket(*args).close()
        print(f"{label}: ALLOWED")
    except OSError as e:
        print(f"{label}: refused {errno.errorcode.get(e.errno, e.errno)}")
attempt("AF_INET SOCK_RAW", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
attempt("AF_INET6 SOCK_RAW", socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
attempt("AF_INET SOCK_RAW IPPROTO_RAW", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
attempt("AF_PACKET SOCK_RAW", 17, socket.SOCK_RAW, 0x0300)
attempt("ICMP ping socket", socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
attempt("AF_VSOCK", 40, socket.SOCK_STREAM, 0)
attempt("AF_ALG", 38, socket.SOCK_SEQPACKET, 0)
attempt("AF_KEY", 15, socket.SOCK_RAW, 2)
attempt("AF_BLUETOOTH", 31, socket.SOCK_RAW, 1)
# Netlink is allowed (the container's own lo), but changing it needs CAP_NET_ADMIN.
nl = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
ifa = struct.pack("BBBBI", socket.AF_INET, 8, 0, 0, 1)
attr = struct.pack("HH4s", 8, 2, socket.inet_aton("10.9.9.9"))
msg = struct.pack("IHHII", 16 + len(ifa) + len(attr), 20, 0x405, 1, 0) + ifa + attr  # RTM_NEWADDR, REQUEST|ACK|CREATE
nl.send(msg)
reply = nl.recv(4096)
err = struct.unpack("i", reply[16:20])[0]
print("netlink RTM_NEWADDR:", f"refused {errno.errorcode.get(-err, err)}" if err else "ALLOWED")
print("done")
