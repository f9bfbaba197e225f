#!/bin/sh
# The HTTP server gives no thread to a connection: idle sockets, past the
# 128 threads of the old server, hold neither a thread nor a client of
# another address out; a stream that waits for its run holds no thread
# either, so more of them than the server has threads run at once while
# a quick call is still answered at once; a stream cut and taken up with
# Last-Event-ID waits for its old connection without holding a thread; a
# client that hangs up on a waiting stream is still seen (its run
# cancelled).
. "${SR_SRCDIR}/tests/integration/lib.sh"
export SANDBOX_RUNTIME_DIR=$sr_tmp/run SANDBOX_HISTORY_DB=$sr_tmp/h.db
require_image python
command -v curl >/dev/null || skip_all "curl is not installed"
ip -4 addr show lo | grep -q '127.0.0.1/8' || skip_all "lo has no 127.0.0.0/8 (127.0.0.2 is the second address)"

threads () { sed -n 's/^Threads:[[:space:]]*//p' "/proc/$server/status"; }

# --- idle sockets: no thread each, nobody locked out ---
# No warm container: the containers directory holds the runs alone.
export SANDBOX_HTTP_MAX_CONNECTIONS_PER_IP=0 SANDBOX_MAX_CONCURRENT=16 SANDBOX_WARM_CONTAINERS=0
start_server || echo "Bail out! the HTTP server did not start"
before=$(threads)
hold_idle 200
wait_until 20 idle_done
is "$(cat "$sr_tmp/idle")" 200 "200 idle connections are all held (more than the 128 slots of old)"
during=$(threads)
ok $([ "$during" -le $((before + 2)) ] && echo 0 || echo 1) \
  "and take no thread each ($before threads before, $during with them)"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 --interface 127.0.0.2 \
  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d "$init" "http://127.0.0.1:$port/mcp")
is "$code" 200 "a client from another address still gets in"

# --- waiting streams: more than the server's threads, a quick call still answered ---
python3 - "$url" 12 > "$sr_tmp/streams" 2>&1 <<'PY'
import json, sys, threading, time, urllib.request
url, n = sys.argv[1], int(sys.argv[2])
H = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
     "MCP-Protocol-Version": "2025-11-25"}

def post(body, sid=None, timeout=60):
    h = dict(H)
    if sid:
        h["Mcp-Session-Id"] = sid
    rq = urllib.request.Request(url, json.dumps(body).encode(), h)
    with urllib.request.urlopen(rq, timeout=timeout) as r:
        return r.headers.get("Mcp-Session-Id"), r.read().decode()

sid, _ = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "py", "version": "1"}}})
post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
ok = []
def run(i):
    _, body = post({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                    "params": {"name": "run_code", "arguments": {
                        "language": "python",
                        "code": "import time; time.sleep(3); print('done %d')" % i}}}, sid)
    ok.append(("done %d" % i) in body)
ts = [threading.Thread(target=run, args=(i,)) for i in range(n)]
for t in ts:
    t.start()
time.sleep(1.5)
t0 = time.monotonic()
_, body = post({"jsonrpc": "2.0", "id": 2, "method": "ping"}, sid, timeout=10)
print("ping_ms", int((time.monotonic() - t0) * 1000), '"result"' in body)
for t in ts:
    t.join()
print("done", sum(ok))
PY
ping=$(sed -n 's/^ping_ms //p' "$sr_tmp/streams")
like "$ping" '^[0-9]+ True$' "with 12 runs waiting on their streams (the server has 4 threads), a ping is answered"
ok $([ "${ping%% *}" -lt 1000 ] && echo 0 || echo 1) "at once (${ping%% *} ms)"
is "$(sed -n 's/^done //p' "$sr_tmp/streams")" 12 "and every run's stream brings its result"
grep -v '^ping_ms\|^done' "$sr_tmp/streams" | head -5 | sed 's/^/# /'

