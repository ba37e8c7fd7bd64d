"""Server-Sent Events, the framing of a Streamable HTTP reply stream.

An event is a block of `field: value` lines ended by a blank line; `data:` lines
carry the JSON-RPC message, lines starting with `:` are comments (keep-alives).
The SSE format (WHATWG HTML, "Server-sent events") lets a line end in CRLF, LF or CR
(SDK 2.3.0 happens to write CRLF); a CR that ends one chunk ends its line at once, and
an LF that opens the next chunk is then the second half of that CRLF, not an empty line.
As the format says, one byte order mark opening the stream is ignored, an empty `event:`
means the default type "message", and an event the stream ends before finishing is dropped.
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
        self._after_cr = False  # the last chunk ended in a CR: an LF opening the next one belongs to it
        self._fields = {}
        self._data = []
        self._first_line = True  # only the stream's first line may open with a byte order mark
        self.payload_bytes = 0  # bytes of `data` values: the JSON the stream carried

    def feed(self, chunk):
        """Parse what is complete in `chunk` (plus leftovers); returns the finished events."""
        if not chunk:
            return []
        if self._after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        self._after_cr = False
        self._pending += chunk
        events = []
        while (match := _LINE_END.search(self._pending)) is not None:
            line = self._pending[:match.start()]
            self._pending = self._pending[match.end():]
            self._after_cr = match.group() == b"\r" and not self._pending
            event = self._line(line.decode("utf-8", "surrogateescape"))  # bytes that are not UTF-8 are kept as sent
            if event is not None:
                events.append(event)
        return events

    def _line(self, line):
        if self._first_line:
            self._first_line = False
            line = line.removeprefix("\ufeff")
        if line == "":
            if not self._data:
                self._fields = {}
                return None
            event = Event(self._fields.get("event") or "message", "\n".join(self._data))
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
    """The finished events of a whole stream (bytes or str); an event cut off by the end of the stream is dropped."""
    return SseParser().feed(stream.encode("utf-8") if isinstance(stream, str) else stream)
