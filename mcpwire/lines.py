"""Cutting a byte stream into lines, with a size limit. No I/O: feed it bytes, get lines back.

A line longer than the limit is not kept: only its first bytes and its size are
reported, so a runaway server cannot fill our memory, and the next line is read
as usual.
"""

MAX_LINE_BYTES = 16 * 1024 * 1024
HEAD_BYTES = 200  # what is kept of a line over the limit


class Oversized:
    """A line over the limit: its first HEAD_BYTES bytes and its full size (newline included)."""

    def __init__(self, head, size):
        self.head, self.size = head, size

    def __eq__(self, other):
        return isinstance(other, Oversized) and (self.head, self.size) == (other.head, other.size)

    def __repr__(self):
        return f"Oversized({self.head!r}, {self.size})"


class LineSplitter:
    """`feed(data)` returns the lines completed by `data`: bytes ending in b"\\n", or `Oversized`."""

    def __init__(self, limit=None):
        self.limit = MAX_LINE_BYTES if limit is None else limit
        self._buffer = bytearray()
        self._skipping = None  # an Oversized whose end we have not seen yet

    def feed(self, data):
        if data and not self._buffer and self._skipping is None and data.find(b"\n") == len(data) - 1 < self.limit:
            return [data]  # the usual case, one whole line per read: nothing to copy
        lines = []
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end + 1]
            start += len(piece)
            if self._skipping is not None:
                self._skipping.size += len(piece)
                if end >= 0:
                    lines.append(self._skipping)
                    self._skipping = None
                continue
            self._buffer += piece
            if len(self._buffer) > self.limit or (len(self._buffer) == self.limit and end < 0):
                self._skipping = Oversized(bytes(self._buffer[:HEAD_BYTES]), len(self._buffer))
                self._buffer.clear()
                if end >= 0:
                    lines.append(self._skipping)
                    self._skipping = None
            elif end >= 0:
                lines.append(bytes(self._buffer))
                self._buffer.clear()
        return lines

    def end(self):
        """At EOF: the last line if it had no newline (as read), or the Oversized being skipped."""
        last = self._skipping if self._skipping is not None else bytes(self._buffer) or None
        self._buffer.clear()
        self._skipping = None
        return last
