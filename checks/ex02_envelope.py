"""Checks for exercise 02: build the `_meta` envelope, and recover from -32022 with `error.data.supported`."""

import copy

from mcpwire import frames
from mcpwire.validate import validate
from .attempt import RecordingSend, TooManySends, attempt, missing
from .servers import REPLY_WAIT_S, stdio_lab
from .verdict import failed, not_done, passed, server_said, short, shown

MAX_SENDS = 4
REQUIRED_KEYS = (frames.PROTOCOL_VERSION_KEY, frames.CLIENT_CAPABILITIES_KEY)

# Ids of both JSON types and a non-ASCII argument: the envelope goes in, nothing else changes, not even a type.
BARE_FRAMES = [
    {"jsonrpc": "2.0", "id": "a", "method": "server/discover"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    {"jsonrpc": "2.0", "id": "p", "method": "tools/call",
     "params": {"name": "search_notes", "arguments": {"query": "Tomás"}, "_meta": {"progressToken": "search-1"}}},
    {"jsonrpc": "2.0", "id": "c", "method": "tools/call",
     "params": {"name": "read_note", "arguments": {"note_id": "welcome"}}},
]


def check_envelope(add_envelope, lab=None):
    """add_envelope(frame) must return the request with a complete params._meta and nothing else changed."""
    if missing(add_envelope):
        not_done("define add_envelope(frame) first.")
        return
    built = []
    for bare in BARE_FRAMES:
        outcome = attempt(add_envelope, copy.deepcopy(bare))
        if outcome.not_done:
            not_done("add_envelope still raises NotImplementedError. Return the frame with params._meta added.")
            return
        if outcome.error:
            failed(f"add_envelope raised {outcome.error_text} for this frame: {frames.dumps(bare)}",
                   hint="A request may have no params at all (server/discover here): create them first.")
            return
        if not _judge_shape(bare, outcome.value):
            return
        try:
            frames.dumps(outcome.value)
        except (TypeError, ValueError) as error:
            failed(f"The frame add_envelope returned cannot be written as JSON: {error}.")
            return
        built.append((bare, outcome.value))
    with stdio_lab(lab) as wire:
        for bare, frame in built:
            reply = wire.send_raw(frames.dumps(frame), timeout=REPLY_WAIT_S)
            if reply is None or not reply.ok or reply.is_tool_error:
                problems = validate(frame)
                said = server_said(reply.message) if reply is not None else "nothing"
                failed(f"The server refused your {bare['method']} frame"
                       + (f": {'; '.join(problems)}." if problems else "."),
                       server=said, hint=_hint_for(frame, reply))
                return
    for bare, frame in built:
        if not _judge_nothing_added(bare, frame):
            return
    bare, frame = built[-1]
    added_bytes = len(frames.dumps(frame)) - len(frames.dumps(bare))
    passed(f"add_envelope made four requests the server accepts (server/discover, tools/list, and two tools/call "
           f"with their arguments intact, one keeping the progressToken its _meta already held). "
           f"The envelope cost {added_bytes} bytes on the last one.")


def _judge_shape(bare, frame):
    if frame is None:
        failed("add_envelope returned None.", hint="Return the frame (a new dict, or the one you changed).")
        return False
    if not isinstance(frame, dict):
        failed(f"add_envelope returned {type(frame).__name__}; return the frame as a dict.")
        return False
    lost = [key for key in ("jsonrpc", "id", "method") if frame.get(key) != bare[key]]
    if lost:
        retyped = "id" in lost and str(frame.get("id")) == str(bare["id"])
        failed(f"add_envelope changed {', '.join(lost)} of this frame: {frames.dumps(bare)}"
               + (f"; you returned the id {shown(frame.get('id'))}" if "id" in lost else ""),
               hint="JSON-RPC ids keep their type: 2 and \"2\" are two different ids, so leave the id as it came."
               if retyped else "Only params._meta is new; everything else stays as it was.")
        return False
    params = frame.get("params")
    before = {k: v for k, v in (bare.get("params") or {}).items() if k != "_meta"}
    kept = all(isinstance(params, dict) and params.get(k) == v for k, v in before.items())
    if not kept:
        failed(f"add_envelope lost the params of this frame: {frames.dumps(bare)}; you returned {short(params)}.",
               hint="Only params._meta is new: the params a request already has stay as they are.",
               more="Add _meta next to the params that are there, creating params only when the frame has none.")
        return False
    had = (bare.get("params") or {}).get("_meta") or {}
    meta = params.get("_meta") if isinstance(params, dict) else None
    dropped = [key for key, value in had.items() if not isinstance(meta, dict) or meta.get(key) != value]
    if dropped:
        failed(f"add_envelope dropped or changed {', '.join(dropped)} from the _meta this frame already had: {frames.dumps(bare)}; "
               f"you returned params._meta {short(meta)}.",
               hint="A request's _meta can already hold other keys (here a progressToken, lesson 10): add the "
                    "envelope keys to it instead of replacing it.")
        return False
    return True


def _judge_nothing_added(bare, frame):
    """A server ignores members it does not know, so only a comparison with the request given shows them."""
    added = [f"a top-level {key}" for key in frame if key not in bare and key != "params"]
    had = bare.get("params") or {}
    added += [f"params.{key}" for key in frame["params"] if key not in had and key != "_meta"]
    if added:
        failed(f"add_envelope added {' and '.join(added)} to this frame: {frames.dumps(bare)}; you returned "
               f"{short(frame)}.",
               hint="The envelope goes in params._meta only; everything else stays as it was.")
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
    if not isinstance(meta[frames.PROTOCOL_VERSION_KEY], str) or not isinstance(meta[frames.CLIENT_CAPABILITIES_KEY], dict):
        return (f"Each value has its JSON type: {frames.PROTOCOL_VERSION_KEY} is a string (\"2026-07-28\"), "
                f"{frames.CLIENT_CAPABILITIES_KEY} an object ({{}} when you declare nothing), not text or a list.")
    if reply is not None and reply.code == -32022:
        return f"The server serves {frames.PROTOCOL_VERSION}: name that version in {frames.PROTOCOL_VERSION_KEY}."
    return "Compare your envelope with the one in the lesson, key by key."


def _discover(version, request_id):
    return frames.request("server/discover", id=request_id, meta={frames.PROTOCOL_VERSION_KEY: version})


class OtherServerSend:
    """A send(frame) to a server that is not the lab: it serves `serves` and answers any other version with -32022.

    The lab serves one version, so only a server like this one tells the first version the client speaks from
    the oldest shared one, or from the first in the server's own list.
    """

    def __init__(self, serves, *, max_sends):
        self.serves = serves
        self.max_sends = max_sends
        self.sent = []
        self.replies = []

    def __call__(self, frame):
        if len(self.sent) >= self.max_sends:
            raise TooManySends(f"more than {self.max_sends} sends")
        frames.dumps(frame)  # what cannot be written as JSON fails here, as it does on the lab's wire
        self.sent.append(copy.deepcopy(frame))
        version = frames.protocol_version_of(frame)
        request_id = frame.get("id") if isinstance(frame, dict) else None
        if version in self.serves:
            reply = {"jsonrpc": "2.0", "id": request_id,
                     "result": {"resultType": "complete", "supportedVersions": list(self.serves), "capabilities": {}}}
        else:
            reply = {"jsonrpc": "2.0", "id": request_id,
                     "error": {"code": -32022, "message": "Unsupported protocol version",
                               "data": {"supported": list(self.serves), "requested": version}}}
        self.replies.append(reply)
        return copy.deepcopy(reply)


FUTURE = "2027-01-01"
UNSERVED = "2026-09-01"  # spoken by the client, served by no server here: a retry must not take it on trust
OTHER_SERVES = [frames.PROTOCOL_VERSION, "2026-10-01"]  # oldest first: the server's order is not the client's
OTHER_SPEAKS = [FUTURE, "2026-12-01", "2026-10-01", frames.PROTOCOL_VERSION]
CASES = [
    # name, what the check sends and what the server answers, the frame, the versions the client speaks,
    # frames to send, the versions a stand-in server serves (None: the lab server)
    ("future", f"server/discover naming {FUTURE}, from a client that speaks {FUTURE}, {UNSERVED} and "
               f"{frames.PROTOCOL_VERSION} (the server answers -32022)", _discover(FUTURE, 1),
     [FUTURE, UNSERVED, frames.PROTOCOL_VERSION], 2, None),
    ("fine", "a tools/list with a correct envelope", frames.request("tools/list", {}, id=2), [frames.PROTOCOL_VERSION],
     1, None),
    ("incomplete", "a tools/list whose envelope lacks clientCapabilities (the server answers -32602)",
     frames.request("tools/list", {}, id=3, meta={frames.CLIENT_CAPABILITIES_KEY: frames.OMIT}),
     [frames.PROTOCOL_VERSION], 1, None),
    ("nothing-shared", f"server/discover naming {FUTURE}, from a client that speaks only {FUTURE} "
                       "(the server answers -32022)", _discover(FUTURE, 4), [FUTURE], 1, None),
    ("two-shared", f"server/discover naming {FUTURE} to another server, which serves {' and '.join(OTHER_SERVES)}, "
                   f"from a client that speaks {', '.join(OTHER_SPEAKS)} (the server answers -32022)",
     _discover(FUTURE, 5), OTHER_SPEAKS, 2, OTHER_SERVES),
]


def check_version_recovery(send_with_version_fallback, lab=None):
    """On -32022, resend once with the newest version both sides speak; otherwise return the reply as it is."""
    if missing(send_with_version_fallback):
        not_done("define send_with_version_fallback(send, frame, speaks) first.")
        return
    with stdio_lab(lab) as wire:
        for name, story, frame, speaks, expected_sends, serves in CASES:
            send = (RecordingSend(wire, max_sends=MAX_SENDS, wait_s=REPLY_WAIT_S) if serves is None
                    else OtherServerSend(serves, max_sends=MAX_SENDS))
            outcome = attempt(send_with_version_fallback, send, copy.deepcopy(frame), list(speaks))
            if outcome.not_done:
                not_done("send_with_version_fallback still raises NotImplementedError. Send the frame; if the "
                         "reply is a -32022 error, resend it naming a version from error.data.supported "
                         "that your client speaks.")
                return
            if not _judge_case(name, f"The check sent {story}.", frame, speaks, expected_sends, send, outcome):
                return
    passed(f"Your client resent the {FUTURE} request once with 2026-07-28 from error.data.supported (not "
           f"{UNSERVED}, which it speaks but the server does not), took 2026-10-01, the newest version it shares, "
           "from a server that also serves 2026-07-28, gave up when it shared no version with the server, sent a "
           "good request once, and did not retry a -32602 that no version can fix.")


def _changed_beyond_version(original, retry):
    """What the retry changed besides the version (its id may change), in a few words; '' if nothing."""
    if not isinstance(retry, dict) or not isinstance(retry.get("params"), dict):
        return "it has no params object"
    before, after = copy.deepcopy(original), copy.deepcopy(retry)
    for message in (before, after):
        message.pop("id", None)
        meta = message["params"].get("_meta")
        if isinstance(meta, dict):
            meta.pop(frames.PROTOCOL_VERSION_KEY, None)
    changes = [f"{key} {short(after.get(key))}" for key in sorted(set(before) | set(after))
               if key != "params" and before.get(key) != after.get(key)]
    params_before, params_after = before["params"], after["params"]
    for key in sorted(set(params_before) | set(params_after)):
        if key == "_meta" and isinstance(params_before.get(key), dict) and isinstance(params_after.get(key), dict):
            meta_before, meta_after = params_before[key], params_after[key]
            changes += [f"params._meta's {k} is {short(meta_after[k]) if k in meta_after else 'gone'}"
                        for k in sorted(set(meta_before) | set(meta_after)) if meta_before.get(k) != meta_after.get(k)]
        elif params_before.get(key) != params_after.get(key):
            changes.append(f"params.{key} is {short(params_after[key]) if key in params_after else 'gone'}")
    return "; ".join(changes)


def _judge_case(name, story, frame, speaks, expected_sends, send, outcome):
    if isinstance(outcome.error, TooManySends):
        failed(f"{story} Your function sent {MAX_SENDS} frames and was still going.",
               hint="Retry at most once, and only after a -32022.")
        return False
    first_error = (send.replies[0].get("error") or {}) if send.replies else {}
    supported = (first_error.get("data") or {}).get("supported") or []
    shared = [version for version in speaks if version in supported]
    if outcome.error and first_error.get("code") == -32022 and not shared:
        failed(f"{story} Your function raised {outcome.error_text} after the -32022 reply: your client and the "
               "server share no version here.",
               hint="With no version in both lists there is nothing to retry with: return the -32022 reply as it "
                    "is, and the caller reports the failure.")
        return False
    if outcome.error:
        failed(f"{story} Your function raised {outcome.error_text}",
               hint="error.data.supported is reply[\"error\"][\"data\"][\"supported\"]; a result has no "
                    "\"error\" key, so read it with .get().")
        return False
    reply = outcome.value
    if not isinstance(reply, dict):
        failed(f"{story} Your function returned {shown(reply)}; return the last reply, as send gave it.")
        return False
    sent = send.sent
    if len(sent) > 1:
        retry = sent[1]
        if retry.get("method") != frame["method"]:
            failed(f"{story} Your retry was {retry.get('method')!r}, not {frame['method']!r}.",
                   hint="A -32022 proves the server speaks the modern protocol: do not fall back to initialize; "
                        "send the same request again with a supported version.")
            return False
        version = frames.protocol_version_of(retry)
        changed = _changed_beyond_version(frame, retry)
        if changed:
            failed(f"{story} Your retry changed more than the protocol version: {changed}.",
                   hint="A -32022 is about the version alone: resend the same request, with only "
                        f"params._meta's {frames.PROTOCOL_VERSION_KEY} replaced.")
            return False
        if first_error.get("code") == -32022 and version not in supported:
            failed(f"{story} Your retry named {version!r}, which is not in error.data.supported {supported}.",
                   server=server_said(send.replies[1]),
                   hint="Take the version from the error's data.supported; do not guess one.")
            return False
        if first_error.get("code") == -32022 and version not in speaks:
            failed(f"{story} Your retry named {version!r}, a version your client does not speak "
                   f"(it speaks {speaks}).",
                   hint="Retry only with a version in both lists. When there is none, return the -32022 reply: "
                        "the caller reports the failure instead of guessing.")
            return False
        if first_error.get("code") == -32022 and version != shared[0]:
            failed(f"{story} Your retry named {version!r}, but {shared[0]!r} is the first version in your "
                   f"client's list {speaks} that error.data.supported {supported} also holds.",
                   hint="The spec asks only for a version both support; this task prefers the newest, and your "
                        "client's list is newest first, so its order decides. The order of data.supported says nothing.")
            return False
    if len(sent) != expected_sends:
        hints = {
            "future": ("A -32022 error lists the versions the server serves.",
                       "Read error.data.supported, put the newest version your client also speaks in "
                       "params._meta, and send again."),
            "nothing-shared": ("There is no version to retry with: return the -32022 reply.", None),
        }
        hint, more = hints.get(name, ("Only -32022 is about the version. Retrying any other error sends the same "
                                      "mistake again.", None))
        failed(f"{story} Your function sent {len(sent)} frame{'s' if len(sent) != 1 else ''}; "
               f"it should send {expected_sends}.",
               server=server_said(send.replies[-1]), hint=hint, more=more)
        return False
    if reply is not send.replies[-1] and reply != send.replies[-1]:
        failed(f"{story} You returned {server_said(reply)}, not the last reply the server sent.",
               hint="Return the reply send() gave you for the last frame.")
        return False
    return True
