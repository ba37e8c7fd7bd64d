import json
import socket
import threading

import pytest

from mcpwire import HttpWire, ServerExited, WireError, WireTimeout, frames, validate
from mcpwire.errors import InvalidHeaderAnnotation

READ_NOTE = {"name": "read_note", "arguments": {"note_id": "spindle-density"}}
REINDEX = {"name": "reindex", "arguments": {"pause_ms": 0}}


def head_and_body(exchange):
    head, _, body = exchange.up.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    return lines[0], dict(line.split(": ", 1) for line in lines[1:]), body


def test_json_reply_with_status_headers_and_derived_request_headers(http_wire):
    reply = http_wire.request("tools/list")
    assert reply.status == 200 and reply.content_type == "application/json" and reply.ok
    assert reply.headers["content-type"].startswith("application/json")
    assert validate(reply) == []
    request_line, sent, body = head_and_body(http_wire.transcript[-1])
    assert request_line == "POST /mcp HTTP/1.1"
    assert sent["Accept"] == "application/json, text/event-stream"
    assert sent["MCP-Protocol-Version"] == "2026-07-28" and sent["Mcp-Method"] == "tools/list"
    assert json.loads(body)["id"] == reply.id
    assert int(sent["Content-Length"]) == len(body)


def test_tools_seen_in_tools_list_give_mcp_param_headers(http_wire):
    http_wire.request("tools/list")
    reply = http_wire.request("tools/call", READ_NOTE)
    assert reply.ok and not reply.is_tool_error
    _, sent, _ = head_and_body(http_wire.transcript[-1])
    assert sent["Mcp-Name"] == "read_note" and sent["Mcp-Param-Note-Id"] == "spindle-density"


def test_non_ascii_argument_goes_base64_and_the_server_accepts_it(http_wire):
    http_wire.request("tools/list")
    reply = http_wire.request("tools/call", {"name": "read_note", "arguments": {"note_id": "schläf"}})
    assert reply.status == 200 and reply.error is None
    _, sent, _ = head_and_body(http_wire.transcript[-1])
    assert sent["Mcp-Param-Note-Id"] == "=?base64?c2NobMOkZg==?="


def test_passing_the_tool_definition_explicitly():
    tool = {"name": "read_note", "inputSchema": {"type": "object", "properties": {
        "note_id": {"type": "string", "x-mcp-header": "Note-Id"}}}}
    wire = HttpWire("http://127.0.0.1:9/mcp")  # nothing is sent: only the headers are derived
    frame = frames.request("tools/call", READ_NOTE)
    assert wire.headers_for(frame, tool)["Mcp-Param-Note-Id"] == "spindle-density"
    tool["inputSchema"]["properties"]["note_id"]["x-mcp-header"] = "Note Id"
    with pytest.raises(InvalidHeaderAnnotation):
        wire.headers_for(frame, tool)


@pytest.mark.parametrize("override, expected", [
    ({"Mcp-Method": "tools/list"}, -32020),
    ({"Mcp-Name": None}, -32020),
    ({"MCP-Protocol-Version": "2026-07-29"}, -32020),
    ({"Mcp-Param-Note-Id": "another-note"}, -32020),
])
def test_broken_headers_are_refused_with_header_mismatch(http_wire, override, expected):
    http_wire.request("tools/list")
    reply = http_wire.request("tools/call", READ_NOTE, headers=override)
    assert reply.status == 400 and reply.code == expected
    assert "Header mismatch" in reply.explain()


def test_sse_reply_collects_progress_before_the_final_response(http_wire):
    reply = http_wire.request("tools/call", REINDEX, meta={"progressToken": "tok"})
    assert reply.content_type == "text/event-stream" and reply.ok and reply.problem is None
    assert reply.notifications and all(n["params"]["progressToken"] == "tok" for n in reply.notifications)
    assert json.loads(reply.payload) == reply.message
    exchange = http_wire.transcript[-1]
    assert exchange.down.startswith(b"HTTP/1.1 200")
    assert len(exchange.down_payloads) == len(reply.notifications) + 1
    assert exchange.framing_down > 0 and b"event: message" in exchange.down


