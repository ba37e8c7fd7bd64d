"""A reply as it came off the wire: the parsed message, its exact bytes, and where it came from."""

import json

from . import codes
from .display import ShownAsText, as_html, pretty


class Reply(ShownAsText):
    """One JSON-RPC response (or the reason there is none).

    `message` is the parsed JSON (None when the bytes were not JSON: see `problem`),
    `raw` the exact bytes of the body (a whole SSE stream over HTTP), `payload` the
    JSON bytes of this message alone, `notifications` the messages that arrived for
    this request before it (progress, logs), `status`/`headers` only over HTTP.
    """

    def __init__(self, message, raw, *, payload=None, notifications=(), status=None, headers=None,
                 content_type=None, problem=None, method=None):
        self.method = method  # the method of the request this answers, when the wire knows it
        self._message = message
        self._unparsed = False  # True while `raw` waits to be parsed (see `unparsed`)
        self.raw = raw
        self.payload = raw if payload is None else payload
        self.notifications = list(notifications)
        self.status = status
        self.headers = headers
        self.content_type = content_type
        self._problem = problem

    @classmethod
    def unparsed(cls, raw):
        """A Reply whose bytes are parsed when first looked at (`message`, `problem`), not now.

        For a wire that matched the reply by an id read from its first bytes: a caller
        that only waits for the round trip pays no parse. No other arguments: passing
        **kwargs on, even empty, costs a few hundred nanoseconds on every round trip.
        """
        reply = cls(None, raw)
        reply._unparsed = True
        return reply

    def _parse(self):
        parsed = Reply.from_bytes(self.raw)
        self._message, self._problem = parsed._message, parsed._problem
        self._unparsed = False

    @property
    def message(self):
        """The parsed JSON message (None when the bytes were not JSON: see `problem`)."""
        if self._unparsed:
            self._parse()
        return self._message

    @property
    def problem(self):
        """Why there is no usable message (not JSON, cut off, too large), or None."""
        if self._unparsed:
            self._parse()
        return self._problem

    @classmethod
    def from_bytes(cls, raw, *, text=None, **kwargs):
        """Parse `raw` as one JSON message; bytes that are not JSON give a Reply whose `problem` says so.

        `text`, when the caller already has it, is `raw` decoded as UTF-8 (parsed instead, to save a decode).
        """
        try:
            message = json.loads(raw if text is None else text)
        except RecursionError:
            return cls(None, raw, problem="reply is nested too deeply to parse", **kwargs)
        except ValueError:
            shown = raw[:200].decode("utf-8", "replace")
            return cls(None, raw, problem=f"reply is not JSON: {shown!r}", **kwargs)
        return cls(message, raw, **kwargs)

    @property
    def text(self):
        """The message's exact wire text."""
        return self.payload.decode("utf-8", "replace")

    @property
    def id(self):
        return self.message.get("id") if isinstance(self.message, dict) else None

    @property
    def ok(self):
        """True for a JSON-RPC result (a tool's `isError` result is still ok at this level)."""
        return self.problem is None and isinstance(self.message, dict) and "result" in self.message

    @property
    def error(self):
        """The JSON-RPC error object, or None."""
        error = self.message.get("error") if isinstance(self.message, dict) else None
        return error if isinstance(error, dict) else None

    @property
    def code(self):
        return self.error.get("code") if self.error else None

    @property
    def result(self):
        return self.message.get("result") if self.ok else None

    @property
    def result_type(self):
        """`complete` or `input_required`; a result without the field counts as complete (pre-2026 servers)."""
        if not self.ok:
            return None
        return self.result.get("resultType", "complete") if isinstance(self.result, dict) else None

    @property
    def is_tool_error(self):
        """True for a tools/call result the tool marked `isError` (an execution error, not a protocol error)."""
        return bool(self.ok and isinstance(self.result, dict) and self.result.get("isError"))

    def explain(self):
        """What went wrong, in plain words."""
        if self.problem:
            return self.problem
        if self.error is None:
            return "Not an error: the server answered with a result."
        code = self.error.get("code")
        lines = [f"The server said: {self.error.get('message')!r}", codes.explain(code)]
        data = self.error.get("data")
        if isinstance(data, dict) and data.get("supported"):
            lines.append(f"Versions this server supports: {', '.join(map(str, data['supported']))}.")
        return "\n".join(lines)

    def display_text(self):
        lines = []
        if self.status is not None:
            lines.append(f"HTTP {self.status} {self.content_type or '(no content type)'}")
        for note in self.notifications:
            lines.append(f"← (notification) {json.dumps(note, separators=(',', ':'), ensure_ascii=False)}")
        if self.problem:
            lines.append(f"⚠ {self.problem}")
        if self.message is not None:
            lines.append(f"← {self.text}")
            lines.append(pretty(self.message))
        return "\n".join(lines)

    def _repr_html_(self):
        return as_html(self)

    def __eq__(self, other):
        return isinstance(other, Reply) and (self.raw, self.payload, self.status) == (other.raw, other.payload, other.status)

    __hash__ = None
