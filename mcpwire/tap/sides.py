"""Where the tap writes: a descriptor written without ever blocking, with what it could not take yet.

The tap's stdout and stderr belong to the host too, so their shared flags are left alone:
a pipe is opened again through /proc (a description of our own, made non-blocking), a
socket is written with MSG_DONTWAIT, and anything else (a file, a terminal) is written
as it is, since it does not stall for long.
"""

import os
import socket
import stat

PIPE_SIZE = 1 << 16  # read no more from a side while this much waits for the other to take it


def writable_copy(fd):
    """(descriptor to write, socket or None): a non-blocking way to write `fd` that leaves its flags alone."""
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode):
        try:
            return os.open(f"/proc/self/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC), None
        except OSError:
            pass
    if stat.S_ISSOCK(mode):
        return fd, socket.socket(fileno=os.dup(fd))
    return fd, None


class Sink:
    """Writes now what the descriptor takes, keeps the rest, and closes once all of it is written."""

    def __init__(self, target, original=None):
        self.fd, self._socket = target if isinstance(target, tuple) else (target, None)
        self._original = original  # the descriptor `fd` was opened again from, closed with it
        self._waiting = bytearray()
        self._gone = False  # the reader went away: the bytes are still recorded, not written
        self._on_drained = None

    @property
    def waiting(self):
        return bool(self._waiting)

    @property
    def full(self):
        return len(self._waiting) >= PIPE_SIZE

    def write(self, data):
        if self._gone:
            return
        if self._waiting:
            self._waiting += data
            return
        written = self._write(data)
        if written < len(data):
            self._waiting += data[written:]

    def drain(self):
        written = self._write(self._waiting)
        del self._waiting[:written]
        if not self._waiting and self._on_drained:
            self.close()

    def close_when_drained(self, on_drained):
        self._on_drained = on_drained
        if not self._waiting:
            self.close()

    def close(self):
        self._waiting.clear()
        if self._socket is not None:
            self._socket.close()
        elif self._original is not None and self.fd != self._original:
            close_quietly(self.fd)
        if self._on_drained:
            on_drained, self._on_drained = self._on_drained, None
            on_drained()

    def _write(self, data):
        try:
            if self._socket is not None:
                return self._socket.send(data, socket.MSG_DONTWAIT)
            return os.write(self.fd, data)
        except BlockingIOError:
            return 0
        except OSError:  # the reader went away
            self._gone = True
            self._waiting.clear()
            return len(data)


def close_quietly(fd):
    """Close `fd`; one that is already closed is no error."""
    try:
        os.close(fd)
    except OSError:
        pass
