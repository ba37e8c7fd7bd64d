"""The contract both wires keep (mcpwire.wire.Wire), checked on each: code written against it works on either."""

import socket
import threading

import pytest

from mcpwire import HttpWire, StdioWire, frames
from mcpwire.wire import RAW_TIMEOUT


@pytest.fixture(scope="module", params=["stdio", "http"])
def wire(request):
    start = StdioWire.labserver if request.param == "stdio" else HttpWire.labserver
    with start() as wire:
        wire.send(frames.request("server/discover", id="warm-up"), timeout=60)  # a loaded machine starts it slowly
        yield wire


def test_next_id_follows_every_integer_id_sent(wire):
    first = wire.next_id
    assert wire.request("tools/list").id == first and wire.next_id == first + 1
    wire.send(frames.request("tools/list", id=first + 10))
    assert wire.next_id == first + 11
    wire.send_raw(frames.dumps(frames.request("tools/list", id=first + 20)))
    assert wire.next_id == first + 21 and wire.request("tools/list").id == first + 21
    wire.send(frames.request("tools/list", id="text"))
    assert wire.next_id == first + 22


def test_send_raw_returns_the_reply_even_to_a_malformed_frame(wire):
    reply = wire.send_raw('{"jsonrpc":"2.0","id":5,"method":')
    assert reply.code == -32700


def test_send_and_send_raw_take_the_same_arguments(wire):
    frame = frames.request("tools/list", id=wire.next_id)
    assert wire.send(frame, None, timeout=5, stream_for=None).ok
    assert wire.send_raw(frames.dumps({**frame, "id": wire.next_id}), None, timeout=5).ok


def test_a_notification_gets_what_the_transport_gives_back(wire):
    answer = wire.notify("notifications/cancelled", {"requestId": 999})
    if wire.transport == "stdio":
        assert answer is None  # nothing comes back on stdio
    else:
        assert answer.status == 202 and answer.message is None


def test_headers_are_http_only(wire):
    derived = wire.headers_for(frames.request("tools/list"))
    assert bool(derived) == (wire.transport == "http")
    if wire.transport == "stdio":
        with pytest.raises(ValueError, match="stdio has no headers"):
            wire.send(frames.request("tools/list"), {"Mcp-Method": "x"})


def test_one_message_is_one_line_only_on_stdio(wire):
    assert wire.one_message('{\n"a": 1\n}\n') == ('{ "a": 1 }' if wire.transport == "stdio" else '{\n"a": 1\n}\n')


@pytest.fixture(params=["stdio", "http"])
def silent_wire(request):
    if request.param == "stdio":
        with StdioWire(["python3", "-c", "import sys; sys.stdin.read()"]) as wire:
            yield wire
        return
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    with HttpWire(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp") as wire:
        yield wire
    for connection, _ in accepted:
        connection.close()
    listener.close()


def test_send_raw_answers_silence_with_none_on_both(silent_wire):
    assert silent_wire.send_raw(frames.dumps(frames.request("tools/list", id=1)), timeout=0.3) is None
    assert RAW_TIMEOUT == 2.0


@pytest.mark.parametrize("start", [StdioWire.labserver, HttpWire.labserver], ids=["stdio", "http"])
def test_a_closed_wire_says_so(start):
    wire = start()
    assert not wire.closed and "closed" not in repr(wire)
    wire.close()
    assert wire.closed and repr(wire).endswith("closed)>")
