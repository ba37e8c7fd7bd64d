"""Checks for exercise 23: the learner's stdio server, run as a real process and sent the lines a client may send.

Each case is one line, the rule it tests with its source, and what the rule asks for: an error with a code (with
the request's id, or with no id when none could be read), a kind of result, or silence. A check starts the
folder's server once, writes its cases one at a time and reads each reply before the next, and explains the first
case the server gets wrong. The last check hands the server to a client no one here wrote, the `mcp` SDK's own.
"""

import asyncio
import json
import queue
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from mcpwire import process

from .compiles import syntax_problem
from .verdict import failed, not_done, passed, short

VERSION, CAPABILITIES = "io.modelcontextprotocol/protocolVersion", "io.modelcontextprotocol/clientCapabilities"
META = {VERSION: "2026-07-28", CAPABILITIES: {}}
NO_ID = "no id"  # the reply must leave the id member out: it could not be read
REPLY_WAIT_S = 5.0  # a right server answers in milliseconds; this is for a loaded machine

SPEC = "https://modelcontextprotocol.io/specification/2026-07-28"
JSON_RPC = "JSON-RPC 2.0, https://www.jsonrpc.org/specification#error_object"
ERROR_IDS = f"MCP's error responses ({SPEC}/basic/index#error-responses)"
REQUEST_IDS = f"MCP's requests ({SPEC}/basic/index#requests)"
ENVELOPE = f"MCP's per-request _meta ({SPEC}/basic/index#meta)"
VERSIONS = f"MCP's version negotiation ({SPEC}/basic/versioning#protocol-version-negotiation)"
TOOL_ERRORS = f"MCP's tool error handling ({SPEC}/server/tools#error-handling)"
NOTIFICATIONS = f"MCP's notifications ({SPEC}/basic/index#notifications)"
UTF8 = f"MCP's messages ({SPEC}/basic/transports/index#messages)"


def error(code, id):
    return ("error", code, id)


def line(frame):
    return frame if isinstance(frame, bytes) else json.dumps(frame, separators=(",", ":")).encode()


def request(id, method, params=None):
    frame = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


