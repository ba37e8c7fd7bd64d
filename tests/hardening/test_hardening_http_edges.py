"""HTTP edge cases: each gets the status and body the spec prescribes, or SDK 2.3.0's answer where the spec leaves it open.

Spec (2026-07-28, Streamable HTTP): a present but invalid Origin is 403; GET and
DELETE on a modern-only endpoint are 405; an accepted notification is 202 with an
empty body; a body is a single request or notification (so a batch or a posted
response is refused); an unknown method is 404 with a JSON-RPC body. The SDK adds:
421 for a bad Host, 400 with plain text for a wrong Content-Type, 406 when Accept
does not allow the reply, -32600 with id null for a refused body.
"""

from __future__ import annotations

import json

import pytest
from lab_harness import PROTOCOL, check_result, http_lab, request

TOOLS_LIST = request(1, "tools/list")
CANCELLED = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}
NOTIFICATION_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", "MCP-Protocol-Version": PROTOCOL}
SINGLE_BODY = "Body must be a single JSON-RPC request or notification object"


@pytest.fixture(scope="module")
def lab():
    with http_lab() as server:
        server.port = server.url.split(":")[2].split("/")[0]
        yield server


def post(lab, body, **headers: str):
    """POST body (a frame, or raw text) with the headers derived for tools/list, overridden by headers."""
    text = body if isinstance(body, str) else json.dumps(body)
    merged = {**lab.headers_for(TOOLS_LIST), **{name.replace("_", "-"): value.format(port=lab.port) for name, value in headers.items()}}
    return lab.client.post(lab.url, content=text, headers=merged)


def assert_json_rpc_error(response, status: int, code: int, message: str | None = None) -> None:
    assert response.status_code == status and response.headers["content-type"] == "application/json", response.text
    reply = response.json()
    assert reply["jsonrpc"] == "2.0" and reply["id"] is None and reply["error"]["code"] == code, reply
    if message is not None:
        assert reply["error"]["message"] == message


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "null", "file://", "http://127.0.0.1", "https://127.0.0.1:{port}", "http://127.0.0.1.evil.example:{port}"],
)
def test_a_foreign_origin_is_403_with_a_plain_reason(lab, origin):
    response = post(lab, TOOLS_LIST, Origin=origin)
    assert (response.status_code, response.text) == (403, "Invalid Origin header")


@pytest.mark.parametrize("origin", ["http://127.0.0.1:{port}", "http://localhost:{port}", "http://[::1]:{port}"])
def test_the_servers_own_origin_is_served(lab, origin):
    check_result("tools/list", post(lab, TOOLS_LIST, Origin=origin).json())


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1", "localhost", "127.0.0.1.evil.example:{port}"])
def test_a_foreign_host_is_421_with_a_plain_reason(lab, host):
    response = post(lab, TOOLS_LIST, Host=host)
    assert (response.status_code, response.text) == (421, "Invalid Host header")


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""])
def test_a_body_that_is_not_declared_json_is_400_with_a_plain_reason(lab, content_type):
    response = post(lab, TOOLS_LIST, Content_Type=content_type)
    assert (response.status_code, response.text) == (400, "Invalid Content-Type header")


def test_json_with_a_charset_is_still_json(lab):
    check_result("tools/list", post(lab, TOOLS_LIST, Content_Type="application/json; charset=utf-8").json())


@pytest.mark.parametrize("verb", ["GET", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"])
def test_every_verb_but_post_is_405_allow_post(lab, verb):
    response = lab.client.request(verb, lab.url, headers=NOTIFICATION_HEADERS)
    assert response.status_code == 405 and response.headers["allow"] == "POST" and response.content == b""


def test_a_notification_is_202_with_an_empty_body(lab):
    response = lab.client.post(lab.url, content=json.dumps(CANCELLED), headers=NOTIFICATION_HEADERS)
    assert response.status_code == 202 and response.content == b""


def test_a_notification_from_a_foreign_origin_is_still_403(lab):
    response = lab.client.post(lab.url, content=json.dumps(CANCELLED), headers={**NOTIFICATION_HEADERS, "Origin": "http://evil.example"})
    assert (response.status_code, response.text) == (403, "Invalid Origin header")


@pytest.mark.parametrize(
    "body",
    [[TOOLS_LIST], [TOOLS_LIST, request(2, "tools/list")], [CANCELLED], [], {"jsonrpc": "2.0", "id": 1, "result": {}}],
    ids=["batch-of-one", "batch-of-two", "batch-of-a-notification", "empty-batch", "a-posted-response"],
)
def test_anything_but_one_request_or_notification_is_400_invalid_request(lab, body):
    assert_json_rpc_error(post(lab, body), 400, -32600, SINGLE_BODY)


@pytest.mark.parametrize("text", ["{oops", "", "\u00ff"], ids=["broken", "empty", "plain-text"])
def test_a_body_that_is_not_json_is_400_parse_error(lab, text):
    assert_json_rpc_error(post(lab, text), 400, -32700, "Parse error")


def test_an_unknown_method_is_404_with_a_json_rpc_body(lab):
    frame = request(3, "notes/delete_everything")
    response = lab.post(frame)
    assert response.status_code == 404 and response.json()["error"]["code"] == -32601
    assert response.json()["id"] == 3


@pytest.mark.parametrize(("accept", "status"), [("application/json", 406), ("text/event-stream", 406), ("*/*", 200), (None, 406)])
def test_accept_must_allow_both_json_and_sse_in_sse_mode(lab, accept, status):
    headers = {**lab.headers_for(TOOLS_LIST), "Accept": accept or ""}
    request = lab.client.build_request("POST", lab.url, content=json.dumps(TOOLS_LIST), headers=headers)
    if accept is None:
        # Really absent: httpx would otherwise send its default `*/*`. SDK 2.3.0 answers 406, although HTTP reads a
        # missing Accept as any type (RFC 9110 §12.5.1): MCP's client MUST list both types, and the SDK holds it to that.
        del request.headers["Accept"]
    response = lab.client.send(request)
    assert "accept" in request.headers or accept is None
    assert response.status_code == status


def test_only_the_endpoint_path_serves_mcp(lab):
    response = lab.client.post(lab.url.removesuffix("/mcp") + "/", content=json.dumps(TOOLS_LIST), headers=lab.headers_for(TOOLS_LIST))
    assert (response.status_code, response.text) == (404, "Not Found")


def test_after_every_refusal_a_valid_request_is_served(lab):
    check_result("server/discover", lab.post(request("after-edges", "server/discover")).json())
