"""Drives `sandbox-runner serve` over stdio for tests/integration/warm-interp.sh:
run_code on pre-started interpreters (warm) and cold, printing a
"RESULT 0|1 name" line per check.

usage: warm-interp.py SR_BIN LOG_DIR [python-data]
The environment is the server's (the test sets the runtime dir, history
and the default timeout).
"""
import json
import os
import subprocess
import sys
import threading
import time

SR_BIN, LOG_DIR = sys.argv[1], sys.argv[2]
DATA = len(sys.argv) > 3 and sys.argv[3] == "python-data"
TIMEOUT_S = float(os.environ["SANDBOX_TIMEOUT"])


def result(good, name):
    print("RESULT %d %s" % (0 if good else 1, name), flush=True)
    return good


class Server:
    def __init__(self, name, **env):
        self.log = os.path.join(LOG_DIR, name + ".err")
        e = dict(os.environ)
        e.update(env)
        self.p = subprocess.Popen([SR_BIN, "serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=open(self.log, "w"), env=e)
        self.next_id = 0
        self.lock = threading.Lock()
        self.answers = {}
        self.cond = threading.Condition(self.lock)
        threading.Thread(target=self._read, daemon=True).start()
        self.call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                 "clientInfo": {"name": "warm-interp", "version": "1"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, msg):
        with self.lock:
            self.p.stdin.write((json.dumps(msg) + "\n").encode())
            self.p.stdin.flush()

    def _read(self):
        for line in self.p.stdout:
            m = json.loads(line)
            if "id" in m:
                with self.cond:
                    self.answers[m["id"]] = m
                    self.cond.notify_all()

    def call(self, method, params):
        with self.lock:
            self.next_id += 1
            i = self.next_id
        self._send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        with self.cond:
            while i not in self.answers:
                self.cond.wait()
            return self.answers.pop(i)

    def run(self, code, language="python", **kw):
        args = dict(language=language, code=code)
        args.update(kw)
        t = time.monotonic()
        r = self.call("tools/call", {"name": "run_code", "arguments": args})["result"]
        r = r.get("structuredContent") or json.loads(r["content"][0]["text"])
        r["round_trip_ms"] = (time.monotonic() - t) * 1000
        return r

    def warm_run(self, code, language="python", wait_s=0, **kw):
        """Runs code on a pre-started interpreter, ready for at least wait_s:
        a run that found none (the pool refilling) is run again."""
        for _ in range(40):
            time.sleep(wait_s or 0.5)
            r = self.run(code, language, **kw)
            if r.get("prestarted"):
                return r
        return r

    def stop(self):
        self.p.stdin.close()
        return self.p.wait(timeout=60)


SAME = ("status", "exit_code", "signal", "stdout", "stderr")

# Snippets whose outcome must be the same warm and cold.
CASES = [
    ("print", dict(code="print(1)")),
    ("__name__ and sys.argv",
     dict(code="import sys; print(__name__, sys.argv, sys.orig_argv, sys.path[0], __file__)",
          args=["a", "b c", ""])),
    ("a fresh globals dict",
     dict(code="print(sorted(globals())); print(__spec__, __cached__, __doc__, __package__, "
               "__annotations__, type(__loader__).__name__, __builtins__)")),
    # Without preloads (python's default): the same modules as cold.
    ("nothing of the bootstrap in sys.modules",
     dict(code="import sys; print(sorted(sys.modules))")),
    ("an uncaught exception's traceback names main.py",
     dict(code="def f():\n    raise ValueError('v')\nf()\n")),
    ("a chained exception", dict(code="try:\n    1/0\nexcept Exception as e:\n    "
                                      "raise RuntimeError('r') from e\n")),
    ("a syntax error", dict(code="x = = 1\n")),
    ("sys.exit(3)", dict(code="import sys; sys.exit(3)")),
    ("sys.exit('bye')", dict(code="import sys; print('out'); sys.exit('bye')")),
    ("sys.exit(None)", dict(code="import sys; sys.exit(None)")),
    ("sys.exit(300)", dict(code="raise SystemExit(300)")),
    ("raise(SIGTERM)", dict(code="import signal; signal.raise_signal(signal.SIGTERM)")),
    ("kill(getpid(), SIGKILL)", dict(code="import os; os.kill(os.getpid(), 9)")),
    ("abort()", dict(code="import os; os.abort()")),
    ("an uncaught KeyboardInterrupt", dict(code="raise KeyboardInterrupt")),
    # The interpreter is the container's command, its init's child.
    ("the parent is pid 1", dict(code="import os; print(os.getppid(), os.getpid())")),
    ("SIGTERM to pid 1 is passed on",
     dict(code="import os, time; os.kill(1, 15); time.sleep(5); print('not passed on')")),
    ("SIGINT to pid 1 is passed on",
     dict(code="import os, time\ntry:\n    os.kill(1, 2); time.sleep(5)\n"
               "except KeyboardInterrupt:\n    print('interrupted')\n")),
    ("SIGTERM to its process group", dict(code="import os; os.kill(0, 15)")),
    ("kill -9 -1 spares pid 1 and itself",
     dict(code="import os; os.kill(-1, 9); print('alive', os.path.exists('/proc/1'))")),
    ("atexit and __del__ at the end",
     dict(code="import atexit\nclass A:\n    def __del__(self): print('del')\na = A()\n"
               "atexit.register(print, 'atexit')\nf = open('/dev/stdout', 'w')\n"
               "f.write('unflushed\\n')\n1/0\n")),
    ("a thread is joined", dict(code="import threading, time\ndef w():\n    time.sleep(0.2)\n"
                                     "    print('thread')\nthreading.Thread(target=w).start()\n")),
    ("stdin", dict(code="import sys; d = sys.stdin.read(); print(repr(d), sys.stdin.seekable())",
                   stdin="hello\r\nworld\n")),
    ("empty stdin", dict(code="import sys; print(repr(sys.stdin.read()))")),
    ("stdout and stderr", dict(code="import sys; print('o'); print('e', file=sys.stderr); "
                                    "exit(7)")),
    ("a coding cookie", dict(code="# -*- coding: latin-1 -*-\nprint('\xe9')")),
    # The run ends with its command, whatever it left running: the rest
    # of the container dies with the init, before it could print.
    ("a child left running",
     dict(code="import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 0.5; echo late'])\n"
               "print('early')\n")),
    ("the fds", dict(code="import os; print(sorted(os.listdir('/proc/self/fd')))")),
    # The bootstrap reports the end itself, then closes stdout and stderr:
    # their EOF alone, before the code is done, ends nothing.
    ("stdout and stderr closed before the end",
     dict(code="import os, time\nprint('before', flush=True)\nos.close(1)\nos.close(2)\n"
               "time.sleep(0.3)\nraise SystemExit(3)\n")),
]

# Writes the end report (struct sr_cmd_end) into the page the bootstrap
# mapped, through /proc/self/mem, closes stdout and stderr, and would
# then sleep for 5 s.
FORGED_END = """import os, sys
for line in open("/proc/self/maps"):
    if "sandbox-runner-end" in line:
        addr = int(line.split("-")[0], 16)
with open("/proc/self/mem", "r+b", buffering=0) as mem:
    mem.seek(addr + 4)
    mem.write((7).to_bytes(4, sys.byteorder))
    mem.seek(addr)
    mem.write((0x31455253).to_bytes(4, sys.byteorder))
print("forged", flush=True)
os.close(1)
os.close(2)
import time
time.sleep(5)
"""


def main():
    lang = "python-data" if DATA else "python"
    warm = Server("warm")
    cold = Server("cold", SANDBOX_WARM_CONTAINERS="0")
    try:
        r = warm.warm_run("print(1)", lang)
        result(r.get("prestarted") is True and r["stdout"] == "1\n",
               "%s: a warm run says it was pre-started" % lang)
        r = cold.run("print(1)", lang)
        result("prestarted" not in r and r["stdout"] == "1\n",
               "%s: a cold run is not" % lang)

        for name, case in CASES:
            if DATA and "sys.modules" in name:
                continue
            w = warm.warm_run(language=lang, **case)
            c = cold.run(language=lang, **case)
            diff = {k: (w.get(k), c.get(k)) for k in SAME if w.get(k) != c.get(k)}
            if not result(w.get("prestarted") and not diff, "%s: %s as cold" % (lang, name)):
                print("# warm %s\n# cold %s" % (json.dumps(w)[:800], json.dumps(c)[:800]))

        r = warm.warm_run("def f():\n    raise ValueError('v')\nf()\n", lang)
        result('File "/scratch/main.py", line 3, in <module>' in r["stderr"]
               and 'File "/scratch/main.py", line 2, in f' in r["stderr"]
               and r["stderr"].count("File ") == 2 and r["exit_code"] == 1,
               "%s: the traceback names main.py and nothing of the bootstrap" % lang)
        r = warm.warm_run("import signal; signal.raise_signal(signal.SIGTERM)", lang)
        result(r["exit_code"] == 143 and r.get("signal") == 15,
               "%s: raise(SIGTERM) is exit_code 143, signal 15" % lang)
        r = warm.warm_run("print(globals().get('PRELOAD'), globals().get('_serve'))", lang)
        result(r["stdout"] == "None None\n", "%s: no name of the bootstrap in globals" % lang)
        # The code may find the page of the end report and write it itself:
        # that ends its own run, at once, with the status it wrote.
        r = warm.warm_run(FORGED_END, lang)
        result(r.get("prestarted") and r["exit_code"] == 7 and r["stdout"] == "forged\n"
               and r["duration_ms"] < 3000,
               "%s: an end report the code forges ends its own run, as its exit would (%s ms)"
               % (lang, r["duration_ms"]))
        r = warm.warm_run("import sys; print(sys.argv)", lang, args=["x", "-y"])
        result(r["stdout"] == "['/scratch/main.py', 'x', '-y']\n", "%s: args reach sys.argv" % lang)
        r = warm.warm_run("import sys; print(sys.stdin.read().upper(), end='')", lang, stdin="abc\n")
        result(r["stdout"] == "ABC\n", "%s: stdin is the run's" % lang)

        # The timeout counts from the hand-over: an interpreter ready for
        # longer than the timeout still runs a snippet that takes most of it.
        half = TIMEOUT_S / 2
        r = warm.warm_run("import time; time.sleep(%s); print('done')" % half, lang,
                          wait_s=TIMEOUT_S + 1)
        result(r.get("prestarted") and r["status"] == "success" and r["stdout"] == "done\n",
               "%s: the timeout counts from the hand-over (%.1f s ready, %.1f s run)"
               % (lang, TIMEOUT_S + 1, half))
        r = warm.warm_run("import time; time.sleep(%s)" % (TIMEOUT_S * 3), lang)
        result(r.get("prestarted") and r["status"] == "timeout"
               and TIMEOUT_S * 1000 * 0.9 <= r["duration_ms"] <= TIMEOUT_S * 1000 + 1500,
               "%s: a warm run times out at the timeout (%s ms)" % (lang, r["duration_ms"]))

        if DATA:
            r = warm.warm_run("import sys; print([m in sys.modules for m in "
                              "('numpy', 'pandas', 'matplotlib')])", "python-data")
            result(r["stdout"] == "[True, True, True]\n",
                   "python-data: numpy, pandas and matplotlib are preloaded")
        else:
            # Modules a cold start never imports.
            pre = Server("preload", SANDBOX_LANGUAGE_PYTHON_PRELOAD="decimal, json")
            code = "import sys; print('decimal' in sys.modules, 'json' in sys.modules)"
            r = pre.warm_run(code)
            c = cold.run(code)
            result(r["stdout"] == "True True\n" and c["stdout"] == "False False\n",
                   "python: the configured preloads are imported ahead, not cold")
            result(pre.stop() == 0, "the server with preloads exits cleanly")

        # Two calls at once with one warm container: one takes it, the
        # other goes cold without waiting for the refill (which imports
        # python-data's preloads: seconds of CPU on a busy host).  Both
        # cold means the refill was not done yet, which proves nothing:
        # that round is played again after a longer wait.
        wait_s = 4 if DATA else 1
        for attempt in range(1, 6):
            warm.warm_run("print(1)", lang)
            time.sleep(wait_s)
            out = {}
            ts = [threading.Thread(target=lambda k=k: out.__setitem__(k, warm.run("print(2)", lang)))
                  for k in (0, 1)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            pre = sorted(bool(o.get("prestarted")) for o in out.values())
            if pre != [False, False]:
                break
            wait_s *= 2
        result(pre == [False, True] and all(o["stdout"] == "2\n" for o in out.values()),
               "%s: of two calls at once one is warm, the other goes cold (%s, round %d)"
               % (lang, pre, attempt))
        r = warm.run("print(3)", lang)
        result(r["stdout"] == "3\n", "%s: a call right after is served (%s)"
               % (lang, "warm" if r.get("prestarted") else "cold, the pool refilling"))
    finally:
        result(warm.stop() == 0 and cold.stop() == 0, "both servers exit cleanly")
    with open(warm.log) as f:
        result("prestarted=true" in f.read(), "the log says a run was prestarted")


main()
