"""Tell valid JSON that is nested too deeply to parse from text that is not JSON at all.

Parsers stop at a nesting limit (pydantic's at about 200 levels, Python's `json` at about
1000), but JSON itself has no depth limit: such a line is an invalid request, not a parse
error. `scan` walks the text with an explicit stack, so no depth can exhaust it, and reads
the top-level `"id"` on the way so that the error reply can carry it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from json.decoder import scanstring

_SPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_LITERALS = ("true", "false", "null")
_CLOSER = {"[": "]", "{": "}"}
_CONTAINER = object()  # the value just read was an array or an object


@dataclass
class Scan:
    is_json: bool
    depth: int = 0
    request_id: int | str | None = None  # the top-level "id", when it is a JSON string or integer


def scan(text: str) -> Scan:
    """Whether `text` is exactly one JSON value, how deep it nests, and its readable top-level id."""
    try:
        return _scan(text)
    except (ValueError, IndexError):
        return Scan(False)


def _scan(text: str) -> Scan:
    stack: list[str] = []
    depth = 0
    key = None  # the key whose value comes next, in the top-level object
    request_id = None
    pos = _SPACE.match(text, 0).end()
    while True:
        # A value starts at pos.
        char = text[pos]
        value = _CONTAINER
        if char in _CLOSER:
            if key == "id" and len(stack) == 1:
                request_id = None
            stack.append(char)
            depth = max(depth, len(stack))
            pos = _SPACE.match(text, pos + 1).end()
            if text[pos] == _CLOSER[char]:
                stack.pop()
                pos += 1
            elif char == "{":
                key, pos = _key(text, pos)
                if len(stack) > 1:
                    key = None
                continue
            else:
                continue
        elif char == '"':
            value, pos = scanstring(text, pos + 1, True)
        elif (number := _NUMBER.match(text, pos)) is not None:
            value = int(number.group()) if number.group(1) is None and number.group(2) is None else None
            pos = number.end()
        else:
            literal = next((word for word in _LITERALS if text.startswith(word, pos)), None)
            if literal is None:
                raise ValueError(f"no JSON value at {pos}")
            value, pos = None, pos + len(literal)
        if key == "id" and len(stack) == 1:
            request_id = value if isinstance(value, (str, int)) else None
        key = None
        # After a value: a comma, a closing bracket, or the end.
        while True:
            pos = _SPACE.match(text, pos).end()
            if not stack:
                return Scan(pos == len(text), depth, request_id)
            if text[pos] == ",":
                pos = _SPACE.match(text, pos + 1).end()
                if stack[-1] == "{":
                    key, pos = _key(text, pos)
                    if len(stack) > 1:
                        key = None
                break
            if text[pos] != _CLOSER[stack.pop()]:
                raise ValueError(f"unexpected {text[pos]!r} at {pos}")
            pos += 1


def _key(text: str, pos: int) -> tuple[str, int]:
    """Read `"key" :` at pos; return the key and where its value starts."""
    if text[pos] != '"':
        raise ValueError(f"expected a key at {pos}")
    key, pos = scanstring(text, pos + 1, True)
    pos = _SPACE.match(text, pos).end()
    if text[pos] != ":":
        raise ValueError(f"expected ':' at {pos}")
    return key, _SPACE.match(text, pos + 1).end()
