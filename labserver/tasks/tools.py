"""The task tools: score_night (slow; a task when the request declares the extension, a plain call otherwise) and
review_night (asks the user half-way; runs only as a task).

Two more are served only with `python -m labserver --conformance` for now, so every lesson's stored tools/list
stays as it is: review_epochs (asks all of review_night's questions at once, answered together or one at a time)
and sign_off_night (asks who signs in an MRTR round, then becomes a task, labserver.tasks.extension).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY, CallToolResult, InputRequiredResult
from pydantic import BaseModel, Field

from labserver.rounds import Answers, Plan, accepted, declared, form_question, gather
from labserver.tasks import jobs
from labserver.tasks.jobs import EXTRA_JOBS, JOBS
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


class ReviewEpochsArguments(BaseModel):
    night: Night
    pause_ms: PauseMs = 150


class SignOffNightArguments(ScoreNightArguments):
    pass


@dataclass(frozen=True)
class FirstRound:
    """Questions a call answers in MRTR rounds before it becomes a task (labserver.rounds), and what the job gets."""

    plan: Callable[[dict[str, Any]], Plan]  # from the call's arguments
    into_arguments: Callable[[Answers], dict[str, Any]]


@dataclass(frozen=True)
class TaskTool:
    arguments: type[BaseModel]
    task_only: bool
    asks_user: bool
    poll_ms: int
    first_status: str
    first_round: FirstRound | None = None


SIGNER = "signer"


def signer_plan(arguments: dict[str, Any]) -> Plan:
    question = form_question(SIGNER, f"Who signs off the scoring of night {arguments['night']}?",
                             {"name": {"type": "string", "title": "Your name"}}, ["name"])
    return lambda answers: [question]


def signer_of(answers: Answers) -> dict[str, Any]:
    return {"signer": (accepted(answers, SIGNER) or {}).get("name")}


SIGN_OFF_ROUND = FirstRound(signer_plan, signer_of)


TASK_TOOLS = {
    "score_night": TaskTool(ScoreNightArguments, task_only=False, asks_user=False, poll_ms=1000,
                            first_status="Scoring started."),
    "review_night": TaskTool(ReviewNightArguments, task_only=True, asks_user=True, poll_ms=500,
                             first_status="Review started."),
}


EXTRA_TASK_TOOLS = {
    "review_epochs": TaskTool(ReviewEpochsArguments, task_only=True, asks_user=True, poll_ms=500,
                              first_status="Review started: the questions come first."),
    "sign_off_night": TaskTool(SignOffNightArguments, task_only=False, asks_user=False, poll_ms=1000,
                               first_status="Scoring started.", first_round=SIGN_OFF_ROUND),
}


async def first_round_inline(spec: TaskTool, arguments: dict[str, Any], ctx: Context) -> dict[str, Any] | InputRequiredResult:
    """A plain call's own MRTR round (no task): the job's arguments once every question is answered."""
    assert spec.first_round is not None
    answers = gather(spec.first_round.plan(arguments), ctx.input_responses, ctx.request_state,
                     declared(ctx.client_capabilities))
    return answers if isinstance(answers, InputRequiredResult) else arguments | spec.first_round.into_arguments(answers)


class Inline:
    """A job's Progress for a plain synchronous call: no status to show, nothing to cancel, nobody to ask."""

    def status(self, message: str) -> None:
        pass

    def pause(self, seconds: float) -> None:
        time.sleep(seconds)

    def ask(self, key: str, request: dict[str, Any], message: str) -> dict[str, Any]:
        raise RuntimeError("a synchronous call cannot ask the user: this tool runs only as a task")

    def ask_many(self, requests: dict[str, dict[str, Any]], message: str) -> dict[str, Any]:
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
        raise runs_only_as_a_task()


def runs_only_as_a_task() -> MCPError:
    """review_night's refusal of a call that did not declare the extension."""
    return MCPError(code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                    message="Client did not declare required extension 'io.modelcontextprotocol/tasks'",
                    data={"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}})


def register_extra_task_tools(mcp: MCPServer) -> None:
    """Add review_epochs and sign_off_night, and their rows in the process's task tables (labserver.conformance)."""
    TASK_TOOLS.update(EXTRA_TASK_TOOLS)
    JOBS.update(EXTRA_JOBS)

    @mcp.tool(annotations=hints("Review a night's doubtful epochs at once", **READS))
    async def review_epochs(night: Night, pause_ms: PauseMs = 150) -> CallToolResult:
        """Ask the user about every epoch of a night the scorer cannot decide, all at once, then score the night with
        the answers. Runs only as a task."""
        raise runs_only_as_a_task()

    @mcp.tool(annotations=hints("Score and sign off a night", **READS))
    async def sign_off_night(night: Night, ctx: Context, epochs: Epochs = 20,
                             pause_ms: PauseMs = 300) -> CallToolResult | InputRequiredResult:
        """Score a pilot night and sign the result. Asks the user who signs first (an MRTR round); then, when the
        request declares the tasks extension, the scoring runs as a task."""
        arguments = await first_round_inline(EXTRA_TASK_TOOLS["sign_off_night"],
                                             {"night": night, "epochs": epochs, "pause_ms": pause_ms}, ctx)
        if isinstance(arguments, InputRequiredResult):
            return arguments
        return CallToolResult.model_validate(await anyio.to_thread.run_sync(jobs.sign_off_night, arguments, Inline()))
