"""Checks for exercise 24: the learner's HTTP server, run as a real process and sent the requests a client may send.

Each case is one POST, the rule it tests with its source, and what the rule asks for: an HTTP status with a JSON-RPC
error code, or a result of a kind. A check starts `serve_http.py` from the learner's folder once, sends its cases one
at a time, and explains the first case the server gets wrong. The last check hands the server to the official
conformance suite, and names every check of it that failed or warned, by the suite's own id and message.

Where the two judge the same rule, the kit's checks are the stricter: the suite accepts any JSON-RPC error for a
tampered requestState ("-32602 or similar") and only warns when a header mismatch comes back with another code than
-32020; the kit asks for the code and the status the spec and the lesson name, the data.reason of each refused
state, what seal carried back from open_state, and also for what the suite does not try (a state replayed on another
tool, a state of another process, a tag changed in its last 16 bytes, a resources/read named by its URI). What no
reply can show, it sees by calling seal and open_state directly under a clock it sets (the expiry to the second, the
tag's HMAC-SHA256, arguments bound in any key order), and by reading sealed.py for compare_digest.
"""

import ast
import base64
import hashlib
import json
import os
import re
import string
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from mcpwire import HttpWire, frames, process, suite

from .compiles import syntax_problem
from .verdict import failed, not_done, passed, short

SPEC = "https://modelcontextprotocol.io/specification/2026-07-28"
VERSION_HEADER = f"Streamable HTTP's protocol version header ({SPEC}/basic/transports/streamable-http#protocol-version-header)"
STANDARD_HEADERS = f"Streamable HTTP's standard headers ({SPEC}/basic/transports/streamable-http#standard-request-headers)"
VALIDATION = f"Streamable HTTP's server validation ({SPEC}/basic/transports/streamable-http#server-validation)"
ENCODING = f"Streamable HTTP's value encoding ({SPEC}/basic/transports/streamable-http#value-encoding)"
CASES_RULE = f"Streamable HTTP's case sensitivity ({SPEC}/basic/transports/streamable-http#case-sensitivity)"
ENVELOPE = f"MCP's per-request _meta ({SPEC}/basic/index#meta)"
VERSIONS = f"MCP's version negotiation ({SPEC}/basic/versioning#protocol-version-negotiation)"
MRTR = f"MRTR's server requirements ({SPEC}/basic/patterns/mrtr#server-requirements-basic-workflow)"
OWS = "RFC 9110, 5.5: white space around a field value is not part of it"
BASE64_CASE = ("the kit's reading: the spec's value encoding decodes the sentinel, and in Base64 (RFC 4648, 4) an upper- "
               "and a lower-case letter are different digits")
OTHER_METHODS = ("the kit's reading: the spec requires Mcp-Name on tools/call, prompts/get and resources/read, and says "
                 "nothing of it on other methods")