READ_CASES = [
    (b"hello", error(-32700, NO_ID), "a line that is not JSON is a parse error, and its id cannot be read", JSON_RPC),
    (b'{"jsonrpc":"2.0","id":1,"method":"ping"', error(-32700, NO_ID),
     "JSON cut short is a parse error; an id inside unreadable JSON was never read", JSON_RPC),
    (b"\xff\xfe{}", error(-32700, NO_ID),
     "bytes that are not UTF-8 are not JSON text: decoding raises UnicodeDecodeError, a ValueError but not a "
     "JSONDecodeError", UTF8),
    (json.dumps(request(14, "ping")).encode("utf-16-be") + b"\x00", error(-32700, NO_ID),
     "JSON in UTF-16 is not an MCP message, which is UTF-8: json.loads given bytes would read UTF-16 too, so decode "
     "the line as UTF-8 yourself", UTF8),
    (b"[" * 100_000, error(-32700, NO_ID),
     "a line nested too deep for Python's json raises RecursionError, not ValueError: the server must answer it "
     "and live", JSON_RPC),
    (b'[{"jsonrpc":"2.0","id":2,"method":"ping"}]', error(-32600, NO_ID),
     "a batch (a JSON array) is not an MCP message; the array has no id of its own", "the lesson, step 1"),
    (b"42", error(-32600, NO_ID), "JSON that is not an object is not a request", JSON_RPC),
    (b'"ping"', error(-32600, NO_ID), "a JSON string is not a request either", JSON_RPC),
    (request(3, "ping") | {"jsonrpc": "1.0"}, error(-32600, 3), '"jsonrpc" must be exactly "2.0"; the id 3 was read',
     JSON_RPC),
    ({"id": 4, "method": "ping"}, error(-32600, 4), 'a request without "jsonrpc" is invalid; the id 4 was read',
     JSON_RPC),
    ({"jsonrpc": "1.0", "method": "ping"}, error(-32600, NO_ID),
     "a malformed line with no id is not a notification: it gets its error, with no id", JSON_RPC),
    (request(None, "ping"), error(-32600, NO_ID),
     "an id must be a string or an integer, never null, so this one could not be read", REQUEST_IDS),
    (request(5.5, "ping"), error(-32600, NO_ID), "5.5 is not an integer, so it is not a valid id", REQUEST_IDS),
    (b'{"jsonrpc":"2.0","id":1.0,"method":"ping"}', error(-32601, 1.0),
     "1.0 is an integer to the 2026-07-28 schema (JSON has one kind of number, and JSON Schema's integer is any number "
     "with no fraction), so it is a valid id, and the reply carries it", REQUEST_IDS),
    (request(True, "ping"), error(-32600, NO_ID),
     "true is not an id (and in Python a bool is an int: isinstance(True, int) is True)", REQUEST_IDS),
    (request({"n": 6}, "ping"), error(-32600, NO_ID), "an object is not a valid id", REQUEST_IDS),
    ({"jsonrpc": "2.0", "id": 7}, error(-32600, 7), 'a request needs a "method"; the id 7 was read', JSON_RPC),
    (request(8, 42), error(-32600, 8), '"method" must be a string', JSON_RPC),
    ({"jsonrpc": "2.0", "id": 9, "result": {}}, error(-32600, 9),
     "a client MUST NOT write a response; the code is the lesson's choice, and the id 9 was read",
     f"MCP's stdio binding, {SPEC}/basic/transports/stdio#sending-messages"),
    (request(10, "ping", "all"), error(-32600, 10), '"params" must be an object or an array when present', JSON_RPC),
    (request(11, "ping", []), error(-32601, 11),
     "params as an array is valid JSON-RPC: read() lets it through, and methods.call answers -32601 for ping",
     JSON_RPC),
    (request(0, "ping"), error(-32601, 0), "0 is a valid id (test for a missing id with `in`, not with truth)",
     REQUEST_IDS),
    (request("", "ping"), error(-32601, ""), "the empty string is a valid id", REQUEST_IDS),
    (request("twelve", "ping"), error(-32601, "twelve"), "a string id is echoed as it came", REQUEST_IDS),
    ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}, ("silence",),
     "a notification never gets a reply", NOTIFICATIONS),
    ({"jsonrpc": "2.0", "method": "notifications/made_up"}, ("silence",),
     "not even a notification the server does not know", NOTIFICATIONS),
    (request(30, "ping") | {"jsonrpc": 2.0}, error(-32600, 30), '"jsonrpc" is the string "2.0", not the number 2.0',
     JSON_RPC),
    (request(31, "ping") | {"jsonrpc": "2.0 "}, error(-32600, 31), '"jsonrpc" is exactly "2.0": no white space', JSON_RPC),
    (request(32, "ping") | {"jsonrpc": "2"}, error(-32600, 32), '"jsonrpc" is exactly "2.0", not "2"', JSON_RPC),
    (request(33, "ping") | {"params": None}, error(-32600, 33),
     '"params" present and null is neither an object nor an array', JSON_RPC),
    (b'{"jsonrpc":"2.0","id":34,"method":"pi\xffng"}', error(-32700, NO_ID),
     "a byte that is not UTF-8 inside a string makes the whole line unreadable: do not replace it, refuse the line",
     UTF8),
    (request(0, "ping") | {"jsonrpc": "1.0"}, error(-32600, 0),
     "an error for id 0 carries id 0: test for a readable id with `in` and isinstance, not with truth", ERROR_IDS),
    (request(35, ""), error(-32601, 35), 'the empty string is a string: "method" is valid, and no method has that name',
     JSON_RPC),
    (request(2**40, "ping"), error(-32601, 2**40), "a large integer is a valid id", REQUEST_IDS),
    ({"jsonrpc": "2.0"}, error(-32600, NO_ID),
     'a line with no id and no "method" is not a notification: it gets its error, with no id (and the server lives)',
     JSON_RPC),
    ({"jsonrpc": "2.0", "method": 42}, error(-32600, NO_ID),
     'a line with no id whose "method" is not a string is not a notification: it gets its error, with no id',
     JSON_RPC),
    ({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "all"}, error(-32600, NO_ID),
     'a line with no id whose "params" is neither an object nor an array is not a notification: it gets its error, '
     "with no id", JSON_RPC),
    (request(13, "ping"), error(-32601, 13), "after all that, the server still answers", "the loop"),
]


