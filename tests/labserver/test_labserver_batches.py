"""A JSON array (a JSON-RPC batch) on both transports: one -32600 for the whole array, no member runs.

2026-07-28 has no batch form: a stdio line and an HTTP body each carry a single message.
Every reply is checked against the SDK's own message models (mcp_types).
"""

from __future__ import annotations

import json

import mcp_types as types
import pytest
from lab_harness import check_result, http_lab, request, stdio_lab, text_of, tool_call

CREATE = tool_call("batched-create", "create_note", {"title": "Made in a batch", "body": "Should never exist."})
BATCHES = {
    "two requests": [request(6, "server/discover"), request(7, "tools/list")],
    "a request that writes": [CREATE],
    "a notification": [{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}],
    "empty": [],
}


def refused_batch(reply: dict) -> types.JSONRPCError:
    """The one error a batch gets: -32600 for the array as a whole, so with the id JSON-RPC uses when none is readable."""
    parsed = types.jsonrpc_message_adapter.validate_python(reply, by_name=False)
    assert isinstance(parsed, types.JSONRPCError), reply
    assert parsed.error.code == -32600 and parsed.id is None, reply
    return parsed


def note_exists(call, title: str) -> bool:
    reply = call(tool_call(f"search {title}", "search_notes", {"query": title}))
    return title in text_of(check_result("tools/call", reply))


@pytest.fixture(scope="module")
def stdio():
    with stdio_lab() as lab:
        # Wait for the first reply here, generously: a busy machine can take longer to start a server than to answer.
        lab.send(request("warm-up", "server/discover"))
        check_result("server/discover", lab.read_until("warm-up", timeout=60)[0])
        yield lab


@pytest.fixture(scope="module")
def http():
    with http_lab() as lab:
        yield lab


@pytest.mark.parametrize("batch", BATCHES.values(), ids=BATCHES.keys())
def test_a_batch_on_stdio_gets_one_invalid_request_and_nothing_in_it_runs(stdio, batch):
    stdio.send_raw(json.dumps(batch).encode() + b"\n")
    error = refused_batch(stdio.next_message())
    assert "one message per line" in error.error.message
    stdio.send(request("after the batch", "server/discover"))
    follow_up, before = stdio.read_until("after the batch")
    assert before == [], f"a member of the batch was answered: {before}"
    check_result("server/discover", follow_up)
    assert not note_exists(stdio.call, "Made in a batch")


@pytest.mark.parametrize("batch", BATCHES.values(), ids=BATCHES.keys())
def test_a_batch_on_http_gets_400_and_one_invalid_request(http, batch):
    headers = http.headers_for(batch[0] if batch and "id" in batch[0] else request(0, "server/discover"))
    response = http.client.post(http.url, content=json.dumps(batch), headers=headers)
    assert response.status_code == 400 and response.headers["content-type"] == "application/json"
    error = refused_batch(response.json())
    assert "single JSON-RPC request or notification" in error.error.message
    assert not note_exists(lambda frame: http.call(frame)[1], "Made in a batch")