def test_malformed_raw_body_gets_400_parse_error(http_wire):
    reply = http_wire.send_raw("{oops")
    assert (reply.status, reply.code, reply.id) == (400, -32700, None)
    assert http_wire.transcript[-1].up.endswith(b"\r\n\r\n{oops")


def test_a_raw_tools_call_whose_name_is_not_a_string_is_still_sent(http_wire):
    http_wire.request("tools/list")  # known tools are looked up by name for their Mcp-Param headers
    reply = http_wire.send_raw('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":[]}}')
    assert reply.status == 400 and reply.code is not None

def test_unsupported_version_then_retry(http_wire):
    wrong = frames.request("tools/list", meta={frames.PROTOCOL_VERSION_KEY: "1900-01-01"}, id=900)
    reply = http_wire.send(wrong)
    assert reply.status == 400 and reply.code == -32022
    assert http_wire.send(frames.retry_with_supported_version(wrong, reply)).ok


def test_notify_expects_202(http_wire):
    reply = http_wire.notify("notifications/cancelled", {"requestId": 1})
    assert reply.status == 202 and reply.raw == b"" and reply.message is None
    with pytest.raises(WireError, match="expected 202"):
        http_wire.notify("notifications/cancelled", {"requestId": 1}, headers={"Content-Type": "text/plain"})


def test_plain_text_body_is_a_reply_that_says_it_is_not_json(http_wire):
    reply = http_wire.request("tools/list", headers={"Origin": "http://evil.example"})
    assert reply.status == 403 and reply.message is None
    assert "not JSON" in reply.problem and "Invalid Origin header" in reply.explain()


def test_listen_stream_can_be_read_for_a_while_and_closed(http_wire):
    frame = frames.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=950)
    reply = http_wire.send(frame, stream_for=0.5)
    assert reply.notifications[0]["method"] == "notifications/subscriptions/acknowledged"
    assert "closed the stream" in reply.problem
    assert http_wire.request("tools/list").ok  # the wire carries on with a fresh connection


def test_legacy_handshake_over_http():
    with HttpWire.labserver() as wire:
        init = wire.send(frames.legacy_initialize())
        assert init.ok and wire.default_version == "2025-11-25"
        assert wire.send(frames.legacy_initialized()).status == 202
        tools = wire.send(frames.legacy_request("tools/list", id=2))
        assert tools.ok and "resultType" not in tools.result
        _, sent, _ = head_and_body(wire.transcript[-1])
        assert sent["MCP-Protocol-Version"] == "2025-11-25" and "Mcp-Method" not in sent


# --- hand-made servers for the failures the lab server never produces ---------------------------

