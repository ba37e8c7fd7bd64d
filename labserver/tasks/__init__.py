"""The `io.modelcontextprotocol/tasks` extension in the lab, on with `python -m labserver --tasks`.

Off by default so that every other lesson's stored `tools/list` and `server/discover` stay as they are.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import SubscriptionBus
from mcp_types import SubscriptionsListenRequestParams

from labserver.tasks.extension import DEFAULT_TTL_MS, EXTENSION_ID, TasksExtension
from labserver.tasks.listen import TasksListen
from labserver.tasks.store import TaskStore
from labserver.tasks.tools import register_task_tools

__all__ = ["DEFAULT_TTL_MS", "EXTENSION_ID", "TaskStore", "TasksExtension", "add_task_tools"]


def add_task_tools(mcp: MCPServer, bus: SubscriptionBus, extension: TasksExtension) -> None:
    """The tools that can run as tasks, and a listen handler that also follows tasks (see labserver.tasks.listen)."""
    register_task_tools(mcp)
    # _lowlevel_server is the SDK's own lowlevel Server (stdio_front uses it the same way).
    mcp._lowlevel_server.add_request_handler(
        "subscriptions/listen", SubscriptionsListenRequestParams, TasksListen(bus, extension.store))
