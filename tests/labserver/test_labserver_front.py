"""The stdio front: malformed lines get JSON-RPC errors, and EOF never loses a request."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest
from lab_harness import check_error, check_result, request, stdio_lab, tool_call

from labserver.deep_json import scan
from labserver.stdio_front import LineSplitter, PendingRequests, line_id, request_key, why_invalid

VALID = json.dumps(request(0, "tools/list"))

MALFORMED = [
    # (case, raw line without its newline, expected code, expected id, message start)
    ("truncated JSON", b'{"jsonrpc":"2.0","id":1,"method":"tools/list",', -32700, None, "Parse error: EOF while parsing"),
    ("plain text", b"hello server", -32700, None, "Parse error: expected value"),
    ("empty line", b"", -32700, None, "Parse error: empty line"),
    ("blank line", b"   \t", -32700, None, "Parse error: empty line"),
    ("invalid UTF-8", b'{"jsonrpc":"2.0","id":2,"method":"\xff"}', -32700, None, "Parse error: the line is not valid UTF-8"),
    ("batch array", b"[" + VALID.encode() + b"]", -32600, None, "Invalid Request: batches"),
    ("missing jsonrpc", b'{"id":3,"method":"tools/list"}', -32600, 3, 'Invalid Request: missing "jsonrpc"'),
    ("wrong jsonrpc", b'{"jsonrpc":"1.0","id":"four","method":"tools/list"}', -32600, "four", "Invalid Request: \"jsonrpc\""),
    ("id null", b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600, None, 'Invalid Request: "id" must be'),
    ("id boolean", b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', -32600, None, 'Invalid Request: "id" must be'),
    ("id fraction", b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', -32600, None, 'Invalid Request: "id" must be'),
    ("method number", b'{"jsonrpc":"2.0","id":5,"method":7}', -32600, 5, 'Invalid Request: "method" must be'),
    ("params array", b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":[1]}', -32600, 6, 'Invalid Request: "params"'),
    ("a JSON string", b'"tools/list"', -32600, None, "Invalid Request: a message must be a JSON object"),
    # Valid JSON is never a parse error, however deep: too deep to process is an invalid request.
    ("deep nesting", b'{"jsonrpc":"2.0","id":7,"method":"x","params":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
     -32600, 7, "Invalid Request: nested 100002 levels deep"),
    ("deep nesting, string id", b'{"jsonrpc":"2.0","id":"d","method":"x","params":{"a":' + b"{\"b\":" * 250 + b"1" + b"}" * 250 + b"}}",
     -32600, "d", "Invalid Request: nested 252 levels deep"),
    ("deep nesting, no closing brace", b'{"jsonrpc":"2.0","id":8,"method":"x","params":{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
     -32700, None, "Parse error: recursion limit"),
]


@pytest.fixture(scope="module")
def lab():
    with stdio_lab() as server:
        # Wait for the first reply here, generously: a busy machine can take longer to start a server than to answer.
        server.send(request("warm-up", "server/discover"))
        check_result("server/discover", server.read_until("warm-up", timeout=60)[0])
        yield server


@pytest.mark.parametrize(("case", "line", "code", "reply_id", "start"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_line_gets_an_error_and_the_next_request_still_works(lab, case, line, code, reply_id, start):
    lab.send_raw(line + b"\n")
    reply = lab.next_message()
    error = check_error(reply, code)
    assert reply["id"] == reply_id and error["message"].startswith(start), reply
    follow_up = request(f"after {case}", "server/discover")
    check_result("server/discover", lab.call(follow_up))


def test_an_oversized_line_is_refused_and_the_next_line_is_read(lab):
    huge = b'{"jsonrpc":"2.0","id":"huge","method":"tools/list","params":{"pad":"' + b"x" * (5 * 1024 * 1024) + b'"}}'
    lab.send_raw(huge + b"\n")
    error = check_error(lab.next_message(timeout=20), -32600)
    assert error["message"] == "Request too large"
    check_result("server/discover", lab.call(request("after huge", "server/discover")))


def test_a_pretty_printed_request_gets_one_parse_error_per_line(lab):
    pretty = json.dumps(request("pretty", "tools/list"), indent=1).encode()
    lab.send_raw(pretty + b"\n")
    replies = [lab.next_message() for _ in pretty.splitlines()]
    assert {reply["error"]["code"] for reply in replies} == {-32700}
    check_result("server/discover", lab.call(request("after pretty", "server/discover")))


def test_a_crlf_line_is_served(lab):
    lab.send_raw(json.dumps(request("crlf", "server/discover")).encode() + b"\r\n")
    check_result("server/discover", lab.read_until("crlf")[0])


def test_ids_1_and_string_1_are_different_requests(lab):
    lab.send(request(1, "server/discover"))
    lab.send(request("1", "server/discover"))
    assert lab.read_until(1)[0]["id"] == 1
    assert lab.read_until("1")[0]["id"] == "1"


def test_fifty_pipelined_requests_then_eof_are_all_answered():
    with stdio_lab() as server:
        frames = [tool_call(i, "search_notes", {"query": "sleep memory"}) for i in range(1, 51)]
        server.send_raw(b"".join(json.dumps(frame).encode() + b"\n" for frame in frames))
        assert server.close(timeout=60) == 0  # start-up and fifty searches: slow on a busy machine
        replies = []
        while (line := server.lines.get(timeout=10)) is not None:
            replies.append(json.loads(line))
    assert sorted(reply["id"] for reply in replies) == list(range(1, 51))
    assert all(check_result("tools/call", reply)["isError"] is False for reply in replies)


def test_eof_does_not_wait_for_a_legacy_request_that_needs_the_client():
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {"name": "old", "version": "1"}},
    }
    delete = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "delete_note", "arguments": {"note_id": "welcome"}}}
    with stdio_lab() as server:
        server.send(initialize)
        server.read_until(1, timeout=60)  # the first reply waits for the server to start
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send(delete)
        question = server.next_message()
        assert question["method"] == "elicitation/create" and "id" in question
        assert server.close() == 0


def test_a_last_line_without_newline_is_still_served():
    with stdio_lab() as server:
        server.send_raw(json.dumps(request("last", "server/discover")).encode())
        assert server.close() == 0
        assert server.next_message()["id"] == "last"


def test_stray_prints_cannot_reach_the_wire():
    script = textwrap.dedent(
        """
        import os
        from labserver.fd_io import write_all
        from labserver.stdio_front import private_std_streams
        with private_std_streams() as (wire_in, wire_out):
            print("stray print", flush=True)
            os.system("echo stray child")
            write_all(wire_out, b'{"wire":true}\\n')
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=30)
    assert done.stdout == b'{"wire":true}\n'
    assert b"stray print" in done.stderr and b"stray child" in done.stderr


