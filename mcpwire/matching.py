"""Which request a line from a stdio server answers. No I/O and no threads: feed it what
was sent and what came back, and it files each line where it belongs.

Replies can come back in any order, so they are matched by id. Two kinds of send
wait for an answer:

- a *request* (`REQUEST`): matched by its id, and collected later by `wait(id)`;
- a *raw send* (`RAW`), typed by hand and maybe malformed: matched by its id when
  one can be read from it, or else by an error reply whose id is null (a server
  that cannot read the id answers so); the oldest raw send takes such a reply.

A notification that carries the `progressToken` of a request is tied to that
request; every other message is *unsolicited* and goes to whoever reads them.
Each finished exchange goes to the transcript. The caller keeps the clock:
`give_up(pending)` when it stops waiting, `close()` when the stream ends.
"""

import json
import re
import time
from collections import deque

from .lines import MAX_LINE_BYTES, Oversized
from .reply import Reply
from .transcript import Exchange

REQUEST, RAW = "request", "raw"
_ID_AT_START = re.compile(rb'\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d+|"[^"\\]*")')
# How SDK servers start a response: read the id here and the rest only when someone looks.
# An integer id is JSON's own grammar (no leading zeros), so int() reads it as json.loads would.
_RESPONSE_HEAD = re.compile(rb'\{"jsonrpc":"2\.0","id":(?:(-?(?:0|[1-9][0-9]*))|("[^"\\]*")),"(?:result|error)":')


def _key(value):
    """An id or progress token we can look up; a list or object (unhashable) matches nothing, so None."""
    return None if isinstance(value, (list, dict)) else value


def method_of(text):
    try:
        method = json.loads(text).get("method")
    except (ValueError, AttributeError, RecursionError):
        return None
    return method if isinstance(method, str) else None


class Pending:
    """A line we wrote that waits for an answer, and everything that came back for it so far."""

    # One per request, made and read on every round trip: fixed slots are quicker than a __dict__.
    __slots__ = ("kind", "id", "key", "method", "payload", "line", "progress_token", "started", "down_lines",
                 "down_texts", "notes", "reply", "given_up")

    def __init__(self, kind, frame_id, method, payload, line, progress_token=None):
        self.kind = kind
        self.id = frame_id
        # What _key() gives, written out: a Python call more is time on every round trip.
        self.key = None if isinstance(frame_id, (list, dict)) else frame_id
        self.method = method
        self.payload = payload  # the JSON text (or whatever was typed), without the newline
        self.line = line  # the exact bytes written
        self.progress_token = None if isinstance(progress_token, (list, dict)) else progress_token
        self.started = time.perf_counter()
        self.down_lines = []  # the bytes of each line that came down for it: its notifications, then its reply
        self.down_texts = []  # the same lines as text, without their newlines
        self.notes = []
        self.reply = None
        self.given_up = False

    @property
    def answered(self):
        return self.reply is not None

    def describe(self):
        return f"id {self.id!r} ({self.method})" if self.method else f"id {self.id!r}"

    def exchange(self):
        """The transcript entry: what went up, and every line that came down for it."""
        # Called once, when nothing more comes for it: the list of texts is handed over, not copied. The fields
        # in order (transport, method, id, up, down, up_payloads, down_payloads, elapsed_ms): keywords cost
        # a microsecond more on every round trip.
        return Exchange("stdio", self.method, self.id, self.line, b"".join(self.down_lines), [self.payload],
                        self.down_texts, (time.perf_counter() - self.started) * 1000)


