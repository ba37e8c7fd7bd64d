import pytest

from mcpwire import frames, validate
from mcpwire.reply import Reply
from mcpwire.validate import NULL_ERROR_ID

C, I = frames.CLIENT_CAPABILITIES_KEY, frames.CLIENT_INFO_KEY


@pytest.mark.parametrize("method, params", [
    ("server/discover", None), ("tools/list", None), ("tools/call", {"name": "x", "arguments": {}}),
    ("resources/read", {"uri": "notes://index"}), ("prompts/get", {"name": "p", "arguments": {"a": "b"}}),
    ("subscriptions/listen", {"notifications": {"toolsListChanged": True}}),
])
def test_frames_mcpwire_builds_are_valid(method, params):
    assert validate(frames.request(method, params)) == []


@pytest.mark.parametrize("frame, problem", [
    (frames.request("tools/list", meta={C: frames.OMIT}), "params._meta: missing io.modelcontextprotocol/clientCapabilities"),
    (frames.request("tools/list", meta=None), "message: missing params"),
    (frames.request("tools/call", {"arguments": {}}), "params: missing name"),
    (frames.request("tools/call", {"name": 3}), "params.name: Input should be a valid string"),
    (frames.request("tools/list", meta={I: {"name": "me"}}), "params._meta.io.modelcontextprotocol/clientInfo: missing version"),
    (frames.request("ping"), "method: 'ping' is not a 2026-07-28 client request"),
    (frames.request("tools/list", id=None), "id: must be a string or an integer, not None"),
    ({**frames.request("tools/list"), "jsonrpc": "1.0"}, 'jsonrpc: must be "2.0"'),
    (frames.notification("notifications/cancelled", {}), "params: missing requestId"),
    ("not a dict", "message: not a JSON object"),
])
def test_broken_frames_name_the_field(frame, problem):
    assert problem in validate(frame)


def test_results_are_checked_against_the_request_method():
    good = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "hi"}], "resultType": "complete"}}
    assert validate(good, method="tools/call") == []
    bad = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text"}]}}
    assert validate(bad, method="tools/call") == ["result.content.0: missing text", "result: missing resultType"]
    mrtr = {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "requestState": "s"}}
    assert validate(mrtr, method="tools/call") == []
    assert validate({"jsonrpc": "2.0", "id": 1, "result": {}}) == ["result: missing resultType"]


def test_an_error_whose_id_could_not_be_read_is_checked_the_schema_way():
    # The 2026-07-28 schema: JSONRPCErrorResponse.id is optional and a string or an integer.
    parse_error = {"jsonrpc": "2.0", "error": {"code": -32700, "message": "Parse error"}}
    assert validate(parse_error) == []
    assert validate({**parse_error, "id": None}) == [NULL_ERROR_ID]
    assert validate({**parse_error, "id": "abc"}) == []
    assert validate({**parse_error, "id": 1.5}) == ["id: must be a string or an integer, not 1.5"]


def test_a_result_needs_its_id():
    assert validate({"jsonrpc": "2.0", "result": {"resultType": "complete"}}) == ["id: missing"]
    assert validate({"jsonrpc": "2.0", "id": None, "result": {"resultType": "complete"}}) == [
        "id: must be a string or an integer, not None"]


def test_errors_and_replies():
    assert validate({"jsonrpc": "2.0", "id": 1, "error": {"code": "x"}}) == [
        "error.code: must be an integer", "error.message: must be a string"]
    assert validate(Reply.from_bytes(b"nope"))[0].startswith("reply is not JSON")
