"""Server-Sent Events, the framing of a Streamable HTTP reply stream.

An event is a block of `field: value` lines ended by a blank line; `data:` lines
carry the JSON-RPC message, lines starting with `:` are comments (keep-alives).
Lines may end in CRLF, LF or CR.
"""

import re
from dataclasses import dataclass

_LINE_END = re.compile(rb"\r\n|\n|\r")


@dataclass
class Event:
    event: str
    data: str


class SseParser:
    """Feed bytes as they arrive; get complete events back."""

    def __init__(self):
        self._pending = b""
        self._fields = {}
        self._data = []
        self.payload_bytes = 0  # bytes of `data` values: the JSON the stream carried

    def feed(self, chunk):
        """Parse what is complete in `chunk` (plus leftovers); returns the finished events."""
        self._pending += chunk
        events = []
        while True:
            match = _LINE_END.search(self._pending)
            # A lone CR at the very end may be the first half of CRLF: wait for more.
            if match is None or (match.group() == b"\r" and match.end() == len(self._pending)):
                break
            line = self._pending[:match.start()]
            self._pending = self._pending[match.end():]
            event = self._line(line.decode("utf-8", "surrogateescape"))  # bytes that are not UTF-8 are kept as sent
            if event is not None:
                events.append(event)
        return events

    def _line(self, line):
        if line == "":
            if not self._data:
                self._fields = {}
                return None
            event = Event(self._fields.get("event", "message"), "\n".join(self._data))
            self._fields, self._data = {}, []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
            self.payload_bytes += len(value.encode("utf-8", "surrogateescape"))
        else:
            self._fields[name] = value
        return None

    @property
    def unfinished(self):
        """True when the stream stopped in the middle of an event."""
        return bool(self._pending.strip() or self._data)


def parse(stream):
    """All events in a complete stream (bytes or str)."""
    parser = SseParser()
    events = parser.feed(stream.encode("utf-8") if isinstance(stream, str) else stream)
    return events + parser.feed(b"\n\n") if parser.unfinished else events
