import json
import sys
import threading
import time

import pytest

from mcpwire import ServerExited, StdioWire, WireTimeout, frames, validate

REINDEX_SLOW = {"name": "reindex", "arguments": {"pause_ms": 100}}
SEARCH = {"name": "search_notes", "arguments": {"query": "spindles", "limit": 2}}


def python(code):
    return [sys.executable, "-c", code]


def test_requests_get_ids_1_2_3_and_valid_replies():
    with StdioWire.labserver() as wire:
        replies = [wire.request("server/discover"), wire.request("tools/list"), wire.request("tools/call", SEARCH)]
        assert [r.id for r in replies] == [1, 2, 3]
        assert all(r.ok and r.result_type == "complete" and validate(r) == [] for r in replies)
        assert [r.method for r in replies] == ["server/discover", "tools/list", "tools/call"]


def test_hand_written_ids_are_skipped_by_auto_ids():
    with StdioWire.labserver() as wire:
        assert wire.send(frames.request("tools/list", id=10)).id == 10
        assert wire.request("tools/list").id == 11
        assert wire.send(frames.request("tools/list", id="text-id")).id == "text-id"


def test_out_of_order_replies_are_matched_by_id(stdio_wire):
    slow = frames.request("tools/call", REINDEX_SLOW, id=100)
    fast = frames.request("tools/call", SEARCH, id=101)
    slow_reply, fast_reply = stdio_wire.send_all([slow, fast])
    assert (slow_reply.id, fast_reply.id) == (100, 101)
    order = [e.id for e in stdio_wire.transcript if e.id in (100, 101)]
    assert order == [101, 100]  # the fast one finished first


def test_write_then_wait_in_any_order(stdio_wire):
    stdio_wire.write(frames.request("tools/call", REINDEX_SLOW, id=200))
    stdio_wire.write(frames.request("tools/call", SEARCH, id=201))
    assert stdio_wire.wait(201).id == 201
    assert stdio_wire.wait(200).id == 200
    with pytest.raises(KeyError):
        stdio_wire.wait(999)


def test_progress_notifications_are_tied_to_their_request(stdio_wire):
    reply = stdio_wire.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 0}},
                               meta={"progressToken": "p-1"})
    assert reply.ok and reply.notifications
    assert {n["method"] for n in reply.notifications} == {"notifications/progress"}
    progress = [n["params"]["progress"] for n in reply.notifications]
    assert progress == sorted(progress)
    exchange = stdio_wire.transcript[-1]
    assert len(exchange.down_payloads) == len(reply.notifications) + 1


@pytest.mark.parametrize("line, code", [
    ("{not json", -32700),
    ("[]", -32600),
    ('{"jsonrpc":"2.0","id":null,"method":"tools/list"}', -32600),
])
def test_malformed_raw_lines_get_an_error_with_id_null(stdio_wire, line, code):
    reply = stdio_wire.send_raw(line)
    assert reply is not None and reply.code == code and reply.id is None
    assert str(code) in reply.explain()


def test_raw_line_with_a_readable_id_is_matched_by_that_id(stdio_wire):
    reply = stdio_wire.send_raw('{"jsonrpc":"2.0","id":77}')
    assert reply.id == 77 and reply.code == -32600


def test_raw_line_is_written_exactly():
    # A wire of its own: a request without the envelope as the first on a connection sets it to the handshake
    # era, and the module's shared wire would then refuse every enveloped request of the tests after it.
    with StdioWire.labserver() as wire:
        text = '{"jsonrpc":"2.0", "id":78, "method":"tools/list"}'  # spaces and no envelope: sent as typed
        reply = wire.send_raw(text)
        assert reply.code == -32602
        assert wire.transcript[-1].up == (text + "\n").encode()


def test_raw_notification_is_answered_with_silence(stdio_wire):
    assert stdio_wire.send_raw('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}',
                               timeout=0.3) is None


def test_notification_send_returns_none_and_is_in_the_transcript(stdio_wire):
    frame = frames.notification("notifications/cancelled", {"requestId": 12345})
    assert stdio_wire.send(frame) is None
    assert stdio_wire.transcript[-1].up == (frames.dumps(frame) + "\n").encode()
    assert stdio_wire.transcript[-1].down == b""


def test_envelope_errors_explain_themselves(stdio_wire):
    reply = stdio_wire.request("tools/list", meta={frames.PROTOCOL_VERSION_KEY: "1900-01-01"})
    assert reply.code == -32022 and "2026-07-28" in reply.error["data"]["supported"]
    assert "Unsupported protocol version" in reply.explain()
    retried = frames.retry_with_supported_version(frames.request("tools/list", id=300), reply)
    assert stdio_wire.send(retried).ok
    assert stdio_wire.request("tools/list", meta=None).code == -32602


def test_transcript_bytes_equal_what_was_written_and_read():
    with StdioWire.labserver() as wire:
        frame = frames.request("tools/call", SEARCH)
        reply = wire.send(frame)
        exchange = wire.transcript[0]
        assert exchange.up == (frames.dumps(frame) + "\n").encode()
        assert exchange.down == reply.raw + b"\n"
        assert (exchange.framing_up, exchange.framing_down) == (1, 1)
        assert exchange.bytes_up == len(frames.dumps(frame).encode()) + 1


