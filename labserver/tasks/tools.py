"""The two task tools: score_night (slow; a task when the request declares the extension, a plain call
otherwise) and review_night (asks the user half-way; runs only as a task)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import time

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY, CallToolResult
from pydantic import BaseModel, Field

from labserver.tasks import jobs
from labserver.tools import READS, hints

Night = Annotated[str, Field(description="The pilot night to score, e.g. 'P07'.")]
Epochs = Annotated[int, Field(description="How many 30 s epochs to score, from the start of the night.", ge=1, le=20)]
PauseMs = Annotated[int, Field(description="Time the scorer spends on each epoch, in milliseconds.", ge=0, le=2000)]
# A lab knob, not MCP: a lesson shortens the scorer's reread (labserver.tasks.jobs.RECHECK_MS) so it waits less. At
# least one of the worker's 100 ms looks (worker.SLICE_S), so an answered question still shows for a moment.
RecheckMs = Annotated[int, Field(description="Time the scorer rereads an epoch with the user's answer before it "
                                 "moves on, in milliseconds; the question stays in inputRequests until then.",
                                 ge=100, le=2000)]


class ScoreNightArguments(BaseModel):
    night: Night
    epochs: Epochs = 20
    pause_ms: PauseMs = 300


class ReviewNightArguments(BaseModel):
    night: Night
    pause_ms: PauseMs = 150
    recheck_ms: RecheckMs = jobs.RECHECK_MS


@dataclass(frozen=True)
class TaskTool:
    arguments: type[BaseModel]
    task_only: bool
    asks_user: bool
    poll_ms: int
    first_status: str


TASK_TOOLS = {
    "score_night": TaskTool(ScoreNightArguments, task_only=False, asks_user=False, poll_ms=1000,
                            first_status="Scoring started."),
    "review_night": TaskTool(ReviewNightArguments, task_only=True, asks_user=True, poll_ms=500,
                             first_status="Review started."),
}


class Inline:
    """A job's Progress for a plain synchronous call: no status to show, nothing to cancel, nobody to ask."""

    def status(self, message: str) -> None:
        pass

    def pause(self, seconds: float) -> None:
        time.sleep(seconds)

    def ask(self, key: str, request: dict[str, Any], message: str) -> dict[str, Any]:
        raise RuntimeError("a synchronous call cannot ask the user: this tool runs only as a task")


def register_task_tools(mcp: MCPServer) -> None:
    """Add score_night and review_night to mcp (the tasks extension decides how each call runs)."""

    @mcp.tool(annotations=hints("Score a night", **READS))
    async def score_night(night: Night, epochs: Epochs = 20, pause_ms: PauseMs = 300) -> CallToolResult:
        """Score a pilot night's sleep stages epoch by epoch; takes seconds, so it may run as a task."""
        arguments = {"night": night, "epochs": epochs, "pause_ms": pause_ms}
        result = await anyio.to_thread.run_sync(jobs.score_night, arguments, Inline())
        return CallToolResult.model_validate(result)

    @mcp.tool(annotations=hints("Review a night", **READS))
    async def review_night(night: Night, pause_ms: PauseMs = 150,
                           recheck_ms: RecheckMs = jobs.RECHECK_MS) -> CallToolResult:
        """Score a pilot night, asking the user about epochs the scorer cannot decide. Runs only as a task."""
        # A call that declared the extension became a task before it got here (labserver.tasks.extension);
        # this one did not (a 2025-11-25 client cannot), and the tool cannot run any other way.
        raise MCPError(code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                       message="Client did not declare required extension 'io.modelcontextprotocol/tasks'",
                       data={"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}})
