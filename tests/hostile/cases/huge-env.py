# hostile: execs with a 100 MiB environment, then one with 30000 variables
# expected: E2BIG for the oversized one, the run goes on; the server's own environment is untouched
# expect: status=success
# expect: stdout=/^100 MiB environment: E2BIG$/m
# expect: stdout=/^30000 variables: ran, 30000\+ variables$/m
import errno, subprocess
def attempt(label, env):
    try:
        out = subprocess.run(["/bin/sh", "-c", 'n=$(env | wc -l); [ "$n" -ge 30000 ] && echo "ran, 30000+ variables" || echo "ran, $n variables"'],
                             env=env, capture_output=True, text=True)
        print(f"{label}: {out.stdout.strip()}")
    except OSError as e:
        print(f"{label}: {errno.errorcode.get(e.errno, e.errno)}")
attempt("100 MiB environment", {f"V{i}": "x" * 100000 for i in range(1024)})
attempt("30000 variables", {f"V{i}": "y" for i in range(30000)})
