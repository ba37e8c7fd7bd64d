"""The official MCP conformance suite's fixture names, as aliases over the lab's own machinery.

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

The input-required-result-* scenarios (MRTR) call `test_input_required_result_*` tools and a
`test_input_required_result_prompt` prompt. `_sampling` and `_list_roots` ask what summarize_note and
plan_export ask, through the SDK's resolvers. The others are question rounds of labserver.rounds, the lab's own
MRTR machinery (several questions at once, partial answers asked again, more than one round, only what the
client declared, requestState sealed by the SDK): `_multiple_inputs` and `_capabilities` are prepare_handout on
the folder's first note; the rest are one- or two-question rounds with the suite's keys (`user_name`,
`step1`/`step2`, `user_context`), since the suite's answers are written for those questions. Two Tasks fixtures use machinery built for the lab's own
tools: `multi_input` (tasks-mrtr-input) asks two questions at once through the worker, as review_epochs does
(`TaskProgress.ask_many`; an answered key leaves inputRequests at once while another is outstanding), and
`test_tool_with_task` (tasks-mrtr-composition) is sign_off_night on night P07: an MRTR round in the tasks
interceptor, then a task on the retry that answers it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer, Resolve, Sample
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    CallToolResult,
    CreateMessageResult,
    CreateMessageResultWithTools,
    InputRequiredResult,
    ListRootsResult,
    TextContent,
)
from pydantic import BaseModel, Field

from labserver.conformance_content import register_content_fixtures
from labserver.conformance_lists import register_list_fixtures
from labserver.conformance_prompts import register_resource_and_prompt_fixtures
from labserver.handout import handout, register_handout
from labserver.input_tools import ask_roots, ask_summary, export_plan
from labserver.nights import NIGHTS
from labserver.notes import Note
from labserver.rounds import Answers, Plan, Question, accepted, declared, form_question, gather
from labserver.tasks import jobs
from labserver.tasks.jobs import JOBS, Progress, text_result
from labserver.tasks.tools import (
    EXTRA_TASK_TOOLS,
    SIGN_OFF_ROUND,
    TASK_TOOLS,
    Inline,
    register_extra_task_tools,
    runs_only_as_a_task,
    signer_plan,
)
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
    register_round_fixtures(mcp)
    register_content_fixtures(mcp)
    register_resource_and_prompt_fixtures(mcp)
    register_list_fixtures(mcp)
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


# ---- MRTR: the input-required-result-* scenarios, tasks-mrtr-input's multi_input, tasks-mrtr-composition ---------

STATE_CONFIRMATION = "state-ok"
SIGN_OFF_NIGHT = SLOW_NIGHT
SIGN_OFF_PAUSE_MS = 50


async def first_note(ctx: Context) -> Note:
    ids = store_of(ctx).ids()
    if not ids:
        raise ToolError("The notes folder has no note.")
    return store_of(ctx).get(ids[0])


def one_question(question: Question) -> Plan:
    return lambda answers: [question]


def two_steps(answers: Answers) -> list[Question]:
    """Step 2's question is asked only once step 1 is answered, and names its answer."""
    name = (accepted(answers, "step1") or {}).get("name")
    if "step1" not in answers:
        return [form_question("step1", "Step 1: What is your name?", {"name": {"type": "string"}}, ["name"])]
    return [form_question("step2", f"Step 2: What is your favorite color{', ' + name if name else ''}?",
                          {"color": {"type": "string"}}, ["color"])]


USER_NAME = one_question(form_question("user_name", "What is your name?", {"name": {"type": "string"}}, ["name"]))
CONFIRM = one_question(form_question("confirm", "Please confirm", {"ok": {"type": "boolean"}}, ["ok"]))
USER_CONTEXT = one_question(form_question("user_context", "What context should the prompt use?",
                                          {"context": {"type": "string"}}, ["context"]))


def gathered(plan: Plan, ctx: Context) -> Answers | InputRequiredResult:
    return gather(plan, ctx.input_responses, ctx.request_state, declared(ctx.client_capabilities))


def multi_input(arguments: dict[str, Any], progress: Progress) -> dict[str, Any]:
    """Two form questions through the worker at once (labserver.tasks.worker.TaskProgress.ask_many)."""
    answers = progress.ask_many({
        "name": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Which name goes on the record? (A conformance-suite fixture.)",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}},
        "confirm": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "Keep the record? (A conformance-suite fixture: nothing is kept.)",
            "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"}},
                                "required": ["confirm"]}}},
    }, "Waiting for the user to answer two questions.")
    said = {key: (answer.get("content") or {}) if isinstance(answer, dict) and answer.get("action") == "accept" else None
            for key, answer in answers.items()}
    name = (said["name"] or {}).get("name", "nobody")
    kept = (said["confirm"] or {}).get("confirm") is True
    return text_result(f"Record for {name}: {'confirmed' if kept else 'not confirmed'}; nothing was kept.")


def test_tool_with_task(arguments: dict[str, Any], progress: Progress) -> dict[str, Any]:
    """sign_off_night's job on night P07, quickly, with the signer its first round gathered."""
    night = {"night": SIGN_OFF_NIGHT, "epochs": len(NIGHTS[SIGN_OFF_NIGHT]), "pause_ms": SIGN_OFF_PAUSE_MS}
    return jobs.sign_off_night({**arguments, **night}, progress)


ROUND_FIXTURE_TASK_TOOLS = {
    "multi_input": replace(TASK_TOOLS["review_night"], arguments=NoArguments,
                           first_status="Started (conformance fixture multi_input)."),
    "test_tool_with_task": replace(EXTRA_TASK_TOOLS["sign_off_night"], arguments=NoArguments, task_only=True,
                                   first_status="Scoring started (conformance fixture test_tool_with_task).",
                                   first_round=replace(SIGN_OFF_ROUND,
                                                       plan=lambda arguments: signer_plan({"night": SIGN_OFF_NIGHT}))),
}
ROUND_FIXTURE_JOBS = {"multi_input": multi_input, "test_tool_with_task": test_tool_with_task}


