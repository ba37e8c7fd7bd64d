"""Resources: the note index, one note per id (a URI template), and a binary attachment."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError

from labserver.notes import NoteError, NoteStore, bundled_samples

INDEX_URI = "notes://index"
NOTE_TEMPLATE = "notes://{note_id}"
HYPNOGRAM_URI = "notes://attachments/hypnogram.png"


def register_resources(mcp: MCPServer, store: NoteStore) -> None:
    """Add notes://index, notes://{note_id} and the hypnogram attachment to mcp."""

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
