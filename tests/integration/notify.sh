#!/bin/sh
# The readiness protocol of a Type=notify unit: the HTTP server says
# READY=1 once it listens and STOPPING=1 when it stops, as datagrams to
# $NOTIFY_SOCKET (a path or an abstract name), read here by a listener of
# the test's own.
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
command -v curl >/dev/null || skip_all "curl is not installed"

# listen_notify ADDRESS OUT: collects the datagrams sent to ADDRESS (a
# path, or @name) into OUT, one a line, for 60 s at most.
listen_notify () {
  python3 - "$1" "$2" <<'PY' &
import socket, sys
addr, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
s.settimeout(60)
open(out + ".bound", "w").close()
with open(out, "w", buffering=1) as f:
    try:
        while True:
            f.write(s.recv(4096).decode() + "\n")
    except socket.timeout:
        pass
PY
  listener=$!
  at_exit "kill $listener 2>/dev/null"
  bound () { [ -e "$2.bound" ]; }
  wait_until 10 bound "$1" "$2"
}

for addr in "$sr_tmp/notify.sock" "@sr-notify-$$"; do
  listen_notify "$addr" "$sr_tmp/notified"
  NOTIFY_SOCKET=$addr start_server || echo "Bail out! the HTTP server did not start"
  ready () { grep -qx 'READY=1' "$sr_tmp/notified"; }
  wait_until 10 ready
  ok $? "READY=1 reaches the service manager once the server listens ($addr)"
  stop_server
  stopping () { grep -qx 'STOPPING=1' "$sr_tmp/notified"; }
  wait_until 10 stopping
  ok $? "and STOPPING=1 when it stops"
  kill "$listener" 2>/dev/null
  rm -f "$sr_tmp/notified" "$sr_tmp/notified.bound"
done

NOTIFY_SOCKET=$sr_tmp/nobody.sock start_server --log-file "$sr_tmp/server.log" ||
  echo "Bail out! the HTTP server did not start"
code=$(curl -s -o /dev/null -w '%{http_code}' "$url")
stop_server
ok $([ "$code" != 000 ] && echo 0 || echo 1) "a socket nobody listens on does not stop the server (HTTP $code)"
like "$(grep notify_failed "$sr_tmp/server.log" | head -1)" " warning notify_failed state=\"READY=1\" error=" \
  "it is logged"
done_testing
