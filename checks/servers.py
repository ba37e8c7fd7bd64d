"""The servers a check talks to: the notebook's own lab server, or one started for this check alone."""

import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from mcpwire import frames, process
from mcpwire.stdio import StdioWire
from mcpwire.streamable_http import HttpWire
from .attempt import attempt
from .verdict import failed

LAB_COMMAND = [sys.executable, "-m", "labserver"]
REPLY_WAIT_S = 5  # how long a check waits for one reply from a server that is already running
STARTUP_WAIT_S = 30  # a first reply also waits for the server to start, which is slow on a busy machine


def make_modern(wire):
    """Send server/discover first if nothing was sent yet.

    The first request a stdio process reads fixes its era: a frame without the 2026
    envelope would turn the whole process legacy and change every answer after it.
    """
    if len(wire.transcript) == 0:
        wire.request("server/discover", timeout=STARTUP_WAIT_S)


@contextmanager
def stdio_lab(lab=None):
    """The given StdioWire, or a fresh lab server over stdio, stopped afterwards."""
    if lab is not None:
        make_modern(lab)
        yield lab
        return
    with StdioWire.labserver() as wire:
        make_modern(wire)
        yield wire


@contextmanager
def http_lab(lab=None):
    """The given HttpWire, or a fresh lab server over Streamable HTTP, stopped afterwards."""
    if lab is not None:
        yield lab
        return
    with HttpWire.labserver() as wire:
        yield wire


@contextmanager
def raw_process(command=LAB_COMMAND, *, buffered=False):
    """A server as a bare subprocess.Popen with byte pipes, for code that talks to it directly.

    Buffered pipes are what `Popen` gives by default (a write waits for `flush()`);
    unbuffered ones let `select()` see exactly the bytes not read yet.
    """
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, bufsize=-1 if buffered else 0)
    try:
        yield server
    finally:
        stop(server)


# Sits between the learner's pipes and a lab server: copies every byte it is sent into a log file first,
# so a check can say what the server really received (nothing, a line without its newline, ...).
# It answers on stderr with one "ready" line once the server has answered a probe, so the learner's
# timeout does not include the server's start. Given hold > 0, it passes no reply back until it has been sent
# that many lines (or stdin closes), as a server that answers only once it has read everything may: code that
# waits for a reply before writing the next frame then waits for ever, whatever the timing.
RELAY_SOURCE = """\
import os, subprocess, sys, threading
log_path, hold, probe, *command = sys.argv[1:]
everything_read = threading.Event()
server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
server.stdin.write(probe.encode() + b"\\n")
if not server.stdout.readline():  # the server ended before answering: not ready, whatever it was sent
    sys.exit(1)
os.write(2, b"ready\\n")


def down():
    everything_read.wait()
    try:
        while chunk := os.read(server.stdout.fileno(), 65536):
            os.write(1, chunk)
    except OSError:
        pass
    os.close(1)


answers = threading.Thread(target=down)
answers.start()
lines_read = 0
if int(hold) == 0:
    everything_read.set()
with open(log_path, "ab", buffering=0) as log:
    while chunk := os.read(0, 65536):
        log.write(chunk)
        lines_read += chunk.count(b"\\n")
        if lines_read >= int(hold):
            everything_read.set()
        try:
            server.stdin.write(chunk)
        except OSError:
            break
everything_read.set()
server.stdin.close()
answers.join()
server.wait()
"""


class RecordedLab:
    """A lab server behind the relay, as a buffered subprocess.Popen (what a learner gets from Popen)."""

    def __init__(self, proc, log):
        self.proc = proc
        self._log = log
        self._at_stop = None

    def received(self):
        """Every byte the server was sent, in order: up to now, or up to stop() once it was called."""
        return self._at_stop if self._at_stop is not None else self._log.read_bytes()

    def stop(self):
        """Stop the server, keeping what it had received first (closing stdin flushes what the learner left)."""
        if self._at_stop is None:
            self._at_stop = self._log.read_bytes()
        stop(self.proc)


@contextmanager
def recorded_lab(hold=0):
    """A buffered lab server that keeps a copy of what it receives; None in place of it if it never starts.

    With hold > 0 it sends no reply until it has received that many lines (or its stdin is closed).
    """
    with tempfile.TemporaryDirectory(prefix="mcp-check-") as folder:
        log = Path(folder) / "received.bin"
        log.touch()
        probe = frames.dumps(frames.request("server/discover", id="check-ready"))
        proc = subprocess.Popen([sys.executable, "-c", RELAY_SOURCE, str(log), str(hold), probe, *LAB_COMMAND],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            ready = attempt(proc.stderr.readline, guard=STARTUP_WAIT_S, unblock=lambda: stop(proc))
            yield RecordedLab(proc, log) if ready.value == b"ready\n" else None
        finally:
            stop(proc)


def say_lab_did_not_start():
    """What a check says when `recorded_lab()` gave None: the learner's function never ran."""
    failed("The lab server did not start, so the check could not run your function.",
           hint="Restart the kernel and run the notebook from the top.")


def stop(server, grace=1.0):
    """Stop a Popen the check or the learner started (whatever pipes it has), and close its pipes.

    Closing stdin asks a stdio server to finish; SIGTERM, then SIGKILL, follow if it does not.
    """
    process.stop(server, grace)
    for stream in (server.stdout, server.stderr):
        if stream is not None:
            stream.close()
