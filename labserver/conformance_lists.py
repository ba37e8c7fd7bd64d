"""The server-stateless scenario's fixtures for logs and list changes: a tool that logs, and two that change lists.

On only with `python -m labserver --conformance` (through labserver.conformance's registration point). The
suite's server-stateless scenario calls `test_logging_tool` without a logLevel (no notifications/message may
come back) and calls `test_trigger_tool_change` and `test_trigger_prompt_change` while a subscriptions/listen
stream is open, expecting notifications/tools/list_changed and notifications/prompts/list_changed on it (a
SHOULD for a server that declares listChanged, as SDK 2.3.0 always does). The lab's own lists change only through
its operator (its tool descriptions, with --tool-descriptions: labserver.tool_descriptions), never through a
request, so the suite needs these fixtures to see that SHOULD kept.

`test_logging_tool` calls check_notes, the lab's tool that logs. Each trigger adds one labelled entry to its
list, or takes it away again if it is there, and tells the subscription bus, exactly as create_note tells it
about a new note.
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Prompt
from mcp_types import CallToolResult

from labserver.conformance_content import fixture
from labserver.tools import READS, hints

TOGGLED_TOOL = "test_toggled_tool"
TOGGLED_PROMPT = "test_toggled_prompt"
ON_AND_OFF = "Listed only after an odd number of calls of {trigger}, which adds it and takes it away in turn."


def toggled_tool() -> str:
    return f"{TOGGLED_TOOL} is listed now; the next call of test_trigger_tool_change takes it away."


def toggled_prompt() -> str:
    return f"{TOGGLED_PROMPT} is listed now; the next call of test_trigger_prompt_change takes it away."


def register_list_fixtures(mcp: MCPServer) -> None:
    """Add test_logging_tool, test_trigger_tool_change and test_trigger_prompt_change."""

    @mcp.tool(name="test_logging_tool", annotations=hints("Logging (conformance fixture)", **READS),
              description=fixture("tool") + "Calls check_notes, which logs through notifications/message when the "
              "request sets a logLevel, and only then.")
    async def logging_tool(ctx: Context) -> CallToolResult:
        return await mcp.call_tool("check_notes", {}, ctx)

    @mcp.tool(name="test_trigger_tool_change",
              annotations=hints("Change the tool list (conformance fixture)", read_only=False, destructive=False,
                                idempotent=False, open_world=False),
              description=fixture("tool") + f"Adds the tool {TOGGLED_TOOL} to the list, or takes it away if it is "
              "there, then sends notifications/tools/list_changed to every subscriptions/listen stream that asked "
              "for toolsListChanged.")
    async def trigger_tool_change(ctx: Context) -> str:
        if TOGGLED_TOOL in {tool.name for tool in await mcp.list_tools()}:
            mcp.remove_tool(TOGGLED_TOOL)
            done = "Took away"
        else:
            mcp.add_tool(toggled_tool, name=TOGGLED_TOOL, annotations=hints("Toggled tool (conformance fixture)", **READS),
                         description=fixture("tool") + ON_AND_OFF.format(trigger="test_trigger_tool_change"))
            done = "Added"
        await ctx.notify_tools_changed()
        return f"{done} the tool {TOGGLED_TOOL}; notifications/tools/list_changed sent."

    @mcp.tool(name="test_trigger_prompt_change",
              annotations=hints("Change the prompt list (conformance fixture)", read_only=False, destructive=False,
                                idempotent=False, open_world=False),
              description=fixture("tool") + f"Adds the prompt {TOGGLED_PROMPT} to the list, or takes it away if it "
              "is there, then sends notifications/prompts/list_changed to every subscriptions/listen stream that "
              "asked for promptsListChanged.")
    async def trigger_prompt_change(ctx: Context) -> str:
        if TOGGLED_PROMPT in {prompt.name for prompt in await mcp.list_prompts()}:
            mcp.remove_prompt(TOGGLED_PROMPT)
            done = "Took away"
        else:
            mcp.add_prompt(Prompt.from_function(
                toggled_prompt, name=TOGGLED_PROMPT,
                description=fixture("prompt") + ON_AND_OFF.format(trigger="test_trigger_prompt_change")))
            done = "Added"
        await ctx.notify_prompts_changed()
        return f"{done} the prompt {TOGGLED_PROMPT}; notifications/prompts/list_changed sent."
