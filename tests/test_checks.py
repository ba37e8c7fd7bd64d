"""Every exercise check: a right answer passes, typical wrong answers fail with the right explanation.

Checks print their verdict; these tests read it the way a learner does.
"""

import json
import os
import select
import subprocess
import sys
import time

import pytest

import checks
from checks import ex00_first_look as first_look, ex01_stdio as stdio

ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


def stub(*args):
    raise NotImplementedError("your code here")


def compact(frame):
    return (json.dumps(frame, separators=(",", ":")) + "\n").encode()


# --- 00 · setup and a first look ------------------------------------------------------------

def popen(*extra, **pipes):
    return lambda: subprocess.Popen([sys.executable, "-m", "labserver", *extra], stderr=subprocess.DEVNULL, **pipes)


PIPES = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}


def test_start_server_right(verdict):
    assert verdict(checks.check_start_server, popen(**PIPES)).startswith("✓ The lab server runs on stdio")


def test_start_server_without_a_stdin_pipe(verdict):
    out = verdict(checks.check_start_server, popen(stdout=subprocess.PIPE))
    assert out.startswith("✗ proc.stdin is None") and "stdin=subprocess.PIPE" in out


def test_start_server_over_http_instead_of_stdio(verdict):
    out = verdict(checks.check_start_server, popen("--http", **PIPES))
    assert out.startswith("✗") and "started with --http" in out


def search_frame(**changes):
    frame = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
             "params": {"name": "search_notes", "arguments": {"query": "spindle"}, "_meta": dict(ENVELOPE)}}
    frame.update(changes)
    return {key: value for key, value in frame.items() if value is not None}


def test_first_frame_right(verdict, lab):
    out = verdict(checks.check_first_frame, search_frame, lab)
    assert out.startswith("✓ The server ran your tools/call") and "found 5 notes" in out


def test_first_frame_without_envelope(verdict, lab):
    frame = search_frame(params={"name": "search_notes", "arguments": {"query": "spindle"}})
    out = verdict(checks.check_first_frame, lambda: frame, lab)
    assert "params: missing _meta" in out and "error -32602" in out and "io.modelcontextprotocol/clientCapabilities" in out


def test_first_frame_without_jsonrpc(verdict, lab):
    out = verdict(checks.check_first_frame, lambda: search_frame(jsonrpc=None), lab)
    assert "error -32600" in out and '"jsonrpc": "2.0"' in out


def send_one_right(proc, frame):
    proc.stdin.write(compact(frame))
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def test_send_one_right(verdict):
    assert verdict(checks.check_send_one, send_one_right).startswith("✓ send_one wrote one line")


def test_send_one_pretty_printed(verdict):
    def pretty(proc, frame):
        proc.stdin.write((json.dumps(frame, indent=2) + "\n").encode())
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())
    out = verdict(checks.check_send_one, pretty)
    assert "error -32700" in out and "compact JSON" in out


def test_send_one_without_flush(verdict, monkeypatch):
    monkeypatch.setattr(first_look, "REPLY_WAIT_S", 2)

    def unflushed(proc, frame):
        proc.stdin.write(compact(frame))
        return json.loads(proc.stdout.readline())
    out = verdict(checks.check_send_one, unflushed)
    assert "still waiting" in out and "received nothing" in out and "flushed" in out


# --- 01 · JSON-RPC over stdio ---------------------------------------------------------------

def kind_right(message):
    if "method" in message:
        return "request" if "id" in message else "notification"
    return "response"


def test_message_kinds_right(verdict, lab):
    assert verdict(checks.check_message_kinds, kind_right, lab).startswith("✓ kind_of sorted 10 real messages")


def test_message_kinds_any_id_is_a_request(verdict, lab):
    out = verdict(checks.check_message_kinds, lambda m: "request" if "id" in m else "notification", lab)
    assert "It is a response: it has an id and a result" in out


def test_message_kinds_error_replies_forgotten(verdict, lab):
    def results_only(message):
        return "response" if "result" in message else kind_right(message)
    out = verdict(checks.check_message_kinds, lambda m: "notification" if "error" in m else results_only(m), lab)
    assert "an error reply is a response too" in out


def loop_right(proc, frames, timeout=5.0):
    for frame in frames:
        proc.stdin.write(compact(frame))
    proc.stdin.flush()
    waiting = {frame["id"] for frame in frames if "id" in frame}
    replies, unfinished = {}, b""
    deadline = time.monotonic() + timeout
    while waiting:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            raise TimeoutError(f"no reply for {waiting}")
        *lines, unfinished = (unfinished + os.read(proc.stdout.fileno(), 65536)).split(b"\n")
        for message in map(json.loads, lines):
            if "method" not in message and message.get("id") in waiting:
                waiting.discard(message["id"])
                replies[message["id"]] = message
    return replies


