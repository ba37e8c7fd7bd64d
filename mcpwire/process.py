"""Start and stop server processes so that none is ever left behind.

A server starts in a process group of its own, so stopping it reaches every process
it spawned: a server that forks helpers leaves no orphans, and a Ctrl-C meant for the
notebook is not its. It stays in our session: the MCP SDK's stdio client starts a new
session instead, but on Linux a new session is also a scheduling group of its own
(autogroup), which shares the CPU as one more user would and makes every round trip
slower on a busy machine (bench.session_bench measures it).
"""

import io
import os
import signal
import subprocess
import threading
import time
import weakref

_GROUPS = os.name == "posix"


def start(command, *, cwd=None, env=None):
    """Spawn a server in its own process group with all three standard streams piped (unbuffered: we flush ourselves)."""
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            bufsize=0, cwd=cwd, env=env, **({"process_group": 0} if _GROUPS else {}))


def stop(process, grace=2.0, *, eof_first=True):
    """Close stdin, give the server `grace` seconds to exit, then SIGTERM, then SIGKILL. Returns the exit code.

    The signals go to the server's whole process group when it has one of its own (see
    `start`), and whatever is left in that group once the server has exited is stopped
    the same way. With eof_first=False (an HTTP server, which does not read stdin)
    start at SIGTERM; so does a process started without a stdin pipe, since it cannot
    be given an EOF.
    """
    if process.stdin is None:
        eof_first = False
    else:
        try:
            process.stdin.close()
        except OSError:
            pass
    steps = (None, signal.SIGTERM, signal.SIGKILL) if eof_first else (signal.SIGTERM, signal.SIGKILL)
    code = None
    for step in steps:
        if step is not None:
            _signal(process, step)
        try:
            code = process.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    if code is None:
        code = process.wait()
    if not getattr(process, "_group_stopped", False):  # once: later, another process may own this id
        process._group_stopped = True
        _stop_leftovers(process.pid, grace)
    return code


def _signal(process, signum):
    """Signal the process's own group if it has one, else the process alone."""
    if _GROUPS:
        try:
            # A group whose id is this pid can only be the one the process created: while
            # a group exists, no new process can be given its id.
            os.killpg(process.pid, signum)
            return
        except (ProcessLookupError, PermissionError):
            pass
    try:
        process.send_signal(signum)
    except OSError:
        pass


def _stop_leftovers(group, grace):
    """SIGTERM, then SIGKILL, what the server left running in its group after it exited."""
    if not _GROUPS:
        return
    for signum in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(group, signum)
        except (ProcessLookupError, PermissionError):
            return
        if _group_gone(group, grace):
            return


def _group_gone(group, grace):
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except (ProcessLookupError, PermissionError):
            return True
        time.sleep(0.02)
    return False


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
