"""The official MCP conformance suite's fixture tool names, as aliases over the lab's own machinery.

On only with `python -m labserver --conformance` (which turns `--tasks` on), for an instructor who wants to
run the suite's Tasks scenarios (npm `@modelcontextprotocol/conformance`, `server --scenario tasks-*`)
against the lab. Those scenarios call tools of the suite's reference server by name (`greet`,
`slow_compute`, `failing_job`, ...). The lab has none of these names and answers an unknown tool the SDK's
way (an `isError` result), so without them no task is ever created and the checks test nothing.

Each alias is a name, not a second implementation of Tasks. A task-capable alias is an entry in the lab's
own task tool table and job table (labserver.tasks.tools.TASK_TOOLS, labserver.tasks.jobs.JOBS), so its
task is created, stored, run, asked, cancelled and ended by labserver.tasks exactly as score_night's and
review_night's are. Its work is a lab job (score_night's scorer) or a small job over the same `Progress`
(the worker's status, pause and question). `test_missing_capability` asks what summarize_note asks.

Two fixtures of the suite are left out, because each needs machinery labserver.tasks does not have:

- `multi_input` (tasks-mrtr-input, partial fulfillment) asks two questions at once; a lab task asks one at a
  time (`TaskStore.ask`). Its check also wants an answered key gone from the very next tasks/get, while the
  extension lets a task take answers eventually (ext-tasks tasks.md, "Task Update Requests") and the lab keeps
  an answered question visible until the job moves on (review_night's `recheck_ms`) on purpose.
- `test_tool_with_task` (tasks-mrtr-composition) answers its first round with an InputRequiredResult and
  becomes a task only on the retry; the lab's interceptor (labserver.tasks.extension) makes a task of a
  declared call at once.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY, CallToolResult, CreateMessageResult, CreateMessageResultWithTools, TextContent
from pydantic import BaseModel, Field

from labserver.conformance_content import register_content_fixtures
from labserver.conformance_prompts import register_resource_and_prompt_fixtures
from labserver.input_tools import ask_summary
from labserver.nights import NIGHTS
from labserver.tasks import EXTENSION_ID, jobs
from labserver.tasks.jobs import JOBS, Progress, text_result
from labserver.tasks.tools import TASK_TOOLS, Inline
from labserver.tools import READS, hints, store_of

FIXTURE = "Conformance-suite fixture name (served only with --conformance), not a lab tool. "
SLOW_NIGHT = "P07"
NO_SUCH_NIGHT = "P99"  # the lab has no recording of it: score_night's tool error

Seconds = Annotated[float, Field(description="How long the work takes, in seconds (0: at once).", ge=0, le=600)]
Label = Annotated[str, Field(description="A label the suite uses to tell its calls apart; not used.")]
Filename = Annotated[str, Field(description="The file the question names. Nothing is deleted.")]


class SlowComputeArguments(BaseModel):
    seconds: Seconds = 1
    label: Label = ""


class NoArguments(BaseModel):
    pass


class ConfirmDeleteArguments(BaseModel):
    filename: Filename


def slow_compute(arguments: dict[str, Any], progress: Progress) -> dict[str, Any]:
    """score_night's scorer on night P07, its epochs spread evenly over `seconds` (cancellable at each pause)."""
    epochs = len(NIGHTS[SLOW_NIGHT])
    return jobs.score_night({"night": SLOW_NIGHT, "epochs": epochs, "pause_ms": arguments["seconds"] * 1000 / epochs},
                            progress)


def failing_job(arguments: dict[str, Any], progress: Progress) -> dict[str, Any]:
    """score_night's scorer on a night the lab has no recording of: a tool error, so the task ends completed."""
    return jobs.score_night({"night": NO_SUCH_NIGHT, "epochs": 1, "pause_ms": 0}, progress)


def protocol_error_job(arguments: dict[str, Any], progress: Progress) -> dict[str, Any]:
    """A job that crashes: the worker ends the task failed with JSON-RPC -32603, as for any crash in a job."""
    raise RuntimeError("protocol_error_job crashes on purpose (a conformance-suite fixture)")


def confirm_delete(arguments: dict[str, Any], progress: Progress) -> dict[str, Any]:
    """One form question through the worker (input_required, then tasks/update), as review_night asks its own."""
    filename = arguments["filename"]
    answer = progress.ask("confirm", {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": f"Delete {filename}? (A conformance-suite fixture: nothing is deleted.)",
            "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]},
        },
    }, f"Waiting for the user to confirm deleting {filename}.")
    accepted = isinstance(answer, dict) and answer.get("action") == "accept"
    confirmed = accepted and (answer.get("content") or {}).get("confirm") is True
    return text_result(f"{filename}: {'confirmed' if confirmed else 'not confirmed'}; nothing was deleted.")


