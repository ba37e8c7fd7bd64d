"""The fault lab (exercise 03): eight broken HTTP requests, the learner's predictions, the real answers.

Each fault is a request as it goes on the wire. `show_faults()` prints them;
`check_fault_lab(predictions)` sends them to the lab server over Streamable HTTP
and scores each (HTTP status, JSON-RPC error code) prediction, explaining every miss.
"""

import json
import time
from dataclasses import dataclass, field

from mcpwire import frames, headers as header_rules
from mcpwire.http11 import Connection
from .attempt import missing
from .servers import REPLY_WAIT_S, http_lab
from .verdict import failed, not_done, passed



@dataclass(frozen=True)
class Fault:
    name: str
    broken: str  # what is wrong with the request, in a few words
    body: str  # empty for a GET
    overrides: dict = field(default_factory=dict)  # over the headers derived from the body
    verb: str = "POST"
    why: str = ""  # why the server answers as it does, shown when a prediction misses

    def headers(self):
        try:
            frame = json.loads(self.body) if self.body else {}
        except ValueError:
            frame = {}
        derived = header_rules.derive(frame if isinstance(frame, dict) else {})
        if self.verb == "GET":
            derived = {name: value for name, value in derived.items() if name != "Content-Type"}
        return header_rules.merge(derived, self.overrides)

    def wire_text(self):
        """The request as it is written, without Host and Content-Length (they depend on the server)."""
        lines = [f"{self.verb} /mcp HTTP/1.1", *(f"{n}: {v}" for n, v in self.headers().items()), ""]
        return "\n".join(lines + ([self.body] if self.body else []))


def _frame(method, params=None, **kwargs):
    return frames.dumps(frames.request(method, params, id=1, **kwargs))


FAULTS = [
    Fault("method-header-mismatch", "the Mcp-Method header names another method than the body",
          _frame("server/discover"), {"Mcp-Method": "tools/list"},
          why="A Streamable HTTP server compares every routing header with the body. Any difference is "
              "-32020 HeaderMismatch, with status 400."),
    Fault("get-instead-of-post", "a GET, the way a legacy client opened its event stream", "",
          {"Accept": "text/event-stream"}, verb="GET",
          why="A 2026-07-28 endpoint takes only POST: the spec says a server serving only this revision answers "
              "GET (and DELETE) with 405 Method Not Allowed, and HTTP puts the methods it takes in an Allow "
              "header (\"Allow: POST\"). There is no JSON-RPC body."),
    Fault("no-envelope", "params has no _meta envelope", _frame("tools/list", {}, meta=None),
          why="The envelope keys are required on every request, so the params are invalid: -32602. For this "
              "case the spec requires status 400; for other -32602 errors it names no status, and 400 is the "
              "SDK's choice."),
    Fault("foreign-origin", "the Origin header names a web page on another site",
          _frame("tools/list"), {"Origin": "http://evil.example"},
          why="The spec says a server checks Origin on every request and answers 403 when it is present and not "
              "allowed. It names DNS rebinding as the reason; the same check stops a page on another site that "
              "makes your browser POST here. The SDK answers 403 with the plain text \"Invalid Origin header\": "
              "no JSON-RPC at all (the spec allows an id-less JSON-RPC error there, and does not require one)."),
    Fault("unknown-method", "the method does not exist in 2026-07-28 (ping was removed)", _frame("ping"),
          why="An unknown method is -32601 Method not found, and on HTTP it is a 404. The JSON body is what "
              "tells it apart from a plain 404 of a server that is not there."),
    Fault("future-version", "the body and the header both name version 2027-01-01",
          _frame("server/discover", meta={frames.PROTOCOL_VERSION_KEY: "2027-01-01"}),
          why="Header and body agree, so there is no mismatch; the server does not serve that version: "
              "-32022 with the versions it does serve in error.data.supported, status 400."),
    Fault("no-version-header", "the MCP-Protocol-Version header is left out",
          _frame("server/discover"), {"MCP-Protocol-Version": None},
          why="SDK 2.3.0 routes on this header alone: without it the POST goes to the legacy (handshake-era) "
              "transport, which wants a session id first: -32600 \"Missing session ID\" with status 400 (the "
              "spec names no status for -32600; 400 is the SDK's mapping). The spec asks a server that does not "
              "serve clients older than 2025-06-18 to refuse it as a missing required header: 400 with -32020."),
    Fault("not-json", "the body is cut off before its closing brace", _frame("tools/list")[:-1],
          {"Mcp-Method": "tools/list"},
          why="Bytes that do not parse as JSON are JSON-RPC's -32700 Parse error, with id null because the id "
              "could not be read (JSON-RPC writes null; MCP's schema would leave the id out). The spec names no "
              "HTTP status for -32700; 400 is the SDK's mapping."),
]
FAULT_NAMES = [fault.name for fault in FAULTS]


