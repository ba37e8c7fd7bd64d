"""mcpwire: a small raw-wire MCP toolkit for the lessons.

`wire.Wire` is what both wires (`StdioWire`, `HttpWire`) do; `errors` holds the one
exception tree, `codes` what each error code means. The package is not type-annotated
on purpose: learners read it as plain Python (the lab server, scripts and bench are).
"""

from . import frames, pages
from .costs import count_tokens
from .display import show
from .codes import explain
from .errors import ServerExited, WireError, WireTimeout
from .frames import OMIT, dumps, notification, request
from .reply import Reply
from .stdio import StdioWire
from .streamable_http import HttpWire
from .transcript import Exchange, Transcript
from .validate import validate

__all__ = [
    "OMIT", "Exchange", "HttpWire", "Reply", "ServerExited", "StdioWire", "Transcript", "WireError",
    "WireTimeout", "count_tokens", "dumps", "explain", "frames", "notification", "pages", "request", "show",
    "validate",
]