START_WAIT_S = 30.0  # a loaded machine starts Python slowly
REPLY_WAIT_S = 10.0
# Cases sent at once: each is judged on its own reply, and http.server writes a reply's head and body apart, so one
# POST at a time waits out TCP's delayed acknowledgment (about 40 ms) once per case.
PARALLEL_POSTS = 8
CAN_ASK = {"io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
YES = {"confirm": {"action": "accept", "content": {"ok": True}}}
# An altered string may fail its integrity check or not even decode, depending on where the change falls.
ALTERED = {"tampered", "malformed"}
# What the round trip asks seal to carry: nested, with text that is not ASCII, and JSON's null.
CARRIED = {"asked": ["confirm"], "round": 2, "note": "café", "none": None}
SUITE_SCENARIOS = ["http-header-validation", "dns-rebinding-protection", "input-required-result-basic-elicitation",
                   "input-required-result-request-state", "input-required-result-tampered-state",
                   "input-required-result-validate-input"]
# The functions the exercise leaves to the learner, with the task that asks for each.
TASKS = {"check": ("mirror.check", 1), "decoded": ("mirror.decoded", 1), "seal": ("sealed.seal", 2),
         "open_state": ("sealed.open_state", 2)}


def shout(id, name="shout"):
    return frames.request("tools/call", {"name": name, "arguments": {"text": "hi"}}, id=id)


def sentinel(text):
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


# (frame, header overrides (None drops one), (status, error code or "result"), why, source)
HEADER_CASES = [
    (shout(1), {}, (200, "result"), "every header says what the body says", STANDARD_HEADERS),
    (shout(2), {"MCP-Protocol-Version": None}, (400, -32020),
     "a request without MCP-Protocol-Version, from a server that serves no client older than 2025-06-18",
     VERSION_HEADER),
    (shout(3), {"MCP-Protocol-Version": "2025-11-25"}, (400, -32020),
     "the version header says 2025-11-25, the body's _meta 2026-07-28", VERSION_HEADER),
    (frames.request("server/discover", id=4, meta={"io.modelcontextprotocol/protocolVersion": "2025-11-25"}),
     {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}, (400, -32020),
     "the body says 2025-11-25, the header 2026-07-28", VERSION_HEADER),
    (frames.request("server/discover", id=5, meta={"io.modelcontextprotocol/protocolVersion": "2099-01-01"}), {},
     (400, -32022), "header and body agree on a version this server does not speak: the envelope's -32022, which "
     "names the versions it does speak, not a header mismatch", VERSIONS),
    (frames.request("server/discover", id=31, meta={"io.modelcontextprotocol/protocolVersion": "2099-01-01"}),
     {"Mcp-Method": "tools/list"}, (400, -32022),
     "a revision this server does not speak is judged first: its header rules are not this revision's, so the "
     "envelope's -32022, not a header mismatch (task 1's order)", VERSIONS),
    (frames.request("server/discover", id=6, meta=None), {}, (400, -32602),
     "a body with no _meta has no version for the header to contradict: the envelope's -32602 (the suite's "
     "server-stateless checks the same)", ENVELOPE),
    (shout(7), {"Mcp-Method": None}, (400, -32020), "Mcp-Method is required on every request", STANDARD_HEADERS),
    (shout(8), {"Mcp-Method": "tools/list"}, (400, -32020), "Mcp-Method says another method than the body",
     VALIDATION),
    (shout(9), {"Mcp-Method": "TOOLS/CALL"}, (400, -32020), "header values are case-sensitive", CASES_RULE),
    (shout(10), {"Mcp-Method": "  tools/call\t"}, (200, "result"),
     "white space around a header value is HTTP's, not the value's", OWS),
    (shout(11), {"Mcp-Method": None, "mcp-method": "tools/call", "Mcp-Name": None, "MCP-NAME": "shout"},
     (200, "result"), "header names match in any case", CASES_RULE),
    (shout(12), {"Mcp-Name": None}, (400, -32020), "tools/call needs Mcp-Name", STANDARD_HEADERS),
    (shout(13), {"Mcp-Name": "count_words"}, (400, -32020), "Mcp-Name names another tool than params.name",
     VALIDATION),
    (shout(14), {"Mcp-Name": " shout "}, (200, "result"), "white space around Mcp-Name is not part of it", OWS),
    (shout(15), {"Mcp-Name": sentinel("shout")}, (200, "result"),
     "Mcp-Name in the Base64 sentinel is decoded before it is compared", ENCODING),
    (shout(16, "café"), {}, (400, -32602),
     "a name that is not ASCII travels as =?base64?...?=: decoded, it matches, and the tool call answers (an unknown "
     "tool)", ENCODING),
    (shout(17, "café"), {"Mcp-Name": sentinel("cafe")}, (400, -32020),
     "a sentinel that decodes to another name is a mismatch", ENCODING),
    (shout(18), {"Mcp-Name": "=?base64?not base64!?="}, (400, -32020),
     "a sentinel that is not Base64 is a malformed header", VALIDATION),
    (shout(19), {"Mcp-Name": "=?base64?" + sentinel("shout")[9:-2].lower() + "?="}, (400, -32020),
     "Base64 is case-sensitive: the same letters in lower case decode to other bytes", BASE64_CASE),
    (frames.request("resources/read", {"uri": "notes://one"}, id=20), {}, (404, -32601),
     "resources/read carries its URI in Mcp-Name, not a name: the headers pass, and this server has no such method",
     STANDARD_HEADERS),
    (frames.request("prompts/get", {"name": "summary"}, id=21), {}, (404, -32601),
     "prompts/get carries params.name in Mcp-Name: the headers pass, and this server has no such method",
     STANDARD_HEADERS),
    (frames.request("tools/list", id=22), {"Mcp-Name": "shout"}, (200, "result"),
     "tools/list has no name to mirror: an Mcp-Name on it is not a reason to refuse", OTHER_METHODS),
    (frames.request("prompts/get", {"name": "summary"}, id=24), {"Mcp-Name": "other"}, (400, -32020),
     "prompts/get's Mcp-Name must mirror params.name too, whether or not the server has the method", VALIDATION),
    (frames.request("resources/read", {"uri": "notes://one"}, id=25), {"Mcp-Name": "notes://two"}, (400, -32020),
     "resources/read's Mcp-Name must mirror params.uri", VALIDATION),
    (shout(26), {"Mcp-Name": "SHOUT"}, (400, -32020), "Mcp-Name is a header value: compared case-sensitively",
     CASES_RULE),
    (shout(27), {"Mcp-Name": "=?base64?/w==?="}, (400, -32020),
     "Base64 of bytes that are not UTF-8 is a malformed header (the server must answer it, not fail on it)", ENCODING),
    (shout(28), {"Mcp-Name": "=?base64?c2hv dXQ=?="}, (400, -32020),
     "Base64 with a space inside is not Base64: decode with validate=True", ENCODING),
    (shout(29), {"Mcp-Name": "=?base64?c2hvdXQ="}, (400, -32020),
     "without its ?= suffix the value is no sentinel: compared as it is, it is not 'shout'", ENCODING),
    (shout(30), {"Mcp-Name": "=?BASE64?c2hvdXQ=?="}, (400, -32020),
     "the sentinel's markers are case-sensitive and lowercase: =?BASE64? is no sentinel", ENCODING),
    (shout(32, "café"), {"Mcp-Name": "café"}, (400, -32020),
     "a name that is not ASCII, sent as it is instead of in the Base64 sentinel: a header value holds visible ASCII, "
     "space and tab only, so the client MUST encode it, and the raw value is a malformed header (header() refuses it)",
     ENCODING),
    (shout(33, "sh\x01out"), {"Mcp-Name": "sh\x01out"}, (400, -32020),
     "a name with a control character, sent as it is instead of in the Base64 sentinel: a malformed header "
     "(header() refuses it)", ENCODING),
    (shout(34), {"Mcp-Name": sentinel(" shout ")}, (400, -32020),
     "the sentinel holds ' shout ', spaces and all: white space inside the sentinel is the value's own (that is why a "
     "client encodes it), so it is not 'shout'", ENCODING),
    (shout(35, " shout "), {"Mcp-Name": sentinel(" shout ")}, (400, -32602),
     "a name with spaces around it travels in the sentinel: decoded, it matches, and the tool call answers (an "
     "unknown tool)", ENCODING),
    (shout(36), {"Mcp-Name": "=?base64? c2hvdXQ=?="}, (400, -32020),
     "the sentinel holds ' c2hvdXQ=', a space and then Base64: white space inside the sentinel is the value's own, so "
     "keep it, and Base64 decoded with validate=True refuses it: a malformed header", ENCODING),
    (frames.request("tools/call", {"arguments": {"text": "hi"}}, id=37), {"Mcp-Name": "shout"}, (400, (-32020, -32602)),
     "a tools/call without a name, with Mcp-Name: shout: the header names what the body does not have, a mismatch "
     "(-32020), or, let through, a call that names no tool (-32602); never a crash (read the field with params.get: "
     "a body may lack it)", VALIDATION),
    (frames.request("tools/list", id=38, meta={"io.modelcontextprotocol/protocolVersion": 20260728}),
     {"MCP-Protocol-Version": "2026-07-28"}, (400, -32602),
     "a body whose _meta version is not a string (the number 20260728) has no version for the header to contradict: "
     "the envelope's -32602 (task 1: compare only where the body has one as a string)", ENVELOPE),
    (frames.request("tools/call", {"name": 42, "arguments": {}}, id=39), {"Mcp-Name": "42"}, (400, -32020),
     "the body's name is the number 42 and Mcp-Name the text '42': they differ (compare the decoded header with the "
     "field as it is, never with str() of it)", VALIDATION),
    (shout(40, "??>"), {"Mcp-Name": "=?base64?Pz8-?="}, (400, -32020),
     "'Pz8-' is URL-safe Base64 of '??>', which Base64's standard alphabet writes 'Pz8+': the sentinel holds standard "
     "Base64 (RFC 4648, 4), so a '-' in it is a malformed header", ENCODING),
    ({"jsonrpc": "2.0", "id": 23, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
      "clientInfo": {"name": "old-client", "version": "1.0"}}}, {}, (400, -32020),
     "a 2025 client's initialize has no version header: refused by the header rules", VERSION_HEADER),
]