def discover(id, meta):
    return request(id, "server/discover", None if meta is None else {"_meta": meta})


ENVELOPE_CASES = [
    (request(20, "server/discover"), error(-32602, 20), "a request with no params has no _meta", ENVELOPE),
    (discover(21, None) | {"params": {}}, error(-32602, 21), "params without _meta", ENVELOPE),
    (discover(22, "2026-07-28"), error(-32602, 22), "_meta must be an object", ENVELOPE),
    (discover(23, {CAPABILITIES: {}}), error(-32602, 23), "the protocol version is required", ENVELOPE),
    (discover(24, {VERSION: "2026-07-28"}), error(-32602, 24), "the client capabilities are required", ENVELOPE),
    (discover(25, {VERSION: 20260728, CAPABILITIES: {}}), error(-32602, 25), "the version is a string", ENVELOPE),
    (discover(26, {VERSION: "2026-07-28", CAPABILITIES: "all"}), error(-32602, 26),
     "the capabilities are an object", ENVELOPE),
    (discover(27, {VERSION: "2025-11-25", CAPABILITIES: {}}), ("unsupported", 27, "2025-11-25"),
     "a version the server does not implement gets -32022 with data.supported and data.requested", VERSIONS),
    (discover(28, {VERSION: "2099-01-01", CAPABILITIES: {}}), ("unsupported", 28, "2099-01-01"),
     "an unknown version too", VERSIONS),
    (discover(29, META), ("result",), "the envelope with the two required keys and nothing else", ENVELOPE),
    (discover(30, META | {"io.modelcontextprotocol/clientInfo": {"name": "checker", "version": "1.0"}}), ("result",),
     "clientInfo is optional and informational", ENVELOPE),
    (discover(31, META | {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
                          "com.example/trace": "x"}), ("result",),
     "keys the server does not know are not a reason to refuse", ENVELOPE),
    (discover(33, [VERSION, CAPABILITIES]), error(-32602, 33),
     "_meta must be an object; a list that holds the key names is not one", ENVELOPE),
    (discover(34, {VERSION: "2026-07-28", CAPABILITIES: None}), error(-32602, 34), "null capabilities are not an object",
     ENVELOPE),
    (discover(35, {VERSION: "2026-07-28", CAPABILITIES: []}), error(-32602, 35), "a list is not an object", ENVELOPE),
    (discover(36, {VERSION: "2026-07-28", CAPABILITIES: True}), error(-32602, 36), "true is not an object", ENVELOPE),
    (discover(37, {VERSION: " 2026-07-28", CAPABILITIES: {}}), ("unsupported", 37, " 2026-07-28"),
     "a version is compared exactly: this one has a space in front", VERSIONS),
    (discover(38, {VERSION: "2026", CAPABILITIES: {}}), ("unsupported", 38, "2026"),
     "a version is a whole string, not a part of one", VERSIONS),
    (discover(39, {VERSION: "2026-07-28 ", CAPABILITIES: {}}), ("unsupported", 39, "2026-07-28 "),
     "a version is compared exactly: this one has a space after it", VERSIONS),
    (discover(63, {VERSION: "2026-07-28-rc", CAPABILITIES: {}}), ("unsupported", 63, "2026-07-28-rc"),
     "a version is a whole string: a served version with more after it is another version", VERSIONS),
    (discover(64, {"IO.ModelContextProtocol/ProtocolVersion": "2026-07-28", CAPABILITIES.lower(): {}}), error(-32602, 64),
     "JSON member names are exact, case and all (they are not HTTP header names): this _meta has neither required "
     "key", ENVELOPE),
    (discover(32, {VERSION: "2026-07-28", CAPABILITIES: {"elicitation": {"form": {}}}}), ("result",),
     "declared capabilities are the client's to list", ENVELOPE),
]


