# The bootstrap of a pre-started Python (warm_start = python; see
# sandbox/prestart.h).  The runner writes it as the language's entry file,
# after a line that sets PRELOAD, and starts it with the run command, so
# that argv, sys.path[0] and __file__ are those of a cold run.  It imports
# the preloads, tells the runner it is ready, waits on its stdin (a
# SOCK_SEQPACKET socket) for the hand-over, and then runs the code the
# runner has meanwhile written over this file, as python runs a script.
#
# The hand-over is one message: "A", then each argument NUL-terminated,
# with two SCM_RIGHTS fds: the run's stdin, and the page where the
# bootstrap reports its end (struct sr_cmd_end, runtime/supervise.h:
# the exit status, then the magic, then stdout and stderr closed), which
# lets the runner answer without waiting for the exit.  EOF instead: the
# runner gave up on this container; leave without a word.
#
# Nothing of the bootstrap stays visible to the code beyond the modules
# already imported: the code gets a fresh __main__ module, its own stdin,
# and a traceback without this file's frame.


def _serve(preload):
    import io
    import os
    import sys

    path = __file__
    # What a preload prints is not the run's output.
    saved = os.dup(1), os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    for name in preload:
        try:
            __import__(name)
        except BaseException:
            pass  # the code meets the same failure when it imports it
    # The first compile() of a process makes the interpreter's AST types,
    # 0.7 ms in python 3.13 (startup compiles the script another way): the
    # run's own compile of the code then costs only the code.
    compile(b"", path, "exec", dont_inherit=True)
    sys.stdout.flush()
    sys.stderr.flush()
    # The bootstrap's own imports go again before the code runs.
    preloaded = set(sys.modules)
    # What the preloads made is never garbage: the end of the run collects
    # only what the code made.
    import gc
    gc.collect()
    gc.freeze()

    import _socket
    import mmap
    sock = _socket.socket(fileno=0)
    sock.send(b"R")
    msg, anc, _, _ = sock.recvmsg(1 << 20, _socket.CMSG_SPACE(8))
    if not msg or not anc or len(anc[0][2]) < 8:
        os._exit(0)
    stdin_fd = int.from_bytes(anc[0][2][:4], sys.byteorder)
    end_fd = int.from_bytes(anc[0][2][4:8], sys.byteorder)
    sock.detach()
    # Without a copy of the fd (trackfd, python 3.13): the code sees the
    # fds of a cold run.  An older python does without the early end.
    try:
        end = mmap.mmap(end_fd, 8, trackfd=False)
    except TypeError:
        end = None
    os.close(end_fd)
    for name in set(sys.modules) - preloaded:
        del sys.modules[name]
    os.dup2(stdin_fd, 0)
    os.close(stdin_fd)
    os.dup2(saved[0], 1)
    os.dup2(saved[1], 2)
    for fd in saved + (devnull,):
        os.close(fd)
    # As python opens the stdin it starts with (seekable and all).
    old = sys.stdin
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        io.open(0, "rb", closefd=False), encoding=old.encoding, errors=old.errors,
        newline="\n")
    sys.stdin.mode = "r"
    args = [os.fsdecode(a) for a in msg[1:].split(b"\0")[:-1]]
    sys.argv.extend(args)
    if hasattr(sys, "orig_argv"):
        sys.orig_argv.extend(args)

    with open(path, "rb") as f:
        source = f.read()
    main = type(sys)("__main__")
    main.__dict__.update(__file__=path, __cached__=None, __loader__=__loader__,
                         __builtins__=__builtins__, __annotations__={})
    sys.modules["__main__"] = main
    return main.__dict__, source, path, end


def _exit_status(e):
    # As python ends on a SystemExit.
    import sys

    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    try:
        print(e.code, file=sys.stderr)
    except BaseException:
        pass
    return 1


def _finish(status, interrupted, end):
    # What python's own exit does that the code can see (its threads
    # joined, atexit, the globals cleared, a collection, stdio flushed),
    # without tearing down every module the preloads brought: with the
    # data stack that teardown alone costs more than a small run.  Only
    # modules that are built in or already loaded: the code may have left
    # no fd to open a module's file with (EMFILE), and a cold python needs
    # none to end.
    import _signal
    import atexit
    import gc
    import os
    import sys

    if "threading" in sys.modules:
        sys.modules["threading"]._shutdown()
    atexit._run_exitfuncs()
    # Then python flushes stdout and stderr, before the globals go (a file
    # the code left open writes its buffer as it is collected).
    for f in (sys.stdout, sys.stderr):
        try:
            if f is not None:
                f.flush()
        except BaseException:
            pass
    main = sys.modules.get("__main__")
    if main is not None:
        d = main.__dict__
        for pass_ in (1, 2):
            for k in list(d):
                if (pass_ == 2 or k[:1] == "_" and k[:2] != "__") and k != "__builtins__":
                    d[k] = None
        del main, d
    gc.collect()
    for f in (sys.stdout, sys.stderr):
        try:
            if f is not None:
                f.flush()
        except BaseException:
            status = 120
    if interrupted:
        _signal.signal(_signal.SIGINT, _signal.SIG_DFL)
        os.kill(os.getpid(), _signal.SIGINT)
    # The end as python's exit would give it; all that is left is the
    # process's own teardown, which the run need not wait for.
    if end is not None:
        end[4:8] = (status & 0xFF).to_bytes(4, sys.byteorder)
        end[0:4] = (0x31455253).to_bytes(4, sys.byteorder)
        for fd in (1, 2):
            try:
                os.close(fd)
            except OSError:
                pass
    os._exit(status & 0xFF)


def _run(serve):
    import sys

    g, source, path, end = serve(PRELOAD)
    del serve
    interrupted = False
    try:
        exec(compile(source, path, "exec", dont_inherit=True), g)
        status = 0
    except SystemExit as e:
        status = _exit_status(e)
    except BaseException as e:
        # Without this frame, as python reports an uncaught exception (a
        # SyntaxError of the code itself has no frame of its own).
        tb = e.__traceback__.tb_next
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        interrupted = isinstance(e, KeyboardInterrupt)
        status = 1
        del e, tb
    del g, source
    _finish(status, interrupted, end)


_run(_serve)
