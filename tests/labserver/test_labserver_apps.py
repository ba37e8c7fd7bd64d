"""The lab's MCP Apps extension (`python -m labserver --apps`): what a host reads, and what a client without it gets.

Off by default: the default lab's tools/list, resources/list and server/discover have no trace of it. On, a
tools/list that does not declare the extension has no app-only tool.
"""

from __future__ import annotations

import pytest
from lab_harness import check_result

from labserver.apps import HYPNOGRAM_VIEW_URI, NIGHTS, view_html
from mcpwire import StdioWire

EXTENSION = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
WITH_APPS = {"extensions": {EXTENSION: {"mimeTypes": [MIME]}}}
CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"


def call(wire, name, arguments, capabilities=None):
    meta = {CAPABILITIES: capabilities} if capabilities is not None else {}
    reply = wire.request("tools/call", {"name": name, "arguments": arguments}, meta=meta)
    return check_result("tools/call", reply.message)


@pytest.fixture(scope="module")
def lab():
    with StdioWire.labserver("--apps") as wire:
        yield wire


@pytest.fixture(scope="module")
def plain_lab():
    with StdioWire.labserver() as wire:
        yield wire


def listed(wire, capabilities=None):
    meta = {CAPABILITIES: capabilities} if capabilities is not None else {}
    return {tool["name"]: tool for tool in check_result("tools/list", wire.request("tools/list", meta=meta).message)["tools"]}


@pytest.fixture(scope="module")
def tools(lab):
    return listed(lab, WITH_APPS)


def test_discover_advertises_the_extension_with_no_settings(lab):
    result = check_result("server/discover", lab.request("server/discover").message)
    assert result["capabilities"]["extensions"] == {EXTENSION: {}}


def test_the_default_lab_has_no_trace_of_apps(plain_lab):
    discover = check_result("server/discover", plain_lab.request("server/discover").message)
    tools = check_result("tools/list", plain_lab.request("tools/list").message)["tools"]
    assert EXTENSION not in discover["capabilities"].get("extensions", {})
    assert not [tool["name"] for tool in tools if "ui" in (tool.get("_meta") or {})]
    uris = []
    cursor = None
    while True:
        result = check_result("resources/list", plain_lab.request("resources/list", {"cursor": cursor} if cursor else {}).message)
        uris += [resource["uri"] for resource in result["resources"]]
        cursor = result.get("nextCursor")
        if not cursor:
            break
    assert not [uri for uri in uris if uri.startswith("ui://")]


def test_show_hypnogram_points_at_the_view_for_model_and_app(tools):
    assert tools["show_hypnogram"]["_meta"] == {"ui": {"resourceUri": HYPNOGRAM_VIEW_URI}}
    assert tools["show_hypnogram"]["annotations"]["readOnlyHint"] is True


def test_epoch_detail_is_app_only(tools):
    assert tools["epoch_detail"]["_meta"]["ui"] == {"resourceUri": HYPNOGRAM_VIEW_URI, "visibility": ["app"]}


def test_flag_epoch_is_model_only_and_not_read_only(tools):
    assert tools["flag_epoch"]["_meta"]["ui"] == {"resourceUri": HYPNOGRAM_VIEW_URI, "visibility": ["model"]}
    assert tools["flag_epoch"]["annotations"]["readOnlyHint"] is False


@pytest.mark.parametrize("capabilities", [None, {}, {"extensions": {EXTENSION: {}}}, {"extensions": {"other/ext": {}}}])
def test_a_list_without_the_extension_has_no_app_only_tool(lab, tools, capabilities):
    plain = listed(lab, capabilities)
    assert "epoch_detail" not in plain
    assert set(tools) - set(plain) == {"epoch_detail"}  # the tools that serve the model all stay


def test_the_plain_lab_lists_the_same_tools_either_way(plain_lab):
    assert listed(plain_lab) == listed(plain_lab, WITH_APPS)


def test_the_view_is_read_as_an_mcp_app_with_its_csp(lab):
    result = check_result("resources/read", lab.request("resources/read", {"uri": HYPNOGRAM_VIEW_URI}).message)
    (content,) = result["contents"]
    assert content["mimeType"] == MIME
    assert content["text"] == view_html() and content["text"].startswith("<!DOCTYPE html>")
    assert content["_meta"]["ui"] == {"csp": {}, "prefersBorder": True}


def test_the_view_loads_nothing_from_the_network():
    html = view_html()
    assert "http://" not in html and "https://" not in html and "<script src" not in html


def test_with_the_extension_the_result_has_data_for_the_view_and_text_for_the_model(lab):
    result = call(lab, "show_hypnogram", {"night": "P07"}, WITH_APPS)
    assert result["structuredContent"] == {"night": "P07", "epochSeconds": 30, "stages": NIGHTS["P07"]}
    assert result["content"][0]["text"].startswith("Night P07: 20 epochs of 30 s; W 3, REM 3, N1 3, N2 7, N3 4.")


def test_without_the_extension_the_text_carries_the_whole_night(lab):
    result = call(lab, "show_hypnogram", {"night": "P07"})
    assert "structuredContent" not in result
    assert result["content"][0]["text"].endswith("Epoch by epoch: " + " ".join(NIGHTS["P07"]))


def test_an_extension_without_the_app_mime_type_counts_as_none(lab):
    result = call(lab, "show_hypnogram", {}, {"extensions": {EXTENSION: {}}})
    assert "structuredContent" not in result


def test_epoch_detail_names_the_stage_and_its_time(lab):
    result = call(lab, "epoch_detail", {"night": "P07", "epoch": 6})
    assert result["content"][0]["text"] == "Epoch 6 of night P07 (2 min 30 s to 3 min 00 s): N3."


def test_an_epoch_past_the_night_is_a_tool_error(lab):
    result = call(lab, "epoch_detail", {"night": "P07", "epoch": 21})
    assert result["isError"] is True and "has 20 epochs" in result["content"][0]["text"]


def test_flag_epoch_flags_and_shows_the_night_with_every_flag(lab):
    first = call(lab, "flag_epoch", {"night": "P07", "epoch": 6, "reason": "spindles in a slow-wave epoch"}, WITH_APPS)
    assert first["content"][0]["text"] == "Epoch 6 of night P07 (N3) is flagged for re-scoring: spindles in a slow-wave epoch"
    second = call(lab, "flag_epoch", {"night": "P07", "epoch": 2, "reason": "alpha rhythm"}, WITH_APPS)
    assert second["structuredContent"]["flagged"] == [2, 6] and second["structuredContent"]["stages"] == NIGHTS["P07"]


@pytest.mark.parametrize("arguments, problem", [
    ({"night": "P07", "epoch": 21, "reason": "x"}, "has 20 epochs"),
    ({"night": "P07", "epoch": 3, "reason": ""}, "reason"),
])
def test_a_flag_the_lab_cannot_take_is_a_tool_error(lab, arguments, problem):
    result = call(lab, "flag_epoch", arguments)
    assert result["isError"] is True and problem in result["content"][0]["text"]


def test_the_listing_rule_holds_over_http():
    from mcpwire import HttpWire

    with HttpWire.labserver("--apps") as wire:
        assert set(listed(wire, WITH_APPS)) - set(listed(wire)) == {"epoch_detail"}