def test_stdio_loop_right(verdict):
    assert verdict(checks.check_stdio_loop, loop_right).startswith("✓ Your loop filed all four replies")


def test_stdio_loop_matching_by_position(verdict):
    def by_position(proc, frames, timeout=5.0):
        for frame in frames:
            proc.stdin.write(compact(frame))
        proc.stdin.flush()
        ids = [frame["id"] for frame in frames if "id" in frame]
        replies = []
        while len(replies) < len(ids):
            message = json.loads(proc.stdout.readline())
            if "method" not in message:
                replies.append(message)
        return dict(zip(ids, replies))
    out = verdict(checks.check_stdio_loop, by_position)
    assert "The reply you filed under id 'slow' answers id" in out and "never by position" in out


def test_stdio_loop_without_timeout(verdict, monkeypatch):
    monkeypatch.setattr(stdio, "GRACE_S", 1)

    def blocking(proc, frames, timeout=5.0):
        for frame in frames:
            proc.stdin.write(compact(frame))
        proc.stdin.flush()
        waiting, replies = {frame["id"] for frame in frames if "id" in frame}, {}
        while waiting:
            message = json.loads(proc.stdout.readline())
            if "method" not in message:
                waiting.discard(message["id"])
                replies[message["id"]] = message
        return replies
    out = verdict(checks.check_stdio_loop, blocking)
    assert "a server that never answers" in out and "still waiting" in out and "lines.get(timeout=" in out


# --- 02 · discovery, versions and the _meta envelope -----------------------------------------

def envelope_right(frame):
    frame.setdefault("params", {}).setdefault("_meta", {}).update(ENVELOPE)
    return frame


def test_envelope_right(verdict, lab):
    out = verdict(checks.check_envelope, envelope_right, lab)
    assert out.startswith("✓ add_envelope made four requests") and "cost 113 bytes" in out


def test_a_learner_exception_is_reported_not_raised(verdict, lab):
    out = verdict(checks.check_envelope, lambda frame: 1 / 0, lab)
    assert out.startswith("✗ add_envelope raised ZeroDivisionError")


VERSION = "io.modelcontextprotocol/protocolVersion"


def fallback_right(send, frame, speaks):
    reply = send(frame)
    error = reply.get("error") or {}
    shared = [v for v in speaks if v in (error.get("data") or {}).get("supported", [])]
    if error.get("code") != -32022 or not shared:
        return reply
    frame["params"]["_meta"][VERSION] = shared[0]
    return send(frame)


def test_version_recovery_right(verdict, lab):
    assert verdict(checks.check_version_recovery, fallback_right, lab).startswith("✓ Your client resent")


def test_version_recovery_guessing_a_version(verdict, lab):
    def legacy(send, frame, speaks):
        reply = send(frame)
        if (reply.get("error") or {}).get("code") == -32022:
            frame["params"]["_meta"][VERSION] = "2025-11-25"
            return send(frame)
        return reply
    out = verdict(checks.check_version_recovery, legacy, lab)
    assert "named '2025-11-25', which is not in error.data.supported ['2026-07-28']" in out


def test_version_recovery_ignoring_what_the_client_speaks(verdict, lab):
    def first_supported(send, frame, speaks):
        reply = send(frame)
        error = reply.get("error") or {}
        if error.get("code") == -32022:
            frame["params"]["_meta"][VERSION] = error["data"]["supported"][0]
            return send(frame)
        return reply
    out = verdict(checks.check_version_recovery, first_supported, lab)
    assert "a version your client does not speak (it speaks ['2027-01-01'])" in out


def test_version_recovery_retrying_every_error(verdict, lab):
    def always(send, frame, speaks):
        reply = send(frame)
        if "error" in reply:
            frame["params"]["_meta"][VERSION] = "2026-07-28"
            return send(frame)
        return reply
    out = verdict(checks.check_version_recovery, always, lab)
    assert "sent 2 frames; it should send 1" in out and "Only -32022 is about the version" in out


def test_version_recovery_not_retrying(verdict, lab):
    out = verdict(checks.check_version_recovery, lambda send, frame, speaks: send(frame), lab)
    assert "sent 1 frame; it should send 2" in out and "error -32022" in out


