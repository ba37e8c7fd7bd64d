"""What the lab's 2026-07-28 side answers to the pieces 2026-07-28 removed (lesson 12's table), on both transports.

Every reply that is a 2026-07-28 message is validated with the mcp-types models.
"""

import typing
from pathlib import Path

import httpx
import nbformat
import pytest
from mcp_types import _v2025_11_25 as legacy_types
from mcp_types import _v2026_07_28 as modern_types
from mcp_types._v2026_07_28 import JSONRPCErrorResponse

from mcpwire import frames

LESSON = Path(__file__).resolve().parents[2] / "notebooks" / "12-between-the-eras.ipynb"

REMOVED_METHODS = [
    ("initialize", frames.legacy_initialize()["params"]),
    ("ping", None),
    ("logging/setLevel", {"level": "info"}),
    ("resources/subscribe", {"uri": "notes://index"}),
    ("resources/unsubscribe", {"uri": "notes://index"}),
    ("tasks/get", {"taskId": "t-1"}),
    ("tasks/result", {"taskId": "t-1"}),
    ("tasks/list", None),
    ("tasks/cancel", {"taskId": "t-1"}),
]
REMOVED_NOTIFICATIONS = ["notifications/initialized", "notifications/roots/list_changed", "notifications/tasks/status"]
# A client's progress notification left with the server's requests it reported on; the changelog does not list it,
# so lesson 12 names it in prose rather than in the table.
NOT_IN_THE_CHANGELOG = {"notifications/progress"}
MODERN = {"MCP-Protocol-Version": "2026-07-28"}


@pytest.fixture(scope="module")
def modern_stdio(stdio_wire):
    """The stdio lab with a modern first request: the era it then keeps. The wait covers a slow start."""
    stdio_wire.request("server/discover", timeout=60)
    return stdio_wire


@pytest.mark.parametrize(("method", "params"), REMOVED_METHODS)
def test_a_removed_method_with_the_envelope_is_not_found_on_http(http_wire, method, params):
    reply = http_wire.send(frames.request(method, params, id=7))
    assert (reply.status, reply.code) == (404, -32601)
    JSONRPCErrorResponse.model_validate(reply.message)
    assert reply.id == 7


@pytest.mark.parametrize(("method", "params"), REMOVED_METHODS[1:])
def test_a_removed_method_with_the_envelope_is_not_found_on_stdio(modern_stdio, method, params):
    reply = modern_stdio.send(frames.request(method, params, id=f"removed-{method}"))
    assert reply.code == -32601
    JSONRPCErrorResponse.model_validate(reply.message)


def test_initialize_on_a_modern_stdio_process_names_the_versions_it_serves(modern_stdio):
    # Unlike HTTP (404, -32601), SDK 2.3.0's stdio era lock answers -32022 and lists what it serves,
    # which is what the spec asks of a modern-only server refusing an initialize.
    reply = modern_stdio.send(frames.request("initialize", REMOVED_METHODS[0][1], id="removed-initialize"))
    assert reply.code == -32022 and reply.error["data"]["supported"] == ["2026-07-28"]
    JSONRPCErrorResponse.model_validate(reply.message)


@pytest.mark.parametrize(("method", "params"), REMOVED_METHODS)
def test_a_removed_method_as_a_legacy_client_writes_it_lacks_the_envelope(http_wire, method, params):
    reply = http_wire.send(frames.legacy_request(method, params, id=8), MODERN)
    assert (reply.status, reply.code) == (400, -32602)
    JSONRPCErrorResponse.model_validate(reply.message)


@pytest.mark.parametrize("method", REMOVED_NOTIFICATIONS)
def test_a_removed_notification_is_accepted_and_not_answered_on_http(http_wire, method):
    reply = http_wire.send({"jsonrpc": "2.0", "method": method}, MODERN)
    assert reply.status == 202 and reply.raw == b""


def test_a_removed_notification_gets_no_reply_on_stdio(modern_stdio):
    assert modern_stdio.send_raw('{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}', timeout=0.5) is None
    assert modern_stdio.request("server/discover").ok  # and the server goes on serving


def test_a_response_from_the_client_is_refused_on_http(http_wire):
    reply = http_wire.send({"jsonrpc": "2.0", "id": 1, "result": {"action": "decline"}}, MODERN)
    assert (reply.status, reply.code) == (400, -32600)


def test_the_session_header_is_ignored_and_never_echoed(http_wire):
    reply = http_wire.send(frames.request("tools/list", id=9), {"Mcp-Session-Id": "0" * 32})
    assert reply.status == 200 and "mcp-session-id" not in reply.headers
    assert reply.result["resultType"] == "complete"


@pytest.mark.parametrize("verb", ["GET", "DELETE"])
def test_get_and_delete_are_not_allowed_with_the_2026_header(http_wire, verb):
    response = httpx.request(verb, http_wire.url, headers={"Accept": "text/event-stream", **MODERN})
    assert response.status_code == 405 and response.headers["allow"] == "POST"


def client_methods(types, union):
    kind = getattr(types, union)
    members = typing.get_args(kind) or (kind,)  # 2026-07-28's ClientNotification is a single type, not a union
    return {value for member in members for value in typing.get_args(member.model_fields["method"].annotation)}


def test_the_lists_hold_every_method_a_legacy_client_sends_that_2026_07_28_dropped():
    dropped = set()
    for union in ("ClientRequest", "ClientNotification"):
        dropped |= client_methods(legacy_types, union) - client_methods(modern_types, union)
    assert dropped - NOT_IN_THE_CHANGELOG == {method for method, _ in REMOVED_METHODS} | set(REMOVED_NOTIFICATIONS)


def test_lesson_12_table_has_a_row_for_each_of_them():
    source = next(cell for cell in nbformat.read(LESSON, as_version=4).cells
                  if cell.cell_type == "code" and cell.source.startswith("REMOVED = ["))
    table = "".join(output.get("text", "") for output in source.outputs)
    rows = {line.split()[0] for line in table.splitlines()[1:] if line.strip()}
    missing = ({method for method, _ in REMOVED_METHODS} | set(REMOVED_NOTIFICATIONS)) - rows
    assert not missing, f"lesson 12's removed table has no row for {sorted(missing)}"
