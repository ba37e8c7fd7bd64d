"""`subscriptions/listen` with `notifications.taskIds`: the listen stream also carries notifications/tasks.

SDK 2.3.0's own ListenHandler cannot do this: its `_honored_subset` (mcp/server/subscriptions.py) builds
the acknowledgement from the four core kinds only, so `taskIds` never reaches the acknowledgement, and its
bus carries a closed union of core events (mcp/shared/subscriptions.py `ServerEvent`). The SDK refuses an
extension `MethodBinding` for a spec method, so the lab registers this handler in the SDK handler's place
(`Server.add_request_handler`, a public API) and hands every listen without taskIds to the SDK's handler
unchanged. A task can run in another lab process, so task changes are read from the store, not the bus.
"""

from __future__ import annotations

from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver.server import require_client_extension
from mcp.server.subscriptions import ListenHandler, SubscriptionBus
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY, ServerEvent, event_matches, event_to_notification
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotification,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)
from pydantic import BaseModel

from labserver.tasks.extension import EXTENSION_ID, principal_of
from labserver.tasks.store import TaskExpired, TaskNotFound, TaskStore

WATCH_EVERY_S = 0.1


class TaskNotification(BaseModel):
    """notifications/tasks: its params are the DetailedTask tasks/get returns, without resultType."""

    method: str = "notifications/tasks"
    params: dict[str, Any]


def core_kinds(requested: SubscriptionFilter, task_ids: list[str]) -> SubscriptionFilter:
    """The acknowledged filter: the core kinds as the SDK honours them, plus the task ids accepted."""
    return SubscriptionFilter(
        tools_list_changed=True if requested.tools_list_changed else None,
        prompts_list_changed=True if requested.prompts_list_changed else None,
        resources_list_changed=True if requested.resources_list_changed else None,
        resource_subscriptions=list(requested.resource_subscriptions) if requested.resource_subscriptions else None,
        taskIds=task_ids,
    )


class TasksListen:
    """The lab's subscriptions/listen handler when tasks are on."""

    def __init__(self, bus: SubscriptionBus, store: TaskStore) -> None:
        self.bus = bus
        self.store = store
        self.core = ListenHandler(bus)

    async def __call__(self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams,
                       ) -> SubscriptionsListenResult:
        requested = (params.notifications.model_extra or {}).get("taskIds")
        if requested is None:
            return await self.core(ctx, params)
        require_client_extension(ctx, EXTENSION_ID)
        if not isinstance(requested, list) or not all(isinstance(task_id, str) for task_id in requested):
            raise MCPError(code=INVALID_PARAMS, message="notifications.taskIds must be a list of task ids")
        if ctx.request_id is None:
            raise MCPError(INVALID_REQUEST, "subscriptions/listen requires a request id")
        owner = principal_of(ctx)
        # Only tasks this principal may read are accepted; the others are left out of the acknowledgement
        # without saying why, so a stranger's task id looks exactly like one that does not exist.
        watched = [task_id for task_id in dict.fromkeys(requested) if self._visible(task_id, owner)]
        return await self._stream(ctx, core_kinds(params.notifications, watched), watched, owner)

    def _visible(self, task_id: str, owner: str) -> bool:
        try:
            self.store.get(task_id, owner)
        except (TaskNotFound, TaskExpired):
            return False
        return True

    async def _stream(self, ctx: ServerRequestContext[Any, Any], honored: SubscriptionFilter, watched: list[str],
                      owner: str) -> SubscriptionsListenResult:
        subscription_id = ctx.request_id
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: subscription_id}
        uris = frozenset(honored.resource_subscriptions or ())
        send, receive = anyio.create_memory_object_stream[ServerEvent](1024)

        def deliver(event: ServerEvent) -> None:
            if event_matches(honored, uris, event):
                try:
                    send.send_nowait(event)
                except (anyio.ClosedResourceError, anyio.WouldBlock):
                    pass  # a client that stopped reading misses list changes; it refetches when it listens again

        unsubscribe = self.bus.subscribe(deliver)
        try:
            # The acknowledgement is the first frame of the stream; each task's state as it is now follows.
            await ctx.session.send_notification(
                SubscriptionsAcknowledgedNotification(
                    params=SubscriptionsAcknowledgedNotificationParams(notifications=honored, _meta=meta)),
                related_request_id=subscription_id)
            seen: dict[str, int] = {}
            while True:
                for task_id, task in self._changed(watched, seen, owner):
                    await ctx.session.send_notification(
                        TaskNotification(params={**task, "_meta": meta}), related_request_id=subscription_id)
                    if task["status"] in ("completed", "failed", "cancelled"):
                        watched.remove(task_id)  # a finished task never changes again
                with anyio.move_on_after(WATCH_EVERY_S):
                    event = await receive.receive()
                    await ctx.session.send_notification(event_to_notification(event, meta),
                                                        related_request_id=subscription_id)
        finally:
            unsubscribe()
            send.close()
            receive.close()

    def _changed(self, watched: list[str], seen: dict[str, int], owner: str) -> list[tuple[str, dict[str, Any]]]:
        """(id, DetailedTask) for each watched task whose state changed since it was last sent."""
        changed = []
        for task_id, version in self.store.versions(watched).items():
            if seen.get(task_id) == version:
                continue
            try:
                row = self.store.get(task_id, owner)
            except (TaskNotFound, TaskExpired):
                watched.remove(task_id)
                continue
            seen[task_id] = row.version
            changed.append((task_id, row.detailed()))
        return changed