def call(id, params):
    return request(id, "tools/call", {**params, "_meta": META})


# Words that say what is wrong with an argument (any one of them will do, in any case), beside its name.
MISSING = ("missing", "required", "requires", "needs", "absent", "not given", "not provided", "lacks", "no value")
WRONG_TYPE = ("string", "number", "type", "str", "int", "float", "numeric")
UNEXPECTED = ("unexpected", "unknown", "not allowed", "additional", "extra", "not expected", "no such", "not accept",
              "does not take", "unrecognized", "unrecognised", "not in the schema", "not defined")


TOOL_CASES = [
    (call(40, {"name": "multiply", "arguments": {}}), error(-32602, 40), "an unknown tool is a protocol error",
     TOOL_ERRORS),
    (call(41, {"arguments": {"text": "hi"}}), error(-32602, 41), "a call with no tool name names no tool",
     TOOL_ERRORS),
    (call(42, {"name": 42, "arguments": {}}), error(-32602, 42), "a tool name is a string", TOOL_ERRORS),
    (call(43, {"name": "shout", "arguments": ["hello"]}), error(-32602, 43),
     "arguments that are not an object fail the CallToolRequest schema", TOOL_ERRORS),
    (call(44, {"name": "shout", "arguments": "hello"}), error(-32602, 44), "a string is not an object either",
     TOOL_ERRORS),
    (call(45, {"name": "count_words", "arguments": {}}), ("tool error", "text", MISSING),
     "a missing argument is an input validation error: a result with isError true", TOOL_ERRORS),
    (call(46, {"name": "count_words", "arguments": {"text": 42}}), ("tool error", "text", WRONG_TYPE),
     "a number where the schema says string", TOOL_ERRORS),
    (call(47, {"name": "divide", "arguments": {"dividend": "one", "divisor": 2}}), ("tool error", "dividend", WRONG_TYPE),
     "a string where the schema says number", TOOL_ERRORS),
    (call(48, {"name": "divide", "arguments": {"dividend": True, "divisor": 2}}), ("tool error", "dividend", WRONG_TYPE),
     "true is not a number in JSON Schema, though a Python bool is an int", TOOL_ERRORS),
    (call(49, {"name": "shout", "arguments": {"text": "hi", "volume": 11}}), ("tool error", "volume", UNEXPECTED),
     "an argument the schema does not name (additionalProperties is false)", TOOL_ERRORS),
    (call(50, {"name": "shout"}), ("tool error", "text", MISSING),
     "arguments may be left out; then shout misses its text", TOOL_ERRORS),
    (call(51, {"name": "divide", "arguments": {"dividend": 1, "divisor": 0}}), ("tool error", "zero"),
     "dividing by zero is the tool's own error", TOOL_ERRORS),
    (call(52, {"name": "count_words", "arguments": {"text": "one two  three"}}),
     ("structured", {"words": 3, "characters": 14}), "a right call gets its structuredContent and text copy",
     f"{SPEC}/server/tools#structured-content"),
    (call(53, {"name": "divide", "arguments": {"dividend": 7, "divisor": 2}}), ("structured", {"quotient": 3.5}),
     "integers are numbers too", f"{SPEC}/server/tools#structured-content"),
    (call(54, {"name": "divide", "arguments": {"dividend": 0.5, "divisor": -0.25}}),
     ("structured", {"quotient": -2.0}), "and so are decimals", f"{SPEC}/server/tools#structured-content"),
    (call(56, {"name": "shout", "arguments": None}), error(-32602, 56),
     "arguments present and null are not an object (only arguments left out count as {})", TOOL_ERRORS),
    (call(57, {"name": "shout", "arguments": []}), error(-32602, 57), "an empty list is not an object either",
     TOOL_ERRORS),
    (call(58, {"name": "shout", "arguments": ""}), error(-32602, 58), "nor is an empty string", TOOL_ERRORS),
    (call(59, {"name": ["shout"], "arguments": {"text": "hi"}}), error(-32602, 59),
     "a list is not a tool name (and cannot be a dict key: test that the name is a string first)", TOOL_ERRORS),
    (call(60, {"name": {"tool": "shout"}, "arguments": {}}), error(-32602, 60), "an object is not a tool name",
     TOOL_ERRORS),
    (call(61, {"name": "Shout", "arguments": {"text": "hi"}}), error(-32602, 61),
     "tool names are compared exactly: there is no tool Shout", TOOL_ERRORS),
    (call(62, {"name": " shout", "arguments": {"text": "hi"}}), error(-32602, 62),
     "and there is no tool ' shout' either", TOOL_ERRORS),
    (call(55, {"name": "shout", "arguments": {"text": "quiet"}}), ("text", "QUIET"), "a tool with no outputSchema",
     f"{SPEC}/server/tools#tool-result"),
]


