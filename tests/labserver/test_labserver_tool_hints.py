"""The night report's four kinds of content block, and the annotations and icons on the lab's tools.

Both transports; every reply is validated against mcp_types.
"""

from __future__ import annotations

import base64

import pytest
from lab_harness import check_result

from labserver.tools import NOTE_ICON_SVG
from mcpwire import HttpWire, StdioWire

LAB_TOOLS = ("search_notes", "read_note", "create_note", "tag_note", "delete_note", "reindex", "sync_notes",
             "night_report")
HINTS = ("title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module", params=["stdio", "http"])
def wire(request):
    kind = StdioWire if request.param == "stdio" else HttpWire
    with kind.labserver() as server:
        yield server


@pytest.fixture(scope="module")
def tools(wire):
    result = check_result("tools/list", wire.request("tools/list").message)
    return {tool["name"]: tool for tool in result["tools"]}


@pytest.fixture(scope="module")
def report(wire):
    return check_result("tools/call", wire.request("tools/call", {"name": "night_report", "arguments": {}}).message)


def test_every_lab_tool_states_all_five_annotations(tools):
    for name in LAB_TOOLS:
        assert set(tools[name]["annotations"]) == set(HINTS), name


def test_only_sync_reaches_the_open_world_and_only_reads_are_read_only(tools):
    open_world = {name for name in LAB_TOOLS if tools[name]["annotations"]["openWorldHint"]}
    read_only = {name for name in LAB_TOOLS if tools[name]["annotations"]["readOnlyHint"]}
    assert open_world == {"sync_notes"}
    assert read_only == {"search_notes", "read_note", "reindex", "night_report"}
    assert tools["delete_note"]["annotations"]["destructiveHint"] is True
    assert tools["create_note"]["annotations"]["destructiveHint"] is False


def test_tool_icons_are_data_uris_of_a_script_free_svg(tools):
    with_icons = [name for name in LAB_TOOLS if "icons" in tools[name]]
    assert with_icons == ["read_note", "night_report"]
    for name in with_icons:
        (icon,) = tools[name]["icons"]
        assert icon["mimeType"] == "image/svg+xml" and icon["src"].startswith("data:image/svg+xml;base64,")
        svg = base64.b64decode(icon["src"].split(",", 1)[1]).decode()
        assert svg == NOTE_ICON_SVG and "<script" not in svg and "href" not in svg


def test_the_night_report_mixes_four_kinds_of_block_in_order(report):
    assert report["isError"] is False and "structuredContent" not in report
    assert [block["type"] for block in report["content"]] == ["text", "image", "resource_link", "resource"]


def test_the_image_block_is_the_hypnogram_png(report):
    image = report["content"][1]
    png = base64.b64decode(image["data"], validate=True)
    assert image["mimeType"] == "image/png" and png.startswith(PNG_SIGNATURE)
    assert image["annotations"] == {"audience": ["user"], "priority": 0.8}


def test_the_link_points_at_a_note_and_the_embedded_resource_carries_one(wire, report):
    link, embedded = report["content"][2], report["content"][3]
    linked = check_result("resources/read", wire.request("resources/read", {"uri": link["uri"]}).message)
    assert linked["contents"][0]["mimeType"] == link["mimeType"] == "text/markdown"
    note = check_result("resources/read", wire.request("resources/read", {"uri": embedded["resource"]["uri"]}).message)
    assert embedded["resource"]["text"] == note["contents"][0]["text"]


def test_every_block_says_who_it_is_for_and_how_much_it_matters(report):
    for block in report["content"]:
        audience, priority = block["annotations"]["audience"], block["annotations"]["priority"]
        assert set(audience) <= {"user", "assistant"} and audience
        assert 0 <= priority <= 1
    assert report["content"][0]["annotations"]["audience"] == ["assistant"]
