"""Generated frames for the bad-input property tests, and the oracle that says what each one is owed.

A frame is drawn as a Piece: bytes with an optional id slot and a line ending. The
slot is filled when a batch is rendered, so every readable id in a batch is fresh
(ints, huge ints, negatives, strings with odd Unicode). The oracle reads a line the
way a JSON-RPC peer must: one reply with its id when the id is readable, one
id-null error when the line is broken and no id can be read, silence for a
notification or a client's reply. The test_hardening_fuzz_* files use both.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

import pydantic_core
from hypothesis import strategies as st

PROTOCOL = "2026-07-28"
ID_MARK = "@@ID@@"  # replaced by a fresh id when a batch is rendered
MAX_LINE_BYTES = 4 * 1024 * 1024  # the stdio front's limit (labserver.stdio_front)

# --- building blocks -------------------------------------------------------------------------

ODD_STRINGS = [
    "", " ", "\x00", "\u202e", "\ufeff", "é", "💥", "\u2028", "\x85", "\r", "\t", "𝔫𝔬𝔱𝔢", "a" * 300,
    "../", "..\\", "%2e%2e%2f", "\uff0f", "\u2215", "=?base64?eA==?=",
]
ODD_TEXT = st.one_of(
    st.text(max_size=24),
    st.sampled_from(ODD_STRINGS),
    st.text(st.characters(codec="utf-8", categories=["Cc", "Cf", "Zl", "Zp", "Mn", "So"]), max_size=8),
)
KEYS = st.one_of(
    st.sampled_from(["jsonrpc", "id", "method", "params", "_meta", "name", "arguments", "uri", "note_id"]),
    st.text(max_size=8),
).filter(lambda key: key not in ("result", "error"))  # a key that would make a frame a client's reply
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False), ODD_TEXT
)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=10)

# Note ids and URIs that try to leave the notes folder; "leak" is a symlink the tests plant.
PATH_ATTACK_IDS = [
    "..", "../canary/secret", "/etc/passwd", "..%2f..%2fcanary%2fsecret", "..\uff0fcanary\uff0fsecret",
    "..\u2215canary\u2215secret", "leak", "welcome\x00", "%2e%2e", "a/../../b", "C:\\canary", "welcome/../..",
]
NOTE_IDS = st.one_of(st.sampled_from(["welcome", "spindle-density", "no-such-note", *PATH_ATTACK_IDS]), ODD_TEXT)
URIS = st.one_of(
    st.sampled_from(["notes://index", "notes://attachments/hypnogram.png", "file:///etc/passwd", "notes:///etc/passwd"]),
    NOTE_IDS.map(lambda note_id: "notes://" + note_id),
    ODD_TEXT,
)
TOOL_CALLS = st.one_of(
    st.fixed_dictionaries({"name": st.just("read_note"), "arguments": st.fixed_dictionaries({"note_id": NOTE_IDS})}),
    st.fixed_dictionaries(
        {"name": st.just("search_notes"), "arguments": st.fixed_dictionaries({"query": ODD_TEXT}, optional={"limit": JSON})}
    ),
    st.fixed_dictionaries(
        {
            "name": st.just("create_note"),
            "arguments": st.fixed_dictionaries({"title": ODD_TEXT, "body": ODD_TEXT}, optional={"tags": st.lists(ODD_TEXT, max_size=3)}),
        }
    ),
    st.fixed_dictionaries(
        {"name": st.sampled_from(["tag_note", "delete_note"]), "arguments": st.fixed_dictionaries({"note_id": NOTE_IDS})},
        optional={"inputResponses": JSON, "requestState": ODD_TEXT},
    ),
    # reindex is left out: it pauses on purpose, up to seconds per note.
    st.fixed_dictionaries({"name": st.one_of(st.just("sync_notes"), ODD_TEXT).filter(lambda n: n != "reindex"), "arguments": JSON}),
)
# subscriptions/listen is left out: a listen stays open, so it is never answered by design.
UNLISTED_METHODS = st.one_of(st.sampled_from(["initialize", "ping", "logging/setLevel", "notifications/cancelled"]), ODD_TEXT)
REQUESTS = st.one_of(
    st.tuples(st.sampled_from(["server/discover", "tools/list", "resources/list", "resources/templates/list", "prompts/list"]), st.just({})),
    st.tuples(st.just("resources/read"), st.fixed_dictionaries({"uri": URIS})),
    st.tuples(st.just("tools/call"), TOOL_CALLS),
    st.tuples(
        st.just("prompts/get"),
        st.fixed_dictionaries({"name": st.one_of(st.just("summarise_topic"), ODD_TEXT)},
                              optional={"arguments": st.dictionaries(ODD_TEXT, ODD_TEXT, max_size=3)}),
    ),
    st.tuples(st.just("completion/complete"), st.fixed_dictionaries({"ref": JSON, "argument": JSON})),
    st.tuples(UNLISTED_METHODS.filter(lambda m: m != "subscriptions/listen"), st.dictionaries(KEYS, JSON, max_size=3)),
)
GOOD_META = {
    "io.modelcontextprotocol/protocolVersion": PROTOCOL,
    "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
METAS = st.one_of(
    st.just(GOOD_META),
    st.just({**GOOD_META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}),
    st.just({**GOOD_META, "progressToken": "fuzz"}),
    st.sampled_from(list(GOOD_META)).map(lambda key: {k: v for k, v in GOOD_META.items() if k != key}),
    st.one_of(st.sampled_from(["2025-11-25", "1999-01-01", "2026-07-29"]), ODD_TEXT, JSON).map(
        lambda version: {**GOOD_META, "io.modelcontextprotocol/protocolVersion": version}
    ),
    JSON,
)


@dataclass(frozen=True)
class Piece:
    """One line's worth of bytes; ID_MARK in it becomes a fresh id; `end` is b"\\n", b"\\r\\n" or b"" (runs on)."""

    template: bytes
    id_style: str | None = None
    end: bytes = b"\n"


