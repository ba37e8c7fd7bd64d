"""Checks for exercise 11: turn a 2025-11-25 session into 2026-07-28 requests that get the same answers."""

import copy
from functools import lru_cache

from mcpwire import frames
from mcpwire.stdio import StdioWire
from .attempt import attempt, missing
from .servers import REPLY_WAIT_S, STARTUP_WAIT_S
from .verdict import failed, not_done, passed, server_said, short

HANDSHAKE = ("initialize", "notifications/initialized")
NO_ID = object()  # a notification's place in a list of ids: unlike None, no id can equal it
ENVELOPE_FIELDS = ("resultType", "_meta", "ttlMs", "cacheScope")  # what a modern result adds to a legacy one

LEGACY_SESSION = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "notes-app", "version": "2.1.0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "search_notes", "arguments": {"query": "spindle", "limit": 2},
                "_meta": {"progressToken": "search-3"}}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled",
     "params": {"requestId": 3, "reason": "The user typed a new query."}},
    {"jsonrpc": "2.0", "id": "read-1", "method": "tools/call",
     "params": {"name": "read_note", "arguments": {"note_id": "spindle-density"}}},
    {"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "notes://index"}},
]
"""A legacy client's session as it wrote it: the handshake, then four requests and a cancel.

The search already has a _meta (its progressToken) and the cancel is a notification outside the handshake:
a translation must merge the envelope into the one and keep the other.
"""

OTHER_SESSION = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {"sampling": {}},
                "clientInfo": {"name": "field-notes", "version": "0.3.1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "prompts/list"},
]
"""A second session, so an envelope copied from the first one shows."""

# initialize frames for the first task, and the envelope each one should give
INITIALIZE_CASES = [
    LEGACY_SESSION[0],
    {"jsonrpc": "2.0", "id": "hello", "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "old-cli", "version": "0.9"}}},
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {"form": {}}, "experimental": {"notes": {}}},
                "clientInfo": {"name": "lab-desktop", "version": "4.0.0", "title": "Labor-Desktop (Zürich) – Schlaf"}}},
]


def expected_envelope(initialize):
    params = initialize["params"]
    return {
        frames.PROTOCOL_VERSION_KEY: frames.PROTOCOL_VERSION,
        frames.CLIENT_CAPABILITIES_KEY: params["capabilities"],
        frames.CLIENT_INFO_KEY: params["clientInfo"],
    }


def check_envelope_from_initialize(envelope_from):
    """envelope_from(initialize) must give the 2026-07-28 `_meta` that says what the initialize said."""
    if missing(envelope_from):
        not_done("define envelope_from(initialize) first.")
        return
    for initialize in INITIALIZE_CASES:
        outcome = attempt(envelope_from, copy.deepcopy(initialize))
        if outcome.not_done:
            not_done("envelope_from still raises NotImplementedError. Return the _meta dict.")
            return
        if outcome.error:
            failed(f"envelope_from raised {outcome.error_text} for {frames.dumps(initialize)}",
                   hint="Everything you need is in initialize[\"params\"].")
            return
        if not _judge_envelope(initialize, outcome.value):
            return
    passed("envelope_from moved what three initialize requests said once into the envelope every 2026-07-28 "
           "request carries: version 2026-07-28, the same capabilities, the same clientInfo.")


