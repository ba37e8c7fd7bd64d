"""The lab's tools: search, read, create, tag (asks the user), delete (asks to confirm), reindex, sync, night report.

Every tool states all five annotations, so a client sees the lab's intent rather than
the defaults (which assume the worst: destructive, open world, not read-only, not idempotent).

The two questions to the user are declarative MRTR resolvers (`Resolve` + `Elicit`).
They live at module level on purpose: the SDK names each question
`<module>:<function>` in `inputRequests` (here `labserver.tools:ask_tag` and
`labserver.tools:confirm_delete`), so the key stays the same however the server is launched.
Being module-level, they cannot close over the note store; they find it in the
server's lifespan context instead.
"""

from __future__ import annotations

import base64
from datetime import datetime, timezone
from typing import Annotated

import anyio
from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import (
    Annotations,
    CallToolResult,
    EmbeddedResource,
    Icon,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

from labserver.notes import Note, NoteError, NoteStore, SearchHit, bundled_samples

NoteId = Annotated[str, Field(description="The id of a note, e.g. 'spindle-density'. search_notes returns ids.")]


class SearchResults(BaseModel):
    hits: list[SearchHit] = Field(description="Matching notes, best first.")


class TagChoice(BaseModel):
    tag: str = Field(description="One tag: lowercase words joined by hyphens, e.g. 'sleep-stages'.")


class Confirmation(BaseModel):
    confirm: bool = Field(description="true deletes the note for good.")


# One small SVG, inline as a data: URI: nothing to fetch, and a client can inspect every byte before rendering.
NOTE_ICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    '<path d="M3 1h7l3 3v11H3z" fill="#3b5b8c"/></svg>'
)
NOTE_ICONS = [
    Icon(
        src="data:image/svg+xml;base64," + base64.b64encode(NOTE_ICON_SVG.encode()).decode(),
        mime_type="image/svg+xml",
        sizes=["any"],
    )
]


def hints(title: str, *, read_only: bool, destructive: bool, idempotent: bool, open_world: bool) -> ToolAnnotations:
    """All five annotations, spelled out."""
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )


READS = dict(read_only=True, destructive=False, idempotent=True, open_world=False)


def store_of(ctx: Context) -> NoteStore:
    return ctx.request_context.lifespan_context


def existing_note(ctx: Context, note_id: str) -> Note:
    """The note, or a ToolError the model can act on."""
    try:
        return store_of(ctx).get(note_id)
    except NoteError as error:
        raise ToolError(str(error)) from None


async def ask_tag(note_id: str, ctx: Context) -> Elicit[TagChoice]:
    note = existing_note(ctx, note_id)
    return Elicit(f"Which tag should the note '{note.title}' get?", TagChoice)


async def confirm_delete(note_id: str, ctx: Context) -> Elicit[Confirmation]:
    note = existing_note(ctx, note_id)
    return Elicit(f"Delete the note '{note.title}' ({note.id})? This cannot be undone.", Confirmation)