ID_STYLES = ["int", "big", "negative", "text", "unicode", "spaces"]


def dumps(value: Any, ascii_only: bool, spaced: bool) -> bytes:
    separators = (", ", ": ") if spaced else (",", ":")
    return json.dumps(value, ensure_ascii=ascii_only, separators=separators).encode("utf-8")


@st.composite
def mutated(draw, frame: dict) -> dict:
    """frame with a few keys dropped, retyped or added."""
    frame = dict(frame)
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(["jsonrpc", "id", "method", "params"]))
        action = draw(st.sampled_from(["drop", "retype", "add", "meta"]))
        if action == "drop":
            frame.pop(key, None)
        elif action == "retype":
            frame[key] = draw(JSON)
        elif action == "add":
            frame[draw(KEYS)] = draw(JSON)
        elif isinstance(frame.get("params"), dict):
            frame["params"] = {**frame["params"], "_meta": draw(JSON)}
    return frame


@st.composite
def json_piece(draw, frame: dict) -> Piece:
    has_slot = frame.get("id") == ID_MARK
    return Piece(dumps(frame, draw(st.booleans()), draw(st.booleans())), draw(st.sampled_from(ID_STYLES)) if has_slot else None)


@st.composite
def request_frame(draw) -> dict:
    method, params = draw(REQUESTS)
    return {"jsonrpc": "2.0", "id": ID_MARK, "method": method, "params": {**params, "_meta": draw(METAS)}}


def nested(depth: int, opener: str) -> str:
    closer = "]" if opener == "[" else "}"
    inner = "[" * depth + "]" * depth if opener == "[" else '{"a":' * depth + "1" + closer * depth
    return '{"jsonrpc":"2.0","id":"' + ID_MARK + '","method":"tools/list","params":{"deep":' + inner + "}}"


