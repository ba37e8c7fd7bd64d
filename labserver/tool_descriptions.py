"""Tool descriptions an operator changes while the lab runs: `python -m labserver --tool-descriptions FILE`.

FILE holds a JSON object that maps a tool name to the description the lab gives that tool in place of its own.
The lab reads it when it starts and again whenever its text changes (it looks every 0.2 s), the way a server
whose operator installs an update at run time changes under its connected clients; a name taken out of the
file gets the lab's own description back. When that changes what `tools/list` answers, the lab publishes a
tools-list change on its subscription bus, so every `subscriptions/listen` that asked for `toolsListChanged`
receives `notifications/tools/list_changed` (server/tools, List Changed Notification: a SHOULD). The change
comes from outside the protocol, never from a request, so the tool list stays the same for every connection.

A missing file counts as an empty object: every tool has the lab's own description, so taking the file away undoes
every change. A file that is not JSON, or not an object of strings, changes nothing; a name the lab has no tool
for is left out. Both are reported on stderr, since the operator, not a client, has to fix them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import SubscriptionBus, ToolsListChanged

LOOK_EVERY_S = 0.2


class ToolDescriptions:
    """Keeps the lab's tool descriptions in step with FILE."""

    def __init__(self, mcp: MCPServer, bus: SubscriptionBus, path: Path) -> None:
        self.mcp = mcp
        self.bus = bus
        self.path = path
        self.own: dict[str, str | None] | None = None  # the lab's own descriptions, read once every tool is added
        self.text: str | None = None  # the file's text as last read

    def apply(self) -> bool:
        """Read FILE if its text changed and give the tools its descriptions; True if tools/list now differs."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = "{}"
        except OSError as error:
            return report(f"cannot read {self.path}: {error.strerror}")
        if text == self.text:
            return False
        self.text = text
        wanted = parse(text)
        if wanted is None:
            return report(f"{self.path} is not a JSON object of tool names and descriptions; descriptions unchanged")
        tools = {tool.name: tool for tool in self.mcp._tool_manager.list_tools()}
        if self.own is None:
            self.own = {name: tool.description for name, tool in tools.items()}
        for name in sorted(set(wanted) - set(tools)):
            report(f"{self.path} names {name!r}, which is not one of the lab's tools; left out")
        changed = False
        for name, tool in tools.items():
            description = wanted.get(name, self.own.get(name, tool.description))
            if tool.description != description:
                tool.description = description
                changed = True
        return changed

    async def follow(self) -> None:
        """Apply FILE now and whenever it changes, telling the listens each time the tool list changes."""
        while True:
            if self.apply():
                await self.bus.publish(ToolsListChanged())
            await anyio.sleep(LOOK_EVERY_S)


def parse(text: str) -> dict[str, str] | None:
    """The {name: description} object in text, or None if text is not one."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
        return None
    return value


def report(message: str) -> bool:
    print(f"notes-lab: {message}", file=sys.stderr, flush=True)
    return False
