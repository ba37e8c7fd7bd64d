"""When the lab shuts down, it ends each open subscriptions/listen the 2026-07-28 way (labserver.listen_endings):
a `notifications/cancelled` naming the listen, then a result with the subscription id, the last two messages for
that listen. A listen the client cancelled gets nothing. On stdio the shutdown is stdin's EOF; over HTTP it is
the server stopping, and the listen's SSE stream carries both before it ends. Every frame is checked against
the 2026-07-28 schema."""

from __future__ import annotations

import threading
import time

import pytest

import mcpwire
from mcpwire import HttpWire, StdioWire, frames, tasks, validate

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
REASON = "The notes lab is shutting down."


def listen(listen_id, **meta):
    return frames.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id=listen_id, **meta)


def about(wire, listen_id):
    """The notifications a stdio wire received for one listen, in order."""
    return [note for note in wire.notifications if note["params"].get("_meta", {}).get(SUBSCRIPTION_ID) == listen_id]


def assert_graceful_end(notifications, reply, listen_id):
    """ack, cancelled naming the listen, then the result carrying the subscription id."""
    assert [note["method"] for note in notifications] == ["notifications/subscriptions/acknowledged",
                                                          "notifications/cancelled"], notifications
    cancelled = notifications[1]
    assert cancelled["params"] == {"_meta": {SUBSCRIPTION_ID: listen_id}, "requestId": listen_id, "reason": REASON}
    for note in notifications:
        assert validate(note) == [], note
    assert reply.ok and reply.result["resultType"] == "complete", reply.text
    assert reply.result["_meta"][SUBSCRIPTION_ID] == listen_id
    assert validate(reply, method="subscriptions/listen") == []


@pytest.mark.parametrize("flags", [(), ("--tasks",)], ids=["sdk-handler", "tasks-handler"])
def test_stdio_eof_ends_an_open_listen_with_cancelled_then_its_result(flags):
    wire = StdioWire.labserver(*flags)
    wire.write(listen("kept"))
    assert wire.read(timeout=60).message["method"] == "notifications/subscriptions/acknowledged"
    assert wire.close() == 0
    assert_graceful_end(about(wire, "kept"), wire.wait("kept", timeout=2), "kept")
    # The transcript lists exchanges as they completed: the cancel came before the result, and nothing after it.
    assert [(exchange.id, exchange.method) for exchange in wire.transcript][-2:] == [
        (None, "notifications/cancelled"), ("kept", "subscriptions/listen")]


def test_a_listen_the_client_cancelled_gets_nothing_at_shutdown():
    wire = StdioWire.labserver()
    wire.write(listen("dropped"))
    assert wire.read(timeout=60).message["method"] == "notifications/subscriptions/acknowledged"
    wire.send(frames.notification("notifications/cancelled", {"requestId": "dropped"}))
    assert wire.request("tools/list").ok  # the cancel was read before stdin closes
    assert wire.close() == 0
    assert [note["method"] for note in about(wire, "dropped")] == ["notifications/subscriptions/acknowledged"]
    with pytest.raises(mcpwire.ServerExited):
        wire.wait("dropped", timeout=2)
    assert not [note for note in wire.notifications if note["method"] == "notifications/cancelled"]


def test_a_listen_sent_just_before_eof_is_acknowledged_first():
    wire = StdioWire.labserver()
    assert wire.request("tools/list", timeout=60).ok
    wire.write(listen("late"))
    assert wire.close() == 0
    assert_graceful_end(about(wire, "late"), wire.wait("late", timeout=2), "late")


def test_a_task_listen_is_ended_the_same_way():
    wire = StdioWire.labserver("--tasks")
    frame = frames.request("subscriptions/listen", {"notifications": {"taskIds": []}}, id="tasks",
                           meta=tasks.declare())
    wire.write(frame)
    assert wire.read(timeout=60).message["params"]["notifications"] == {"taskIds": []}
    assert wire.close() == 0
    ended = [note for note in about(wire, "tasks") if note["method"] == "notifications/cancelled"]
    assert [note["params"]["requestId"] for note in ended] == ["tasks"]
    assert wire.wait("tasks", timeout=2).result["_meta"][SUBSCRIPTION_ID] == "tasks"


def test_http_stop_ends_the_listen_stream_with_cancelled_then_its_result():
    http = HttpWire.labserver()
    held = []
    listener = threading.Thread(target=lambda: held.append(HttpWire(http.url).send(listen("held"), stream_for=20)))
    listener.start()
    time.sleep(1.5)  # the stream is open and acknowledged before the server stops
    started = time.monotonic()
    http.close()
    listener.join(timeout=20)
    stream = held[0]
    assert stream.status == 200 and stream.content_type == "text/event-stream"
    assert_graceful_end(stream.notifications, stream, "held")
    # The stream ended with the result: the client did not wait out its 20 s.
    assert time.monotonic() - started < 10
