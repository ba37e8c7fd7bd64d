"""The lab ends its open `subscriptions/listen` streams itself when it shuts down, the 2026-07-28 way.

The spec asks two things of a server that tears a subscription down: the cancellation page's MUST, a
`notifications/cancelled` naming the listen's request id (basic/patterns/cancellation), and the subscriptions
page's SHOULD, a successful `subscriptions/listen` result carrying the subscription id, before the stream
closes (basic/patterns/subscriptions, Graceful Closure). SDK 2.3.0 sends neither at shutdown: nothing in it
calls `ListenHandler.close` (which would send the result, never the notification), and on stdio its stdin EOF
answers an open listen with `-32000 "Connection closed"`.

`GracefulListens` wraps whichever listen handler the lab registered (SDK 2.3.0's `ListenHandler`, or
labserver.tasks' `TasksListen`) and remembers each open listen. `end_all` ends every one: it cancels the inner
handler (after its acknowledgement, which must stay the first message of the stream), sends
`notifications/cancelled` while the listen is still in progress, then returns the result, which the SDK writes
as the last message. A listen the client cancels is left alone: the server sends nothing more for it. The stdio
front calls `end_all` at stdin EOF (labserver.stdio_front); over HTTP, the server calls it before it stops
(labserver.http).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types import (
    CancelledNotification,
    CancelledNotificationParams,
    SubscriptionsAcknowledgedNotification,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)

LISTEN_METHOD = "subscriptions/listen"
SHUTDOWN_REASON = "The notes lab is shutting down."
STREAM_ENDED_REASON = "The server ended this subscription."
ENDING_GRACE_S = 5.0  # how long a shutdown waits for its listens: a client that stopped reading must not hold it


class OpenListen:
    """One listen being served: its cancel scope, and whether its acknowledgement went out."""

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.acknowledged = False
        self.finished = anyio.Event()


class AcknowledgementWatch:
    """The request's session, seen by the inner handler: notes when the acknowledgement has been sent."""

    def __init__(self, session: Any, listen: OpenListen, listens: GracefulListens) -> None:
        self._session = session
        self._listen = listen
        self._listens = listens

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)

    async def send_notification(self, notification: Any, related_request_id: Any = None) -> None:
        await self._session.send_notification(notification, related_request_id=related_request_id)
        if isinstance(notification, SubscriptionsAcknowledgedNotification):
            self._listen.acknowledged = True
            if self._listens.reason is not None:  # the lab began to shut down before this listen was acknowledged
                self._listen.scope.cancel()


class GracefulListens:
    """A subscriptions/listen handler that can end every open listen with a notification and a result."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.open: set[OpenListen] = set()
        self.reason: str | None = None

    async def __call__(self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams,
                       ) -> SubscriptionsListenResult:
        listen = OpenListen()
        watched = dataclasses.replace(ctx, session=AcknowledgementWatch(ctx.session, listen, self))
        self.open.add(listen)
        result = None
        try:
            with listen.scope:
                result = await self.inner(watched, params)
            # The inner handler returned by itself (SDK 2.3.0 ends a stream whose client stopped reading), or
            # end_all cancelled it: either way the server ended this subscription.
            await self._send_cancelled(ctx, self.reason or STREAM_ENDED_REASON)
            return result or completed(ctx)
        finally:
            self.open.discard(listen)
            listen.finished.set()

    async def end_all(self, reason: str = SHUTDOWN_REASON) -> None:
        """End every open listen, and any that is acknowledged from now on; return once the open ones are over."""
        self.reason = reason
        for listen in list(self.open):
            if listen.acknowledged:
                listen.scope.cancel()
        for listen in list(self.open):
            await listen.finished.wait()

    @staticmethod
    async def _send_cancelled(ctx: ServerRequestContext[Any, Any], reason: str) -> None:
        meta = {SUBSCRIPTION_ID_META_KEY: ctx.request_id}
        await ctx.session.send_notification(
            CancelledNotification(params=CancelledNotificationParams(request_id=ctx.request_id, reason=reason,
                                                                     _meta=meta)),
            related_request_id=ctx.request_id)


def completed(ctx: ServerRequestContext[Any, Any]) -> SubscriptionsListenResult:
    """The graceful closure's result: no data beyond the subscription id."""
    return SubscriptionsListenResult(_meta={SUBSCRIPTION_ID_META_KEY: ctx.request_id})


def make_listens_graceful(mcp: MCPServer) -> GracefulListens:
    """Wrap the listen handler registered on mcp so the lab can end its listens; return the wrapper."""
    lowlevel = mcp._lowlevel_server
    entry = lowlevel.get_request_handler(LISTEN_METHOD)
    if entry is None:
        raise ValueError("the server serves no subscriptions/listen")
    graceful = GracefulListens(entry.handler)
    lowlevel.add_request_handler(LISTEN_METHOD, entry.params_type, graceful)
    return graceful


def graceful_listens(mcp: MCPServer) -> GracefulListens | None:
    """The lab's GracefulListens on mcp, if make_listens_graceful installed one."""
    entry = mcp._lowlevel_server.get_request_handler(LISTEN_METHOD)
    return entry.handler if entry is not None and isinstance(entry.handler, GracefulListens) else None