def _judge_envelope(initialize, meta):
    said = frames.dumps(initialize)
    if not isinstance(meta, dict):
        failed(f"envelope_from returned {short(meta)} for {said}; return the _meta dict.")
        return False
    if "_meta" in meta or "params" in meta:
        failed(f"envelope_from returned {short(meta)}: that is a frame or params, not the _meta dict itself.",
               hint="Return only the inside: {\"io.modelcontextprotocol/protocolVersion\": ..., ...}.")
        return False
    wanted = expected_envelope(initialize)
    version = meta.get(frames.PROTOCOL_VERSION_KEY)
    if version is None and "protocolVersion" in meta:
        failed(f"For {said} your envelope has the key 'protocolVersion' and no {frames.PROTOCOL_VERSION_KEY}.",
               hint="Envelope keys carry the io.modelcontextprotocol/ prefix; a server reads only those.")
        return False
    if version != frames.PROTOCOL_VERSION:
        hint = (f"The legacy version {version!r} belongs to the handshake. A request that names it in _meta "
                "gets -32022 from a 2026-07-28 server.") if version == initialize["params"]["protocolVersion"] else (
                f"Set {frames.PROTOCOL_VERSION_KEY} to {frames.PROTOCOL_VERSION!r}.")
        failed(f"For {said} your envelope names the version {version!r}.", hint=hint)
        return False
    for key, label in ((frames.CLIENT_CAPABILITIES_KEY, "capabilities"), (frames.CLIENT_INFO_KEY, "clientInfo")):
        if meta.get(key) != wanted[key]:
            had = f"has {key} = {short(meta[key])}" if key in meta else f"has no {key}"
            failed(f"For {said} your envelope {had}; the initialize declared {short(wanted[key])}.",
                   hint=f"Copy params[\"{label}\"] of the initialize as it is: what a legacy client said once, "
                        "a modern one says on every request.")
            return False
    extra = sorted(set(meta) - set(wanted))
    if extra:
        failed(f"Your envelope has keys the initialize said nothing about: {extra}.",
               hint="Three keys: protocolVersion, clientCapabilities, clientInfo, each with the "
                    "io.modelcontextprotocol/ prefix.")
        return False
    return True


def check_translation(translate):
    """translate(legacy_frames) must give 2026-07-28 frames that a modern server answers as the legacy one did."""
    if missing(translate):
        not_done("define translate(legacy_frames) first.")
        return
    given = copy.deepcopy(LEGACY_SESSION)
    outcome = attempt(translate, given)
    if outcome.not_done:
        not_done("translate still raises NotImplementedError. Return the list of 2026-07-28 frames.")
        return
    if outcome.error:
        failed(f"translate raised {outcome.error_text}", hint=_hint_for_crash(outcome.error))
        return
    modern = outcome.value
    if not _judge_frames(modern):
        return
    requests = [frame for frame in modern if "id" in frame]
    if given != LEGACY_SESSION:
        changed = next(new for new, old in zip(given, LEGACY_SESSION) if new != old)
        failed(f"translate changed the legacy frames it was given: one of them is now {short(changed)}",
               hint="Build the new frames from copies (copy.deepcopy), so the legacy session stays as the client wrote it.")
        return
    legacy_answers = _legacy_answers()
    modern_answers = _answers(modern, _modern_server)
    for frame in requests:
        legacy_reply, reply = legacy_answers[_key(frame["id"])], modern_answers[_key(frame["id"])]
        if not _judge_answer(frame, legacy_reply, reply):
            return
    if not _judge_other_session(translate):
        return
    kept = [f for f in LEGACY_SESSION if f["method"] not in HANDSHAKE]
    added = sum(len(frames.dumps(new)) - len(frames.dumps(old)) for new, old in zip(modern, kept))
    dropped = sum(len(frames.dumps(f)) + 1 for f in LEGACY_SESSION if f["method"] in HANDSHAKE)
    passed(f"A 2026-07-28 server gave your {len(requests)} requests the same answers the legacy session got "
           f"({', '.join(_label(f) for f in requests)}), and the cancel went along. The envelopes added {added} "
           f"bytes; the handshake lines you dropped were {dropped}.")


def _hint_for_crash(error):
    """Which frame of the session the error most likely came from."""
    if (isinstance(error, KeyError) and error.args == ("params",)) or "NoneType" in str(error):
        return "tools/list has no params in the legacy session: create them before adding _meta."
    if isinstance(error, TypeError) and "not supported between instances" in str(error):
        return ("The ids are of two JSON types (2 and \"read-1\"), which Python cannot order: keep the frames in "
                "the order they came, without sorting or comparing ids.")
    return "Run translate(checks.LEGACY_SESSION) on its own and read the traceback."


