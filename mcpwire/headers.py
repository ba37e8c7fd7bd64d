"""The HTTP headers a Streamable HTTP client derives from the JSON-RPC frame it posts.

The 2026-07-28 transport repeats routing facts from the body in headers, so proxies can
route without parsing JSON: MCP-Protocol-Version, Mcp-Method, Mcp-Name, and one
Mcp-Param-{Name} for each tool argument annotated `"x-mcp-header": "{Name}"`.
"""

import base64
import json
import re

from .errors import InvalidHeaderAnnotation
from .frames import PROTOCOL_VERSION, protocol_version_of

ACCEPT = "application/json, text/event-stream"
LEGACY_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
NAME_FIELDS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

# RFC 9110 token: the characters allowed in a header name.
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_SENTINEL = re.compile(r"^=\?base64\?.*\?=$")
_PRIMITIVE_TYPES = {"string", "integer", "boolean"}


def encode_value(value):
    """A header value for an argument: plain printable ASCII as-is, anything else in the base64 sentinel.

    Returns None for null (the header is then omitted). Booleans are true/false, numbers JSON numbers.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    text = str(value)
    safe = all(" " <= ch <= "~" for ch in text) and text == text.strip() and not _SENTINEL.match(text)
    if safe:
        return text
    # surrogatepass: text read from bytes that are not UTF-8 still has a header form (never an exception).
    return f"=?base64?{base64.b64encode(text.encode('utf-8', 'surrogatepass')).decode('ascii')}?="


def decode_value(header):
    """Inverse of `encode_value` for text (what a server does before comparing)."""
    match = re.fullmatch(r"=\?base64\?(.*)\?=", header)
    return base64.b64decode(match.group(1)).decode("utf-8", "surrogatepass") if match else header


def header_params(tool):
    """{argument path: header name} for a tool definition; raises InvalidHeaderAnnotation if any annotation is invalid.

    An annotation is valid only on a property reached through plain `properties`
    (no items/anyOf/...), with a string/integer/boolean type, a non-empty
    HTTP-token name, and a name no other annotation repeats in any case.
    """
    name = tool.get("name", "?")
    found = {}
    seen = {}

    def walk(schema, path):
        if not isinstance(schema, dict):
            return
        if "x-mcp-header" in schema:
            _check_annotation(name, schema, path, seen)
            found[path] = schema["x-mcp-header"]
        for key, sub in schema.items():
            if key == "properties" and isinstance(sub, dict) and path is not None:
                for prop, prop_schema in sub.items():
                    walk(prop_schema, path + (prop,))
            elif isinstance(sub, dict) and key not in ("const", "default", "enum", "examples"):
                for inner in (sub.values() if key in ("$defs", "definitions", "patternProperties") else [sub]):
                    walk(inner, None)
            elif isinstance(sub, list) and key in ("allOf", "anyOf", "oneOf", "prefixItems"):
                for inner in sub:
                    walk(inner, None)

    walk(tool.get("inputSchema") or {}, ())
    return found


def _check_annotation(tool_name, schema, path, seen):
    header = schema["x-mcp-header"]
    where = ".".join(path or ())
    problem = None
    if not path:
        problem = "x-mcp-header is only allowed on a property reached through `properties`"
    elif not isinstance(header, str) or header == "":
        problem = f"property {where!r}: x-mcp-header must be a non-empty string"
    elif not _TOKEN.match(header):
        problem = f"property {where!r}: x-mcp-header {header!r} has characters not allowed in an HTTP header name"
    elif schema.get("type") not in _PRIMITIVE_TYPES:
        problem = (f"property {where!r}: x-mcp-header is only allowed on string/integer/boolean properties, "
                   f"not {schema.get('type')!r}")
    elif header.lower() in seen:
        problem = f"property {where!r}: x-mcp-header {header!r} repeats the one on {seen[header.lower()]!r}"
    if problem:
        raise InvalidHeaderAnnotation(f"tool {tool_name!r}: {problem}; clients must not call this tool over HTTP")
    seen[header.lower()] = where


def _value_at(arguments, path):
    node = arguments
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def param_headers(tool, arguments):
    """The Mcp-Param-* headers for a tools/call with these arguments."""
    headers = {}
    for path, header in header_params(tool).items():
        value = encode_value(_value_at(arguments or {}, path))
        if value is not None:
            headers[f"Mcp-Param-{header}"] = value
    return headers


def derive(frame, tool=None, *, default_version=PROTOCOL_VERSION):
    """Every header the frame implies, in the order mcpwire writes them.

    The version comes from `_meta`; a frame without one (a notification, a legacy
    frame) uses `default_version`. Mcp-Method/Mcp-Name/Mcp-Param-* are modern-only.
    Every value copied from the body goes through `encode_value`, so no body can
    add a header line (CRLF) or hold a character HTTP cannot carry.
    """
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    frame = frame if isinstance(frame, dict) else {}
    version = protocol_version_of(frame) or default_version
    if frame.get("method") == "initialize" and protocol_version_of(frame) is None:
        version = None  # the legacy handshake itself carries no version header
    if version is not None:
        headers["MCP-Protocol-Version"] = encode_value(version)
    if version in LEGACY_VERSIONS or version is None or "id" not in frame:
        return headers
    method = frame.get("method")
    if not isinstance(method, str):
        return headers
    headers["Mcp-Method"] = encode_value(method)
    params = frame.get("params") if isinstance(frame.get("params"), dict) else {}
    name = params.get(NAME_FIELDS.get(method, ""))
    if isinstance(name, str):
        headers["Mcp-Name"] = encode_value(name)
    if method == "tools/call" and tool is not None:
        headers.update(param_headers(tool, params.get("arguments")))
    return headers


def merge(derived, overrides):
    """Apply overrides by case-insensitive name: a value replaces in place, None drops, a new name is added."""
    merged = dict(derived)
    for name, value in (overrides or {}).items():
        existing = next((key for key in merged if key.lower() == name.lower()), None)
        if value is None:
            merged.pop(existing, None)
        elif existing is None:
            merged[name] = value
        else:
            merged = {(name if key == existing else key): (value if key == existing else old)
                      for key, old in merged.items()}
    return merged