class Server:
    """The learner's server as a process: write one line, read the next line of stdout with a deadline."""

    def __init__(self, folder):
        self.process = process.start([sys.executable, str(folder)])
        self.stdout = queue.Queue()
        self.stderr = []
        process.collect_lines(self.process.stderr, self.stderr)
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self):
        for raw in iter(self.process.stdout.readline, b""):
            self.stdout.put(raw)
        self.stdout.put(None)

    def send(self, raw):
        try:
            self.process.stdin.write(raw + b"\n")
            self.process.stdin.flush()
        except OSError:
            pass  # the server has gone; the read that follows says so

    def next_line(self, timeout):
        try:
            return self.stdout.get(timeout=timeout)
        except queue.Empty:
            return b""  # silence, as opposed to None: stdout closed

    def close(self):
        return process.stop(self.process)

    def last_words(self):
        text = "\n".join(self.stderr).strip()
        return text.splitlines()[-1] if text else "(nothing on stderr)"


def judge(raw, expect):
    """None when the reply line `raw` is what `expect` asks for, else what is wrong with it."""
    if raw == b"":
        return f"no reply within {REPLY_WAIT_S:g} s"
    try:
        reply = json.loads(raw)
    except ValueError:
        return f"a line on stdout that is not JSON: {short(raw.decode(errors='replace'))}"
    if not isinstance(reply, dict) or reply.get("jsonrpc") != "2.0":
        return f'a reply that is not a JSON-RPC 2.0 object with "jsonrpc": "2.0": {short(reply)}'
    kind = expect[0]
    if kind in ("error", "unsupported"):
        code, id = (expect[1], expect[2]) if kind == "error" else (-32022, expect[1])
        problem = _error_problem(reply, code, id)
        if problem or kind == "error":
            return problem
        data = reply["error"].get("data")
        supported = data.get("supported") if isinstance(data, dict) else None
        if not isinstance(supported, list) or "2026-07-28" not in supported or data.get("requested") != expect[2]:
            return (f"-32022 with data {short(data)}: data.supported must list the versions the server speaks "
                    f"(2026-07-28) and data.requested must be the version asked for ({expect[2]!r})")
        return None
    if "error" in reply:
        return f"error {reply['error'].get('code')} {short(reply['error'].get('message'))}, where a result was due"
    result = reply.get("result")
    if not isinstance(result, dict) or result.get("resultType") != "complete":
        return f'a result without "resultType": "complete": {short(reply)}'
    if kind == "result":
        return None
    if kind == "tool error":
        if result.get("isError") is not True:
            return f"a result with isError {result.get('isError')!r}, not true"
        texts = [block.get("text") for block in result.get("content") or [] if isinstance(block, dict)]
        words = " ".join(text for text in texts if isinstance(text, str))
        if not words.strip():
            return "a tool error with no text: the model needs words to correct itself"
        if expect[1] not in words:
            return f"a tool error whose text {short(words)!r} does not name {expect[1]!r}"
        if len(expect) > 2 and not any(word in words.lower() for word in expect[2]):
            return (f"a tool error whose text {short(words)!r} names {expect[1]!r} but not what is wrong with it (a "
                    f"word such as {expect[2][0]!r})")
        return None
    if result.get("isError") is not False:
        return f"a result with isError {result.get('isError')!r} for a call that worked"
    texts = [block.get("text") for block in result.get("content") or [] if isinstance(block, dict)]
    if kind == "text":
        return None if texts == [expect[1]] else f"content {short(result.get('content'))}, not one text block {expect[1]!r}"
    if result.get("structuredContent") != expect[1]:
        return f"structuredContent {short(result.get('structuredContent'))}, not {short(expect[1])}"
    if len(texts) != 1 or _json_or_none(texts[0]) != expect[1]:
        return f"content {short(result.get('content'))}: the text copy must hold the same JSON as structuredContent"
    return None