NOTIFICATIONS = st.one_of(
    st.builds(
        lambda reason: {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "gone-" + reason}},
        st.text(max_size=4),
    ),
    st.fixed_dictionaries(
        {"jsonrpc": st.just("2.0"), "method": st.one_of(st.sampled_from(["notifications/progress", "notifications/initialized"]), ODD_TEXT)},
        optional={"params": st.one_of(st.none(), st.dictionaries(KEYS, JSON, max_size=3))},
    ),
)
RAW_LINES = st.one_of(
    st.binary(max_size=64),
    st.sampled_from([b"", b"   \t", b"\r", b"\xef\xbb\xbf", b'{"jsonrpc":"2.0","id":5,"method":"tools/list\xc0\xaf"}', b"\xff\xfe{}", b"null", b"[]", b"[{}]"]),
    ODD_TEXT.map(lambda text: text.encode("utf-8")),
)

PIECES = st.one_of(
    request_frame().flatmap(json_piece),
    request_frame().flatmap(mutated).flatmap(json_piece),
    NOTIFICATIONS.flatmap(json_piece),
    NOTIFICATIONS.flatmap(mutated).flatmap(json_piece),
    st.tuples(JSON, st.booleans()).map(lambda pair: Piece(dumps(pair[0], pair[1], False))),
    st.builds(
        lambda result, style: Piece(dumps({"jsonrpc": "2.0", "id": ID_MARK, "result": result}, False, False), style),
        st.dictionaries(KEYS, JSON, max_size=3),
        st.sampled_from(ID_STYLES),
    ),
    st.tuples(st.sampled_from([5, 150, 196, 197, 198, 1000, 50_000]), st.sampled_from(["[", "{"]), st.sampled_from(ID_STYLES)).map(
        lambda drawn: Piece(nested(drawn[0], drawn[1]).encode(), drawn[2])
    ),
    st.tuples(st.sampled_from([1_000, 10_000, 100_000, 1_100_000]), st.sampled_from(["x", "é", "💥"]), st.sampled_from(ID_STYLES)).map(
        lambda drawn: Piece(
            dumps({"jsonrpc": "2.0", "id": ID_MARK, "method": "tools/list", "params": {"pad": drawn[1] * drawn[0], "_meta": GOOD_META}}, False, False),
            drawn[2],
        )
    ),
    RAW_LINES.map(lambda raw: Piece(raw.replace(b"\n", b""))),
)
LINE_ENDS = st.sampled_from([b"\n", b"\n", b"\n", b"\r\n", b""])
STDIO_PIECES = st.tuples(PIECES, LINE_ENDS).map(lambda pair: Piece(pair[0].template, pair[0].id_style, pair[1]))


# --- rendering and the oracle ----------------------------------------------------------------


class IdSource:
    """Fresh ids in several styles; never the same value twice."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.count = 0

    def next(self, style: str) -> int | str:
        self.count += 1
        n = self.count
        return {
            "int": 10**9 + n,
            "big": 2**64 + n,
            "negative": -(10**9 + n),
            "text": f"{self.prefix}-{n}",
            "unicode": f"{self.prefix}-ид-{n}-💥\u202e",
            "spaces": f" {self.prefix} {n} ",
        }[style]


def render(piece: Piece, ids: IdSource) -> bytes:
    """The piece's bytes with its id slot filled (without the line end)."""
    if piece.id_style is None:
        return piece.template
    fresh = json.dumps(ids.next(piece.id_style), ensure_ascii=False).encode("utf-8")
    return piece.template.replace(json.dumps(ID_MARK).encode(), fresh)


def id_key(value: Any) -> tuple[type, Any]:
    return (type(value), value)


