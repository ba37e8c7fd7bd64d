"""The lab server over Streamable HTTP: the same primitives, plus headers, SSE and security."""

from __future__ import annotations

import base64
import json
import re

import httpx
import pytest
from lab_harness import (
    CONFIRM_KEY,
    FORM_ELICITATION,
    PROTOCOL,
    TAG_KEY,
    check_error,
    check_notification,
    check_result,
    http_lab,
    request,
    retry_with,
    sample_note_ids,
    sse_messages,
    text_of,
    tool_call,
)

READ_HEADER = {"Mcp-Param-Note-Id": "spindle-density"}


@pytest.fixture(scope="module")
def lab():
    with http_lab() as server:
        yield server


def test_the_first_stdout_line_is_the_local_url(lab):
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", lab.url)


def test_discover_over_http(lab):
    response, reply, _ = lab.call(request(1, "server/discover"))
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    result = check_result("server/discover", reply)
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "notes-lab"


@pytest.mark.parametrize("method", ["tools/list", "prompts/list", "resources/list", "resources/templates/list"])
def test_every_list_is_valid(lab, method):
    response, reply, _ = lab.call(request(method, method))
    assert response.status_code == 200
    check_result(method, reply)


def test_read_note_with_its_param_header(lab):
    response, reply, _ = lab.call(tool_call(2, "read_note", {"note_id": "spindle-density"}), **READ_HEADER)
    assert response.status_code == 200
    assert check_result("tools/call", reply)["structuredContent"]["id"] == "spindle-density"


@pytest.mark.parametrize(("headers", "problem"), [({}, "missing"), ({"Mcp-Param-Note-Id": "welcome"}, "does not match")])
def test_read_note_param_header_is_checked_against_the_body(lab, headers, problem):
    response, reply, _ = lab.call(tool_call(3, "read_note", {"note_id": "spindle-density"}), **headers)
    assert response.status_code == 400
    assert problem in check_error(reply, -32020)["message"]


def test_tool_errors_are_200_with_is_error(lab):
    frame = tool_call(4, "read_note", {"note_id": "no-such-note"})
    response, reply, _ = lab.call(frame, **{"Mcp-Param-Note-Id": "no-such-note"})
    assert response.status_code == 200
    result = check_result("tools/call", reply)
    assert result["isError"] is True and "Use search_notes to find ids" in text_of(result)
    response, reply, _ = lab.call(tool_call(5, "sync_notes", {"remote": "https://example.org/notes.git"}))
    assert response.status_code == 200 and check_result("tools/call", reply)["isError"] is True


def test_search_over_http(lab):
    _, reply, _ = lab.call(tool_call(6, "search_notes", {"query": "actigraphy watch"}))
    assert check_result("tools/call", reply)["structuredContent"]["hits"][0]["id"] == "actigraphy-pipeline"


def test_resources_text_template_and_blob(lab):
    _, reply, _ = lab.call(request(7, "resources/read", {"uri": "notes://index"}))
    assert len(check_result("resources/read", reply)["contents"][0]["text"].splitlines()) >= len(sample_note_ids())
    _, reply, _ = lab.call(request(8, "resources/read", {"uri": "notes://reading-list"}))
    assert "Diekelmann" in check_result("resources/read", reply)["contents"][0]["text"]
    _, reply, _ = lab.call(request(9, "resources/read", {"uri": "notes://attachments/hypnogram.png"}))
    blob = check_result("resources/read", reply)["contents"][0]["blob"]
    assert base64.b64decode(blob)[:4] == b"\x89PNG"


def test_unknown_note_resource_is_400_invalid_params(lab):
    response, reply, _ = lab.call(request(10, "resources/read", {"uri": "notes://no-such-note"}))
    assert response.status_code == 400
    assert check_error(reply, -32602)["data"] == {"uri": "notes://no-such-note"}


