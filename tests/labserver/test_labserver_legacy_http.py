"""`python -m labserver --http --legacy-only`: a 2025-11-25 server a dual-era client can fall back against.

Lesson 12's probe and exercise 12's era check read its answers: a 2026-07-28 request must get
what a legacy server answers (400, a JSON-RPC error that is not a modern code), and the
handshake must open a working legacy session.
"""

import httpx
import pytest
from mcp_types import methods
from mcp_types._v2025_11_25 import JSONRPCErrorResponse as LegacyErrorResponse

from mcpwire import HttpWire, frames

MODERN_CODES = (-32020, -32021, -32022)


@pytest.fixture(scope="module")
def legacy_only():
    with HttpWire.labserver("--legacy-only") as wire:
        yield wire


def test_a_modern_request_gets_a_legacy_400_without_a_modern_code(legacy_only):
    probe = HttpWire(legacy_only.url)
    reply = probe.send(frames.request("server/discover", id=1))
    assert reply.status == 400
    assert reply.code == -32600 and reply.code not in MODERN_CODES
    assert reply.error["message"] == "Bad Request: Missing session ID"
    LegacyErrorResponse.model_validate(reply.message)


def test_a_version_it_does_not_know_changes_nothing_before_a_session(legacy_only):
    reply = HttpWire(legacy_only.url).send(
        frames.request("server/discover", id=1, meta={frames.PROTOCOL_VERSION_KEY: "2027-01-01"}))
    assert (reply.status, reply.code) == (400, -32600)


def test_the_handshake_opens_a_legacy_session(legacy_only):
    wire = HttpWire(legacy_only.url)
    hello = wire.send(frames.legacy_initialize(id=1))
    assert hello.status == 200 and hello.result["protocolVersion"] == "2025-11-25"
    methods.parse_server_result("initialize", "2025-11-25", hello.result)
    assert wire.session_id is not None
    assert wire.send(frames.legacy_initialized()).status == 202
    listed = wire.send(frames.legacy_request("tools/list", id=2))
    assert listed.status == 200 and "resultType" not in listed.result and listed.result["tools"]


def test_inside_a_session_the_2026_header_is_an_unsupported_version(legacy_only):
    wire = HttpWire(legacy_only.url)
    wire.send(frames.legacy_initialize(id=1))
    wire.send(frames.legacy_initialized())
    reply = wire.send(frames.request("tools/list", id=2))
    assert reply.status == 400
    assert reply.error["message"] == "Bad Request: Unsupported protocol version: 2026-07-28"


def test_delete_ends_the_session(legacy_only):
    wire = HttpWire(legacy_only.url)
    wire.send(frames.legacy_initialize(id=1))
    ended = httpx.delete(legacy_only.url, headers={"MCP-Protocol-Version": "2025-11-25",
                                                   "Mcp-Session-Id": wire.session_id})
    assert ended.status_code == 200
    assert wire.send(frames.legacy_request("tools/list", id=2)).status == 404


def test_the_dual_era_lab_answers_the_same_probe_with_a_discover_result(http_wire):
    reply = HttpWire(http_wire.url).send(frames.request("server/discover", id=1))
    assert reply.status == 200
    methods.validate_server_result("server/discover", "2026-07-28", reply.result)
    assert "2026-07-28" in reply.result["supportedVersions"]


@pytest.fixture(scope="module")
def sessionless():
    with HttpWire.labserver("--legacy-only", "--stateless") as wire:
        yield wire


def test_without_sessions_a_modern_request_is_served_as_a_legacy_one(sessionless):
    # What exercise 12 needs: an older legacy server answers 200, never with a modern code or resultType.
    probe = HttpWire(sessionless.url)
    discover = probe.send(frames.request("server/discover", id=1))
    assert (discover.status, discover.code) == (200, -32601)
    ping = probe.send(frames.request("ping", id=2))
    assert ping.status == 200 and ping.result == {}
    assert probe.session_id is None and "mcp-session-id" not in ping.headers