# Each alias borrows its lab tool's polling interval; the first status line says what runs.
FIXTURE_TASK_TOOLS = {
    "slow_compute": replace(TASK_TOOLS["score_night"], arguments=SlowComputeArguments,
                            first_status="Scoring started (conformance fixture slow_compute)."),
    "failing_job": replace(TASK_TOOLS["score_night"], arguments=NoArguments, task_only=True,
                           first_status="Scoring started (conformance fixture failing_job)."),
    "protocol_error_job": replace(TASK_TOOLS["score_night"], arguments=NoArguments, task_only=True,
                                  first_status="Started (conformance fixture protocol_error_job)."),
    "confirm_delete": replace(TASK_TOOLS["review_night"], arguments=ConfirmDeleteArguments,
                              first_status="Started (conformance fixture confirm_delete)."),
}
FIXTURE_JOBS = {"slow_compute": slow_compute, "failing_job": failing_job, "protocol_error_job": protocol_error_job,
                "confirm_delete": confirm_delete}


def runs_only_as_a_task() -> MCPError:
    """review_night's refusal of a call that did not declare the extension."""
    return MCPError(code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                    message=f"Client did not declare required extension '{EXTENSION_ID}'",
                    data={"requiredCapabilities": {"extensions": {EXTENSION_ID: {}}}})


async def ask_first_note_summary(ctx: Context) -> Sample | CreateMessageResultWithTools:
    """summarize_note's question (sampling) about the folder's first note."""
    ids = store_of(ctx).ids()
    if not ids:
        raise ToolError("The notes folder has no note to summarise.")
    return await ask_summary(ids[0], ctx)


# ---- The one registration point of --conformance -------------------------------------------------------------
# labserver.cli calls this and nothing else. A module that serves more fixture names adds one line here.
def register_conformance_fixtures(mcp: MCPServer) -> None:
    """Add every fixture name of the suite the lab serves, to a lab built with tasks on."""
    register_task_fixtures(mcp)
    register_content_fixtures(mcp)
    register_resource_and_prompt_fixtures(mcp)
# ---------------------------------------------------------------------------------------------------------------


def register_task_fixtures(mcp: MCPServer) -> None:
    """Add the Tasks scenarios' fixture names; the task ones join the lab's task tables.

    The tables are the process's (the interceptor reads them by tool name), which is why only the command
    line's --conformance calls this: one lab process, one server.
    """
    TASK_TOOLS.update(FIXTURE_TASK_TOOLS)
    JOBS.update(FIXTURE_JOBS)

    @mcp.tool(name="greet", annotations=hints("Greet (conformance fixture)", **READS),
              description=FIXTURE + "A plain synchronous tool with no task entry, answered like every such lab "
              "tool: returns 'Hello, {name}!'.")
    def greet(name: Annotated[str, Field(description="Who to greet.")]) -> str:
        return f"Hello, {name}!"

    @mcp.tool(name="slow_compute", annotations=hints("Slow compute (conformance fixture)", **READS),
              description=FIXTURE + f"Runs score_night's scorer on night {SLOW_NIGHT}, its epochs spread over "
              "`seconds`: a task when the request declares the tasks extension, a plain call otherwise.")
    async def slow_compute_tool(seconds: Seconds = 1, label: Label = "") -> CallToolResult:
        arguments = SlowComputeArguments(seconds=seconds, label=label).model_dump()
        return CallToolResult.model_validate(await anyio.to_thread.run_sync(slow_compute, arguments, Inline()))

    @mcp.tool(name="failing_job", annotations=hints("Failing job (conformance fixture)", **READS),
              description=FIXTURE + f"Runs score_night's scorer on night {NO_SUCH_NIGHT}, which the lab has no "
              "recording of: the task ends completed with an isError result. Runs only as a task, like review_night.")
    async def failing_job_tool() -> CallToolResult:
        raise runs_only_as_a_task()

    @mcp.tool(name="protocol_error_job", annotations=hints("Protocol error job (conformance fixture)", **READS),
              description=FIXTURE + "Runs a job that crashes: the lab's worker ends the task failed with JSON-RPC "
              "error -32603. Runs only as a task, like review_night.")
    async def protocol_error_job_tool() -> CallToolResult:
        raise runs_only_as_a_task()

    @mcp.tool(name="confirm_delete", annotations=hints("Confirm delete (conformance fixture)", **READS),
              description=FIXTURE + "Asks one form question through the lab's task worker, as review_night asks "
              "its own (input_required until tasks/update answers it), then completes. Deletes nothing. Runs only "
              "as a task, like review_night.")
    async def confirm_delete_tool(filename: Filename) -> CallToolResult:
        raise runs_only_as_a_task()

    @mcp.tool(name="test_missing_capability",
              annotations=hints("Test missing capability (conformance fixture)", **READS),
              description=FIXTURE + "Asks summarize_note's question (sampling) about the folder's first note, so a "
              "request that did not declare sampling gets summarize_note's error -32021.")
    async def test_missing_capability(
        summary: Annotated[CreateMessageResult | CreateMessageResultWithTools, Resolve(ask_first_note_summary)],
    ) -> str:
        blocks = summary.content if isinstance(summary.content, list) else [summary.content]
        return " ".join(block.text for block in blocks if isinstance(block, TextContent))
