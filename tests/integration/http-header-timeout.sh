#!/bin/sh
# The HTTP transport's header deadline (http_header_timeout): a client
# that trickles its headers a byte at a time (slow loris), which
# libmicrohttpd's inactivity timeout never ends, is cut off at the
# deadline, as is one that sends nothing; a client that sends its
# request in time is served, and a request whose headers are in is not
# cut off while its body or answer takes longer.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db SANDBOX_WARM_CONTAINERS=0
command -v curl >/dev/null || skip_all "curl is not installed"
"$SR_BIN" serve --help 2>&1 | grep -q -- "--transport" ||
  skip_all "this build has no HTTP transport"

SANDBOX_HTTP_HEADER_TIMEOUT=2 start_server
ok $? "serve --transport http listens, http_header_timeout=2"

# client MODE: how long the server kept a connection that sends its
# headers slowly (MODE trickle: a byte every 0.3 s) or not at all (idle),
# or "open" when it still had it after 12 s.
client () {
  python3 - "$port" "$1" <<'PY'
import socket, sys, time
port, mode = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(0.3)
req = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000
start = time.time()
i = 0
while time.time() - start < 12:
    try:
        if mode == "trickle":
            s.send(req[i:i + 1]); i += 1
        if s.recv(1) == b"":
            break
    except socket.timeout:
        continue
    except OSError:
        break
else:
    print("open"); sys.exit(0)
print("%d" % round(time.time() - start))
PY
}
t=$(client trickle)
ok "$(case $t in [2-5]) echo 0 ;; *) echo 1 ;; esac)" \
  "headers trickled a byte at a time: cut off at the deadline (after $t s)"
t=$(client idle)
ok "$(case $t in [2-5]) echo 0 ;; *) echo 1 ;; esac)" "no headers at all: cut off at the deadline (after $t s)"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
# keep_alive: the status and the Keep-Alive of an initialize.
keep_alive () {
  curl -s -o /dev/null -w '%{http_code} %header{keep-alive}' -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -d "$init" "$url"
}
is "$(keep_alive)" "200 timeout=1" \
  "a request sent in time is served, saying the connection may be kept 1 s idle (the deadline 2 s, less 1)"
# Headers in at once, the body 3 s later: past the header deadline, served.
code=$(python3 - "$port" "$init" <<'PY'
import socket, sys, time
port, body = int(sys.argv[1]), sys.argv[2].encode()
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          b"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n" % len(body))
time.sleep(3)
s.sendall(body)
s.settimeout(10)
print(s.recv(100).split(b" ")[1].decode())
PY
)
is "$code" 200 "a request whose headers are in is not cut off while its body comes"
stop_server
ok $? "the server stops"

# The hint is a second under the first idle close: the header deadline,
# else (none, or one past it) libmicrohttpd's idle timeout of 60 s.
for t in 7:6 0:59 90:59 1:0; do
  SANDBOX_HTTP_HEADER_TIMEOUT=${t%:*} start_server
  is "$(keep_alive)" "200 timeout=${t#*:}" "http_header_timeout=${t%:*}: Keep-Alive timeout=${t#*:}"
  stop_server
done
done_testing
