"""Checks for exercise 03 (first task): the routing headers a Streamable HTTP request repeats from its body."""

import base64
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
# A body naming a version the lab does not serve: headers that repeat it get -32022, a hard-coded version -32020.
OTHER_VERSION = "2027-01-01"
VERSION_PROBE = frames.request("server/discover", id=5, meta={frames.PROTOCOL_VERSION_KEY: OTHER_VERSION})
# A name with capitals (the lab has no such tool): header values are case-sensitive, so a lower-cased one is -32020.
CASED_NAME = "Search_Notes"
NAME_PROBE = frames.request("tools/call", {"name": CASED_NAME, "arguments": {}}, id=6)
# A name that is not printable ASCII (the lab has no such tool either): it travels as =?base64?<UTF-8 bytes>?=.
ACCENTED_NAME = "résumé"
ENCODED_PROBE = frames.request("tools/call", {"name": ACCENTED_NAME, "arguments": {}}, id=7)


def check_routing_headers(routing_headers, lab=None):
    """routing_headers(frame) must give the MCP-Protocol-Version, Mcp-Method and (when needed) Mcp-Name headers."""
    if missing(routing_headers):
        not_done("define routing_headers(frame) first.")
        return
    given_headers = []
    for frame in [*REQUESTS, VERSION_PROBE, NAME_PROBE, ENCODED_PROBE]:
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
            failed(f"For {_request_named(frame)}, these headers cannot go on the wire as they are: "
                   f"{', '.join(f'{name}: {given[name]}' for name in unsendable)}.",
                   hint="Header names and values are printable ASCII on one line; MCP sends any other value as "
                        "=?base64?<base64 of its UTF-8 bytes>?=, and the server decodes it before comparing.")
            return
        named = {str(name).lower(): value for name, value in given.items()}
        if "mcp-name" in named and frame["method"] not in NAMED_BY:
            failed(f"Your headers give {frame['method']} an Mcp-Name ({named['mcp-name']!r}), but its body names "
                   "no tool, prompt or resource: that header repeats nothing from the body.",
                   hint="The lab server let it through, yet a proxy that routes on Mcp-Name would act on a name "
                        "the request does not have.",
                   more="The spec defines Mcp-Name only for tools/call, prompts/get and resources/read.")
            return
        given_headers.append(given)
    encoded_probe_headers, name_probe_headers, version_probe_headers = (given_headers.pop(), given_headers.pop(),
                                                                         given_headers.pop())
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
        probe = wire.send(VERSION_PROBE, {**{name: None for name in ROUTING}, **version_probe_headers})
        if probe.code != -32022:
            named = {name.lower(): value for name, value in version_probe_headers.items()}
            failed(f"For a body whose envelope names version {OTHER_VERSION!r}, your MCP-Protocol-Version header is "
                   f"{named.get('mcp-protocol-version')!r} (HTTP {probe.status}).",
                   server=server_said(probe.message) if probe.message is not None else probe.text or "an empty body",
                   hint="The header repeats the version this request's body names, whatever it is.",
                   more=f"Read it from params._meta. With headers that agree, the lab answers {OTHER_VERSION} with "
                        "-32022 (a version it does not serve), not -32020.")
            return
        probe = wire.send(NAME_PROBE, {**{name: None for name in ROUTING}, **name_probe_headers})
        if probe.code == -32020:
            named = {name.lower(): value for name, value in name_probe_headers.items()}
            failed(f"For a tools/call of {CASED_NAME!r}, your headers say Mcp-Method "
                   f"{named.get('mcp-method')!r} and Mcp-Name {named.get('mcp-name')!r} (HTTP {probe.status}).",
                   server=server_said(probe.message),
                   hint="Header names are case-insensitive; header values are not.",
                   more="Repeat params.name exactly as the body writes it, capitals included.")
            return
        probe = wire.send(ENCODED_PROBE, {**{name: None for name in ROUTING}, **encoded_probe_headers})
        if probe.code == -32020:
            named = {name.lower(): value for name, value in encoded_probe_headers.items()}
            failed(f"For a tools/call of {ACCENTED_NAME!r}, your Mcp-Name is {named.get('mcp-name')!r} "
                   f"(HTTP {probe.status}).", server=server_said(probe.message),
                   hint=_not_utf8(named.get("mcp-name")) or
                   "A value that is not printable ASCII travels base64-encoded between =?base64? and ?=, and "
                   "the server decodes it before comparing it with the body.",
                   more="base64.b64encode(value.encode()).decode() is the base64 of a value's UTF-8 bytes.")
            return
    passed("Your headers routed all four requests: server/discover, tools/call (Mcp-Name: search_notes), "
           "resources/read (Mcp-Name: notes://welcome) and prompts/get (Mcp-Name: summarise_topic); and for a "
           f"body naming version {OTHER_VERSION} your header repeated it (the lab answered -32022, a version it "
           f"does not serve), as it repeated the capitals of {CASED_NAME} and sent {ACCENTED_NAME!r} base64-encoded.")


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


def _not_utf8(value):
    """A hint when the sentinel holds the name's bytes in an encoding other than UTF-8, else None."""
    inner = value[len("=?base64?"):-len("?=")] if isinstance(value, str) and value.startswith("=?base64?") \
        and value.endswith("?=") else None
    try:
        carried = base64.b64decode(inner or "", validate=True) if inner else None
    except ValueError:
        return None
    for encoding in ("latin-1", "utf-16", "cp1252"):
        if carried == ACCENTED_NAME.encode(encoding) and carried != ACCENTED_NAME.encode():
            return (f"Your base64 carries the name's {encoding} bytes; MCP encodes a value's UTF-8 bytes "
                    "(value.encode(), the default).")
    return None


def _request_named(frame):
    name = (frame.get("params") or {}).get(NAMED_BY.get(frame["method"], ""), None)
    return f"a {frame['method']} of {name!r}" if name else frame["method"]


def _header_safe(text):
    return all(" " <= ch <= "~" for ch in text)