# --- 03 · Streamable HTTP by hand --------------------------------------------------------------

def headers_right(frame):
    headers = {"MCP-Protocol-Version": frame["params"]["_meta"][VERSION], "Mcp-Method": frame["method"]}
    field = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(frame["method"])
    if field:
        headers["Mcp-Name"] = frame["params"][field]
    return headers


def test_routing_headers_right(verdict, http):
    assert verdict(checks.check_routing_headers, headers_right, http).startswith("✓ Your headers routed")


def test_routing_headers_without_name(verdict, http):
    out = verdict(checks.check_routing_headers,
                  lambda f: {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": f["method"]}, http)
    assert "refused tools/call (HTTP 400)" in out and "error -32020" in out and "Mcp-Name" in out


def test_routing_headers_with_a_legacy_version(verdict, http):
    out = verdict(checks.check_routing_headers, lambda f: {**headers_right(f), "MCP-Protocol-Version": "2025-11-25"}, http)
    assert "Missing session ID" in out and "legacy transport" in out


RIGHT_PREDICTIONS = {
    "method-header-mismatch": (400, -32020), "get-instead-of-post": (405, None), "no-envelope": (400, -32602),
    "foreign-origin": (403, None), "unknown-method": (404, -32601), "future-version": (400, -32022),
    "no-version-header": (400, -32600), "not-json": (400, -32700),
}


def test_fault_lab_right(verdict, http):
    out = verdict(checks.check_fault_lab, dict(RIGHT_PREDICTIONS), http)
    assert "✓ 8 of 8 predictions right." in out and "✗" not in out


def test_fault_lab_two_misses_are_explained(verdict, http):
    wrong = {**RIGHT_PREDICTIONS, "get-instead-of-post": (400, -32600), "foreign-origin": (400, None)}
    out = verdict(checks.check_fault_lab, wrong, http)
    assert "✗ 6 of 8 predictions right." in out
    assert "get-instead-of-post: you predicted 400 -32600; the server answered 405 with an empty body with Allow: POST" in out
    assert "the plain text 'Invalid Origin header'" in out


def test_fault_lab_predictions_that_are_not_pairs(verdict, http):
    out = verdict(checks.check_fault_lab, {**RIGHT_PREDICTIONS, "not-json": "400"}, http)
    assert "not (status, code) pairs: not-json = '400'" in out


def test_fault_lab_unknown_fault(verdict, http):
    out = verdict(checks.check_fault_lab, {**RIGHT_PREDICTIONS, "no-accept": (406, None)}, http)
    assert "There is no fault called 'no-accept'" in out


def test_the_faults_show_as_wire_text(capsys):
    checks.show_faults()
    out = capsys.readouterr().out
    assert out.count("POST /mcp HTTP/1.1") == 7 and "GET /mcp HTTP/1.1" in out and "Host:" not in out


# --- stubs: every check explains instead of raising ---------------------------------------------

# (check, the unfinished work, the shared server it may reuse)
UNFINISHED = [
    (checks.check_start_server, stub, None),
    (checks.check_first_frame, stub, "lab"),
    (checks.check_send_one, stub, None),
    (checks.check_message_kinds, stub, "lab"),
    (checks.check_stdio_loop, stub, None),
    (checks.check_envelope, stub, "lab"),
    (checks.check_version_recovery, stub, "lab"),
    (checks.check_routing_headers, stub, "http"),
    (checks.check_fault_lab, {name: (None, None) for name in checks.FAULT_NAMES}, "http"),
    (checks.check_fault_lab, None, "http"),
]


@pytest.mark.parametrize("check, work, server", UNFINISHED, ids=lambda v: getattr(v, "__name__", ""))
def test_an_unfinished_task_is_not_done_yet(verdict, request, check, work, server):
    shared = (request.getfixturevalue(server),) if server else ()
    assert verdict(check, work, *shared).startswith("not done yet: ")


@pytest.mark.parametrize("check, work", [(checks.check_send_one, lambda proc, frame: {}),
                                         (checks.check_stdio_loop, lambda proc, frames, timeout: {})])
def test_a_lab_server_that_cannot_start_is_said_plainly_and_nothing_passes(verdict, monkeypatch, check, work):
    monkeypatch.setattr(checks.servers, "LAB_COMMAND", [sys.executable, "-c", "raise SystemExit(3)"])
    out = verdict(check, work)
    assert "The lab server did not start" in out and "Restart the kernel" in out and "✓" not in out
