#!/usr/bin/env python3
"""What one container costs in memory beyond its workload, for bench/run.sh.

  memory.py overhead RUNS SYSTEM -- CMD...

Starts CMD (a system running `python3 -c 'import time; time.sleep(S)'`)
RUNS times; each time, once the python3 process is up and settled, reads
/proc/PID/smaps_rollup of every process of the tree CMD started: the
python3 process is the workload, every other one is the system's own
(supervisor, the container's init, a runtime's monitor).  Prints one line
per run, tab-separated, in KiB:

  SYSTEM  SUPERVISOR_RSS  SUPERVISOR_PSS  PROCESSES  WORKLOAD_RSS  WORKLOAD_PSS

smaps_rollup sums every mapping of one address space, so the threads of
a process are in its figures.  Kernel memory (namespaces, the cgroup,
page tables of the mounts) is not in any process's smaps and not counted.
"""
import os
import subprocess
import sys
import time


def rollup(pid):
    """(rss, pss) in KiB of one process, or None once it is gone."""
    rss = pss = None
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return (rss, pss) if rss is not None and pss is not None else None


def tree(root):
    """{pid: comm} of root and all its descendants."""
    parent, comm = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        # comm is in parentheses and may hold spaces: split after the last ')'.
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        parent[int(d)], comm[int(d)] = int(fields[1]), name
    found, todo = {}, [root]
    while todo:
        p = todo.pop()
        if p in comm:
            found[p] = comm[p]
        todo += [c for c, pp in parent.items() if pp == p]
    return found


def one_run(system, cmd, settle=0.6, wait=10.0):
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            procs = tree(proc.pid)
            if any(c.startswith("python3") for c in procs.values()):
                break
            if proc.poll() is not None:
                raise RuntimeError(f"{system}: exited {proc.returncode} before python3 ran")
            time.sleep(0.01)
        else:
            raise RuntimeError(f"{system}: python3 did not start within {wait} s")
        time.sleep(settle)
        procs = tree(proc.pid)
        sup, work, n = [0, 0], [0, 0], 0
        for pid, comm in procs.items():
            m = rollup(pid)
            if m is None:
                continue
            target = work if comm.startswith("python3") else sup
            target[0] += m[0]
            target[1] += m[1]
            n += target is sup
        if work == [0, 0]:
            raise RuntimeError(f"{system}: python3 was gone before it was measured")
        return sup[0], sup[1], n, work[0], work[1]
    finally:
        proc.wait()


def main():
    if len(sys.argv) < 5 or sys.argv[1] != "overhead" or "--" not in sys.argv:
        sys.exit(__doc__)
    runs, system = int(sys.argv[2]), sys.argv[3]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    for _ in range(runs):
        try:
            row = one_run(system, cmd)
        except RuntimeError as e:
            print(f"bench: memory overhead: {e}; skipped", file=sys.stderr)
            return
        print("\t".join([system] + [str(v) for v in row]), flush=True)


if __name__ == "__main__":
    main()
