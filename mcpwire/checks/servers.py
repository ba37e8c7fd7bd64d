"""The servers a check talks to: the notebook's own lab server, or one started for this check alone."""

import sys
from contextlib import contextmanager

from .. import process
from ..stdio import StdioWire
from ..streamable_http import HttpWire

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
def raw_process(command=LAB_COMMAND):
    """A server as a bare subprocess.Popen (unbuffered byte pipes), for code that talks to it directly."""
    server = process.start(command)
    try:
        yield server
    finally:
        process.stop(server, 1.0)