# --- the front's pieces ---------------------------------------------------------------------


def test_splitter_joins_lines_across_chunks():
    splitter = LineSplitter(limit=100)
    assert list(splitter.feed(b'{"a":')) == []
    assert list(splitter.feed(b'1}\n{"b":2}\n{"c"')) == [b'{"a":1}', b'{"b":2}']
    assert list(splitter.finish()) == [b'{"c"']


def test_splitter_drops_an_oversized_line_in_bounded_memory():
    splitter = LineSplitter(limit=10)
    assert list(splitter.feed(b"x" * 8)) == []
    assert list(splitter.feed(b"x" * 8)) == []
    assert len(splitter.partial) == 0  # nothing of the long line is kept
    assert list(splitter.feed(b"x" * 1000)) == []
    assert list(splitter.feed(b"x\nok\n")) == [None, b"ok"]


def test_splitter_reports_an_oversized_last_line_at_eof():
    splitter = LineSplitter(limit=4)
    assert list(splitter.feed(b"ok\n123456")) == [b"ok"]
    assert list(splitter.finish()) == [None]


def test_line_id_tells_replies_from_requests_to_the_client():
    assert line_id('{"jsonrpc":"2.0","id":7,"result":{}}\n') == ((int, 7), False)
    assert line_id('{"jsonrpc":"2.0","id":"7","error":{"code":1,"message":"x"}}\n') == ((str, "7"), False)
    assert line_id('{"jsonrpc":"2.0","id":"a\\"b","result":{}}\n') == ((str, 'a"b'), False)
    assert line_id('{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}\n') == ((int, 1), True)
    assert line_id('{"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n') is None
    assert line_id('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}\n') is None


