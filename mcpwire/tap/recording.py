"""Pair the lines a tap sees into `Transcript` exchanges and append them to a JSONL file.

A request is paired with the answer that carries its id, whichever side sent it (the
host asks the server, or, in the legacy era, the server asks the host); a notification
with the `progressToken` of an open request joins that request's exchange; a line that
cannot be parsed waits for an error answer whose id is null (the answer a server gives
when it cannot read the id). Everything else is an exchange of its own. Each line is also
kept with the wall-clock time it passed the tap, in `times_up`/`times_down` (seconds
since the epoch), beside the fields `Exchange.to_dict` writes.
"""

import json
import threading
from collections import deque

from ..lines import LineSplitter, Oversized
from ..transcript import Exchange

UP, DOWN = "up", "down"
_OTHER = {UP: DOWN, DOWN: UP}


def _key(value):
    """An id or token we can look up (a list or object matches nothing)."""
    return None if isinstance(value, (list, dict, bool)) or value is None else value


def _parse(text):
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


class _Open:
    """One exchange being assembled: who asked, and every line seen for it so far."""

    def __init__(self, transport, method, frame_id, asked_by):
        self.transport, self.method, self.id, self.asked_by = transport, method, frame_id, asked_by
        self.lines = {UP: [], DOWN: []}  # (bytes, text, time) per direction
        self.token = None

    def add(self, direction, data, text, at):
        self.lines[direction].append((data, text, at))

    def record(self):
        firsts = [at for lines in self.lines.values() for _, _, at in lines]
        exchange = Exchange(
            transport=self.transport, method=self.method, id=self.id,
            up=b"".join(data for data, _, _ in self.lines[UP]),
            down=b"".join(data for data, _, _ in self.lines[DOWN]),
            up_payloads=[text for _, text, _ in self.lines[UP]],
            down_payloads=[text for _, text, _ in self.lines[DOWN]],
            elapsed_ms=round((max(firsts) - min(firsts)) * 1000, 3))
        entry = exchange.to_dict()
        entry["times_up"] = [at for _, _, at in self.lines[UP]]
        entry["times_down"] = [at for _, _, at in self.lines[DOWN]]
        return entry


class LineRecorder:
    """Feed it the chunks each side wrote (`feed`), then `close()`; it writes one JSON line per exchange."""

    def __init__(self, out, transport="stdio"):
        self._out = out  # a text file open for writing
        self.transport = transport
        self._lock = threading.Lock()
        self._splitters = {UP: LineSplitter(), DOWN: LineSplitter()}
        self._by_id = {}  # (asking side, id) -> deque of _Open
        self._unreadable = deque()  # host lines nobody could read an id from, oldest first
        self._by_token = {}

    def feed(self, direction, chunk, at):
        with self._lock:
            for line in self._splitters[direction].feed(chunk):
                self._line(direction, line, at)

    def end(self, direction, at):
        """The side closed its stream: a last line without a newline still counts."""
        with self._lock:
            last = self._splitters[direction].end()
            if last is not None:
                self._line(direction, last, at)

    def close(self):
        """Write what never got an answer, each as its own exchange, in the order it was sent."""
        with self._lock:
            left = {id(entry): entry for waiting in self._by_id.values() for entry in waiting}
            left.update((id(entry), entry) for entry in self._unreadable)
            for entry in sorted(left.values(), key=lambda e: min(at for ls in e.lines.values() for *_, at in ls)):
                self._write(entry)
            self._by_id.clear()
            self._unreadable.clear()
            self._out.flush()

    def _line(self, direction, line, at):
        if isinstance(line, Oversized):
            data, text = line.head, f"(a line of {line.size} bytes, not kept)"
        else:
            data, text = line, line.rstrip(b"\n").decode("utf-8", "surrogateescape")
        message = _parse(text)
        method = message.get("method") if message else None
        method = method if isinstance(method, str) else None
        frame_id = _key(message.get("id")) if message else None
        if message is None:
            self._unparsed(direction, data, text, at)
        elif method is not None and "id" in message:
            self._request(direction, message, method, frame_id, data, text, at)
        elif method is not None:
            self._notification(direction, message, method, data, text, at)
        else:
            self._answer(direction, message, frame_id, data, text, at)

    def _unparsed(self, direction, data, text, at):
        entry = _Open(self.transport, None, None, direction)
        entry.add(direction, data, text, at)
        if direction == UP:
            self._unreadable.append(entry)
        else:
            self._write(entry)

    def _request(self, direction, message, method, frame_id, data, text, at):
        entry = _Open(self.transport, method, message.get("id"), direction)
        entry.add(direction, data, text, at)
        if frame_id is None:
            (self._unreadable.append(entry) if direction == UP else self._write(entry))
            return
        self._by_id.setdefault((direction, frame_id), deque()).append(entry)
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        token = _key(meta.get("progressToken")) if isinstance(meta, dict) else None
        if token is not None:
            entry.token = token
            self._by_token[token] = entry

    def _notification(self, direction, message, method, data, text, at):
        params = message.get("params")
        token = _key(params.get("progressToken")) if isinstance(params, dict) else None
        entry = self._by_token.get(token)
        if entry is not None and entry.asked_by != direction:
            entry.add(direction, data, text, at)
            return
        entry = _Open(self.transport, method, None, direction)
        entry.add(direction, data, text, at)
        self._write(entry)

    def _answer(self, direction, message, frame_id, data, text, at):
        waiting = self._by_id.get((_OTHER[direction], frame_id)) if frame_id is not None else None
        if waiting:
            entry = waiting.popleft()
            if not waiting:
                del self._by_id[(_OTHER[direction], frame_id)]
        elif message.get("id", 0) is None and direction == DOWN and self._unreadable:
            entry = self._unreadable.popleft()
        else:
            entry = _Open(self.transport, None, message.get("id"), _OTHER[direction])
        entry.add(direction, data, text, at)
        if entry.token is not None:
            self._by_token.pop(entry.token, None)
        self._write(entry)

    def _write(self, entry):
        self._out.write(json.dumps(entry.record()) + "\n")
        self._out.flush()  # one exchange per line as it completes, so a viewer can follow the file
