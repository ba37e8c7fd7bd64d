"""The stdio tap: run the server as a child and copy bytes both ways, unchanged, as they come.

One thread, one `poll` loop: whatever is readable is read with `os.read` and written on
at once with `os.write`, so nothing is buffered, re-encoded or re-framed, and no byte
waits for another thread. Each chunk then goes to the recorder, a process of its own
that parses and writes the JSONL file (`recorder_process`). Writes never block the loop (a
side that stops reading only stops the copy towards it, as a pipe would), and a side
that has more than a pipe's worth of bytes waiting is not read from until it drains.
The server's stderr goes to the tap's stderr and, byte for byte, to a file of its own.
The host closing the tap's stdin closes the server's; the server closing its stdout
closes the tap's. Signals the tap receives are passed on to the server's process group;
the tap exits with the server's exit code (or dies of the same signal).
"""

import ctypes
import os
import select
import signal
import subprocess
import sys
import time

from .recorder_process import RecorderProcess
from .recording import DOWN, UP
from .sides import Sink, close_quietly, writable_copy

CHUNK = 1 << 16
AFTER_EXIT_S = 2.0  # a helper the server spawned may hold its stdout: stop waiting for EOF after this
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)
_PR_SET_PDEATHSIG = 1
_READABLE = select.POLLIN | select.POLLHUP | select.POLLERR


def _die_with_the_tap():
    """In the child, before exec: on Linux, a SIGTERM when the tap dies (even of SIGKILL), so no server outlives it."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


class _Copy:
    """One direction: a source descriptor, the sink it is copied to, and what to do at its end."""

    def __init__(self, source, sink, direction, on_end):
        self.source, self.sink, self.direction, self.on_end = source, sink, direction, on_end
        self.open = True


def run(command, out_path, stderr_path, *, stdin_fd=0, stdout_fd=1, stderr_fd=2):
    """Tap `command` until it exits; returns its exit code (negative: the signal that ended it)."""
    recorder = RecorderProcess(out_path)  # forked first, while the tap has one thread and no server pipes
    try:
        with open(stderr_path, "wb", buffering=0) as err_log:
            child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     bufsize=0, process_group=0,  # our session: see mcpwire.process
                                     preexec_fn=_die_with_the_tap if sys.platform == "linux" else None)
            previous = {signum: signal.signal(signum, lambda signum, _: _forward(child, signum))
                        for signum in FORWARDED}
            to_server = child.stdin.fileno()
            os.set_blocking(to_server, False)  # our own pipe: no one else shares its flags
            to_host = Sink(writable_copy(stdout_fd), stdout_fd)
            copies = [
                _Copy(stdin_fd, Sink(to_server), UP, child.stdin.close),
                _Copy(child.stdout.fileno(), to_host, DOWN, lambda: close_quietly(stdout_fd)),
                _Copy(child.stderr.fileno(), Sink(writable_copy(stderr_fd)), None, lambda: None),
            ]
            code = _loop(child, copies, recorder, err_log)
    finally:
        recorder.close()
    for signum, handler in previous.items():
        signal.signal(signum, handler)
    return code


def _loop(child, copies, recorder, err_log):
    poller = select.poll()
    registered = {}
    exit_fd = _exit_descriptor(child)
    if exit_fd is not None:
        poller.register(exit_fd, select.POLLIN)
    exited_at = None
    events = {}
    while True:
        if exited_at is None and (exit_fd is None or exit_fd in events) and child.poll() is not None:
            exited_at = time.monotonic()
            if exit_fd is not None:
                poller.unregister(exit_fd)
                os.close(exit_fd)
                exit_fd = None
        if exited_at is not None:
            busy = copies[1].open or copies[2].open or any(copy.sink.waiting for copy in copies)
            if not busy or time.monotonic() - exited_at > AFTER_EXIT_S:
                break
        registered = _register(poller, registered, copies)
        # Sleep until a side moves (without a pidfd, or after the exit, re-check the child now and then).
        events = dict(poller.poll(None if exit_fd is not None else 50))
        for copy in copies:
            if copy.sink.waiting and events.get(copy.sink.fd, 0) & (select.POLLOUT | select.POLLERR):
                copy.sink.drain()
            if copy.open and events.get(copy.source, 0) & _READABLE:
                _copy_once(copy, recorder, err_log)
    code = child.wait()
    for copy in copies:
        if copy.open and copy.direction is not None:  # cut short: what was read still counts
            recorder.end(copy.direction, time.time())
    return code


def _exit_descriptor(child):
    """A descriptor that polls readable when the child exits (Linux 5.3+), or None."""
    try:
        return os.pidfd_open(child.pid)
    except (AttributeError, OSError):
        return None


def _register(poller, registered, copies):
    """Poll each source whose sink has room, and each sink with bytes waiting; change only what changed."""
    wanted = {}
    for copy in copies:
        if copy.open and not copy.sink.full:
            wanted[copy.source] = wanted.get(copy.source, 0) | select.POLLIN
        if copy.sink.waiting:
            wanted[copy.sink.fd] = wanted.get(copy.sink.fd, 0) | select.POLLOUT
    for fd in registered.keys() - wanted.keys():
        poller.unregister(fd)
    for fd, mask in wanted.items():
        if registered.get(fd) != mask:
            poller.register(fd, mask)
    return wanted


def _copy_once(copy, recorder, err_log):
    try:
        data = os.read(copy.source, CHUNK)
    except OSError:
        data = b""
    if not data:
        copy.open = False
        copy.sink.close_when_drained(copy.on_end)
        if copy.direction is not None:
            recorder.end(copy.direction, time.time())
        return
    at = time.time()
    copy.sink.write(data)
    if copy.direction is None:
        err_log.write(data)
    else:
        recorder.feed(copy.direction, data, at)


def _forward(child, signum):
    try:
        os.killpg(child.pid, signum)
    except (ProcessLookupError, PermissionError):
        pass