# --- a stream cut and taken up at once, its old connection still parked ---
# The GET with Last-Event-ID waits, parked, for the old connection to let
# go: it never holds a thread the old one needs (of 4, often the same).
python3 - "$url" 6 > "$sr_tmp/resume" 2>&1 <<'PY'
import json, socket, sys, urllib.parse, urllib.request
url, n = sys.argv[1], int(sys.argv[2])
u = urllib.parse.urlparse(url)
rq = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "py", "version": "1"}}}).encode(),
    {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
with urllib.request.urlopen(rq) as r:
    sid = r.headers["Mcp-Session-Id"]

def send(method, headers, body=b""):
    s = socket.create_connection((u.hostname, u.port))
    h = "".join("%s: %s\r\n" % kv for kv in headers.items())
    s.sendall(("%s %s HTTP/1.1\r\nHost: %s:%d\r\nMcp-Session-Id: %s\r\n"
               "MCP-Protocol-Version: 2025-11-25\r\nAccept: text/event-stream\r\n%s"
               "Content-Length: %d\r\n\r\n" % (method, u.path, u.hostname, u.port, sid, h,
                                                  len(body))).encode() + body)
    return s

taken = 0
for i in range(n):
    body = json.dumps({"jsonrpc": "2.0", "id": 50 + i, "method": "tools/call", "params": {
        "name": "run_code", "arguments": {"language": "python",
        "code": "import time; time.sleep(1.5); print('late %d')" % i},
        "_meta": {"progressToken": "p%d" % i}}}).encode()
    s = send("POST", {"Content-Type": "application/json"}, body)
    got = b""
    while b"\nid: " not in got and b"\r\nid: " not in got:
        got += s.recv(4096)
    ev = got.decode().split("id: ", 1)[1].split("\n", 1)[0].strip()
    s.close()
    g = send("GET", {"Last-Event-ID": ev})
    g.settimeout(20)
    out = b""
    try:
        while b'"id":%d' % (50 + i) not in out:
            chunk = g.recv(65536)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    g.close()
    head = out.split(b"\r\n", 1)[0].decode()
    if head.endswith("200 OK") and (b"late %d" % i) in out:
        taken += 1
    else:
        print("round", i, head, out[-200:], file=sys.stderr)
print("taken", taken)
PY
is "$(sed -n 's/^taken //p' "$sr_tmp/resume")" 6 \
  "6 streams cut and taken up at once with Last-Event-ID all bring their response"
grep -v '^taken' "$sr_tmp/resume" | head -5 | sed 's/^/# /'

# --- a client that hangs up on a waiting stream is seen ---
python3 - "$url" "$SANDBOX_RUNTIME_DIR/containers" > "$sr_tmp/hangup" 2>&1 <<'PY'
import json, os, socket, sys, time, urllib.parse, urllib.request
url = sys.argv[1]
H = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
rq = urllib.request.Request(url, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "py", "version": "1"}}}).encode(), H)
with urllib.request.urlopen(rq) as r:
    sid = r.headers["Mcp-Session-Id"]
u = urllib.parse.urlparse(url)
body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
    "name": "run_code", "arguments": {"language": "python",
    "code": "import time; time.sleep(30)"}}}).encode()
s = socket.create_connection((u.hostname, u.port))
s.sendall(("POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: application/json\r\n"
           "Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\n"
           "MCP-Protocol-Version: 2025-11-25\r\nContent-Length: %d\r\n\r\n"
           % (u.path, u.hostname, u.port, sid, len(body))).encode() + body)
time.sleep(2)
print("running", len(os.listdir(sys.argv[2])), flush=True)
s.close()
PY
like "$(cat "$sr_tmp/hangup")" '^running [1-9]' "a run waits on its stream"
running () { [ -n "$(ls "$SANDBOX_RUNTIME_DIR/containers" 2>/dev/null)" ]; }
gone () { ! running; }
wait_until 10 gone
ok $? "the run of a client that hung up on its waiting stream is cancelled (its container gone)"

kill "$idle" 2>/dev/null
stop_server
ok $? "the server stops cleanly with streams and idle connections"

done_testing