class Running:
    """The learner's serve_http.py as a process: its URL, a wire to it, and what it wrote on stderr."""

    def __init__(self, folder, **environment):
        self.folder = Path(folder)
        self.process = process.start([sys.executable, str(self.folder / "serve_http.py")],
                                     env={**os.environ, **environment})
        self.stdout, self.stderr = [], []
        printed = threading.Event()
        process.collect_lines(self.process.stdout, self.stdout, on_line=lambda line: printed.set())
        process.collect_lines(self.process.stderr, self.stderr)
        deadline = time.monotonic() + START_WAIT_S
        while not printed.wait(0.05):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError(f"serve_http.py printed no URL: {self.last_words()}")
        self.wire = HttpWire(self.stdout[0].strip(), timeout=REPLY_WAIT_S)

    def close(self):
        process.stop(self.process, eof_first=False)

    def last_words(self):
        text = "\n".join(self.stderr).strip()
        return text.splitlines()[-1] if text else "(nothing on stderr)"

    def stub(self, *replies):
        """The exercise's function whose NotImplementedError the server's stderr shows, if any. Given the replies to
        look at, None at once when none of them is a 500: only an exception the server did not expect makes one."""
        if replies and all(reply is not None and reply.status is not None and reply.status < 500 for reply in replies):
            return None
        seen_traceback = False
        for _ in range(20):  # the traceback is written before the reply; the reader thread may lag behind
            text = "\n".join(self.stderr) + "\n"
            if "NotImplementedError" in text:
                return next((name for name in TASKS if f", in {name}\n" in text), None)
            if seen_traceback:  # a traceback seen one read ago has all its lines by now: another exception
                return None
            seen_traceback = "Traceback" in text
            time.sleep(0.05)
        return None


