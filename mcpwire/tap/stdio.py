"""The stdio tap: run the server as a child and copy bytes both ways, unchanged, as they come.

Each direction is one thread doing `os.read` then `os.write` on the raw descriptors, so
nothing is buffered, re-encoded or re-framed; what was read is handed to the recorder
afterwards (on a thread of its own, so parsing never delays a byte). The server's stderr
goes to the tap's stderr and, byte for byte, to a file of its own. The host closing the
tap's stdin closes the server's; the server closing its stdout closes the tap's. Signals
the tap receives are passed on to the server's process group; the tap exits with the
server's exit code (or dies of the same signal).
"""

import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
import time

from .recording import DOWN, UP, LineRecorder

CHUNK = 1 << 16
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
_PR_SET_PDEATHSIG = 1


def _die_with_the_tap():
    """In the child, before exec: on Linux, a SIGTERM when the tap dies (even of SIGKILL), so no server outlives it."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _pump(source, target, on_data, on_end):
    """Copy `source` to `target` until EOF; keep reading (and recording) if `target` goes away."""
    target_open = True
    while True:
        try:
            data = os.read(source, CHUNK)
        except OSError:
            data = b""
        if not data:
            break
        # Queued before it is passed on, so a request is always queued before the reply it provokes
        # (the recorder pairs them in queue order).
        on_data(data)
        if target_open:
            try:
                _write_all(target, data)
            except OSError:  # the reader went away: the bytes are still worth recording
                target_open = False
    on_end()


def _close(fd):
    try:
        os.close(fd)
    except OSError:
        pass


def run(command, out_path, stderr_path, *, stdin_fd=0, stdout_fd=1, stderr_fd=2):
    """Tap `command` until it exits; returns its exit code (negative: the signal that ended it)."""
    sys.setswitchinterval(0.0005)  # a pump waiting on the recorder thread gets the GIL back within half a millisecond
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             bufsize=0, start_new_session=True,
                             preexec_fn=_die_with_the_tap if sys.platform == "linux" else None)
    previous = {signum: signal.signal(signum, lambda signum, _: _forward(child, signum)) for signum in FORWARDED}
    chunks = queue.SimpleQueue()
    with open(out_path, "w", encoding="utf-8") as out, open(stderr_path, "wb", buffering=0) as err_log:
        recorder = LineRecorder(out)
        record_thread = threading.Thread(target=_record, args=(chunks, recorder), daemon=True)
        record_thread.start()
        to_server, from_server, errors = child.stdin.fileno(), child.stdout.fileno(), child.stderr.fileno()
        up = threading.Thread(target=_pump, daemon=True, args=(
            stdin_fd, to_server, lambda data: chunks.put((UP, data, time.time())),
            lambda: (chunks.put((UP, None, time.time())), child.stdin.close())))
        down = threading.Thread(target=_pump, daemon=True, args=(
            from_server, stdout_fd, lambda data: chunks.put((DOWN, data, time.time())),
            lambda: (chunks.put((DOWN, None, time.time())), _close(stdout_fd))))
        err = threading.Thread(target=_pump, daemon=True, args=(errors, stderr_fd, err_log.write, lambda: None))
        for thread in (up, down, err):
            thread.start()
        code = child.wait()
        down.join(timeout=2)  # a helper the server spawned may still hold its stdout: don't wait forever
        err.join(timeout=2)
        chunks.put(None)
        record_thread.join()
        recorder.close()
    for signum, handler in previous.items():
        signal.signal(signum, handler)
    return code


def _forward(child, signum):
    try:
        os.killpg(child.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass


def _record(chunks, recorder):
    while (item := chunks.get()) is not None:
        direction, data, at = item
        if data is None:
            recorder.end(direction, at)
        else:
            recorder.feed(direction, data, at)