def _judge_frames(modern):
    if not isinstance(modern, list) or not all(isinstance(f, dict) for f in modern):
        failed(f"translate returned {short(modern)}; return a list of frames (dicts).")
        return False
    kept = [f for f in modern if f.get("method") in HANDSHAKE]
    if kept:
        failed(f"Your frames still hold {kept[0].get('method')}: {short(kept[0])}",
               hint="2026-07-28 has no handshake. As the first line a stdio process reads, initialize would "
                    "make it serve the legacy protocol for good, and it would refuse every enveloped request "
                    "with -32600. Drop initialize and notifications/initialized.")
        return False
    kept = [f for f in LEGACY_SESSION if f["method"] not in HANDSHAKE]
    gone = [f for f in kept if "id" not in f and not any(m.get("method") == f["method"] for m in modern)]
    if gone:
        failed(f"Your frames leave out {gone[0]['method']}: {frames.dumps(gone[0])}",
               hint="Drop the handshake (initialize and notifications/initialized), and only the handshake: "
                    "another legacy notification still means something to a 2026-07-28 server, so it goes on.")
        return False
    if [f.get("id", NO_ID) for f in modern] != [f.get("id", NO_ID) for f in kept]:
        mine, theirs = [f.get("id") for f in modern if "id" in f], [f["id"] for f in kept if "id" in f]
        retyped = list(map(str, mine)) == list(map(str, theirs))
        failed(f"Your frames have the ids {mine}; the legacy ones had {theirs}, and the notification none.",
               hint=("The same numbers, of another JSON type: 2 and \"2\" are different ids (JSON-RPC), and a "
                     "reply comes back under the id's own type. Copy each id as it is." if retyped else
                     "Keep each frame's id, or its lack of one, and their order: the answers are matched to the "
                     "legacy ones by id."))
        return False
    return all(_kept_as_it_was(new, old) for new, old in zip(modern, kept))


def _kept_as_it_was(new, old):
    name = f"Request {old['id']!r}" if "id" in old else f"Your {old['method']}"
    if new.get("jsonrpc") != "2.0" or new.get("method") != old["method"]:
        failed(f"{name} became {short(new)}; it was {frames.dumps(old)}.",
               hint="Keep jsonrpc, id and method as they were.")
        return False
    params = new.get("params")
    old_params = old.get("params") or {}
    lost = {k: v for k, v in old_params.items()
            if k != "_meta" and (not isinstance(params, dict) or params.get(k) != v)}
    if lost:
        failed(f"{name} lost its params {short(lost)}: you sent {short(params)}.",
               hint="Add _meta next to the params that are there; everything else stays as it was.")
        return False
    meta = params.get("_meta") if isinstance(params, dict) else None
    for key, value in (old_params.get("_meta") or {}).items():
        if not isinstance(meta, dict) or meta.get(key) != value:
            failed(f"{name} lost _meta.{key} ({frames.dumps(value)}): its _meta is now {short(meta)}.",
                   hint="Put the envelope's keys into the _meta that is there: a legacy request may carry one "
                        "already, and what it holds stays.")
            return False
    return True