def judge(reply, expect):
    """None when the reply is what `expect` asks for, else what is wrong with it. `expect` is (status, code or
    "result"), or (status, code, the data.reason values that are right)."""
    status, outcome, *reasons = expect
    message = reply.message if reply is not None else None
    said = f"HTTP {reply.status} {short(reply.text or '(no body)')}"
    if outcome == "result":
        if reply.status != 200 or not isinstance(message, dict) or "result" not in message:
            return f"{said}, where a result (HTTP 200) was due"
        return None
    error = message.get("error") if isinstance(message, dict) else None
    codes = outcome if isinstance(outcome, tuple) else (outcome,)
    if not isinstance(error, dict):
        return f"{said}, where HTTP {status} with error {' or '.join(map(str, codes))} was due"
    if error.get("code") not in codes:
        return f"{said}: error {error.get('code')}, where {' or '.join(map(str, codes))} was due"
    if reply.status != status:
        return f"{said}: the code is right, the status is not: HTTP {status} goes with {error.get('code')}"
    if reasons:
        reason = error["data"].get("reason") if isinstance(error.get("data"), dict) else None
        if reason not in reasons[0]:
            return f"{said}: data.reason {reason!r}, where {' or '.join(map(repr, sorted(reasons[0])))} was due"
    return None


def _missing(folder):
    if not (Path(folder) / "serve_http.py").exists():
        not_done(f"run the cells above first: {folder}/serve_http.py does not exist yet.")
        return True
    return False


def _started(folder, **environment):
    """The running server, or None once not_done or failed has said why it did not start (a module's cell not run
    yet, or a module that does not compile)."""
    problem = syntax_problem(folder)
    if problem:
        failed(f"Your server cannot start: {problem}.", hint="fix that line, run its cell again, then this check.")
        return None
    try:
        return Running(folder, **environment)
    except RuntimeError as failure:
        not_done(f"{failure}. Run every %%writefile cell above (tasks 1 and 2 too), then this check again.")
        return None


def _stub_verdict(name, own):
    where, task = TASKS[name]
    if name in own:
        not_done(f"{where} still raises NotImplementedError: write its body in task {task}'s cell, and run that cell again.")
    else:
        not_done(f"{where} (task {task}) still raises NotImplementedError, and this check needs it: finish task {task} first.")


def check_header_rules(folder="my_http_server"):
    """Task 1: mirror.check refuses every request whose headers do not say what its body says, and no other."""
    if _missing(folder):
        return
    server = _started(folder)
    if server is None:
        return
    try:
        replies = _all_at_once(lambda case: server.wire.send(case[0], case[1]), HEADER_CASES)
        for (frame, headers, expect, why, source), reply in zip(HEADER_CASES, replies):
            problem = judge(reply, expect)
            if problem is None:
                continue
            stub = server.stub(reply)
            if stub:
                return _stub_verdict(stub, ("check", "decoded"))
            shown = ", ".join(f"{name}: {value!r}" if value is not None else f"no {name}" for name, value in headers.items())
            return failed(f"{why} ({source}).", server=problem,
                          hint=f"the request was {frame['method']} with {shown or 'every header as the body says'}.",
                          more=_header_hint(expect, headers))
        passed(f"Your server refused and answered all {len(HEADER_CASES)} header cases as the rules ask.")
    finally:
        server.close()


def _all_at_once(send, cases):
    """send(case) for every case, in the cases' order, PARALLEL_POSTS at a time: the next batch is sent only once the
    caller has read every reply of this one, so a check that stops at a wrong reply sends at most a batch more. An
    exception is raised when its case's turn comes, as it would have been one case at a time."""
    def outcome(case):
        try:
            return send(case), None
        except Exception as error:  # whatever the wire raised: raised again in its turn
            return None, error

    cases = list(cases)
    with ThreadPoolExecutor(max_workers=PARALLEL_POSTS) as pool:
        for start in range(0, len(cases), PARALLEL_POSTS):
            for reply, error in pool.map(outcome, cases[start:start + PARALLEL_POSTS]):
                if error is not None:
                    raise error
                yield reply


def _header_hint(expect, headers):
    if any(value is not None and not all(" " <= character <= "~" or character == "\t" for character in value)
           for value in headers.values()):
        return ("read every header with the given header(), which refuses a value with a character other than visible "
                "ASCII, space and tab: such a name must come in the Base64 sentinel.")
    if expect[1] == -32020 or isinstance(expect[1], tuple) and -32020 in expect[1]:
        return "raise RpcError(-32020, ...) from mirror.check; serve_http.py turns it into HTTP 400."
    if expect[1] == "result":
        return ("mirror.check must let this request through: compare header values without the white space around "
                "them, read headers by name in any case (headers.get does), decode the sentinel first, and look "
                "for Mcp-Name only on tools/call, prompts/get and resources/read.")
    return "mirror.check must let this request through to the method, whose own error this is."


def _state_round(wire, params, id):
    return wire.request("tools/call", params, meta=CAN_ASK, id=id)