def readable(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def parsed(line: bytes) -> Any:
    """The JSON value of a line, or a ValueError when the line is not one JSON text in UTF-8."""
    return pydantic_core.from_json(line.decode("utf-8"))


_DEEP_ARRAYS = re.compile(rb"(\[{2,})(\]+)")
_DEEP_OBJECTS = re.compile(rb'((?:\{"a":){2,})1(\}+)')


def flattened(line: bytes) -> bytes:
    """The line with `nested()`'s deep runs cut to one level: JSON stays JSON, and its top-level id stays."""
    def arrays(match: re.Match) -> bytes:
        opened, closed = len(match[1]), len(match[2])
        return b"[]" + b"]" * (closed - opened) if closed >= opened else match[0]

    def objects(match: re.Match) -> bytes:
        opened, closed = len(match[1]) // len(b'{"a":'), len(match[2])
        return b"1" + b"}" * (closed - opened) if closed >= opened else match[0]

    return _DEEP_OBJECTS.sub(objects, _DEEP_ARRAYS.sub(arrays, line))


def owed(line: bytes, *, deep_is_json: bool = False) -> tuple[str, Any]:
    """What a line is owed: ("reply", id key), ("null-error", None) or ("silence", None).

    deep_is_json: the server reads JSON nested past a parser's limit as JSON (the lab's stdio front does).
    """
    if len(line) > MAX_LINE_BYTES or not line.strip():
        return "null-error", None
    try:
        value = parsed(flattened(line) if deep_is_json else line)
    except ValueError:  # not UTF-8 (UnicodeDecodeError is one), or not JSON
        return "null-error", None
    if not isinstance(value, dict):
        return "null-error", None
    if "id" in value and readable(value["id"]):
        if "result" in value or "error" in value:
            return "silence", None  # a client's reply to the server (the generator only makes valid ones)
        return "reply", id_key(value["id"])
    if "id" in value:
        return "null-error", None
    is_notification = (
        value.get("jsonrpc") == "2.0"
        and isinstance(value.get("method"), str)
        and (value.get("params") is None or isinstance(value.get("params"), dict))
    )
    return ("silence", None) if is_notification else ("null-error", None)


def owed_for_lines(lines: list[bytes]) -> tuple[Counter, int]:
    """(replies owed by id key, id-null errors owed) for the lines a server reads."""
    replies: Counter = Counter()
    nulls = 0
    for line in lines:
        kind, key = owed(line, deep_is_json=True)
        if kind == "reply":
            replies[key] += 1
        elif kind == "null-error":
            nulls += 1
    return replies, nulls


# --- the oracle itself ----------------------------------------------------------------------


def test_the_oracle_owes_a_reply_to_a_readable_id_even_in_a_broken_frame():
    assert owed(b'{"id":7,"method":3}') == ("reply", (int, 7))
    assert owed(b'{"jsonrpc":"2.0","id":"7","method":"tools/list"}\r') == ("reply", (str, "7"))


def test_the_oracle_owes_an_id_null_error_to_an_unreadable_line():
    for line in [b"", b"  ", b"{oops", b"\xff", b"[]", b'{"id":null,"method":"x"}', b'{"id":1.5}', b'{"method":"x"}']:
        assert owed(line) == ("null-error", None), line


def test_the_oracle_reads_deep_nesting_as_json_only_when_told():
    for depth, opener in [(1000, "["), (50_000, "{")]:
        line = render(Piece(nested(depth, opener).encode(), "int"), IdSource("d"))
        assert owed(line) == ("null-error", None)
        assert owed(line, deep_is_json=True)[0] == "reply"
        assert owed(line[:-1], deep_is_json=True) == ("null-error", None)


def test_the_oracle_owes_silence_to_notifications_and_client_replies():
    assert owed(b'{"jsonrpc":"2.0","method":"notifications/progress","params":null}') == ("silence", None)
    assert owed(b'{"jsonrpc":"2.0","id":3,"result":{}}') == ("silence", None)


def test_rendering_fills_each_slot_with_a_fresh_id():
    ids = IdSource("t")
    piece = Piece(dumps({"jsonrpc": "2.0", "id": ID_MARK, "method": "x"}, True, True), "unicode")
    first, second = parsed(render(piece, ids)), parsed(render(piece, ids))
    assert first["id"] != second["id"] and "💥" in first["id"]