def _silence_problem(raw, probe):
    """None when `raw` is the reply to the ping `probe` sent right after a notification, else what it is instead."""
    if raw == b"":
        return f"no reply within {REPLY_WAIT_S:g} s to a ping sent right after the notification"
    if _replies_to(raw, probe):
        return None
    return f"a reply to a notification: {short(raw.decode(errors='replace'))}"


def _replies_to(raw, probe):
    reply = _json_or_none(raw)
    return isinstance(reply, dict) and reply.get("id") == probe


def _json_or_none(text):
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def _error_problem(reply, code, id):
    error = reply.get("error")
    if not isinstance(error, dict):
        return f"a result where error {code} was due: {short(reply)}"
    if error.get("code") != code or isinstance(error.get("code"), bool):
        return f"error {error.get('code')} {short(error.get('message'))}, where {code} was due"
    if not isinstance(error.get("message"), str):
        return "an error object without a string message"
    if id == NO_ID:
        if "id" in reply:
            return (f'error {code} with "id": {json.dumps(reply["id"])}; the id could not be read, so the 2026-07-28 '
                    "schema leaves it out (it has no null id)")
        return None
    if "id" not in reply or reply["id"] != id or type(reply["id"]) is not type(id):
        return f"error {code} with id {json.dumps(reply.get('id', '(none)'))}; the request's id was {json.dumps(id)}"
    return None


# The functions the exercise leaves to the learner, with the task that asks for each.
TASKS = {"read": ("jsonrpc.read", 1), "check": ("envelope.check", 2), "call_tool": ("tools.call_tool", 3)}


def run_cases(folder, cases):
    """The first case the server gets wrong, as (case, problem, server); ("not done", function) when a function
    of the exercise still raises NotImplementedError (its traceback on stderr names it); None when all pass."""
    server = Server(folder)
    try:
        for number, case in enumerate(cases):
            frame, expect = case[0], case[1]
            server.send(line(frame))
            if isinstance(frame, dict) and "id" not in frame:
                # A ping right behind a line without an id: the server answers lines in order, so the first line it
                # writes is the ping's reply exactly when it took the line for a notification (no waiting for silence).
                probe = f"after-line-{number}"
                server.send(line(request(probe, "ping")))
                raw = server.next_line(REPLY_WAIT_S)
                if expect[0] == "silence":
                    problem = "exited" if raw is None else _silence_problem(raw, probe)
                elif raw is not None and _replies_to(raw, probe):
                    problem = "no reply: the server took the line for a notification"
                else:
                    problem = "exited" if raw is None else judge(raw, expect)
                    if problem is None:
                        server.next_line(REPLY_WAIT_S)  # the ping's own reply, before the next case
            else:
                raw = server.next_line(REPLY_WAIT_S)
                problem = "exited" if raw is None else judge(raw, expect)
            if problem is None:
                continue
            if raw is None:
                server.close()
                problem = f"no reply: the server exited (code {server.process.returncode}). {server.last_words()}"
            stub = _stub_in(server)
            return ("not done", stub) if stub else (case, problem, _traceback_end(server))
        return None
    finally:
        server.close()