class Matcher:
    """Pairs each line a server writes with the send it answers, and files it.

    Where a line goes: the reply to a send we wait for becomes that send's `reply`; a
    notification tied to a send joins its notes; anything else is unsolicited and its
    message goes to `unread`. Every notification also goes to `notifications`, and every
    finished exchange to `transcript`. All three are anything with `append` (the wire
    passes its own); by default, new lists.
    """

    def __init__(self, transcript=None, notifications=None, unread=None, *, limit=MAX_LINE_BYTES):
        self.transcript = [] if transcript is None else transcript
        self.notifications = [] if notifications is None else notifications
        self.unread = deque() if unread is None else unread
        self.limit = limit  # the line size limit the reader applies, for what an Oversized line says
        self._by_id = {}  # id -> list of Pending not yet answered, oldest first (most often just one)
        self._raw = deque()  # raw sends not yet answered, oldest first (for id-null error replies)
        self._by_token = {}  # progressToken -> Pending
        self._to_collect = {}  # id -> list of requests that `take(id)` has not returned yet, oldest first
        self.closed = False

    # --- the sending side --------------------------------------------------------

    def expect(self, pending):
        """Start waiting for `pending`'s answer."""
        if pending.key is not None:
            self._by_id.setdefault(pending.key, []).append(pending)
        if pending.kind == REQUEST:
            self._to_collect.setdefault(pending.id, []).append(pending)
        else:
            self._raw.append(pending)
        if pending.progress_token is not None:
            self._by_token[pending.progress_token] = pending

    def take(self, frame_id):
        """The oldest request written with this id and not taken yet (KeyError if none): each is taken once."""
        try:
            waiting = self._to_collect[frame_id]
        except (KeyError, TypeError):  # TypeError: a list or object, which no request was written with
            raise KeyError(f"no request with id {frame_id!r} was written on this wire") from None
        pending = waiting.pop(0)
        if not waiting:
            del self._to_collect[frame_id]
        return pending

    def give_up(self, pending):
        """Stop waiting for `pending` and record what was written (and any notes), once; returns that entry or None.

        A reply that still comes later is unsolicited.
        """
        if pending.given_up or pending.answered:
            return None
        pending.given_up = True
        self._forget(pending)
        exchange = pending.exchange()
        self.transcript.append(exchange)
        return exchange

    def _forget(self, pending):
        waiting = self._by_id.get(pending.key)
        if waiting and pending in waiting:
            waiting.remove(pending)
            if not waiting:
                del self._by_id[pending.key]
        if pending.kind == RAW and pending in self._raw:
            self._raw.remove(pending)
        if pending.progress_token is not None and self._by_token.get(pending.progress_token) is pending:
            del self._by_token[pending.progress_token]

    # --- the receiving side ------------------------------------------------------

    def file(self, line):
        """File one line: bytes (newline included if it had one), or `lines.Oversized` for one over the limit.

        Returns the send it answered or belongs to, or None when it is unsolicited. Never
        raises (a reader that dies leaves every later request to time out): a line that
        cannot be filed is kept as an unsolicited message that says why.
        """
        try:
            if type(line) is Oversized:
                return self._file_oversized(line.head, line.size)
            body = line[:-1] if line.endswith(b"\n") else line
            head = _RESPONSE_HEAD.match(body)
            if head:  # an integer id as int() reads it; a string id json cannot read is None, which is no key
                waiting = self._by_id.get(int(head[1]) if head[1] is not None else _json_or_none(head[2]))
                if waiting:
                    return self._answer(waiting[0], line, body.decode("utf-8", "replace"), Reply.unparsed(body))
            return self._file_parsed(line, body)
        except Exception as error:
            raw = line.head if type(line) is Oversized else line
            problem = f"mcpwire could not file this line ({type(error).__name__}: {error}); it is kept here"
            self._unsolicited(raw, raw.rstrip(b"\n").decode("utf-8", "replace"),
                              Reply(None, raw.rstrip(b"\n"), problem=problem), {})
            return None

    def _file_parsed(self, line, body):
        """Any line that is not an SDK-shaped reply to a send we wait for: parse it, then see what it is."""
        try:
            text = body.decode("utf-8")
            reply = Reply.from_bytes(body, text=text)
        except UnicodeDecodeError:  # not UTF-8, so not JSON: from_bytes says so
            text = body.decode("utf-8", "replace")
            reply = Reply.from_bytes(body)
        message = reply.message if isinstance(reply.message, dict) else {}
        if "result" in message or "error" in message:
            pending = self._answered_by(message.get("id"))
            if pending is not None:
                return self._answer(pending, line, text, reply)
        elif "method" in message:
            self.notifications.append(message)
            params = message.get("params")
            token = _key(params.get("progressToken")) if isinstance(params, dict) else None
            owner = self._by_token.get(token) if token is not None else None
            if owner is not None:
                owner.down_lines.append(line)
                owner.down_texts.append(text)
                owner.notes.append(message)
                return owner
        return self._unsolicited(line, text, reply, message)

    def _file_oversized(self, head, size):
        """A line over the size limit, of which only `head` was kept.

        If the head shows the id of a send we wait for, that send gets a Reply saying what happened.
        """
        problem = f"the server wrote a line of {size} bytes, over mcpwire's limit of {self.limit}; it was dropped"
        reply = Reply(None, head, problem=problem)
        text = head.decode("utf-8", "replace")
        pending = self._answered_by(id_at_start(head))
        if pending is not None:
            return self._answer(pending, head, text, reply)
        return self._unsolicited(head, text, reply, {})

    def close(self):
        """The stream ended: no send still waiting will be answered."""
        self.closed = True

    def _answered_by(self, reply_id):
        """The oldest send this reply answers: by id, or (id null) the oldest raw send."""
        if reply_id is None:
            return self._raw[0] if self._raw else None
        waiting = self._by_id.get(_key(reply_id))
        return waiting[0] if waiting else None

    def _answer(self, pending, line, text, reply):
        self._forget(pending)
        pending.down_lines.append(line)
        pending.down_texts.append(text)
        reply.notifications, reply.method = pending.notes, pending.method
        pending.reply = reply
        self.transcript.append(pending.exchange())
        return pending

    def _unsolicited(self, line, text, reply, message):
        self.transcript.append(Exchange(transport="stdio", method=message.get("method"), id=message.get("id"),
                                        up=b"", down=line, up_payloads=[], down_payloads=[text]))
        self.unread.append(reply)
        return None


def id_at_start(head):
    """The id of a reply whose first bytes are `{"jsonrpc":"2.0","id":...`, else None."""
    match = _ID_AT_START.match(head)
    return json.loads(match.group(1)) if match else None


def _json_or_none(data):
    try:
        return json.loads(data)
    except ValueError:  # e.g. a string id with a raw control character in it
        return None