def check_request_state(folder="my_http_server"):
    """Task 2: sealed.seal and sealed.open_state: a state only this process can write, for one call, for a while."""
    if _missing(folder):
        return
    publish = {"name": "publish", "arguments": {"text": "one"}}
    server = _started(folder)
    if server is None:
        return
    # Another process of the same code, beside the server: it seals a state under a key of its own and calls seal
    # and open_state directly under a clock it sets.
    direct = _direct_calls(folder)
    try:
        first = _state_round(server.wire, publish, 1)
        stub = None if first.ok else server.stub(first)
        if stub:
            return _stub_verdict(stub, ("seal", "open_state"))
        state = first.result.get("requestState") if first.ok else None
        if not isinstance(state, str) or not state:
            return failed(f"publish's first round must come back input_required with a requestState string ({MRTR}).",
                          server=f"HTTP {first.status} {short(first.text)}",
                          hint="asking.call puts sealed.seal(...)'s return value in requestState.")
        report, stopped = _report_of(direct)
        sealing = stopped or _sealing_problem(report)
        if sealing is not None:
            problem, answered, hint = sealing
            return failed(problem, server=answered, hint=hint)
        # Nine states, not one: a state in standard Base64 fails the format only when its random tag holds a + or a /,
        # so one state would name the cause in some runs and leave it to a later case in others.
        format_problem = _format_problem([state] + [outcome.get("returned") for outcome in report["formats"]])
        if format_problem:
            return failed(format_problem[0], hint=format_problem[1])
        middle = len(state) // 2
        changed = state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1:]
        foreign = report["foreign"]
        forged = _forged(state, {"text": "one"}, {"text": "two"})
        tag, payload = _layout(state)
        half_tag = "v1." + base64.urlsafe_b64encode(
            tag[:16] + bytes(byte ^ 0xFF for byte in tag[16:]) + payload).rstrip(b"=").decode()
        fixture = "test_input_required_result_request_state"
        twin_state = _state_round(server.wire, {"name": fixture, "arguments": {}}, 3).result.get("requestState")
        cases = [
            ({**publish, "inputResponses": YES, "requestState": state}, (200, "result"),
             "the state this server sealed, sent back unchanged with the answer, completes the call"),
            ({**publish, "inputResponses": YES, "requestState": changed}, (400, -32602, ALTERED),
             "one character of the state changed: its integrity check must fail"),
            ({**publish, "inputResponses": YES, "requestState": state + "-TAMPERED"}, (400, -32602, ALTERED),
             "the suite's own tampering, text added at the end"),
            ({"name": "publish", "arguments": {"text": "two"}, "inputResponses": YES, "requestState": state},
             (400, -32602, {"other_request"}),
             "the state of publish('one') sent with publish('two'): the user confirmed another text"),
            ({"name": "test_input_required_result_tampered_state", "arguments": {}, "inputResponses": YES,
              "requestState": twin_state}, (400, -32602, {"other_request"}),
             f"the state of {fixture} sent to another tool with the same (empty) arguments: bind the tool's name"),
            ({**publish, "inputResponses": YES, "requestState": foreign}, (400, -32602, {"tampered"}),
             "a state sealed by another process of this server: each process has its own key, so an unsigned or "
             "fixed-key state fails here"),
            *([] if forged is None else [
                ({"name": "publish", "arguments": {"text": "two"}, "inputResponses": YES, "requestState": forged},
                 (400, -32602, {"tampered"}),
                 "the state's own tag kept, its payload rewritten for publish('two') with a later expiry: the tag must "
                 "cover the whole payload, or anyone can write a payload of their own"),
                ({**publish, "inputResponses": YES, "requestState": forged}, (400, -32602, {"tampered"}),
                 "the tag is verified first (task 2): the same rewritten payload sent back with publish('one') is "
                 "'tampered', since its tag does not verify, before anything its payload says is read")]),
            ({**publish, "inputResponses": YES, "requestState": half_tag}, (400, -32602, {"tampered"}),
             "the state with the last 16 bytes of its 32-byte tag changed: every byte of the tag must verify (a tag cut "
             "short and padded, or compared in part, lets those bytes be anything)"),
            ({**publish, "inputResponses": YES, "requestState": 5}, (400, -32602, {"malformed"}),
             "a requestState that is not a string"),
            ({**publish, "inputResponses": YES, "requestState": ""}, (400, -32602, {"malformed"}), "an empty requestState"),
            ({**publish, "inputResponses": YES, "requestState": "v1." + "A" * 80}, (400, -32602, ALTERED),
             "a requestState this server never wrote"),
        ]
        numbered = list(enumerate(cases, start=10))
        replies = _all_at_once(lambda case: _state_round(server.wire, case[1][0], case[0]), numbered)
        for (id, (params, expect, why)), reply in zip(numbered, replies):
            problem = judge(reply, expect)
            if problem is not None:
                stub = server.stub(reply)
                if stub:
                    return _stub_verdict(stub, ("seal", "open_state"))
                return failed(f"{why} ({MRTR}; data.reason as task 2 names it).", server=problem,
                              hint="open_state raises refused(reason, text), an RpcError -32602 whose data.reason says "
                                   "what failed (malformed, tampered, other_request or expired), for every state it "
                                   "cannot verify, and never another exception.")
        called = _direct_problem(report)
        if called is not None:
            problem, answered, hint = called
            return failed(problem, server=answered, hint=hint)
        if not _compares_in_constant_time(folder):
            return failed("open_state must compare the tag with hmac.compare_digest (task 2): == stops at the first "
                          "byte that differs, so how long a refusal takes tells an attacker how much of a forged tag "
                          "was right. No reply shows it, so the check reads sealed.py for a call to compare_digest.",
                          hint="if not hmac.compare_digest(tag, expected): raise refused(\"tampered\", ...)")
        # No count of the refused forms: two of them exist only for a payload the check can rewrite (a JSON object).
        passed("Your requestState is sealed: accepted once as issued, refused in every altered, replayed or foreign "
               "form and after its expiry, each with its data.reason; its tag is HMAC-SHA256 "
               "under KEY, compared with compare_digest; the same arguments in another key order are the same "
               "request; and what seal carried comes back from open_state.")
    finally:
        server.close()
        if direct.poll() is None:
            direct.kill()
            direct.wait()


