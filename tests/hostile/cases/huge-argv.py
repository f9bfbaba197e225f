# hostile: execs with 64 MiB of argv, one 1 MiB argument, and 100001 small ones
# expected: the kernel refuses what is over its limits (E2BIG) and the run goes on; a large but legal argv works
# expect: status=success
# expect: stdout=/^64 MiB of argv: E2BIG$/m
# expect: stdout=/^one 1 MiB argument: E2BIG$/m
# expect: stdout=/^1 MiB in 100000 arguments: ran, 100001 args$/m
import errno, subprocess
def attempt(label, args):
    try:
        out = subprocess.run(["/bin/sh", "-c", 'echo "ran, $# args"', "sh"] + args, capture_output=True, text=True)
        print(f"{label}: {out.stdout.strip()}")
    except OSError as e:
        print(f"{label}: {errno.errorcode.get(e.errno, e.errno)}")
attempt("64 MiB of argv", ["a" * 65536] * 1024)
attempt("one 1 MiB argument", ["b" * (1 << 20)])
attempt("1 MiB in 100000 arguments", ["c" * 9] * 100001)
