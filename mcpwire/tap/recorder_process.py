"""The recorder in a process of its own, so that parsing and writing the JSONL never delay a byte.

The tap's loop writes each chunk to a pipe, framed with its direction and the time it
passed; a forked process reads them, pairs the lines (`LineRecorder`) and writes the
file. It ends when the pipe closes, so even a tap killed outright leaves a whole file of
what it passed on. (A thread would share the interpreter lock with the loop, and parsing
a large frame would then hold up the next byte.)
"""

import fcntl
import os
import signal
import struct
import time

from .recording import DOWN, UP, LineRecorder

_HEADER = struct.Struct("<BId")  # direction (0 up, 1 down; 2 and 3 for the side's end), length, time
_DIRECTIONS = (UP, DOWN)
_F_SETPIPE_SZ = 1031
_PIPE_SIZE = 1 << 20  # room for bursts, so the loop rarely waits on a busy recorder
_NAP_S = 0.005  # the recorder wakes this often, not once per chunk: fewer wake-ups to compete with the copying


class RecorderProcess:
    """`feed` and `end` as `LineRecorder` has them; `close()` waits until the file is complete."""

    def __init__(self, out_path, transport="stdio"):
        out = open(out_path, "w", encoding="utf-8")  # opened here, so a bad path fails in the tap itself
        read, self._pipe = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(self._pipe)
            _record_until_closed(read, out, transport)
        os.close(read)
        out.close()
        try:
            fcntl.fcntl(self._pipe, _F_SETPIPE_SZ, _PIPE_SIZE)
        except OSError:
            pass

    def feed(self, direction, data, at):
        self._send(_DIRECTIONS.index(direction), data, at)

    def end(self, direction, at):
        self._send(_DIRECTIONS.index(direction) + 2, b"", at)

    def close(self):
        os.close(self._pipe)
        os.waitpid(self.pid, 0)

    def _send(self, kind, data, at):
        view = memoryview(_HEADER.pack(kind, len(data), at) + data)
        while view:
            view = view[os.write(self._pipe, view):]


def _record_until_closed(read, out, transport):
    """The forked process: it holds none of the host's or the server's pipes, and ignores the signals the tap passes on."""
    code = 1
    try:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
            signal.signal(signum, signal.SIG_IGN)
        os.nice(19)  # the copying comes first: on a busy machine the file can wait a little
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        recorder = LineRecorder(out, transport)
        for kind, data, at in _framed_chunks(read):
            if kind >= 2:
                recorder.end(_DIRECTIONS[kind - 2], at)
            else:
                recorder.feed(_DIRECTIONS[kind], data, at)
        recorder.close()
        out.close()
        code = 0
    finally:
        os._exit(code)


def _framed_chunks(read):
    """(kind, bytes, time) for each chunk the tap sent, read in batches until the pipe closes."""
    os.set_blocking(read, False)
    pending = bytearray()
    while True:
        try:
            data = os.read(read, _PIPE_SIZE)
        except BlockingIOError:
            time.sleep(_NAP_S)
            continue
        if not data:
            return
        pending += data
        while len(pending) >= _HEADER.size:
            kind, size, at = _HEADER.unpack_from(pending)
            if len(pending) < _HEADER.size + size:
                break
            yield kind, bytes(pending[_HEADER.size:_HEADER.size + size]), at
            del pending[:_HEADER.size + size]