def _layout(state):
    """(tag, payload) of a state in the format task 2 gives (v1., URL-safe Base64 of a 32-byte tag then the payload),
    or None when it is not in that format."""
    try:
        raw = base64.urlsafe_b64decode(state[3:] + "=" * (-len(state[3:]) % 4))
    except (ValueError, TypeError):
        return None
    return (raw[:32], raw[32:]) if state.startswith("v1.") and len(raw) > 32 else None


def _digest(arguments):
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _forged(state, arguments, other):
    """`state` with its tag kept and its JSON payload rewritten for `other` instead of `arguments` (each value that is
    digest(arguments) replaced) with a later expiry (each number an hour later); None when the payload is not a JSON
    object that holds digest(arguments)."""
    tag, payload = _layout(state)
    try:
        sealed = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(sealed, dict) or _digest(arguments) not in sealed.values():
        return None
    later = {key: _digest(other) if value == _digest(arguments) else value + 3600 if type(value) in (int, float)
             else value for key, value in sealed.items()}
    rewritten = tag + json.dumps(later, separators=(",", ":")).encode()
    return "v1." + base64.urlsafe_b64encode(rewritten).rstrip(b"=").decode()


# Run in a process of its own, where sealed.py is imported as it stands on disk, under a clock this script sets: the
# state is sealed at SEALED_AT, and opened again just before and just after the expiry task 2 gives.
SEALED_AT, LIFETIME_S = 1000.5, 300
EXPIRES = 1301  # SEALED_AT + LIFETIME_S, rounded up to a whole second
WHOLE_SECOND, SHORT_LIFETIME_S = 1000.0, 60  # then sealed.LIFETIME_S is set to 60, and a state sealed at 1000.0
DIRECT_CALLS = """
import base64, hashlib, hmac, json, sys, time
real = time.time
clock = [SEALED_AT]
time.time = lambda: clock[0]
time.time_ns = lambda: int(clock[0] * 10**9)
sys.path.insert(0, sys.argv[1])
import sealed
from jsonrpc import RpcError
carried = json.loads(sys.argv[2])

def outcome(step):
    try:
        return {"returned": step()}
    except RpcError as refusal:
        return {"refused": refusal.data.get("reason") if isinstance(refusal.data, dict) else None, "code": refusal.code}
    except Exception as error:
        return {"raised": f"{type(error).__name__}: {error}"}

def opened(state, arguments=None):
    return outcome(lambda: sealed.open_state(state, "tools/call", "publish", arguments or {"text": "one"}))

clock[0] = real()
report = {"foreign": outcome(lambda: sealed.seal("tools/call", "publish", {"text": "one"}, carried)).get("returned")}
clock[0] = SEALED_AT
report["seal"] = outcome(lambda: sealed.seal("tools/call", "publish", {"text": "one"}, carried))
state = report["seal"].get("returned")
if isinstance(state, str):
    report["now"] = opened(state)
    try:
        raw = base64.urlsafe_b64decode(state[3:] + "=" * (-len(state[3:]) % 4))
        report["tag"] = hmac.new(sealed.KEY, raw[32:], hashlib.sha256).digest() == raw[:32]
    except Exception:
        report["tag"] = False
    clock[0] = EXPIRES - 0.25
    report["before"] = opened(state)
    clock[0] = EXPIRES + 0.5
    report["after"] = opened(state)
    clock[0] = SEALED_AT
    # Eight lengths of payload, so that Base64 would need padding for most of them, and eight tags, so that the
    # standard alphabet's + and / would all but surely show.
    report["formats"] = [outcome(lambda: sealed.seal("tools/call", "publish", {"text": "one"}, "x" * size))
                         for size in range(8)]
    report["reordered"] = outcome(lambda: sealed.open_state(
        sealed.seal("tools/call", "publish", {"text": "one", "lang": "en"}, {"k": 1}), "tools/call", "publish",
        {"lang": "en", "text": "one"}))
    report["other_method"] = outcome(lambda: sealed.open_state(state, "prompts/get", "publish", {"text": "one"}))
    report["prefix"] = opened("v2." + state[3:])
    # Another lifetime, from a whole second: a lifetime written as 300, or int(...) + 1, shows here.
    sealed.LIFETIME_S = SHORT_LIFETIME_S
    clock[0] = WHOLE_SECOND
    short = outcome(lambda: sealed.seal("tools/call", "publish", {"text": "one"}, carried)).get("returned")
    clock[0] = WHOLE_SECOND + SHORT_LIFETIME_S - 0.25
    report["short_before"] = opened(short)
    clock[0] = WHOLE_SECOND + SHORT_LIFETIME_S + 0.5
    report["short_after"] = opened(short)
print(json.dumps(report, default=repr))
""".replace("SEALED_AT", repr(SEALED_AT)).replace("EXPIRES", repr(EXPIRES)).replace(
    "SHORT_LIFETIME_S", repr(SHORT_LIFETIME_S)).replace("WHOLE_SECOND", repr(WHOLE_SECOND))
