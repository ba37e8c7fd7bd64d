"""The io.modelcontextprotocol/ui extension (MCP Apps) in the lab, on with `python -m labserver --apps`.

Off by default, as SEP-2133 asks of an extension, and so that every other lesson's stored `tools/list`,
`resources/list` and `server/discover` stay as they are. Built on SDK 2.3.0's `mcp.server.apps`, which is
the server side only: the host and the View are the kit's own (`mcpwire.apps.host`, the HTML below).

- `show_hypnogram` (model and app): a night's sleep stages, rendered by the View at HYPNOGRAM_VIEW_URI.
- `epoch_detail` (app only): what the View calls when the user clicks one epoch; never in a model's list, and
  listed only to a request that declares the extension (`hide_app_only_tools`): a host without MCP Apps would
  show it to its model.
- `flag_epoch` (model only): asks a sleep technician to re-score an epoch. It acts on the model's reading, where
  the user sees it in the conversation, so a View may not call it: the host refuses it (visibility ["model"]).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from mcp.server.apps import Apps, ResourceCsp, client_supports_apps
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from labserver import nights
from labserver.nights import EPOCH_SECONDS, NIGHTS
from labserver.tools import READS, hints

HYPNOGRAM_VIEW_URI = "ui://notes-lab/hypnogram.html"
STAGE_ORDER = ("W", "REM", "N1", "N2", "N3")  # the order the View stacks them, top to bottom

Night = Annotated[Literal["P07"], Field(description="The pilot night, e.g. 'P07'.")]


def view_html() -> str:
    """The View: hand-written HTML with a ~30-line postMessage JSON-RPC client, no framework, no network."""
    return (Path(__file__).parent / "app_views" / "hypnogram.html").read_text(encoding="utf-8")


def tally(stages: list[str]) -> str:
    return nights.tally(stages, STAGE_ORDER)


def minutes(seconds: int) -> str:
    return f"{seconds // 60} min {seconds % 60:02d} s"


def is_app_only(tool: dict) -> bool:
    ui = (tool.get("_meta") or {}).get("ui") or {}
    return "visibility" in ui and "model" not in ui["visibility"]


async def hide_app_only_tools(ctx: ServerRequestContext, call_next: CallNext) -> HandlerResult:
    """Lists app-only tools only to a request that declares MCP Apps (the SDK lists every tool to everyone).

    A client without the extension would put them in its model's list, where nothing can use them; the tools
    that also serve the model stay, their text answer being the fallback such a client gets.
    """
    result = await call_next(ctx)  # by the time it reaches middleware, the result is the wire's dict
    if ctx.method != "tools/list" or client_supports_apps(ctx):
        return result
    return {**result, "tools": [tool for tool in result["tools"] if not is_app_only(tool)]}


def build_apps() -> Apps:
    """The lab's Apps extension: three tools and the View they render with."""
    apps = Apps()
    flagged: dict[tuple[str, int], str] = {}  # (night, epoch) -> the reason, for this lab's life

    @apps.tool(resource_uri=HYPNOGRAM_VIEW_URI, annotations=hints("Show a hypnogram", **READS))
    async def show_hypnogram(ctx: Context, night: Night = "P07") -> CallToolResult:
        """Show a pilot night's hypnogram (sleep stages per 30 s epoch) to the user; returns the stage counts."""
        stages = NIGHTS[night]
        summary = f"Night {night}: {len(stages)} epochs of {EPOCH_SECONDS} s; {tally(stages)}."
        if not client_supports_apps(ctx):
            # No View will draw it, so the text carries the whole night (graceful degradation).
            return CallToolResult(content=[TextContent(type="text", text=f"{summary}\nEpoch by epoch: {' '.join(stages)}")])
        return CallToolResult(
            content=[TextContent(type="text", text=f"{summary} The hypnogram is shown to the user.")],
            structured_content={"night": night, "epochSeconds": EPOCH_SECONDS, "stages": stages},
        )

    @apps.tool(resource_uri=HYPNOGRAM_VIEW_URI, visibility=["app"], annotations=hints("Epoch detail", **READS))
    async def epoch_detail(
        night: Night, epoch: Annotated[int, Field(description="The epoch number, from 1.", ge=1)]
    ) -> str:
        """One epoch of a night: its stage and when it starts and ends."""
        stages = NIGHTS[night]
        if epoch > len(stages):
            raise ToolError(f"Night {night} has {len(stages)} epochs; there is no epoch {epoch}.")
        start = (epoch - 1) * EPOCH_SECONDS
        return (f"Epoch {epoch} of night {night} ({minutes(start)} to {minutes(start + EPOCH_SECONDS)}): "
                f"{stages[epoch - 1]}.")

    @apps.tool(resource_uri=HYPNOGRAM_VIEW_URI, visibility=["model"],
               annotations=hints("Flag an epoch for re-scoring", read_only=False, destructive=False, idempotent=True,
                                 open_world=False))
    async def flag_epoch(
        night: Night, epoch: Annotated[int, Field(description="The epoch number, from 1.", ge=1)],
        reason: Annotated[str, Field(description="Why the stage looks wrong, for the technician.", min_length=1)],
    ) -> CallToolResult:
        """Ask the sleep technician to re-score one epoch of a night; shows the night with the epoch flagged."""
        stages = NIGHTS[night]
        if epoch > len(stages):
            raise ToolError(f"Night {night} has {len(stages)} epochs; there is no epoch {epoch}.")
        flagged[(night, epoch)] = reason
        epochs = sorted(number for flagged_night, number in flagged if flagged_night == night)
        return CallToolResult(
            content=[TextContent(type="text", text=f"Epoch {epoch} of night {night} ({stages[epoch - 1]}) is flagged "
                                                   f"for re-scoring: {reason}")],
            structured_content={"night": night, "epochSeconds": EPOCH_SECONDS, "stages": stages, "flagged": epochs},
        )

    apps.add_html_resource(
        HYPNOGRAM_VIEW_URI,
        view_html(),
        name="hypnogram-view",
        title="Hypnogram view",
        description="Draws a night's hypnogram; a click on an epoch calls epoch_detail.",
        # Declared and empty: the View reaches no other origin, so the host's CSP lets nothing out.
        csp=ResourceCsp(),
        prefers_border=True,
    )
    return apps
