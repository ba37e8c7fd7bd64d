import json

import pytest

from mcpwire import frames
from mcpwire.reply import Reply

ENVELOPE_KEYS = [frames.PROTOCOL_VERSION_KEY, frames.CLIENT_INFO_KEY, frames.CLIENT_CAPABILITIES_KEY]


def test_request_has_wire_key_order_and_the_full_envelope_last():
    frame = frames.request("tools/call", {"name": "search_notes", "arguments": {"query": "tmr"}}, id=7)
    assert list(frame) == ["jsonrpc", "id", "method", "params"]
    assert list(frame["params"]) == ["name", "arguments", "_meta"]
    assert list(frame["params"]["_meta"]) == ENVELOPE_KEYS
    assert frame["params"]["_meta"] == {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "mcpwire", "version": frames.VERSION},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def test_dumps_is_the_exact_compact_line():
    frame = frames.request("tools/list", id=1)
    assert frames.dumps(frame) == (
        '{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{'
        '"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        f'"io.modelcontextprotocol/clientInfo":{{"name":"mcpwire","version":"{frames.VERSION}"}},'
        '"io.modelcontextprotocol/clientCapabilities":{}}}}')
    assert frames.dumps({"text": "Schlaf ü"}) == '{"text":"Schlaf ü"}'
    assert "\n" not in frames.dumps({"a": "line\nbreak"})


def test_meta_merges_overrides_and_omit_removes_one_key():
    frame = frames.request("tools/list", meta={"progressToken": "p1", frames.CLIENT_INFO_KEY: frames.OMIT,
                                               frames.CLIENT_CAPABILITIES_KEY: {"elicitation": {"form": {}}}})
    meta = frame["params"]["_meta"]
    assert list(meta) == [frames.PROTOCOL_VERSION_KEY, frames.CLIENT_CAPABILITIES_KEY, "progressToken"]
    assert meta[frames.CLIENT_CAPABILITIES_KEY] == {"elicitation": {"form": {}}}


def test_meta_none_leaves_meta_out_and_params_out_when_empty():
    assert frames.request("tools/list", meta=None) == {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert frames.request("tools/list", {}, meta=None)["params"] == {}
    hand_written = {"_meta": {"x": 1}}
    assert frames.request("tools/list", hand_written, meta=None)["params"] == {"_meta": {"x": 1}}


def test_meta_written_in_params_is_merged_over_the_defaults():
    frame = frames.request("tools/list", {"_meta": {"progressToken": 3}})
    assert frame["params"]["_meta"]["progressToken"] == 3
    assert frame["params"]["_meta"][frames.PROTOCOL_VERSION_KEY] == "2026-07-28"


def test_building_a_frame_does_not_change_the_params_passed_in():
    params = {"name": "x", "_meta": {"progressToken": 1}}
    frames.request("tools/call", params)
    assert params == {"name": "x", "_meta": {"progressToken": 1}}


def test_notification_has_no_id_and_no_envelope_unless_asked():
    assert frames.notification("notifications/cancelled", {"requestId": 4}) == {
        "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}}
    with_meta = frames.notification("notifications/cancelled", {"requestId": 4}, meta={"k": 1})
    assert with_meta["params"] == {"requestId": 4, "_meta": {"k": 1}}


def test_legacy_frames_follow_the_2025_handshake():
    init = frames.legacy_initialize()
    assert init == {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": frames.CLIENT_INFO}}
    assert frames.legacy_initialized() == {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert frames.legacy_request("tools/list", id=2) == {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    assert frames.LEGACY_PROTOCOL_VERSION == "2025-11-25" and frames.PROTOCOL_VERSION == "2026-07-28"


def test_protocol_version_of_reads_the_envelope():
    assert frames.protocol_version_of(frames.request("tools/list")) == "2026-07-28"
    assert frames.protocol_version_of(frames.request("tools/list", meta=None)) is None
    assert frames.protocol_version_of(frames.legacy_initialize()) is None


@pytest.mark.parametrize("supported, expected", [(["2026-07-28"], "2026-07-28"), (["1999-01-01"], None)])
def test_retry_with_supported_version(supported, expected):
    wrong = frames.request("tools/list", meta={frames.PROTOCOL_VERSION_KEY: "1900-01-01"}, id=3)
    error = Reply.from_bytes(json.dumps({"jsonrpc": "2.0", "id": 3, "error": {
        "code": -32022, "message": "Unsupported protocol version",
        "data": {"supported": supported, "requested": "1900-01-01"}}}).encode())
    retried = frames.retry_with_supported_version(wrong, error)
    if expected is None:
        assert retried is None
    else:
        assert frames.protocol_version_of(retried) == expected
        assert frames.protocol_version_of(wrong) == "1900-01-01"  # the original is untouched
