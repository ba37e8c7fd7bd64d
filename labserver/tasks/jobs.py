"""The work behind the task tools, written once for both ways a call can run.

A job talks to its caller only through a `Progress`: a status line, a pause (where a task
can be cancelled) and a question to the user. As a task (labserver.tasks.worker) these become
statusMessage, a cooperative cancel and an input_required round; as a plain synchronous call
the status is dropped and the pause is a sleep.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from labserver import nights
from labserver.nights import NIGHTS

STAGE_ORDER = ("W", "N1", "N2", "N3", "REM")
# Epochs the automatic scorer cannot decide: (its guess, the other candidate). review_night asks about these.
AMBIGUOUS = {7: ("N1", "REM"), 14: ("N1", "W")}
# The scorer rereads an epoch with the user's answer before it moves on; until then the question stays in
# inputRequests, so a poll soon after tasks/update still shows it (the acknowledgement is eventually consistent).
# By default four of its polls (pollIntervalMs 500), so even a slow client sees it again; review_night's recheck_ms
# shortens it.
RECHECK_MS = 2000
INVALID_PARAMS = -32602


class Progress(Protocol):
    def status(self, message: str) -> None: ...

    def pause(self, seconds: float) -> None: ...

    def ask(self, key: str, request: dict[str, Any], message: str) -> dict[str, Any]: ...

    def ask_many(self, requests: dict[str, dict[str, Any]], message: str) -> dict[str, Any]: ...


class TaskFailure(Exception):
    """A JSON-RPC error during the work: the task ends `failed` with this error (not a tool error)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def stages_of(night: str) -> list[str]:
    try:
        return NIGHTS[night]
    except KeyError:
        raise ToolError(f"No recording for night {night!r}. The lab has the nights {', '.join(NIGHTS)}.") from None


def tally(stages: list[str]) -> str:
    return nights.tally(stages, STAGE_ORDER)


def text_result(text: str) -> dict[str, Any]:
    """A CallToolResult as a task's `result` carries it (no resultType: that belongs to the response)."""
    dumped = CallToolResult(content=[TextContent(type="text", text=text)]).model_dump(
        by_alias=True, mode="json", exclude_none=True)
    dumped.pop("resultType", None)
    return dumped


def scored(arguments: dict[str, Any], progress: Progress) -> str:
    """Score a night epoch by epoch; the status line says how far it got. Returns what the result says."""
    night, epochs, pause_ms = arguments["night"], arguments["epochs"], arguments["pause_ms"]
    stages = stages_of(night)[:epochs]
    for number in range(1, len(stages) + 1):
        progress.pause(pause_ms / 1000)
        progress.status(f"Scored epoch {number} of {len(stages)} of night {night}.")
    epochs_scored = f"{len(stages)} epoch{'' if len(stages) == 1 else 's'}"
    return f"Night {night}: {epochs_scored} scored. {tally(stages)}."


def score_night(arguments: dict[str, Any], progress: Progress) -> dict[str, Any]:
    return text_result(scored(arguments, progress))


def sign_off_night(arguments: dict[str, Any], progress: Progress) -> dict[str, Any]:
    """score_night's work, signed by whoever the MRTR round before the task named (None: nobody could be asked)."""
    signer = arguments["signer"]
    signature = f"Signed off by {signer}." if signer else "Not signed off: nobody was asked who signs."
    return text_result(f"{scored(arguments, progress)} {signature}")


def stage_question(night: str, epoch: int, candidates: tuple[str, str]) -> dict[str, Any]:
    """An elicitation/create request, as inputRequests carries it (no jsonrpc, no id)."""
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": f"Epoch {epoch} of night {night} could be {candidates[0]} or {candidates[1]}. Which stage is it?",
            "requestedSchema": {
                "type": "object",
                "properties": {"stage": {"type": "string", "enum": list(candidates)}},
                "required": ["stage"],
            },
        },
    }


def chosen_stage(key: str, answer: Any, candidates: tuple[str, str]) -> str | None:
    """The stage the user chose; None when they declined or cancelled; a TaskFailure when the answer is malformed."""
    action = answer.get("action") if isinstance(answer, dict) else None
    if action in ("decline", "cancel"):
        return None
    stage = (answer.get("content") or {}).get("stage") if action == "accept" else None
    if stage not in candidates:
        raise TaskFailure(INVALID_PARAMS, f"Invalid input response for {key!r}: expected an ElicitResult that "
                          f"accepts with a stage of {' or '.join(candidates)}")
    return stage


def review_night(arguments: dict[str, Any], progress: Progress) -> dict[str, Any]:
    """Score a night and ask the user about each epoch the scorer cannot decide."""
    night, pause_ms, recheck_ms = arguments["night"], arguments["pause_ms"], arguments["recheck_ms"]
    stages = list(stages_of(night))
    notes = []
    for number in range(1, len(stages) + 1):
        progress.pause(pause_ms / 1000)
        if number in AMBIGUOUS:
            candidates = AMBIGUOUS[number]
            key = f"epoch-{number}"
            answer = progress.ask(key, stage_question(night, number, candidates),
                                  f"Waiting for the user: is epoch {number} {candidates[0]} or {candidates[1]}?")
            stage = chosen_stage(key, answer, candidates)
            progress.pause(recheck_ms / 1000)
            notes.append(settle(stages, number, stage, candidates))
        progress.status(f"Reviewed epoch {number} of {len(stages)} of night {night}.")
    return text_result(f"Night {night} reviewed: {len(stages)} epochs; {'; '.join(notes)}. {tally(stages)}.")


def settle(stages: list[str], number: int, stage: str | None, candidates: tuple[str, str]) -> str:
    """Write the user's stage for an epoch (the scorer's guess without one) and say which it was."""
    stages[number - 1] = stage or candidates[0]
    return f"epoch {number} {stages[number - 1]} ({'your answer' if stage else 'no answer: the scorer kept its guess'})"


def review_epochs(arguments: dict[str, Any], progress: Progress) -> dict[str, Any]:
    """review_night's questions asked all at once, before the scoring: the user may answer them one at a time."""
    night, pause_ms = arguments["night"], arguments["pause_ms"]
    stages = list(stages_of(night))
    ambiguous = {number: candidates for number, candidates in AMBIGUOUS.items() if number <= len(stages)}
    answers = progress.ask_many(
        {f"epoch-{number}": stage_question(night, number, candidates) for number, candidates in ambiguous.items()},
        f"Waiting for the user: {len(ambiguous)} epochs of night {night} could be either of two stages.")
    notes = [settle(stages, number, chosen_stage(f"epoch-{number}", answers[f"epoch-{number}"], candidates), candidates)
             for number, candidates in ambiguous.items()]
    for number in range(1, len(stages) + 1):
        progress.pause(pause_ms / 1000)
        progress.status(f"Scored epoch {number} of {len(stages)} of night {night} with the user's answers.")
    return text_result(f"Night {night} reviewed: {len(stages)} epochs; {'; '.join(notes)}. {tally(stages)}.")


JOBS = {"score_night": score_night, "review_night": review_night}
# Served only with --conformance for now (labserver.tasks.tools.register_extra_task_tools).
EXTRA_JOBS = {"review_epochs": review_epochs, "sign_off_night": sign_off_night}
