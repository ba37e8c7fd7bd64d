"""What the composer does when the learner presses Send, without any widget in the way.

The editor's text goes out as the learner wrote it: valid JSON is sent in its
compact wire form, anything else as raw text. Problems found by `validate` are
reported, never fixed, and never stop the frame from going out.
"""

import json
from dataclasses import dataclass, field

from .. import frames
from ..errors import WireError, WireTimeout
from ..validate import validate


@dataclass
class Outcome:
    """One press of Send: what was typed, what went out, and what came back (or why nothing did)."""

    text: str
    payload: str
    method: str | None
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    exchange: object = None
    reply: object = None
    failure: str | None = None

    @property
    def reply_problems(self):
        return validate(self.reply) if self.reply is not None and self.reply.message is not None else []


NOT_JSON = object()


def parse(text):
    """The JSON the text holds, or NOT_JSON."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return NOT_JSON


def check(text):
    """(frame, problems): the parsed JSON (NOT_JSON if it does not parse) and what `validate` says about it."""
    try:
        frame = json.loads(text)
    except ValueError as error:
        return NOT_JSON, [f"not JSON: {error}"]
    except RecursionError:
        return NOT_JSON, ["nested too deeply to parse"]
    return frame, validate(frame)


def parse_header_lines(text):
    """`Name: value` lines into a dict (in order); lines without a colon are returned as problems."""
    headers, problems = {}, []
    for line in text.splitlines():
        if not line.strip():
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            problems.append(f"header line {line!r} has no 'Name: value'")
            continue
        headers[name.strip()] = value.strip()
    return headers, problems


def header_overrides(derived, edited):
    """The `headers=` argument that turns the derived headers into exactly the edited list."""
    wanted = {name.lower() for name in edited}
    overrides = {name: None for name in derived if name.lower() not in wanted}
    overrides.update(edited)
    return overrides


def _wire_form(text, frame, raw, wire):
    """(payload, notes): the text that goes on the wire for what the editor holds."""
    if frame is not NOT_JSON and not raw:
        return frames.dumps(frame), []
    payload = wire.one_message(text)
    lines = text.strip("\n").count("\n") + 1
    if lines > 1 and "\n" not in payload:
        return payload, [f"{wire.transport} ends a message at each newline: the {lines} lines were sent as one line, "
                         "joined with spaces"]
    return payload, []


def _sendable_id(frame):
    frame_id = frame.get("id")
    return "id" not in frame or isinstance(frame_id, (str, int)) and not isinstance(frame_id, bool)


def send(wire, text, *, raw=False, headers=None, timeout=5.0):
    """Send the editor's text on `wire` and collect everything the composer shows. Never raises."""
    frame, problems = check(text)
    payload, notes = _wire_form(text, frame, raw, wire)
    method = frame.get("method") if isinstance(frame, dict) and isinstance(frame.get("method"), str) else None
    outcome = Outcome(text, payload, method, problems, notes)
    before = len(wire.transcript)
    try:
        outcome.reply = _post(wire, frame, payload, raw, headers, timeout)
    except WireTimeout as error:
        outcome.failure = f"⏱ Timeout: {error}."
        if method == "subscriptions/listen":
            outcome.failure += " subscriptions/listen stays open until it is cancelled, so this is expected."
    except WireError as error:
        outcome.failure = f"✗ {error}"
    except Exception as error:  # a learner's frame must never break the widget
        outcome.failure = f"✗ could not send: {type(error).__name__}: {error}"
    else:
        if outcome.reply is None:
            expects_reply = not (isinstance(frame, dict) and "id" not in frame)
            outcome.failure = (f"⏱ Timeout: no reply within {timeout} s." if expects_reply else
                               "A notification is never answered: nothing came back, as expected.")
    outcome.exchange = _exchange_for(wire, before, payload)
    return outcome


def _post(wire, frame, payload, raw, headers, timeout):
    if isinstance(frame, dict) and not raw and _sendable_id(frame):
        # a listen request stays open: take what it sends for `timeout` seconds, then stop
        listening = frame.get("method") == "subscriptions/listen"
        return wire.send(frame, headers, timeout=timeout, stream_for=timeout if listening else None)
    return wire.send_raw(payload, headers, timeout=timeout)


def _exchange_for(wire, before, payload):
    """The transcript entry of this send: the newest one since `before` that carries our payload."""
    for exchange in reversed(wire.transcript.exchanges[before:]):
        if payload in exchange.up_payloads:
            return exchange
    return None
