import base64

import pytest

from mcpwire import frames, headers
from mcpwire.errors import InvalidHeaderAnnotation


def tool(properties, name="t"):
    return {"name": name, "inputSchema": {"type": "object", "properties": properties}}


NOTE_TOOL = tool({"note_id": {"type": "string", "x-mcp-header": "Note-Id"},
                  "urgent": {"type": "boolean", "x-mcp-header": "Urgent"},
                  "count": {"type": "integer", "x-mcp-header": "Count"},
                  "body": {"type": "string"}}, name="read_note")


def call(arguments, name="read_note"):
    return frames.request("tools/call", {"name": name, "arguments": arguments}, id=5)


def sentinel(text):
    return f"=?base64?{base64.b64encode(text.encode()).decode()}?="


def test_derived_headers_for_a_plain_request():
    assert headers.derive(frames.request("tools/list")) == {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/list",
    }


@pytest.mark.parametrize("method, params, name", [
    ("tools/call", {"name": "search_notes", "arguments": {}}, "search_notes"),
    ("prompts/get", {"name": "summarise_topic"}, "summarise_topic"),
    ("resources/read", {"uri": "notes://index"}, "notes://index"),
])
def test_mcp_name_comes_from_name_or_uri(method, params, name):
    assert headers.derive(frames.request(method, params))["Mcp-Name"] == name


def test_protocol_version_header_follows_the_envelope():
    frame = frames.request("tools/list", meta={frames.PROTOCOL_VERSION_KEY: "1900-01-01"})
    assert headers.derive(frame)["MCP-Protocol-Version"] == "1900-01-01"


def test_notifications_and_legacy_frames_get_no_routing_headers():
    note = headers.derive(frames.notification("notifications/cancelled", {"requestId": 1}))
    assert note["MCP-Protocol-Version"] == "2026-07-28" and "Mcp-Method" not in note
    assert "MCP-Protocol-Version" not in headers.derive(frames.legacy_initialize())
    legacy = headers.derive(frames.legacy_request("tools/list"), default_version="2025-11-25")
    assert legacy["MCP-Protocol-Version"] == "2025-11-25" and "Mcp-Method" not in legacy


@pytest.mark.parametrize("value, header", [
    ("spindle-density", "spindle-density"),
    ("two words", "two words"),
    ("Schläf", sentinel("Schläf")),
    ("tab\there", sentinel("tab\there")),
    (" padded", sentinel(" padded")),
    ("padded ", sentinel("padded ")),
    ("=?base64?abc?=", sentinel("=?base64?abc?=")),
    ("", ""),
])
def test_param_header_values_are_plain_or_base64(value, header):
    assert headers.derive(call({"note_id": value}), NOTE_TOOL)["Mcp-Param-Note-Id"] == header
    assert headers.decode_value(header) == value


def test_param_header_booleans_numbers_and_null():
    derived = headers.derive(call({"note_id": None, "urgent": True, "count": 42}), NOTE_TOOL)
    assert derived["Mcp-Param-Urgent"] == "true"
    assert derived["Mcp-Param-Count"] == "42"
    assert "Mcp-Param-Note-Id" not in derived
    assert headers.encode_value(False) == "false" and headers.encode_value(2.5) == "2.5"
    assert "Mcp-Param-Count" not in headers.derive(call({}), NOTE_TOOL)


def test_nested_properties_can_carry_headers():
    nested = tool({"where": {"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}})
    assert headers.param_headers(nested, {"where": {"region": "eu"}}) == {"Mcp-Param-Region": "eu"}
    assert headers.param_headers(nested, {"where": "flat"}) == {}


@pytest.mark.parametrize("bad, why", [
    (tool({"a": {"type": "string", "x-mcp-header": ""}}), "non-empty"),
    (tool({"a": {"type": "string", "x-mcp-header": 7}}), "non-empty string"),
    (tool({"a": {"type": "string", "x-mcp-header": "Note Id"}}), "not allowed in an HTTP header name"),
    (tool({"a": {"type": "string", "x-mcp-header": "Note:Id"}}), "not allowed in an HTTP header name"),
    (tool({"a": {"type": "string", "x-mcp-header": "Nöte"}}), "not allowed in an HTTP header name"),
    (tool({"a": {"type": "object", "x-mcp-header": "A"}}), "string/integer/boolean"),
    (tool({"a": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "A"}}), "string/integer/boolean"),
    (tool({"a": {"type": "number", "x-mcp-header": "A"}}), "string/integer/boolean"),
    (tool({"a": {"x-mcp-header": "A"}}), "string/integer/boolean"),
    (tool({"a": {"type": "string", "x-mcp-header": "Same"},
           "b": {"type": "string", "x-mcp-header": "SAME"}}), "repeats"),
    (tool({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}), "through `properties`"),
    (tool({"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}}), "through `properties`"),
])
def test_invalid_annotations_are_refused_with_a_reason(bad, why):
    with pytest.raises(InvalidHeaderAnnotation, match=why):
        headers.derive(call({"a": "x", "b": "y"}, name="t"), bad)


def test_overrides_replace_in_place_drop_and_add():
    derived = headers.derive(frames.request("tools/call", {"name": "x"}))
    merged = headers.merge(derived, {"mcp-method": "tools/list", "Mcp-Name": None, "Origin": "http://evil.example"})
    assert list(merged) == ["Accept", "Content-Type", "MCP-Protocol-Version", "mcp-method", "Origin"]
    assert merged["mcp-method"] == "tools/list"
