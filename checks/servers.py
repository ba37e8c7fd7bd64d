"""The servers a check talks to: the notebook's own lab server, or one started for this check alone."""

import subprocess
import sys
from contextlib import contextmanager

from mcpwire import process
from mcpwire.stdio import StdioWire
from mcpwire.streamable_http import HttpWire

LAB_COMMAND = [sys.executable, "-m", "labserver"]
# Reads everything it is sent and never answers: what a client meets when a server stays silent.
SILENT_COMMAND = [sys.executable, "-c", "import sys\nfor _ in sys.stdin.buffer:\n    pass"]


def make_modern(wire):
    """Send server/discover first if nothing was sent yet.

    The first request a stdio process reads fixes its era: a frame without the 2026
    envelope would turn the whole process legacy and change every answer after it.
    """
    if len(wire.transcript) == 0:
        wire.request("server/discover")


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


def stop(server, grace=1.0):
    """Stop a Popen the check or the learner started (whatever pipes it has), and close its pipes.

    Closing stdin asks a stdio server to finish; SIGTERM, then SIGKILL, follow if it does not.
    """
    process.stop(server, grace)
    for stream in (server.stdout, server.stderr):
        if stream is not None:
            stream.close()