CALLED = ("sealed.seal('tools/call', 'publish', {'text': 'one'}, carried), then sealed.open_state on the state, with the "
          "check's own clock")


def _said(outcome):
    if "returned" in outcome:
        return f"open_state returned {outcome['returned']!r}"
    if "refused" in outcome:
        return f"open_state refused it: error {outcome['code']}, data.reason {outcome['refused']!r}"
    return f"it raised {outcome.get('raised')}"


def _format_problem(states):
    """(what is wrong, the hint) for the first of `states` that is not in the format task 2 gives, or None."""
    unlike = next((text for text in states if not isinstance(text, str) or _layout(text) is None
                   or not re.fullmatch(r"v1\.[A-Za-z0-9_-]+", text)), None)
    if unlike is None:
        return None
    strange = sorted(set(str(unlike)[3:]) - set(string.ascii_letters + string.digits + "-_"))
    holds = f", holding {', '.join(map(repr, strange))}," if strange else ""
    return (f"the requestState {short(str(unlike))} (one of {len(states)} states seal wrote, for publish's first round "
            f"and called directly with carried values of 0 to 7 characters){holds} is not v1. "
            "followed by URL-safe Base64 without padding of a 32-byte tag and then the payload, the format task 2 "
            "gives.",
            "seal returns PREFIX + base64url(tag + payload): one Base64 text of the tag followed by the payload; the "
            "given base64url drops the padding and writes - and _ where standard Base64 writes + and /.")


def _direct_calls(folder):
    """The process that calls seal and open_state directly (DIRECT_CALLS), started; _report_of reads it."""
    return subprocess.Popen([sys.executable, "-c", DIRECT_CALLS, str(Path(folder).resolve()), json.dumps(CARRIED)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "MY_SERVER_STATE_LIFETIME_S": str(LIFETIME_S)})


def _report_of(direct):
    """(the report of the direct calls, None), or (None, (what is wrong, what stopped them, None))."""
    try:
        stdout, stderr = direct.communicate(timeout=START_WAIT_S)
    except subprocess.TimeoutExpired:
        return None, (f"{CALLED}: they had not returned after {START_WAIT_S:.0f} s.", None, None)
    try:
        return json.loads(stdout.strip().splitlines()[-1]), None
    except (IndexError, ValueError):
        lines = stderr.strip().splitlines()
        return None, (f"{CALLED}: the script stopped.", lines[-1] if lines else f"exit status {direct.returncode}",
                      None)


def _sealing_problem(report):
    """(what is wrong, what seal answered, None) when seal, called directly, does not return a string."""
    if "returned" not in report["seal"] or not isinstance(report["seal"]["returned"], str):
        return (f"seal returns the state as a string (task 2): {CALLED}.",
                _said(report["seal"]).replace("open_state", "seal"), None)
    return None


