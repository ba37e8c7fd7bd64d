"""When the lab shuts down, it ends each open subscriptions/listen the 2026-07-28 way (labserver.listen_endings):
a `notifications/cancelled` naming the listen, then a result with the subscription id, the last two messages for
that listen. A listen the client cancelled gets nothing. On stdio the shutdown is stdin's EOF; over HTTP it is
the server stopping, and the listen's SSE stream carries both before it ends. Every frame is checked against
the 2026-07-28 schema."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from mcp.server.context import ServerRequestContext
from mcp_types import (
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotification,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)

import mcpwire
from labserver.listen_endings import STREAM_ENDED_REASON, GracefulListens
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


# GracefulListens in process, with a stand-in for the inner handler and the session, for the two paths the wire
# cannot reach on demand: a listen acknowledged only after the shutdown began, and an inner handler that ends a
# stream by itself (SDK 2.3.0 does so for a client that stopped reading).


class RecordingSession:
    def __init__(self):
        self.sent = []

    async def send_notification(self, notification, related_request_id=None):
        self.sent.append((notification.method, notification.params.model_dump(by_alias=True, exclude_none=True)))


def listen_context(session, listen_id):
    return ServerRequestContext(session=session, lifespan_context={}, protocol_version="2026-07-28",
                                method="subscriptions/listen", request_id=listen_id)


def acknowledging(before_ack=None, then=None):
    """An inner handler that acknowledges (after before_ack is set, if given), then runs `then` or waits for ever."""
    async def handler(ctx, params):
        if before_ack is not None:
            await before_ack.wait()
        await ctx.session.send_notification(SubscriptionsAcknowledgedNotification(
            params=SubscriptionsAcknowledgedNotificationParams(notifications=SubscriptionFilter(),
                                                               _meta={SUBSCRIPTION_ID: ctx.request_id})))
        if then is not None:
            return then(ctx)
        await anyio.sleep_forever()

    return handler


def params():
    return SubscriptionsListenRequestParams(notifications=SubscriptionFilter(tools_list_changed=True))


def test_a_listen_acknowledged_after_the_shutdown_began_is_ended_after_its_acknowledgement():
    async def scenario():
        session, gate, results = RecordingSession(), anyio.Event(), []
        listens = GracefulListens(acknowledging(before_ack=gate))
        async with anyio.create_task_group() as group:
            group.start_soon(lambda: _append(results, listens(listen_context(session, 7), params())))
            await anyio.wait_all_tasks_blocked()
            ending = anyio.Event()

            async def end():
                await listens.end_all()
                ending.set()

            group.start_soon(end)
            await anyio.wait_all_tasks_blocked()
            assert session.sent == [] and not ending.is_set()  # nothing before the acknowledgement
            gate.set()
        return session.sent, results

    sent, results = anyio.run(scenario)
    assert [method for method, _ in sent] == ["notifications/subscriptions/acknowledged", "notifications/cancelled"]
    assert sent[1][1] == {"_meta": {SUBSCRIPTION_ID: 7}, "requestId": 7, "reason": REASON}
    assert results[0].model_dump(by_alias=True, exclude_none=True)["_meta"] == {SUBSCRIPTION_ID: 7}


def test_a_stream_the_inner_handler_ends_itself_gets_the_cancel_and_keeps_its_result():
    own = SubscriptionsListenResult(_meta={SUBSCRIPTION_ID: "own"})

    async def scenario():
        session = RecordingSession()
        result = await GracefulListens(acknowledging(then=lambda ctx: own))(listen_context(session, "own"), params())
        return session.sent, result

    sent, result = anyio.run(scenario)
    assert [method for method, _ in sent] == ["notifications/subscriptions/acknowledged", "notifications/cancelled"]
    assert sent[1][1]["reason"] == STREAM_ENDED_REASON
    assert result is own


async def _append(results, call):
    results.append(await call)