def test_prompt_and_completions_over_http(lab):
    _, reply, _ = lab.call(request(11, "prompts/get", {"name": "summarise_topic", "arguments": {"topic": "actigraphy"}}))
    assert "actigraphy-pipeline" in check_result("prompts/get", reply)["messages"][0]["content"]["text"]
    params = {"ref": {"type": "ref/prompt", "name": "summarise_topic"}, "argument": {"name": "topic", "value": "e"}}
    _, reply, _ = lab.call(request(12, "completion/complete", params))
    assert check_result("completion/complete", reply)["completion"]["values"] == ["eeg", "ethics"]
    params = {"ref": {"type": "ref/resource", "uri": "notes://{note_id}"}, "argument": {"name": "note_id", "value": "sp"}}
    _, reply, _ = lab.call(request(13, "completion/complete", params))
    assert check_result("completion/complete", reply)["completion"]["values"] == ["spindle-density"]


def test_reindex_with_a_progress_token_answers_as_sse(lab):
    response, reply, before = lab.call(tool_call(14, "reindex", {"pause_ms": 0}, progressToken=14))
    assert response.headers["content-type"].startswith("text/event-stream")
    progress = [check_notification(message) for message in before]
    assert [p["progress"] for p in progress] == list(range(1, len(progress) + 1)) and len(progress) >= 10
    assert check_result("tools/call", reply)["isError"] is False


def test_tag_note_round_trip_over_http(lab):
    first = tool_call(15, "tag_note", {"note_id": "actigraphy-pipeline"}, capabilities=FORM_ELICITATION)
    _, reply, _ = lab.call(first)
    asked = check_result("tools/call", reply)
    answer = {TAG_KEY: {"action": "accept", "content": {"tag": "wearables"}}}
    _, reply, _ = lab.call(retry_with(first, 16, answer, asked["requestState"]))
    assert "wearables" in text_of(check_result("tools/call", reply))


def test_delete_note_round_trip_and_tampered_state_over_http(lab):
    first = tool_call(17, "delete_note", {"note_id": "ethics-amendment"}, capabilities=FORM_ELICITATION)
    _, reply, _ = lab.call(first)
    state = check_result("tools/call", reply)["requestState"]
    yes = {CONFIRM_KEY: {"action": "accept", "content": {"confirm": True}}}
    response, reply, _ = lab.call(retry_with(first, 18, yes, state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")))
    assert response.status_code == 400 and check_error(reply, -32602)["message"] == "Invalid or expired requestState"
    _, reply, _ = lab.call(retry_with(first, 19, yes, state))
    assert text_of(check_result("tools/call", reply)) == "Deleted note ethics-amendment."


def test_listen_stream_sees_list_changed_after_create(lab):
    listen = request("listen-http", "subscriptions/listen", {"notifications": {"resourcesListChanged": True}})
    with httpx.Client(timeout=10) as listener:
        with listener.stream("POST", lab.url, content=json.dumps(listen), headers=lab.headers_for(listen)) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            lines = stream.iter_lines()
            ack = next(json.loads(line[5:]) for line in lines if line.startswith("data:"))
            assert ack["method"] == "notifications/subscriptions/acknowledged"
            _, reply, _ = lab.call(tool_call(20, "create_note", {"title": "Listen over HTTP", "body": "hello"}))
            assert check_result("tools/call", reply)["isError"] is False
            change = next(json.loads(line[5:]) for line in lines if line.startswith("data:"))
    assert change["method"] == "notifications/resources/list_changed"
    assert check_notification(change)["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-http"


def test_a_bad_origin_is_refused_with_403(lab):
    response = lab.post(request(21, "server/discover"), Origin="http://evil.example")
    assert response.status_code == 403


def test_a_bad_host_is_refused_with_421(lab):
    response = lab.post(request(22, "server/discover"), Host="evil.example")
    assert response.status_code == 421


def test_a_body_over_4_mib_is_refused_with_413(lab):
    frame = request(23, "tools/list", {"pad": "x" * (5 * 1024 * 1024)})
    assert lab.post(frame).status_code == 413


def test_legacy_clients_get_a_session(lab):
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}},
    }
    response = lab.client.post(lab.url, json=initialize, headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 200 and re.fullmatch(r"[0-9a-f]{32}", response.headers["mcp-session-id"])
    (reply,) = sse_messages(response.text)
    assert reply["result"]["protocolVersion"] == "2025-11-25"


def test_two_servers_started_at_once_get_different_ports():
    with http_lab() as first, http_lab() as second:
        assert first.url != second.url
        for server in (first, second):
            response = server.post(request("ping-like", "server/discover"))
            assert response.status_code == 200 and response.json()["result"]["supportedVersions"] == [PROTOCOL]
