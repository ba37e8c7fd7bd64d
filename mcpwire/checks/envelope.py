"""Checks for exercise 02: build the `_meta` envelope, and recover from -32022 with `error.data.supported`."""

import copy

from .. import frames
from ..validate import validate
from .attempt import attempt, missing
from .servers import stdio_lab
from .verdict import failed, not_done, passed, server_said, short

REPLY_WAIT_S = 5
MAX_SENDS = 4
REQUIRED_KEYS = (frames.PROTOCOL_VERSION_KEY, frames.CLIENT_CAPABILITIES_KEY)

BARE_FRAMES = [
    {"jsonrpc": "2.0", "id": "a", "method": "server/discover"},
    {"jsonrpc": "2.0", "id": "b", "method": "tools/list", "params": {}},
    {"jsonrpc": "2.0", "id": "c", "method": "tools/call",
     "params": {"name": "read_note", "arguments": {"note_id": "welcome"}}},
]


def check_envelope(add_envelope, lab=None):
    """add_envelope(frame) must return the request with a complete params._meta and nothing else changed."""
    if missing(add_envelope):
        not_done("define add_envelope(frame) first.")
        return
    with stdio_lab(lab) as wire:
        added_bytes = None
        for bare in BARE_FRAMES:
            outcome = attempt(add_envelope, copy.deepcopy(bare))
            if outcome.not_done:
                not_done("add_envelope still raises NotImplementedError. Return the frame with params._meta added.")
                return
            if outcome.error:
                failed(f"add_envelope raised {outcome.error_text} for this frame: {frames.dumps(bare)}",
                       hint="A request may have no params at all (server/discover here): create them first.")
                return
            frame = outcome.value
            if not _judge_shape(bare, frame):
                return
            reply = wire.send_raw(frames.dumps(frame), timeout=REPLY_WAIT_S)
            if reply is None or not reply.ok or reply.is_tool_error:
                problems = validate(frame)
                said = server_said(reply.message) if reply is not None else "nothing"
                failed(f"The server refused your {bare['method']} frame"
                       + (f": {'; '.join(problems)}." if problems else "."),
                       server=said, hint=_hint_for(frame, reply))
                return
            added_bytes = len(frames.dumps(frame)) - len(frames.dumps(bare))
    passed(f"add_envelope made three requests the server accepts (server/discover, tools/list, tools/call "
           f"with its arguments intact). The envelope cost {added_bytes} bytes on the last one.")


def _judge_shape(bare, frame):
    if frame is None:
        failed("add_envelope returned None.", hint="Return the frame (a new dict, or the one you changed).")
        return False
    if not isinstance(frame, dict):
        failed(f"add_envelope returned {type(frame).__name__}; return the frame as a dict.")
        return False
    lost = [key for key in ("jsonrpc", "id", "method") if frame.get(key) != bare[key]]
    if lost:
        failed(f"add_envelope changed {', '.join(lost)} of this frame: {frames.dumps(bare)}",
               hint="Only params._meta is new; everything else stays as it was.")
        return False
    params = frame.get("params")
    kept = all(isinstance(params, dict) and params.get(k) == v for k, v in (bare.get("params") or {}).items())
    if not kept:
        failed(f"add_envelope lost the params of this frame: {frames.dumps(bare)}; you returned {short(params)}.",
               hint="Add _meta next to the params that are there: frame.setdefault(\"params\", {})[\"_meta\"] = ...")
        return False
    return True


def _hint_for(frame, reply):
    if "_meta" in frame:
        return "The envelope goes inside params, not next to them: frame[\"params\"][\"_meta\"]."
    meta = (frame.get("params") or {}).get("_meta")
    if not isinstance(meta, dict):
        return (f"params._meta is an object with {REQUIRED_KEYS[0]} (\"2026-07-28\") and {REQUIRED_KEYS[1]} "
                "({} when you declare no optional capability).")
    absent = [key for key in REQUIRED_KEYS if key not in meta]
    if absent:
        return f"Add {' and '.join(absent)}: both keys are required on every request, even when empty."
    if reply is not None and reply.code == -32022:
        return f"The server serves {frames.PROTOCOL_VERSION}: name that version in {frames.PROTOCOL_VERSION_KEY}."
    return "Compare your envelope with the one in the lesson, key by key."


class _TooManySends(Exception):
    pass