def _judge_answer(frame, legacy_reply, reply):
    label = _label(frame)
    if reply is None:
        failed(f"The 2026-07-28 server did not answer your {label} within {REPLY_WAIT_S} s: {short(frame)}",
               hint="Is it one JSON object with jsonrpc, id, method and params?")
        return False
    if not reply.ok:
        failed(f"The 2026-07-28 server refused your {label}: {short(frame)}",
               server=server_said(reply.message), hint=_envelope_hint(frame))
        return False
    meta = (frame.get("params") or {}).get("_meta") or {}
    declared = LEGACY_SESSION[0]["params"]["capabilities"]
    if meta.get(frames.CLIENT_CAPABILITIES_KEY) != declared:
        failed(f"Your {label} declares the capabilities {short(meta.get(frames.CLIENT_CAPABILITIES_KEY))}; the "
               f"legacy client declared {short(declared)} in its initialize.",
               hint="What the client said once in initialize, it now says in every request: use envelope_from.")
        return False
    info = LEGACY_SESSION[0]["params"]["clientInfo"]
    if meta.get(frames.CLIENT_INFO_KEY) != info:
        said = f"says {frames.CLIENT_INFO_KEY} = {short(meta[frames.CLIENT_INFO_KEY])}" if frames.CLIENT_INFO_KEY in meta \
            else f"carries no {frames.CLIENT_INFO_KEY}"
        failed(f"Your {label} {said}; the legacy client said {short(info)} in its initialize.",
               hint="The server answered anyway, but a 2026-07-28 client SHOULD say who it is on every request: "
                    "build the envelope with envelope_from.")
        return False
    got = {k: v for k, v in reply.result.items() if k not in ENVELOPE_FIELDS}
    if got != legacy_reply.result:
        failed(f"Your {label} got a different answer than the legacy one: {short(got)}",
               server=f"to the legacy request: {short(legacy_reply.result)}",
               hint="Same method, same params (only _meta added): compare your frame with the legacy one.")
        return False
    return True


def _judge_other_session(translate):
    """The envelope must come from the session's own initialize, not from the one printed in the exercise."""
    outcome = attempt(translate, copy.deepcopy(OTHER_SESSION))
    if outcome.error or not isinstance(outcome.value, list) or not outcome.value:
        failed(f"translate gave {short(outcome.error_text if outcome.error else outcome.value)} for another session: "
               f"{frames.dumps(OTHER_SESSION[0])} and one request.",
               hint="It should work for any legacy session, not only the one printed above.")
        return False
    wanted = expected_envelope(OTHER_SESSION[0])
    meta = ((outcome.value[-1] if isinstance(outcome.value[-1], dict) else {}).get("params") or {}).get("_meta")
    if meta != wanted:
        failed(f"For another session, whose initialize says {frames.dumps(OTHER_SESSION[0]['params'])}, your request "
               f"carries the envelope {short(meta)}.",
               hint="Build the envelope from the session's own initialize, not from the one printed above.")
        return False
    return True


def _envelope_hint(frame):
    if "_meta" in frame:
        return "_meta goes inside params: frame[\"params\"][\"_meta\"], not next to them."
    meta = (frame.get("params") or {}).get("_meta")
    if not isinstance(meta, dict):
        return "Every 2026-07-28 request carries params._meta: the envelope from your envelope_from."
    version = meta.get(frames.PROTOCOL_VERSION_KEY)
    if version != frames.PROTOCOL_VERSION:
        return f"The envelope names {version!r}; a 2026-07-28 request names {frames.PROTOCOL_VERSION!r}."
    return "Both io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities are required."


def _label(frame):
    name = (frame.get("params") or {}).get("name")
    return f"{frame.get('method')} {name}" if name else str(frame.get("method"))


def _key(request_id):
    return (type(request_id), request_id)  # 1 and "1" are different ids


def _legacy_server():
    return StdioWire.labserver(timeout=REPLY_WAIT_S)


def _modern_server():
    wire = StdioWire.labserver(timeout=REPLY_WAIT_S)
    wire.request("server/discover", id="check-discover", timeout=STARTUP_WAIT_S)  # the first request fixes the era
    return wire


@lru_cache(maxsize=1)
def _legacy_answers():
    """The legacy session's answers: the same on every run, so one server run is enough."""
    return _answers(LEGACY_SESSION, _legacy_server)


def _answers(session, start):
    """{id: Reply or None} for every request of the session, on a fresh server."""
    answers = {}
    with start() as wire:
        for frame in session:
            if "id" in frame:
                wait = STARTUP_WAIT_S if len(wire.transcript) == 0 else REPLY_WAIT_S
                answers[_key(frame["id"])] = wire.send_raw(frames.dumps(frame), timeout=wait)
            else:
                wire.send(frame)
    return answers