def _direct_problem(report):
    """(what is wrong, what the learner's functions answered, the hint) when seal and open_state, called directly,
    break a rule of task 2 the HTTP replies cannot show; None when they keep them all."""
    if report["now"].get("returned") != CARRIED:
        clock = ("open_state refused the state as expired the moment it was sealed: read the clock with time.time() in "
                 "seal and in open_state (the check sets it; time.monotonic() counts from another start).")
        return (f"open_state returns what seal carried (task 2): {CALLED}, carried={CARRIED!r}.", _said(report["now"]),
                clock if report["now"].get("refused") == "expired" else
                "put carried in the payload seal signs, and return it from open_state.")
    if not report["tag"]:
        return ("the state's tag is not HMAC-SHA256 under KEY of the payload after it (task 2): its 32 bytes must be "
                "hmac.new(KEY, payload, hashlib.sha256).digest(), not another hash (SHA-1), not a shorter tag padded "
                "out, not a tag over part of the payload.", None,
                "seal: tag = hmac.new(KEY, payload, hashlib.sha256).digest(); return PREFIX + base64url(tag + payload).")
    if report["before"].get("returned") != CARRIED:
        return (f"a state sealed at time.time() = {SEALED_AT} with LIFETIME_S = {LIFETIME_S} expires at {EXPIRES}, "
                f"{LIFETIME_S} s from then rounded up to a whole second (task 2), so at {EXPIRES - 0.25} it is still "
                "valid.", _said(report["before"]),
                "an expiry of int(...) ends the state up to a second early, and one of the exact time ends it at "
                f"{SEALED_AT + LIFETIME_S}: seal math.ceil(time.time() + LIFETIME_S).")
    if report["after"].get("refused") != "expired":
        return (f"a state presented after its expiry must be refused with data.reason 'expired' ({MRTR}: a short "
                f"expiry, checked on receipt): sealed at {SEALED_AT}, it expired at {EXPIRES}, and came back at "
                f"{EXPIRES + 0.5}.", _said(report["after"]),
                "open_state compares time.time() with the expiry it sealed (read the clock with time.time(): the "
                "check sets it).")
    if report["reordered"].get("returned") != {"k": 1}:
        return ("the same arguments with their keys in another order are the same request: sealed for {'text': "
                "'one', 'lang': 'en'} and opened for {'lang': 'en', 'text': 'one'}, the state must open (JSON objects "
                "have no order).", _said(report["reordered"]),
                "bind digest(arguments), the SHA-256 of canonical JSON (sorted keys), never str(arguments) or the "
                "arguments in the order they came.")
    if report["other_method"].get("refused") != "other_request":
        return ("the method is bound too (task 2): a state sealed for tools/call publish({'text': 'one'}) and opened "
                "for prompts/get with the same name and arguments must be refused with data.reason 'other_request' "
                "(no reply shows it: the server's asking.call always passes tools/call).", _said(report["other_method"]),
                "compare the method, the name and digest(arguments) that seal put in the payload with the three "
                "open_state is given.")
    if report["prefix"].get("refused") not in ALTERED:
        return ("a state that starts v2. instead of v1. (your state's own Base64 after it) is not one this server "
                "could have written: 'malformed' (task 2).", _said(report["prefix"]),
                "test that the state starts with PREFIX before you read the rest: state[3:] or removeprefix(PREFIX) "
                "alone skips that test.")
    short_end = WHOLE_SECOND + SHORT_LIFETIME_S
    if report["short_before"].get("returned") != CARRIED or report["short_after"].get("refused") != "expired":
        late = report["short_before"].get("returned") == CARRIED
        return (f"a state sealed at {WHOLE_SECOND} with LIFETIME_S = {SHORT_LIFETIME_S} (the check sets "
                f"sealed.LIFETIME_S) expires at {short_end:g}: {WHOLE_SECOND} is a whole second, so rounding up adds "
                f"nothing (task 2); it still opens at {short_end - 0.25} and is 'expired' at {short_end + 0.5}.",
                _said(report["short_after" if late else "short_before"]) + f" (at {short_end + 0.5 if late else short_end - 0.25})",
                "seal math.ceil(time.time() + LIFETIME_S): read LIFETIME_S itself, never a fixed 300, and round up with "
                "math.ceil, never int(...) + 1.")
    return None


def _compares_in_constant_time(folder):
    """Whether sealed.py calls compare_digest (hmac's or secrets') anywhere: a timing leak no reply shows."""
    try:
        tree = ast.parse((Path(folder) / "sealed.py").read_text())
    except (OSError, SyntaxError, ValueError):
        return False
    return any(isinstance(node, ast.Call) and (getattr(node.func, "attr", None) == "compare_digest"
                                               or getattr(node.func, "id", None) == "compare_digest")
               for node in ast.walk(tree))


def check_with_suite(folder="my_http_server", scenarios=SUITE_SCENARIOS):
    """The official conformance suite's scenarios, run against serve_http.py; every failing check named."""
    if _missing(folder):
        return
    server = _started(folder)
    if server is None:
        return
    try:  # the suite takes seconds per scenario: a function still left to write is said at once instead
        replies = [server.wire.request("server/discover"),
                   server.wire.request("tools/call", {"name": "publish", "arguments": {"text": "x"}}, meta=CAN_ASK)]
        stub = server.stub(*replies)
    finally:
        server.close()
    if stub:
        return _stub_verdict(stub, ())
    try:
        run = suite.server(command=[sys.executable, str(Path(folder) / "serve_http.py")], scenarios=scenarios,
                           spec_version="2026-07-28")
    except suite.SuiteError as error:
        return not_done(f"the suite could not run: {error}")
    wrong = [check for check in run.checks if check.status in suite.NOT_PASSING]
    if not wrong:
        passed(f"The official suite passed all {run.count('SUCCESS')} checks of its {len(run.scenarios)} scenarios.")
        return
    named = "\n".join(f"  {check.status} {check.scenario} {check.id}: {short(check.message, 240)}" for check in wrong)
    failed(f"the official suite found {len(wrong)} checks failing or warning:\n{named}",
           hint="run check_header_rules and check_request_state first: they say which rule each case tests.")