def _traceback_end(server):
    """The last line of a traceback the server wrote to stderr (its exception and message), or None."""
    text = "\n".join(server.stderr)
    return text.strip().splitlines()[-1] if "Traceback" in text else None


def _stub_in(server):
    """The exercise's function whose NotImplementedError the server's stderr shows, if any."""
    # The server writes its traceback to stderr before its reply (or its exit); the reader thread may lag behind.
    for _ in range(10):
        text = "\n".join(server.stderr)
        if "NotImplementedError" in text:
            return next((name for name in TASKS if f", in {name}\n" in text + "\n"), None)
        if server.process.poll() is not None and "Traceback" in text:
            return None
        threading.Event().wait(0.05)
    return None


def _report(folder, cases, what, own, quiet=False):
    """Run the cases and say what went wrong; True when all passed (then `quiet` leaves the ✓ to the caller)."""
    if not (Path(folder) / "__main__.py").exists():
        not_done(f"run the cells above first: {folder}/__main__.py does not exist yet.")
        return False
    if _does_not_compile(folder):
        return False
    outcome = run_cases(folder, cases)
    if outcome is None:
        if not quiet:
            passed(f"Your server answered all {len(cases)} {what} as the rules ask.")
        return True
    if outcome[0] == "not done":
        where, task = TASKS[outcome[1]]
        if outcome[1] == own:
            not_done(f"{where} still raises NotImplementedError: write its body in task {task}'s cell, and run that cell again.")
        else:
            not_done(f"{where} (task {task}) still raises NotImplementedError, and this check needs it: finish task "
                     f"{task} first.")
        return False
    (frame, expect, why, source), problem, traceback_end = outcome
    sent = line(frame).decode(errors="replace")
    if problem.startswith("a line on stdout that is not JSON"):
        more = "stdout carries frames only: write anything else to stderr (print(..., file=sys.stderr))"
    else:
        more = None if traceback_end is None or "exited" in problem else f"your server's stderr shows: {traceback_end}"
    failed(f"The line {short(sent, 120)}\n  got {problem}.", hint=f"{why} ({source}).", more=more)
    return False


def _does_not_compile(folder):
    """Say so, with the file and the line, when a module of the folder has a SyntaxError: the server cannot start."""
    problem = syntax_problem(folder)
    if problem:
        failed(f"Your server cannot start: {problem}.", hint="fix that line, run its cell again, then this check.")
    return problem is not None


def check_read(folder="my_server"):
    """jsonrpc.read(line): -32700 for what is not JSON, -32600 for JSON that is not a request, the id only when read."""
    _report(folder, READ_CASES, "lines, broken and valid,", "read")


# What check() returns never reaches the wire (methods.call does not use it yet): a process of its own asks it.
RETURN_PROBE = ("import json, sys; sys.path.insert(0, sys.argv[1]); import envelope; "
                "print(json.dumps(envelope.check(json.loads(sys.argv[2]))))")
DECLARED = {"elicitation": {"form": {}}, "extensions": {"com.example/x": {}}}


def check_envelope_rules(folder="my_server"):
    """envelope.check(params): -32602 for a missing or malformed required key, -32022 for a version not served."""
    if not _report(folder, ENVELOPE_CASES, "envelopes", "check", quiet=True):
        return
    params = {"_meta": {VERSION: "2026-07-28", CAPABILITIES: DECLARED}}
    ran = subprocess.run([sys.executable, "-c", RETURN_PROBE, str(folder), json.dumps(params)], capture_output=True,
                         text=True, timeout=30)
    returned = _json_or_none(ran.stdout) if ran.returncode == 0 else None
    if returned != DECLARED:
        failed(f"check(params) returned {short(ran.stdout.strip() or ran.stderr.strip()[-200:])} for capabilities "
               f"{short(DECLARED)}.", hint="Return the client's capabilities, params['_meta'][CAPABILITIES], as they "
                                           "came: a method that needs one of them (and answers -32021 without it) "
                                           "reads them there.")
        return
    passed(f"Your server answered all {len(ENVELOPE_CASES)} envelopes as the rules ask, and check() returns the "
           "client's capabilities.")


