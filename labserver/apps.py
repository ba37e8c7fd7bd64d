"""The io.modelcontextprotocol/ui extension (MCP Apps) in the lab, on with `python -m labserver --apps`.

Off by default, as SEP-2133 asks of an extension, and so that every other lesson's stored `tools/list`,
`resources/list` and `server/discover` stay as they are. Built on SDK 2.3.0's `mcp.server.apps`, which is
the server side only: the host and the View are the kit's own (`mcpwire.apps_host`, the HTML below).

- `show_hypnogram` (model and app): a night's sleep stages, rendered by the View at HYPNOGRAM_VIEW_URI.
- `epoch_detail` (app only): what the View calls when the user clicks one epoch; never in a model's list.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from mcp.server.apps import Apps, ResourceCsp, client_supports_apps
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


def build_apps() -> Apps:
    """The lab's Apps extension: two tools and the View they render with."""
    apps = Apps()

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
