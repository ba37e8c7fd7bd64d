"""prepare_handout: a tool that asks several questions at once, takes partial answers, asks a second round that
depends on the first, and asks only what the client declared it can answer (labserver.rounds).

Round 1 asks, at once: the user who the handout is for (form elicitation), the client's model for a one-line
summary (sampling) and the client's roots (roots/list). Round 2 comes only when the client shared more than one
file:// root: the user picks the folder. A question the client cannot answer is not asked, and the handout does
without it (a generic reader, the note's first sentence, no folder). Like plan_export, it writes nothing.

Served only with `python -m labserver --conformance` for now, so every lesson's stored tools/list stays as it is.
"""

from __future__ import annotations

import re

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import InputRequiredResult

from labserver.notes import Note
from labserver.rounds import (
    Answers,
    Plan,
    Question,
    accepted,
    declared,
    form_question,
    gather,
    roots_question,
    sampled_text,
    sampling_question,
)
from labserver.tools import READS, NoteId, existing_note, hints

READER, SUMMARY, ROOTS, FOLDER = "reader", "summary", "roots", "folder"
SUMMARY_MAX_TOKENS = 120
ANY_READER = "any reader"
SENTENCE = re.compile(r"(.+?[.?!])(?:\s|$)")


def file_roots(answers: Answers) -> list[str]:
    roots = answers.get(ROOTS)
    return [str(root.uri).rstrip("/") for root in getattr(roots, "roots", []) if str(root.uri).startswith("file://")]


def handout_plan(note: Note) -> Plan:
    """Round 1: reader, summary and roots at once; round 2, once roots came back with several folders: which one."""

    def plan(answers: Answers) -> list[Question]:
        questions = [
            form_question(READER, f"Who is the handout on '{note.title}' for?",
                          {"name": {"type": "string", "title": "Reader's name"}}, ["name"]),
            sampling_question(SUMMARY, f"# {note.title}\n\n{note.body}",
                              "Summarise this lab note in one sentence for a handout.", SUMMARY_MAX_TOKENS),
            roots_question(ROOTS),
        ]
        folders = file_roots(answers)
        if len(folders) > 1:
            questions.append(form_question(FOLDER, f"Write the handout on '{note.title}' under which folder?",
                                           {"folder": {"type": "string", "enum": folders}}, ["folder"]))
        return questions

    return plan


def first_sentence(note: Note) -> str:
    text = " ".join(note.body.split())
    found = SENTENCE.match(text)
    return found.group(1) if found else text


def handout_text(note: Note, answers: Answers) -> str:
    reader = (accepted(answers, READER) or {}).get("name") or ANY_READER
    summary = sampled_text(answers, SUMMARY) or f"{first_sentence(note)} (the note's first sentence: no model was asked)"
    folders = file_roots(answers)
    folder = (accepted(answers, FOLDER) or {}).get("folder") or (folders[0] if folders else None)
    where = (f"It would be written to {folder}/{note.id}-handout.md." if folder else
             "It would not be written anywhere: the client shared no file:// root.")
    return f"Handout on '{note.title}' for {reader}: {summary} {where}"


async def handout(note: Note, ctx: Context) -> str | InputRequiredResult:
    """prepare_handout's work on one note (the conformance fixtures call it on the folder's first note)."""
    answers = gather(handout_plan(note), ctx.input_responses, ctx.request_state, declared(ctx.client_capabilities))
    return answers if isinstance(answers, InputRequiredResult) else handout_text(note, answers)


def register_handout(mcp: MCPServer) -> None:
    @mcp.tool(annotations=hints("Prepare a handout", **READS))
    async def prepare_handout(note_id: NoteId, ctx: Context) -> str | InputRequiredResult:
        """Prepare a one-paragraph handout on a note. Asks the user who it is for, the client's model for a summary
        and the client for its roots, all at once; asks again for what a retry leaves out, and for the folder
        when there are several. Asks only what the client can answer. Writes nothing."""
        return await handout(existing_note(ctx, note_id), ctx)
