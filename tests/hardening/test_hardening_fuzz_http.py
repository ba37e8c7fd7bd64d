"""Generated frames over Streamable HTTP, valid and broken, one POST each, through mcpwire.

HttpWire.send_raw derives the routing headers from whatever the body holds. Every
POST must get one complete answer and never a 5xx: a notification 202 with an empty
body, a body over the limit 413, anything else exactly one JSON-RPC message. A
valid request routed to the 2026 transport gets its own id back; a broken body an
error with id null. The server never exits, a valid request after each batch
succeeds, and no file outside the notes folder is created or changed.
"""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_hardening_frames import PIECES, IdSource, id_key, owed, parsed, readable, render
from test_hardening_support import Sandbox

from labserver.http import MAX_REQUEST_BODY_BYTES
from mcpwire import HttpWire, headers


@pytest.fixture(scope="module")
def wire(tmp_path_factory):
    sandbox = Sandbox(tmp_path_factory.mktemp("fuzz-http"))
    with contextlib.chdir(sandbox.cwd):  # a file written relative to the server's cwd would show up
        lab = HttpWire.labserver("--notes", str(sandbox.notes), timeout=30)
    try:
        assert lab.request("tools/list").ok  # HttpWire learns read_note's Mcp-Param header from it
        lab.ids = IdSource("fz")
        yield lab
        assert lab._process.poll() is None, "the server exited during the fuzzing"
        assert sandbox.outside_notes() == sandbox.before, "a file outside the notes folder was created or changed"
    finally:
        lab.close()


def valid_request(value) -> bool:
    return (
        isinstance(value, dict)
        and value.get("jsonrpc") == "2.0"
        and readable(value.get("id"))
        and isinstance(value.get("method"), str)
        and (value.get("params") is None or isinstance(value.get("params"), dict))
        and "result" not in value
        and "error" not in value
    )


def routed_to_2026(wire: HttpWire, body: bytes) -> bool:
    """Whether the headers HttpWire derives send this body to the 2026 transport (not the legacy one)."""
    try:
        frame = json.loads(body.decode("utf-8", "surrogateescape"))
    except (ValueError, RecursionError):
        frame = {}
    version = wire.headers_for(frame if isinstance(frame, dict) else {}).get("MCP-Protocol-Version")
    return version is not None and version not in headers.LEGACY_VERSIONS


def check_answer(wire: HttpWire, body: bytes, reply) -> None:
    assert reply.status < 500, (reply.status, reply.text[:300])
    kind, key = owed(body)
    if reply.status == 202:
        assert kind == "silence" and reply.raw == b"", (body[:200], reply.status)
        return
    if reply.status == 413:
        assert len(body) > MAX_REQUEST_BODY_BYTES
        return
    assert reply.status in (200, 400, 404), (body[:200], reply.status, reply.text[:300])
    message = reply.message
    assert reply.problem is None and isinstance(message, dict) and message.get("jsonrpc") == "2.0", reply.text[:300]
    assert ("result" in message) != ("error" in message), message
    if message["id"] is not None:
        assert kind == "reply" and id_key(message["id"]) == key, (body[:200], message)
    else:  # the body refused as a whole (a refused notification too, spec: 4xx with an id-less error)
        assert reply.status == 400 and "error" in message, message
        lost_id = kind == "reply" and valid_request(parsed(body)) and routed_to_2026(wire, body)
        assert not lost_id, f"a valid request lost its id: {body[:200]!r} -> {message}"


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(pieces=st.lists(PIECES, min_size=4, max_size=16))
def test_every_post_gets_one_answer_and_the_server_keeps_serving(wire, pieces):
    for piece in pieces:
        body = render(piece, wire.ids)
        check_answer(wire, body, wire.send_raw(body))
    assert wire.request("server/discover").ok
    assert wire._process.poll() is None
