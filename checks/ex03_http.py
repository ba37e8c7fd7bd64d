"""Checks for exercise 03 (first task): the routing headers a Streamable HTTP request repeats from its body."""

import copy

from mcpwire import frames
from .attempt import attempt, missing
from .servers import http_lab
from .verdict import failed, not_done, passed, server_said, short

ROUTING = ("MCP-Protocol-Version", "Mcp-Method", "Mcp-Name")
REQUESTS = [
    frames.request("server/discover", id=1),
    frames.request("tools/call", {"name": "search_notes", "arguments": {"query": "spindle", "limit": 1}}, id=2),
    frames.request("resources/read", {"uri": "notes://welcome"}, id=3),
    frames.request("prompts/get", {"name": "summarise_topic", "arguments": {"topic": "sleep spindles"}}, id=4),
]
NAMED_BY = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}  # where Mcp-Name comes from


def check_routing_headers(routing_headers, lab=None):
    """routing_headers(frame) must give the MCP-Protocol-Version, Mcp-Method and (when needed) Mcp-Name headers."""
    if missing(routing_headers):
        not_done("define routing_headers(frame) first.")
        return
    given_headers = []
    for frame in REQUESTS:
        outcome = attempt(routing_headers, copy.deepcopy(frame))
        if outcome.not_done:
            not_done("routing_headers still raises NotImplementedError. Return a dict of header name to value.")
            return
        if outcome.error:
            failed(f"routing_headers raised {outcome.error_text} for {frames.dumps(frame)}",
                   hint="Not every request has params.name: read it with .get().")
            return
        given = outcome.value
        if not isinstance(given, dict) or not all(isinstance(v, str) for v in given.values()):
            failed(f"routing_headers returned {short(given)}; return a dict whose values are strings.")
            return
        unsendable = [name for name, value in given.items() if not _header_safe(str(name)) or not _header_safe(value)]
        if unsendable:
            failed(f"These headers cannot go on the wire as they are: {', '.join(map(repr, unsendable))}.",
                   hint="Header names and values are printable ASCII on one line; MCP sends other text as "
                        "=?base64?...?=.")
            return
        given_headers.append(given)
    with http_lab(lab) as wire:
        for frame, given in zip(REQUESTS, given_headers):
            # Drop the headers mcpwire would derive, so only the learner's routing headers go out.
            overrides = {name: None for name in ROUTING}
            overrides.update(given)
            reply = wire.send(frame, overrides)
            if reply.status != 200 or not reply.ok:
                hint, more = _hints_for(frame, given)
                failed(f"With your headers {short(given)}, the server refused {frame['method']} (HTTP {reply.status}).",
                       server=server_said(reply.message) if reply.message is not None else reply.text or "an empty body",
                       hint=hint, more=more)
                return
    passed("Your headers routed all four requests: server/discover, tools/call (Mcp-Name: search_notes), "
           "resources/read (Mcp-Name: notes://welcome) and prompts/get (Mcp-Name: summarise_topic).")


def _hints_for(frame, given):
    """(a nudge, the specific hint) for headers the server refused."""
    named = {name.lower(): value for name, value in given.items()}
    version = named.get("mcp-protocol-version")
    if version != frames.PROTOCOL_VERSION:
        return ("MCP-Protocol-Version repeats a value that is already in the body.",
                f"It is the version in params._meta, {frames.PROTOCOL_VERSION!r}. SDK 2.3.0 sends a request with "
                "no version header, or a handshake-era one, to its legacy transport.")
    if named.get("mcp-method") != frame["method"]:
        return ("Every request carries Mcp-Method.", "Mcp-Method is the JSON-RPC method, exactly as in the body.")
    field = NAMED_BY.get(frame["method"])
    if field and "mcp-name" not in named:
        return (f"{frame['method']} names what it acts on, and a server routes on that name too.",
                f"{frame['method']} carries Mcp-Name, taken from params.{field}.")
    if field and named["mcp-name"] != frame["params"].get(field):
        return (f"Mcp-Name repeats, exactly, the name of what {frame['method']} acts on.",
                f"For {frame['method']} that is params.{field}.")
    if not field and "mcp-name" in named:
        return (f"{frame['method']} names nothing to act on.", "Send Mcp-Name only when the body has a name to repeat.")
    return ("Each header repeats a value from the body exactly: compare them one by one.", None)


def _header_safe(text):
    return all(" " <= ch <= "~" for ch in text)