def register_round_fixtures(mcp: MCPServer) -> None:
    """The lab's question-round features (prepare_handout, review_epochs, sign_off_night), then the suite's names."""
    register_handout(mcp)
    register_extra_task_tools(mcp)
    TASK_TOOLS.update(ROUND_FIXTURE_TASK_TOOLS)
    JOBS.update(ROUND_FIXTURE_JOBS)

    @mcp.tool(name="test_input_required_result_elicitation",
              annotations=hints("Input required: elicitation (conformance fixture)", **READS),
              description=FIXTURE + "Asks one form question, 'user_name', in a question round (labserver.rounds); "
              "a retry without its answer is asked again, extra answers are ignored.")
    async def elicitation_fixture(ctx: Context) -> str | InputRequiredResult:
        answers = gathered(USER_NAME, ctx)
        if isinstance(answers, InputRequiredResult):
            return answers
        name = (accepted(answers, "user_name") or {}).get("name")
        return f"Hello, {name}!" if name else "Hello! (The user did not give a name.)"

    @mcp.tool(name="test_input_required_result_sampling",
              annotations=hints("Input required: sampling (conformance fixture)", **READS),
              description=FIXTURE + "Asks summarize_note's question (sampling) about the folder's first note.")
    async def sampling_fixture(
        summary: Annotated[CreateMessageResult | CreateMessageResultWithTools, Resolve(ask_first_note_summary)],
    ) -> str:
        blocks = summary.content if isinstance(summary.content, list) else [summary.content]
        return "Summary: " + " ".join(block.text for block in blocks if isinstance(block, TextContent))

    @mcp.tool(name="test_input_required_result_list_roots",
              annotations=hints("Input required: roots (conformance fixture)", **READS),
              description=FIXTURE + "Asks plan_export's question (roots/list) and answers as plan_export does, "
              "for the folder's first note. Writes nothing.")
    async def list_roots_fixture(roots: Annotated[ListRootsResult, Resolve(ask_roots)], ctx: Context) -> str:
        return export_plan(roots, await first_note(ctx))

    for name, title in (("test_input_required_result_request_state", "request state"),
                        ("test_input_required_result_tampered_state", "tampered state")):
        @mcp.tool(name=name, annotations=hints(f"Input required: {title} (conformance fixture)", **READS),
                  description=FIXTURE + "Asks one form question in a question round; its requestState is sealed by "
                  "the SDK, so a tampered one is refused with -32602 before the tool runs.")
        async def state_fixture(ctx: Context) -> str | InputRequiredResult:
            answers = gathered(CONFIRM, ctx)
            if isinstance(answers, InputRequiredResult):
                return answers
            ok = (accepted(answers, "confirm") or {}).get("ok") is True
            state = (f"{STATE_CONFIRMATION}: the requestState came back intact" if ctx.request_state is not None
                     else "no requestState came back")
            return f"{state}; {'confirmed' if ok else 'not confirmed'}."

    for name, title in (("test_input_required_result_multiple_inputs", "several questions"),
                        ("test_input_required_result_capabilities", "declared capabilities")):
        @mcp.tool(name=name, annotations=hints(f"Input required: {title} (conformance fixture)", **READS),
                  description=FIXTURE + "prepare_handout on the folder's first note: asks the user, the model and the "
                  "client's roots at once, only what the client declared. Writes nothing.")
        async def handout_fixture(ctx: Context) -> str | InputRequiredResult:
            return await handout(await first_note(ctx), ctx)

    @mcp.tool(name="test_input_required_result_multi_round",
              annotations=hints("Input required: two rounds (conformance fixture)", **READS),
              description=FIXTURE + "Asks a name, then, in a second round, a colour: the second question exists only "
              "once the first is answered, which requestState carries between the rounds.")
    async def multi_round_fixture(ctx: Context) -> str | InputRequiredResult:
        answers = gathered(two_steps, ctx)
        if isinstance(answers, InputRequiredResult):
            return answers
        name = (accepted(answers, "step1") or {}).get("name", "someone")
        color = (accepted(answers, "step2") or {}).get("color", "unknown")
        return f"{name}'s favorite color: {color}."

    @mcp.prompt(name="test_input_required_result_prompt",
                description=FIXTURE + "A prompt whose prompts/get asks one form question in a question round, as "
                "the lab's brief prompt asks its audience.")
    async def prompt_fixture(ctx: Context) -> str | InputRequiredResult:
        answers = gathered(USER_CONTEXT, ctx)
        if isinstance(answers, InputRequiredResult):
            return answers
        context = (accepted(answers, "user_context") or {}).get("context") or "no context given"
        return f"Answer with this context in mind: {context}."

    @mcp.tool(name="multi_input", annotations=hints("Multi input (conformance fixture)", **READS),
              description=FIXTURE + "Asks two form questions at once through the lab's task worker (as "
              "review_epochs asks its own), answered together or one at a time with tasks/update. Runs only as a "
              "task.")
    async def multi_input_tool() -> CallToolResult:
        raise runs_only_as_a_task()

    @mcp.tool(name="test_tool_with_task", annotations=hints("Tool with task (conformance fixture)", **READS),
              description=FIXTURE + f"sign_off_night on night {SIGN_OFF_NIGHT}: asks who signs in an MRTR round, "
              "then becomes a task on the retry that answers. Runs only as a task.")
    async def tool_with_task() -> CallToolResult:
        raise runs_only_as_a_task()
