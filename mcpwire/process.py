"""Start and stop server processes so that none is ever left behind."""

import io
import subprocess
import threading
import weakref


def start(command, *, cwd=None, env=None):
    """Spawn a server with all three standard streams piped (unbuffered: we flush ourselves)."""
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            bufsize=0, cwd=cwd, env=env)


def stop(process, grace=2.0, *, eof_first=True):
    """Close stdin, give the server `grace` seconds to exit, then SIGTERM, then SIGKILL. Returns the exit code.

    With eof_first=False (an HTTP server, which does not read stdin) start at SIGTERM;
    so does a process started without a stdin pipe, since it cannot be given an EOF.
    """
    if process.stdin is None:
        eof_first = False
    else:
        try:
            process.stdin.close()
        except OSError:
            pass
    steps = (None, process.terminate, process.kill) if eof_first else (process.terminate, process.kill)
    for escalate in steps:
        if escalate is not None:
            try:
                escalate()
            except OSError:
                pass
        try:
            return process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
    return process.wait()


def reap_on_collect(owner, process):
    """Stop `process` if `owner` is garbage-collected (or at interpreter exit) without `close()`."""
    return weakref.finalize(owner, stop, process, 0.5)


def collect_lines(stream, lines, on_line=None):
    """Read a text stream line by line into `lines` on a daemon thread (for stderr and server logs)."""
    buffered = io.BufferedReader(stream)

    def pump():
        for raw in iter(buffered.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            lines.append(line)
            if on_line is not None:
                on_line(line)
    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    return thread