def serve_once(answer):
    """Listen on a free port; for one connection read the request, then run answer(conn) and close."""
    listener = socket.create_server(("127.0.0.1", 0))
    received = []

    def run():
        conn, _ = listener.accept()
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = int(next(line.split(b": ")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
        while len(body) < length:
            body += conn.recv(65536)
        received.append(head + b"\r\n\r\n" + body)
        answer(conn)
        conn.close()
        listener.close()

    threading.Thread(target=run, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/mcp", received


SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunk(data):
    return b"%x\r\n%s\r\n" % (len(data), data)


def test_truncated_sse_stream_is_a_reply_that_says_so():
    event = b'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\r\n\r\n'
    sent = SSE_HEAD + chunk(event) + chunk(b'event: message\r\ndata: {"jsonrpc":"2.0","id":1,"res')
    url, received = serve_once(lambda conn: conn.sendall(sent))
    wire = HttpWire(url, timeout=5)
    reply = wire.request("tools/list")
    assert reply.message is None and "cut off before the final response" in reply.problem
    assert len(reply.notifications) == 1
    exchange = wire.transcript[0]
    assert exchange.up == received[0] and exchange.down == sent  # byte-exact both ways


def test_non_json_body_and_exact_down_bytes():
    sent = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\nnot json!"
    url, received = serve_once(lambda conn: conn.sendall(sent))
    wire = HttpWire(url, timeout=5)
    reply = wire.request("tools/list")
    assert reply.status == 200 and "not JSON" in reply.problem and not reply.ok
    assert wire.transcript[0].down == sent and wire.transcript[0].up == received[0]


def test_an_sse_event_that_is_not_utf8_is_a_reply_that_says_so():
    event = b'event: message\r\ndata: {"jsonrpc":"2.0","id":1,"result":{"x":"\xff"}}\r\n\r\n'
    sent = SSE_HEAD + chunk(event) + chunk(b"")
    url, _ = serve_once(lambda conn: conn.sendall(sent))
    wire = HttpWire(url, timeout=5)
    reply = wire.request("tools/list")
    assert reply.message is None and "ended without a final response" in reply.problem
    exchange = wire.transcript[0]
    assert exchange.down == sent and exchange.framing_down == len(sent) - len(event) + len(b"event: message\r\ndata: \r\n\r\n")

def test_a_server_that_never_answers_times_out():
    release = threading.Event()
    url, _ = serve_once(lambda conn: release.wait(10))
    wire = HttpWire(url, timeout=0.3)
    with pytest.raises(WireTimeout, match=r"no reply to id 1 \(tools/list\) within 0.3 s"):
        wire.request("tools/list")
    release.set()


def test_a_stream_that_never_finishes_times_out_with_what_arrived():
    release = threading.Event()
    event = b'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}\r\n\r\n'
    url, _ = serve_once(lambda conn: (conn.sendall(SSE_HEAD + chunk(event)), release.wait(10)))
    wire = HttpWire(url, timeout=0.5)
    with pytest.raises(WireTimeout, match="1 notifications so far"):
        wire.request("tools/list")
    release.set()


def test_a_server_that_dies_mid_request():
    url, _ = serve_once(lambda conn: None)  # reads the request, then hangs up without a word
    with pytest.raises(WireError, match="no HTTP response"):
        HttpWire(url, timeout=5).request("tools/list")


def test_a_lab_server_that_died_is_reported_with_its_exit_code():
    wire = HttpWire.labserver()
    try:
        wire._process.kill()
        wire._process.wait()
        with pytest.raises(ServerExited, match="exit code"):
            wire.request("tools/list")
    finally:
        wire.close()


# --- replies h11 reads that a hand-written reader easily gets wrong -------------------------------

RESULT = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'


def test_an_interim_100_continue_is_kept_in_the_bytes_and_the_final_status_is_the_reply():
    sent = (b"HTTP/1.1 100 Continue\r\n\r\n"
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(RESULT), RESULT))
    url, _ = serve_once(lambda conn: conn.sendall(sent))
    wire = HttpWire(url, timeout=5)
    reply = wire.request("tools/list")
    assert reply.status == 200 and reply.result == {"tools": []}
    assert wire.transcript[0].down == sent


def test_chunk_extensions_and_a_body_that_runs_until_the_server_closes():
    framed = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
              b"a;note=ignored\r\n" + RESULT[:10] + b"\r\n" + chunk(RESULT[10:]) + chunk(b""))
    unframed = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\r\n" + RESULT
    for sent in (framed, unframed):
        url, _ = serve_once(lambda conn, sent=sent: conn.sendall(sent))
        wire = HttpWire(url, timeout=5)
        assert wire.request("tools/list").result == {"tools": []}
        assert wire.transcript[0].down == sent


@pytest.mark.parametrize("head", [b"HTTP/1.1 OK\r\n\r\n", b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
                                  b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\ncontent-length: 6\r\n\r\nabcde"])
def test_a_malformed_response_head_is_an_error_that_says_what_broke(head):
    url, _ = serve_once(lambda conn: conn.sendall(head))
    with pytest.raises(WireError, match="complete status line and headers"):
        HttpWire(url, timeout=5).request("tools/list")