def register_tools(mcp: MCPServer, store: NoteStore) -> None:
    """Add the eight lab tools to mcp, working on store."""

    @mcp.tool(annotations=hints("Search notes", **READS))
    async def search_notes(
        query: Annotated[str, Field(description="Words to look for in titles, tags and note text.")],
        limit: Annotated[int, Field(description="How many hits to return at most.", ge=1, le=50)] = 5,
    ) -> SearchResults:
        """Search the lab notes; returns the best matches with a score and a snippet. Read one with read_note."""
        return SearchResults(hits=store.search(query, limit))

    @mcp.tool(annotations=hints("Read a note", **READS), icons=NOTE_ICONS)
    async def read_note(
        note_id: Annotated[
            str,
            Field(
                description="The id of the note to read, e.g. 'spindle-density'.",
                json_schema_extra={"x-mcp-header": "Note-Id"},
            ),
        ],
    ) -> Note:
        """Read one note: its title, tags, date and Markdown body."""
        try:
            return store.get(note_id)
        except NoteError as error:
            raise ToolError(str(error)) from None

    # Idempotent: a second identical call fails with "already exists" and changes nothing.
    @mcp.tool(annotations=hints("Create a note", read_only=False, destructive=False, idempotent=True, open_world=False))
    async def create_note(
        title: Annotated[str, Field(description="Title of the new note; its id is made from it.")],
        body: Annotated[str, Field(description="The note text, in Markdown.")],
        ctx: Context,
        tags: Annotated[
            list[str], Field(description="Tags like 'eeg' or 'lab-sync': lowercase words joined by hyphens.")
        ] = [],  # noqa: B006 - never mutated; the schema shows the default
    ) -> Note:
        """Create a new note dated today. Fails if a note with the same id already exists."""
        today = datetime.now(timezone.utc).date().isoformat()
        try:
            note = store.create(title, body, tags, today)
        except NoteError as error:
            raise ToolError(str(error)) from None
        await ctx.notify_resources_changed()
        await ctx.notify_resource_updated("notes://index")
        return note

    # Not idempotent: the same arguments can add a different tag each time (the user picks it).
    @mcp.tool(annotations=hints("Tag a note", read_only=False, destructive=False, idempotent=False, open_world=False))
    async def tag_note(
        note_id: NoteId,
        choice: Annotated[ElicitationResult[TagChoice], Resolve(ask_tag)],
        ctx: Context,
    ) -> str:
        """Add a tag to a note. The user is asked which tag to add."""
        if not isinstance(choice, AcceptedElicitation):
            return "No tag added: the user did not choose one."
        try:
            note = store.add_tag(note_id, choice.data.tag)
        except NoteError as error:
            raise ToolError(str(error)) from None
        await ctx.notify_resource_updated(f"notes://{note.id}")
        return f"Note {note.id} now has the tags: {', '.join(note.tags)}."

    @mcp.tool(annotations=hints("Delete a note", read_only=False, destructive=True, idempotent=True, open_world=False))
    async def delete_note(
        note_id: NoteId,
        answer: Annotated[ElicitationResult[Confirmation], Resolve(confirm_delete)],
        ctx: Context,
    ) -> str:
        """Delete a note. The user is asked to confirm first; nothing is deleted without a yes."""
        if not (isinstance(answer, AcceptedElicitation) and answer.data.confirm):
            return f"Nothing deleted: the user did not confirm deleting {note_id}."
        try:
            store.delete(note_id)
        except NoteError as error:
            raise ToolError(str(error)) from None
        await ctx.notify_resources_changed()
        await ctx.notify_resource_updated("notes://index")
        await ctx.notify_resource_updated(f"notes://{note_id}")
        return f"Deleted note {note_id}."

    @mcp.tool(annotations=hints("Rebuild the index", **READS))
    async def reindex(
        ctx: Context,
        pause_ms: Annotated[
            int, Field(description="Pause after each note, in milliseconds (to watch progress).", ge=0, le=2000)
        ] = 50,
    ) -> str:
        """Rebuild the search index note by note, reporting progress. Slow on purpose."""
        note_ids = store.ids()
        tags: set[str] = set()
        for done, note_id in enumerate(note_ids, start=1):
            try:
                tags.update(store.get(note_id).tags)
            except NoteError:
                continue  # deleted while indexing
            await ctx.report_progress(done, len(note_ids), f"indexed {note_id}")
            await anyio.sleep(pause_ms / 1000)
        return f"Re-indexed {len(note_ids)} notes with {len(tags)} distinct tags."

    # The one tool that would reach outside the notes folder: open world, and a sync may overwrite.
    @mcp.tool(annotations=hints("Sync notes", read_only=False, destructive=True, idempotent=False, open_world=True))
    async def sync_notes(
        remote: Annotated[str, Field(description="Where to sync to, e.g. a git URL or a shared folder.")],
    ) -> str:
        """Sync the notes with a remote copy."""
        raise ToolError(
            f"Cannot sync with {remote!r}: this lab server has no network access. "
            "The notes stay in the local folder; tell the user to sync them by hand."
        )

    @mcp.tool(annotations=hints("Night report", **READS), icons=NOTE_ICONS)
    async def night_report() -> CallToolResult:
        """Pilot night P07: a summary, its hypnogram and how it was scored."""
        return night_report_result(store)


def night_report_result(store: NoteStore) -> CallToolResult:
    """Four kinds of content block, each annotated with who it is for and how much it matters."""
    png = (bundled_samples() / "attachments" / "hypnogram.png").read_bytes()
    scoring = store.get("hypnogram-scoring")
    return CallToolResult(
        content=[
            TextContent(
                type="text",
                text="Pilot night P07, scored in 30 s epochs by two scorers (kappa 0.82). "
                "The hypnogram is for the user; the scoring rules follow.",
                annotations=Annotations(audience=["assistant"], priority=1.0),
            ),
            ImageContent(
                type="image",
                data=base64.b64encode(png).decode(),
                mime_type="image/png",
                annotations=Annotations(audience=["user"], priority=0.8),
            ),
            ResourceLink(
                type="resource_link",
                uri="notes://overnight-eeg-protocol",
                name="overnight-eeg-protocol",
                title=store.get("overnight-eeg-protocol").title,
                mime_type="text/markdown",
                annotations=Annotations(audience=["user", "assistant"], priority=0.3),
            ),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(
                    uri=f"notes://{scoring.id}", mime_type="text/markdown", text=store.read_text(scoring.id)
                ),
                annotations=Annotations(audience=["assistant"], priority=0.6),
            ),
        ]
    )
