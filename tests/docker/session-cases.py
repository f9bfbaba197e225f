#!/usr/bin/env python3
"""The session cases of the backend parity test, through `serve` on stdio.

usage: session-cases.py SANDBOX_RUNNER

Runs one server (its backend from the environment: SANDBOX_BACKEND) and
prints one line per case, "NAME: VALUE", VALUE a JSON summary with what
must not depend on the backend: statuses, codes, outputs, paths, sizes,
MIME types.  Lines starting "session " and "info " are for the caller's
own checks (the session id; the backend-only cases).  Exits non-zero when
the server cannot be talked to at all.
"""
import base64
import json
import subprocess
import sys
import time


class Server:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)
        self.next_id = 0
        self.call_raw("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "parity", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()

    def call_raw(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                sys.exit("the server closed its output")
            msg = json.loads(line)
            if msg.get("id") == self.next_id:
                return msg

    def tool(self, name, **args):
        r = self.call_raw("tools/call", {"name": name, "arguments": args}).get("result", {})
        if r.get("isError"):
            # a refusal carries its JSON in the text only
            try:
                return json.loads(r["content"][0]["text"])
            except (KeyError, IndexError, ValueError):
                return {"error": {"code": "unparsable"}}
        return r.get("structuredContent") or {}

    def close(self):
        self.p.stdin.close()
        return self.p.wait(timeout=120)


def code_of(r):
    """The machine-readable code of a failed tool call."""
    for k in ("code", "error_code", "failure"):
        if isinstance(r.get(k), str):
            return r[k]
    e = r.get("error")
    if isinstance(e, dict):
        return e.get("code")
    return None


def out(name, value):
    print("%s: %s" % (name, json.dumps(value, sort_keys=True)), flush=True)


def artifacts(r):
    return sorted((a.get("path"), a.get("size"), a.get("mime_type"))
                  for a in r.get("artifacts", []))


def run(srv, sid, code, **kw):
    r = srv.tool("run_code", session_id=sid, language="python", code=code, **kw)
    return {k: r.get(k) for k in ("status", "exit_code", "stdout", "stderr")
            if k in r}, r


def shell_result(r):
    return {k: r.get(k) for k in ("output", "exit_code", "state", "timed_out", "code")
            if r.get(k) is not None} or {"code": code_of(r)}


def shell_until_ready(srv, shell):
    """shell_read until the command ends, with the output of every read."""
    output = ""
    for _ in range(50):
        r = srv.tool("shell_read", shell_id=shell)
        output += r.get("output") or ""
        if r.get("state") != "waiting":
            break
        time.sleep(0.1)
    r["output"] = output
    return r


def shell_cases(srv, shell):
    def sh(name, command, **kw):
        r = srv.tool("shell_exec", shell_id=shell, command=command, **kw)
        out(name, shell_result(r))
        return r

    sh("shell, cd and export", "cd /tmp && export GREETING=hello")
    sh("shell, the cwd and variables persist", "pwd; echo $GREETING")
    sh("shell, stderr comes back too", "echo err >&2")
    sh("shell, a failing command's status", "false")
    sh("shell, multi-line and long commands",
       "for i in 1 2; do\n  echo line$i\ndone\nX=$(printf '%3000s' | tr ' ' y); echo ${#X}")
    sh("shell, output without a final newline", "printf 'a\\tb'")
    r = sh("shell, wait=false", "sleep 30; echo never", wait=False)
    r = srv.tool("shell_exec", shell_id=shell, command="echo again")
    out("shell, a command while one runs", code_of(r))
    r = srv.tool("write_stdin", shell_id=shell, data="\\x03")
    out("shell, write_stdin of Ctrl-C", r.get("bytes"))
    out("shell, Ctrl-C interrupts the command", shell_result(shell_until_ready(srv, shell)))
    # a ^C at the prompt: bash's newline and prompt are not the next
    # command's, however late they come
    for i in range(5):
        srv.tool("write_stdin", shell_id=shell, data="\\x03")
        sh("shell, a Ctrl-C at the prompt, then a command (%d)" % i, "echo own")
    sh("shell, a command reading stdin", "read -r name; echo hi $name", wait=False)
    srv.tool("write_stdin", shell_id=shell, data="agent\n")
    out("shell, write_stdin feeds it", shell_result(shell_until_ready(srv, shell)))
    sh("shell, a command past its timeout", "sleep 30", timeout_seconds=1)
    sh("shell, the state is kept after it", "echo still $GREETING")
    r = srv.tool("shell_list")
    out("shell_list", [(x.get("shell_id") == shell, x.get("state")) for x in r.get("shells", [])])
    srv.tool("shell_exec", shell_id=shell, command="exit 3")
    out("shell, exit ends the shell", shell_result(shell_until_ready(srv, shell)))
    r = srv.tool("shell_remove", shell_id=shell)
    out("shell_remove", r.get("removed"))
    r = srv.tool("shell_read", shell_id=shell)
    out("shell, a removed shell", code_of(r))


def main():
    srv = Server([sys.argv[1], "serve"])
    r = srv.tool("create_session", image="python")
    sid = r.get("session_id")
    if not sid:
        out("create", r)
        srv.close()
        sys.exit(1)
    print("session " + sid, flush=True)
    out("create", {"has_id": True})

    # files persist across run_code calls, and a run reports what it changed
    s, r = run(srv, sid, 'open("/mnt/data/a.txt", "w").write("hi\\n")\n'
                         'import os; os.makedirs("sub", exist_ok=True)\n'
                         'open("sub/b.csv", "w").write("x,y\\n1,2\\n")')
    out("run writes files", s)
    out("run's changed artifacts", artifacts(r))
    s, r = run(srv, sid, 'print(open("a.txt").read(), end="")')
    out("a second run reads them", s)
    out("an unchanged run changes no artifact", artifacts(r))

    # a run's stdin, args and files beside its code
    s, r = run(srv, sid, 'import sys, helper\nprint(sys.argv[1:], sys.stdin.read(), helper.X)',
               stdin="in\n" * 30000, args=["a b", "c"],
               files={"helper.py": {"content": "X = 42\n"}})
    s["stdout"] = (s.get("stdout") or "").replace("in\n" * 30000, "<90000 bytes of stdin>")
    out("run with stdin, args and files", s)

    # /scratch, where run_code writes the code: a tmpfs of the session's
    # own, capped at session_scratch_size (default 64M), never a host
    # directory
    s, _ = run(srv, sid, 'm = [l.split() for l in open("/proc/self/mountinfo")]\n'
                         'f = [x for x in m if x[4] == "/scratch"][-1]\n'
                         'print(f[f.index("-") + 1], "nosuid" in f[5], "nodev" in f[5])')
    out("/scratch is a nosuid, nodev tmpfs", s)
    s, _ = run(srv, sid, 'import errno, os\nn = 0\ntry:\n'
                         '    with open("/scratch/fill", "wb") as f:\n'
                         '        while n < 1024:\n'
                         '            f.write(b"x" * (1 << 20)); f.flush(); n += 1\n'
                         'except OSError as e:\n'
                         '    print(errno.errorcode[e.errno], n <= 64)\n'
                         'os.unlink("/scratch/fill")')
    out("filling /scratch ends in ENOSPC at its size", s)

    # upload, read back, list
    data = b"col\n1\n2\n"
    b64 = base64.b64encode(data).decode()
    r = srv.tool("upload_file", session_id=sid, filename="in/data.csv", content_base64=b64)
    out("upload", {"path": r.get("path"), "code": code_of(r)})
    r = srv.tool("upload_file", session_id=sid, filename="in/data.csv", content_base64=b64)
    out("upload onto an existing file", code_of(r))
    r = srv.tool("upload_file", session_id=sid, filename="in/data.csv",
                 content_base64=base64.b64encode(b"col\n3\n").decode(), overwrite=True)
    out("upload with overwrite", {"path": r.get("path"), "code": code_of(r)})
    r = srv.tool("read_artifact", session_id=sid, path="in/data.csv")
    got = r.get("content_base64") or r.get("data_base64") or r.get("content")
    out("read_artifact", {"content": base64.b64decode(got).decode() if got else None,
                          "mime": r.get("mime_type"), "code": code_of(r)})
    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
                           "+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
    srv.tool("upload_file", session_id=sid, filename="dot.png",
             content_base64=base64.b64encode(png).decode())
    big = bytes(range(256)) * 2400  # 600 KiB: more than one exec's worth
    r = srv.tool("upload_file", session_id=sid, filename="big.bin",
                 content_base64=base64.b64encode(big).decode())
    out("a 600 KiB upload", code_of(r))
    s, _ = run(srv, sid, 'import hashlib; print(hashlib.sha256(open("big.bin","rb").read())'
                         '.hexdigest())')
    out("the 600 KiB upload arrives whole", s)
    r = srv.tool("list_artifacts", session_id=sid)
    out("list_artifacts with MIME", artifacts(r))

    # the file tools
    r = srv.tool("file_write", session_id=sid, path="/tmp/notes.txt", content="one\ntwo\n")
    out("file_write", {"path": r.get("path"), "code": code_of(r)})
    r = srv.tool("file_read", session_id=sid, path="/tmp/notes.txt")
    out("file_read", {k: r.get(k) for k in ("content", "text", "total_lines") if k in r})
    r = srv.tool("file_patch", session_id=sid, path="/tmp/notes.txt", old_string="two",
                 new_string="three")
    out("file_patch", {"replacements": r.get("replacements"), "code": code_of(r)})
    r = srv.tool("file_patch", session_id=sid, path="/tmp/notes.txt", old_string="absent",
                 new_string="x")
    out("file_patch without a match", code_of(r))
    r = srv.tool("file_search", session_id=sid, pattern="^thr", path="/tmp")
    out("file_search", sorted((m.get("path"), m.get("line"), m.get("text"))
                              for m in r.get("matches", [])))
    r = srv.tool("file_search", session_id=sid, pattern="1", glob="*.csv")
    out("file_search with a glob", sorted((m.get("path"), m.get("line"))
                                          for m in r.get("matches", [])))
    r = srv.tool("file_read", session_id=sid, path="/mnt/data/absent.txt")
    out("file_read of a missing file", code_of(r))
    r = srv.tool("file_write", session_id=sid, path="/etc/x", content="x")
    out("file_write on the read-only root", code_of(r))

    # the safety nets: TOML checked by the session's python3, a tolerant
    # patch, a sensitive-path warning
    r = srv.tool("file_write", session_id=sid, path="/tmp/bad.toml",
                 content="a = 1\n[b]\nc = = 2\n")
    e = r.get("error") if isinstance(r.get("error"), dict) else {}
    out("file_write of broken TOML", {"code": code_of(r),
                                      "line 3": "line 3," in (e.get("message") or "")})
    r = srv.tool("file_write", session_id=sid, path="/tmp/good.toml",
                 content="a = 1\n[b]\nc = 2\n")
    out("file_write of valid TOML", {"size": r.get("size"), "code": code_of(r)})
    r = srv.tool("file_write", session_id=sid, path="/tmp/w.py",
                 content="if x:\r\n    y = 1\r\n")
    r = srv.tool("file_patch", session_id=sid, path="/tmp/w.py", old_string="if x:\ny = 1\n",
                 new_string="if z:\n    y = 2\n")
    out("fuzzy file_patch", {"match": r.get("match"), "code": code_of(r)})
    r = srv.tool("file_read", session_id=sid, path="/tmp/w.py")
    out("fuzzy file_patch keeps CRLF", r.get("content"))
    r = srv.tool("file_write", session_id=sid, path="/tmp/.env", content="K=v\n")
    out("a sensitive-path warning", len(r.get("warnings") or []))

    # path escapes
    r = srv.tool("read_artifact", session_id=sid, path="../../etc/passwd")
    out("read_artifact with ..", code_of(r))
    r = srv.tool("read_artifact", session_id=sid, path="/etc/passwd")
    out("read_artifact outside the data directory", code_of(r))
    r = srv.tool("upload_file", session_id=sid, filename="/etc/evil",
                 content_base64=b64)
    out("upload outside the data directory", code_of(r))
    run(srv, sid, 'import os; os.symlink("/etc/passwd", "link"); os.symlink("/", "root")')
    r = srv.tool("read_artifact", session_id=sid, path="link")
    # native resolves the link inside the data directory (not_found),
    # Docker refuses it (path_outside_sandbox): both keep /etc/passwd out
    out("read_artifact through a symlink out", {
        "refused": code_of(r) in ("not_found", "path_outside_sandbox"),
        "leaked": "root:" in json.dumps(r)})
    r = srv.tool("file_read", session_id=sid, path="/proc/version")
    out("file_read on procfs", code_of(r))

    # quota: the data directory is SANDBOX_SESSION_DATA_SIZE (1 MiB)
    r = srv.tool("upload_file", session_id=sid, filename="huge.bin",
                 content_base64=base64.b64encode(b"\0" * (700 << 10)).decode())
    out("an upload past the quota", code_of(r))
    s, _ = run(srv, sid, 'try:\n  open("fill.bin","wb").write(b"\\0" * (3 << 20))\n'
                         'except OSError as e:\n  print(e.errno)')
    out("a run past the quota", s)
    srv.tool("file_write", session_id=sid, path="fill.bin", content="")
    r = srv.tool("list_artifacts", session_id=sid)
    out("no temp file is left", [a for a in artifacts(r) if ".sr-tmp" in (a[0] or "")])

    # limits in a session
    s, _ = run(srv, sid, 'x = bytearray(1 << 30); print(len(x))')
    out("oom in a session", {"status": s.get("status")})
    s, _ = run(srv, sid, 'while True: pass', timeout_seconds=1)
    out("timeout in a session", {"status": s.get("status")})
    s, _ = run(srv, sid, 'print(open("a.txt").read(), end="")')
    out("the session lives on", s.get("stdout"))
    # for the caller: a run after an oom must not be taken for one
    print("info after-oom " + json.dumps(s.get("status")), flush=True)

    # persistent shells: state, both streams, exit codes, stdin, Ctrl-C,
    # timeouts and exit
    r = srv.tool("shell_new", session_id=sid)
    shell = r.get("shell_id")
    out("shell_new", {"shell": bool(shell), "state": r.get("state"), "code": code_of(r)})
    if shell:
        shell_cases(srv, shell)

    r = srv.tool("close_session", session_id=sid)
    out("close_session", code_of(r))
    r = srv.tool("list_sessions")
    out("no session after close", len(r.get("sessions", [])))
    _, r = run(srv, sid, 'print(1)')
    out("a closed session is gone", code_of(r))
    print("info exit %d" % srv.close(), flush=True)


main()