def test_pending_counts_duplicates_and_forgets_cancelled():
    pending = PendingRequests()
    pending.forwarded(request_key(1))
    pending.forwarded(request_key(1))
    pending.forwarded(request_key("1"))
    pending.answered(request_key(1))
    assert pending.counts == {(int, 1): 1, (str, "1"): 1}
    pending.cancelled(request_key("1"))
    pending.answered(request_key(1))
    assert not pending.counts and pending.settled()


def test_pending_settles_when_the_server_waits_on_the_client():
    pending = PendingRequests()
    pending.forwarded(request_key(2))
    assert not pending.settled()
    pending.asked_client(request_key(1))
    assert pending.settled()
    pending.client_replied(request_key(1))
    assert not pending.settled()


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ([], "batches"),
        ({"id": 1}, 'missing "jsonrpc"'),
        ({"jsonrpc": "2.0", "id": None, "method": "x"}, "not null"),
        ({"jsonrpc": "2.0", "id": 1}, 'missing "method"'),
    ],
)
def test_why_invalid_names_the_problem(message, reason):
    assert reason in why_invalid(message)


def test_plain_files_as_stdin_and_stdout_work(tmp_path):
    requests_file, replies_file = tmp_path / "requests.jsonl", tmp_path / "replies.jsonl"
    frames = [request(i, "server/discover") for i in range(1, 6)]
    requests_file.write_text("".join(json.dumps(frame) + "\n" for frame in frames))
    with requests_file.open("rb") as stdin, replies_file.open("wb") as stdout:
        done = subprocess.run([sys.executable, "-m", "labserver"], stdin=stdin, stdout=stdout, timeout=60)
    assert done.returncode == 0
    replies = [json.loads(line) for line in replies_file.read_text().splitlines()]
    assert sorted(reply["id"] for reply in replies) == [1, 2, 3, 4, 5]


def test_a_client_that_reads_late_still_gets_every_large_reply():
    uri = "notes://attachments/hypnogram.png"
    frames = [request(i, "resources/read", {"uri": uri}) for i in range(1, 41)]
    payload = b"".join(json.dumps(frame).encode() + b"\n" for frame in frames)
    server = subprocess.Popen([sys.executable, "-m", "labserver"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        server.stdin.write(payload)
        server.stdin.close()
        time.sleep(1)  # the replies (far more than a pipe buffer holds) pile up unread meanwhile
        output = server.stdout.read()
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    replies = [json.loads(line) for line in output.splitlines()]
    assert sorted(reply["id"] for reply in replies) == list(range(1, 41))
    assert len(output) > 40 * 8000


@pytest.mark.parametrize("text", [
    '{"id":5}', '{"id":"a","x":[1,2,{"id":9}]}', '{"id":1.5}', '{"id":true}', '{"id":null}', '{"id":5,"id":[1]}',
    ' {"a" : [ 1 , 2 ] , "id" : -3 } ', '[[],[[]],{}]', '"x"', '-0.5E-3', '{"id":"x\\"y"}',
    '{"a":1,}', '[1,]', '{"a"}', '01', 'tru', '{"a":1}x', '', '[', '{"a":"bad\x01"}', 'NaN', '{"id":7',
])
def test_the_depth_scanner_agrees_with_json_on_shallow_text(text):
    try:
        value = json.loads(text, parse_constant=lambda name: 1 / 0)
    except (ValueError, ZeroDivisionError):
        assert not scan(text).is_json
        return
    found = scan(text)
    expected_id = value.get("id") if isinstance(value, dict) else None
    readable = isinstance(expected_id, (str, int)) and not isinstance(expected_id, bool)
    assert found.is_json and found.request_id == (expected_id if readable else None)