class _RecordingSend:
    """The `send` a learner's function gets: posts a frame to the lab server, keeps a copy of each frame."""

    def __init__(self, wire):
        self.wire = wire
        self.sent = []
        self.replies = []

    def __call__(self, frame):
        if len(self.sent) >= MAX_SENDS:
            raise _TooManySends()
        self.sent.append(copy.deepcopy(frame))
        reply = self.wire.send_raw(frames.dumps(frame), timeout=REPLY_WAIT_S)
        if reply is None:
            raise TimeoutError(f"no reply to {frames.dumps(frame)} within {REPLY_WAIT_S} seconds")
        self.replies.append(reply.message)
        return reply.message


def _discover(version, request_id):
    return frames.request("server/discover", id=request_id, meta={frames.PROTOCOL_VERSION_KEY: version})


def check_version_recovery(send_with_version_fallback, lab=None):
    """On -32022, resend once with a version from error.data.supported; on anything else, do not retry."""
    if missing(send_with_version_fallback):
        not_done("define send_with_version_fallback(send, frame) first.")
        return
    cases = [
        ("future", _discover("2099-01-01", 1), 2),
        ("fine", frames.request("tools/list", {}, id=2), 1),
        ("incomplete", frames.request("tools/list", {}, id=3, meta={frames.CLIENT_CAPABILITIES_KEY: frames.OMIT}), 1),
    ]
    with stdio_lab(lab) as wire:
        for name, frame, expected_sends in cases:
            send = _RecordingSend(wire)
            outcome = attempt(send_with_version_fallback, send, copy.deepcopy(frame))
            if outcome.not_done:
                not_done("send_with_version_fallback still raises NotImplementedError. Send the frame; if the "
                         "reply is a -32022 error, resend it naming a version from error.data.supported.")
                return
            if not _judge_case(name, frame, expected_sends, send, outcome):
                return
    passed("Your client resent the 2099-01-01 request once, naming 2026-07-28 from error.data.supported, "
           "sent a good request once, and did not retry a -32602 that no version can fix.")


def _judge_case(name, frame, expected_sends, send, outcome):
    story = {
        "future": "The check sent server/discover naming version 2099-01-01 (the server answers -32022).",
        "fine": "The check sent a tools/list with a correct envelope.",
        "incomplete": "The check sent a tools/list whose envelope lacks clientCapabilities (the server answers -32602).",
    }[name]
    if isinstance(outcome.error, _TooManySends):
        failed(f"{story} Your function sent {MAX_SENDS} frames and was still going.",
               hint="Retry at most once, and only after a -32022.")
        return False
    if outcome.error:
        failed(f"{story} Your function raised {outcome.error_text}",
               hint="error.data.supported is reply[\"error\"][\"data\"][\"supported\"]; a result has no \"error\" key.")
        return False
    reply = outcome.value
    if not isinstance(reply, dict):
        failed(f"{story} Your function returned {short(reply)}; return the last reply, as send gave it.")
        return False
    sent = send.sent
    if name == "future":
        if len(sent) == 1:
            failed(f"{story} You returned that error without retrying.", server=server_said(reply),
                   hint="Read reply[\"error\"][\"data\"][\"supported\"], put one of those versions in "
                        "params._meta, and send again.")
            return False
        retry = sent[1]
        if retry.get("method") != frame["method"]:
            failed(f"{story} Your retry was {retry.get('method')!r}, not {frame['method']!r}.",
                   hint="A -32022 proves the server speaks the modern protocol: do not fall back to initialize; "
                        "resend the same request with a supported version.")
            return False
        version = frames.protocol_version_of(retry)
        supported = send.replies[0]["error"]["data"]["supported"]
        if version not in (supported or []):
            failed(f"{story} Your retry named {version!r}, which is not in error.data.supported {supported}.",
                   server=server_said(reply),
                   hint="Take the version from the error's data.supported; do not guess one.")
            return False
    if len(sent) != expected_sends:
        failed(f"{story} Your function sent {len(sent)} frames; it should send {expected_sends}.",
               server=server_said(reply) if name == "incomplete" else None,
               hint="Only -32022 is about the version. Retrying any other error sends the same mistake again."
               if name != "future" else "Retry once, after the -32022.")
        return False
    wanted = "error" if name == "incomplete" else "result"
    if wanted not in reply:
        failed(f"{story} You returned {server_said(reply)}, not the last reply the server sent.")
        return False
    return True
