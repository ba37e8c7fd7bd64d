"""The summarise_topic prompt and argument completion for prompts and the note template."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp_types import Completion, CompletionArgument, CompletionContext, PromptReference, ResourceTemplateReference
from pydantic import Field

from labserver.notes import Note, NoteStore
from labserver.resources import NOTE_TEMPLATE

MAX_NOTES_IN_PROMPT = 5


def notes_about(store: NoteStore, topic: str) -> list[Note]:
    """Notes tagged with the topic first, then the best search hits, without repeats."""
    tag = topic.strip().lower()
    tagged = [note for note in store.all() if tag in note.tags]
    found = [store.get(hit.id) for hit in store.search(topic, MAX_NOTES_IN_PROMPT)]
    chosen: dict[str, Note] = {note.id: note for note in tagged + found}
    return list(chosen.values())[:MAX_NOTES_IN_PROMPT]


def register_prompts(mcp: MCPServer, store: NoteStore) -> None:
    """Add summarise_topic and the completion handler to mcp."""

    @mcp.prompt(title="Summarise a topic from the lab notes")
    def summarise_topic(
        topic: Annotated[str, Field(description="A tag or a few words, e.g. 'spindles' or 'tmr'.")],
        audience: Annotated[str, Field(description="Who the summary is for.")] = "lab meeting",
    ) -> str:
        """Summarise what the lab notes say about a topic, for a given audience."""
        notes = notes_about(store, topic)
        if not notes:
            # The audience still shapes the answer: who is told that nothing is known, and in what words.
            return (f"There are no lab notes about '{topic}'. Say so for a {audience}, and suggest tags that exist: "
                    f"{', '.join(store.tags())}.")
        sections = "\n\n".join(f"## {note.title} ({note.id}, {note.date})\n{note.body}" for note in notes)
        return (
            f"Summarise what our lab notes say about '{topic}' for a {audience}. "
            "Keep it short, cite note ids, and say what is still open.\n\n" + sections
        )

    @mcp.completion()
    async def complete(
        ref: PromptReference | ResourceTemplateReference,
        argument: CompletionArgument,
        context: CompletionContext | None,
    ) -> Completion | None:
        if isinstance(ref, PromptReference) and ref.name == "summarise_topic" and argument.name == "topic":
            choices = store.tags()
        elif isinstance(ref, ResourceTemplateReference) and ref.uri == NOTE_TEMPLATE and argument.name == "note_id":
            choices = store.ids()
        else:
            return None
        matches = [value for value in choices if value.startswith(argument.value)]
        return Completion(values=matches[:100], total=len(matches), has_more=len(matches) > 100)
