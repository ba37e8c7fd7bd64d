"""Resources: the note index, one resource per note (listed in pages and as a URI template), an attachment."""

from __future__ import annotations

import mcp_types as types
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp.shared.exceptions import MCPError

from labserver.cursors import InvalidCursor, decode_cursor, encode_cursor
from labserver.notes import NoteError, NoteStore, bundled_samples

INDEX_URI = "notes://index"
NOTE_TEMPLATE = "notes://{note_id}"
HYPNOGRAM_URI = "notes://attachments/hypnogram.png"
# Thirteen sample notes plus the index and the hypnogram make three pages of five.
DEFAULT_PAGE_SIZE = 5


def register_resources(mcp: MCPServer, store: NoteStore, page_size: int = DEFAULT_PAGE_SIZE) -> None:
    """Add notes://index, notes://{note_id} and the hypnogram attachment to mcp; list them page_size at a time."""

    @mcp.resource(INDEX_URI, name="index", title="Note index", mime_type="text/plain")
    def note_index() -> str:
        """Every note as one line 'id — title', sorted by id."""
        return "\n".join(f"{note.id} — {note.title}" for note in store.all())

    @mcp.resource(NOTE_TEMPLATE, name="note", title="One note", mime_type="text/markdown")
    def note_file(note_id: str) -> str:
        """The Markdown file of one note, front matter included."""
        try:
            return store.read_text(note_id)
        except NoteError as error:
            # ResourceNotFoundError keeps our message and maps to -32602 (not a crash).
            raise ResourceNotFoundError(str(error)) from None

    @mcp.resource(HYPNOGRAM_URI, name="hypnogram", title="Hypnogram of pilot night P07", mime_type="image/png")
    def hypnogram() -> bytes:
        """Sleep stages across one pilot night, as a PNG image."""
        return (bundled_samples() / "attachments" / "hypnogram.png").read_bytes()

    async def list_resources(ctx: object, params: types.PaginatedRequestParams) -> types.ListResourcesResult:
        # MCPServer lists every resource at once and ignores `cursor`; the SDK's own
        # low-level handler slot is where a server pages its list.
        resources = sorted([*await mcp.list_resources(), *note_resources(store)], key=lambda r: str(r.uri))
        start = 0
        if params.cursor is not None:
            try:
                after = decode_cursor(params.cursor)
            except InvalidCursor as error:
                raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid cursor: {error}") from None
            start = sum(1 for resource in resources if str(resource.uri) <= after)
        page = resources[start : start + page_size]
        more = start + page_size < len(resources)
        return types.ListResourcesResult(
            resources=page, next_cursor=encode_cursor(str(page[-1].uri)) if more else None
        )

    mcp._lowlevel_server.add_request_handler("resources/list", types.PaginatedRequestParams, list_resources)


def note_resources(store: NoteStore) -> list[types.Resource]:
    """One resource per note, read through the notes://{note_id} template."""
    return [
        types.Resource(uri=f"notes://{note.id}", name=note.id, title=note.title, mime_type="text/markdown")
        for note in store.all()
    ]
