"""What each scope lets a token do in the notes lab.

`notes:read` covers every request that only looks; `notes:write` covers the tools that change notes.
Neither implies the other, so a client that drops `notes:read` when it steps up to `notes:write`
loses its reads: the scope-union rule of the spec's step-up flow is visible on the wire.
"""

from __future__ import annotations

import json

READ = "notes:read"
WRITE = "notes:write"
SCOPES = [READ, WRITE]

# The tools whose annotations say they change something (readOnlyHint false).
WRITE_TOOLS = frozenset({"create_note", "tag_note", "delete_note", "sync_notes"})


def required_scope(body: bytes) -> str:
    """The scope a POST body needs: write for a tools/call of a write tool, read for anything else.

    A body that is not a JSON object (a batch, a parse error) needs read only: the MCP endpoint
    refuses those itself, so nothing is written either way.
    """
    try:
        frame = json.loads(body)
    except (ValueError, RecursionError):
        return READ
    if not isinstance(frame, dict) or frame.get("method") != "tools/call":
        return READ
    params = frame.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return WRITE if isinstance(name, str) and name in WRITE_TOOLS else READ