def check_call_tool(folder="my_server"):
    """tools.call_tool(params): protocol errors as -32602, input validation errors as isError results."""
    _report(folder, TOOL_CASES, "tool calls", "call_tool")


def check_with_sdk_client(folder="my_server"):
    """The mcp SDK's own client starts the server, pages through tools/list, calls two tools and an unknown one."""
    if not (Path(folder) / "__main__.py").exists():
        not_done(f"run the cells above first: {folder}/__main__.py does not exist yet.")
        return
    if _does_not_compile(folder):
        return
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.update(_sdk_session(folder)), daemon=True)
    thread.start()
    thread.join(timeout=60)
    stub = next((name for name in TASKS if outcome.get("stderr") and f", in {name}\n" in outcome["stderr"] + "\n"
                 and "NotImplementedError" in outcome["stderr"]), None)
    if stub:
        where, task = TASKS[stub]
        not_done(f"{where} (task {task}) still raises NotImplementedError, and the SDK's client needs it.")
    elif "problem" in outcome or not outcome:
        failed(f"The SDK's client could not finish its session with your server: {outcome.get('problem', 'no end in 60 s')}.",
               hint="Make check_read, check_envelope_rules and check_call_tool pass first: this client relies on all "
                    "three.")
    else:
        passed(f"The mcp SDK's client listed your {outcome['tools']} tools over {outcome['pages']} pages, got "
               f"count_words' structuredContent {outcome['counted']}, divide's tool error, and -32602 for an unknown "
               "tool.")


def _first_cause(error):
    """The SDK's client wraps what went wrong in exception groups (anyio task groups): the innermost first cause."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _sdk_session(folder):
    # Imported here: the SDK's client costs a kernel about a second of CPU, which only this check needs.
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from mcp.shared.exceptions import MCPError

    async def session(errlog):
        params = StdioServerParameters(command=sys.executable, args=[str(folder)])
        async with Client(stdio_client(params, errlog=errlog)) as client:
            names, pages, cursor = [], 0, None
            while pages < 10:  # a server that hands out cursors forever must not keep the check going
                listed = await client.list_tools(cursor=cursor)
                names += [tool.name for tool in listed.tools]
                pages += 1
                cursor = listed.next_cursor
                if cursor is None:
                    break
            counted = await client.call_tool("count_words", {"text": "one two three"})
            zero = await client.call_tool("divide", {"dividend": 1, "divisor": 0})
            try:
                await client.call_tool("multiply", {})
                unknown = None
            except MCPError as refused:
                unknown = refused.error.code
        if sorted(names) != ["count_words", "divide", "shout"]:
            return {"problem": f"the tools it listed were {names}"}
        if counted.structured_content != {"words": 3, "characters": 13}:
            return {"problem": f"count_words gave structuredContent {counted.structured_content}"}
        if not zero.is_error:
            return {"problem": "divide by zero was not a tool error"}
        if unknown != -32602:
            return {"problem": f"an unknown tool gave {unknown if unknown is not None else 'a result'}, not -32602"}
        return {"tools": len(names), "pages": pages, "counted": counted.structured_content}

    with tempfile.TemporaryFile("w+") as errlog:  # the server's stderr: the SDK's client wants a real file
        try:
            outcome = asyncio.run(session(errlog))
        except Exception as error:  # whatever the SDK raised: the learner needs its words, not a traceback
            cause = _first_cause(error)
            outcome = {"problem": f"{type(cause).__name__}: {short(str(cause) or repr(cause))}"}
        errlog.seek(0)
        return {**outcome, "stderr": errlog.read()}