def test_stderr_is_collected_apart_and_is_not_an_error(stdio_wire):
    reply = stdio_wire.request("tools/call", {"name": "sync_notes", "arguments": {"remote": "x"}})
    assert reply.ok and reply.is_tool_error
    assert all(isinstance(line, str) for line in stdio_wire.stderr_lines)


def test_read_returns_messages_nobody_waited_for_or_none():
    # A server that prints one stray notification and one non-JSON line, then echoes nothing.
    code = ("import sys; print('{\"jsonrpc\":\"2.0\",\"method\":\"notifications/hello\"}'); print('oops'); "
            "sys.stdout.flush(); sys.stdin.read()")
    with StdioWire(python(code)) as wire:
        first = wire.read(timeout=5)
        second = wire.read(timeout=5)
        assert first.message["method"] == "notifications/hello"
        assert second.message is None and "not JSON" in second.problem
        assert wire.read(timeout=0.1) is None
        assert wire.notifications == [first.message]


ODD_LINES = [
    {"jsonrpc": "2.0", "id": [1], "result": {}},
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": {"a": 1}, "progress": 1}},
    {"jsonrpc": "2.0", "id": 1, "result": {}},
]
ODD_IDS_THEN_REPLY = python(f"import sys; sys.stdin.readline(); print({chr(10).join(map(json.dumps, ODD_LINES))!r}); "
                            "sys.stdout.flush(); sys.stdin.read()")


def test_a_reply_id_or_progress_token_that_is_a_list_or_object_does_not_stop_the_reader():
    with StdioWire(ODD_IDS_THEN_REPLY, timeout=5) as wire:
        assert wire.request("ping").ok  # the real reply after the odd lines still arrives
        assert wire.read(timeout=2).message["id"] == [1]
        assert wire.read(timeout=2).message["params"]["progressToken"] == {"a": 1}


def test_a_server_that_never_answers_times_out_clearly():
    with StdioWire(python("import sys; sys.stdin.read()"), timeout=0.3) as wire:
        with pytest.raises(WireTimeout, match=r"no reply to id 1 \(tools/call\) within 0.3 s"):
            wire.request("tools/call", SEARCH)
        assert wire.transcript[0].down == b""  # the line that went out is still recorded


def test_a_server_that_dies_mid_request_says_how():
    code = "import sys; sys.stdin.readline(); sys.stderr.write('bye: disk on fire\\n'); sys.exit(3)"
    with StdioWire(python(code)) as wire:
        with pytest.raises(ServerExited, match="exit code 3") as failure:
            wire.request("tools/list")
        assert failure.value.returncode == 3
        assert "bye: disk on fire" in str(failure.value)
        with pytest.raises(ServerExited):
            wire.request("tools/list")


def test_close_lets_the_server_answer_what_it_read():
    wire = StdioWire.labserver()
    for n in range(1, 7):
        wire.write(frames.request("tools/call", SEARCH, id=n))
    assert wire.close(grace=30) == 0  # generous: a loaded machine may take a while to start the server
    assert sorted(e.id for e in wire.transcript) == [1, 2, 3, 4, 5, 6]
    assert wire.close() == 0  # idempotent


def test_legacy_handshake_over_stdio():
    with StdioWire.labserver() as wire:
        init = wire.send(frames.legacy_initialize())
        assert init.ok and init.result["protocolVersion"] == "2025-11-25"
        assert wire.send(frames.legacy_initialized()) is None
        tools = wire.send(frames.legacy_request("tools/list", id=2))
        assert tools.ok and "resultType" not in tools.result


HELLO_THEN_ANSWER = python("import sys; print('{\"jsonrpc\":\"2.0\",\"method\":\"notifications/hello\"}', flush=True); "
                           "sys.stdin.readline(); print('{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}', flush=True); "
                           "sys.stdin.read()")


def test_a_line_that_breaks_filing_is_kept_as_a_reply_and_reading_goes_on(monkeypatch):
    from mcpwire.matching import Matcher
    real_file = Matcher._file_parsed  # where a line that is not a reply we wait for is looked at

    def breaks_on_hello(matcher, line, body):
        if b"hello" in line:
            raise TypeError("an unexpected value")
        return real_file(matcher, line, body)
    monkeypatch.setattr(Matcher, "_file_parsed", breaks_on_hello)
    with StdioWire(HELLO_THEN_ANSWER, timeout=5) as wire:
        assert wire.request("tools/list").ok  # a past reader died here, and every later request timed out
        kept = wire.read(timeout=2)
        assert "could not file this line (TypeError: an unexpected value)" in kept.problem and b"hello" in kept.raw


def test_notifications_arrive_while_nobody_waits():
    with StdioWire(HELLO_THEN_ANSWER, timeout=5) as wire:
        deadline = time.monotonic() + 5
        while not wire.notifications and time.monotonic() < deadline:
            time.sleep(0.05)  # no call on the wire: the background reader files it
        assert wire.notifications == [{"jsonrpc": "2.0", "method": "notifications/hello"}]


def test_many_threads_waiting_on_one_wire_each_get_their_own_reply(stdio_wire):
    replies = {}

    def ask(n):  # different pauses, so the replies come back out of order
        try:
            replies[n] = stdio_wire.send(frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": n}},
                                                        id=f"t-{n}"), timeout=60).id
        except Exception as error:  # shown in the assertion below, not lost on the thread
            replies[n] = error
    threads = [threading.Thread(target=ask, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(90)
    assert replies == {n: f"t-{n}" for n in range(8)}