def show_faults():
    """Print the eight broken requests, exactly as they go on the wire."""
    for number, fault in enumerate(FAULTS, start=1):
        print(f"{number}. {fault.name}: {fault.broken}")
        print("\n".join(f"   {line}".rstrip() for line in fault.wire_text().splitlines()))
        print()


@dataclass
class Answer:
    status: int
    code: int | None
    shown: str  # the reply in a few words: its body, or what the headers say when there is none


def send_fault(wire, fault):
    """Send one fault to the server behind `wire` and read its answer."""
    if fault.verb == "POST":
        reply = wire.send_raw(fault.body, fault.overrides, timeout=REPLY_WAIT_S)
        return _answer(reply.status, reply.raw, reply.headers or {})
    connection = Connection(wire.url)
    try:
        head = [f"GET {connection.path} HTTP/1.1", f"Host: {connection.host_header}",
                *(f"{n}: {v}" for n, v in fault.headers().items())]
        connection.send(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"), REPLY_WAIT_S)
        deadline = time.monotonic() + REPLY_WAIT_S
        response = connection.read_head(deadline)
        connection.read_body(response, deadline)
    finally:
        connection.close()
    return _answer(response.status, bytes(response.body), {k.lower(): v for k, v in response.headers})


def _answer(status, body, headers):
    text = body.decode("utf-8", "replace")
    try:
        message = json.loads(text)
    except ValueError:
        message = None
    error = message.get("error") if isinstance(message, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if text:
        shown = text if message is not None else f"the plain text {text!r}"
    else:
        shown = "an empty body" + (f" with Allow: {headers['allow']}" if "allow" in headers else "")
    return Answer(status, code, shown)


def _as_pair(prediction):
    """(status, code) from a learner's prediction, or None when it is not one."""
    if not isinstance(prediction, (tuple, list)) or len(prediction) != 2:
        return None
    status, code = prediction
    if isinstance(status, bool) or not isinstance(status, int):
        return None
    if code is not None and (isinstance(code, bool) or not isinstance(code, int)):
        return None
    return status, code


def _words(status, code):
    return f"{status} {'—' if code is None else code}"


def check_fault_lab(predictions, lab=None):
    """Send the eight faults and score predictions {name: (status, code or None)}."""
    if missing(predictions) or not isinstance(predictions, dict):
        not_done("predictions is a dict {fault name: (HTTP status, JSON-RPC code or None)}.")
        return
    unknown = [name for name in predictions if name not in FAULT_NAMES]
    if unknown:
        failed(f"There is no fault called {', '.join(map(repr, unknown))}.",
               hint=f"The names are: {', '.join(FAULT_NAMES)}.")
        return
    open_ = [name for name in FAULT_NAMES if missing(predictions.get(name)) or predictions.get(name) == (None, None)]
    if open_:
        not_done(f"predict {len(open_)} more: {', '.join(open_)}. The answers are shown once all eight are in.")
        return
    malformed = [name for name in FAULT_NAMES if _as_pair(predictions[name]) is None]
    if malformed:
        failed(f"These predictions are not (status, code) pairs: "
               f"{', '.join(f'{n} = {predictions[n]!r}' for n in malformed)}.",
               hint="Write each as a pair of integers, like (400, -32602), or (403, None) when the body is not "
                    "a JSON-RPC error. A list [400, -32602] is fine too.")
        return
    with http_lab(lab) as wire:
        answers = {fault.name: send_fault(wire, fault) for fault in FAULTS}
    rows, misses = [f"{'fault':<24} {'you predicted':<15} the server answered"], []
    for fault in FAULTS:
        guess, real = _as_pair(predictions[fault.name]), answers[fault.name]
        right = guess == (real.status, real.code)
        rows.append(f"{fault.name:<24} {_words(*guess):<15} {_words(real.status, real.code):<20} "
                    f"{'✓' if right else '✗'}")
        if not right:
            misses.append(f"  {fault.name}: you predicted {_words(*guess)}; the server answered {real.status} "
                          f"with {real.shown}.\n    Why: {fault.why}")
    print("\n".join(rows))
    score = f"{len(FAULTS) - len(misses)} of {len(FAULTS)} predictions right."
    if misses:
        failed(f"{score} The misses:\n" + "\n".join(misses))
    else:
        passed(score)
