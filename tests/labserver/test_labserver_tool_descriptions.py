"""`python -m labserver --tool-descriptions FILE` gives its tools the descriptions FILE holds and follows the file
while it runs (labserver.tool_descriptions): each change to the tool list reaches a listen that asked for
toolsListChanged as notifications/tools/list_changed, a name taken out gets the lab's own description back, and a
bad file or an unknown name changes nothing and is reported on stderr. On stdio and over HTTP."""

from __future__ import annotations

import json
import threading
import time

import pytest

import mcpwire
from mcpwire import HttpWire, StdioWire, frames, validate

OWN = "Sync the notes with a remote copy."
UPDATED = "Sync the notes with a remote copy. Updated while you were connected."
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
LISTEN = frames.request("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, id="tools")


def description(wire, name="sync_notes"):
    return next(tool["description"] for tool in wire.request("tools/list").result["tools"] if tool["name"] == name)


def list_changes(wire, timeout):
    """The notifications/tools/list_changed a stdio wire receives within timeout seconds."""
    heard = []
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        reply = wire.read(timeout=left)
        if reply is not None and reply.message["method"] == "notifications/tools/list_changed":
            heard.append(reply.message)
    return heard


@pytest.fixture
def descriptions(tmp_path):
    return tmp_path / "tool-descriptions.json"


@pytest.fixture
def lab(descriptions):
    wire = StdioWire.labserver("--tool-descriptions", str(descriptions))
    wire.write(LISTEN)
    assert wire.read(timeout=60).message["method"] == "notifications/subscriptions/acknowledged"
    yield wire
    wire.close()


def test_without_the_flag_the_descriptions_are_the_labs_own(stdio_wire):
    assert description(stdio_wire) == OWN


def test_the_file_read_at_start_is_in_the_first_tools_list(descriptions):
    descriptions.write_text(json.dumps({"sync_notes": UPDATED}))
    with StdioWire.labserver("--tool-descriptions", str(descriptions)) as wire:
        assert description(wire) == UPDATED
        assert description(wire, "read_note") == "Read one note: its title, tags, date and Markdown body."


def test_a_change_reaches_the_listen_and_tools_list_and_taking_it_out_restores_the_own(lab, descriptions):
    descriptions.write_text(json.dumps({"sync_notes": UPDATED}))
    [changed] = list_changes(lab, timeout=3)
    assert changed["params"] == {"_meta": {SUBSCRIPTION_ID: "tools"}} and validate(changed) == []
    assert description(lab) == UPDATED
    descriptions.write_text("{}")
    assert len(list_changes(lab, timeout=3)) == 1
    assert description(lab) == OWN


def test_the_same_descriptions_written_again_send_nothing(lab, descriptions):
    descriptions.write_text(json.dumps({"sync_notes": UPDATED}))
    assert len(list_changes(lab, timeout=3)) == 1
    descriptions.write_text(json.dumps({"sync_notes": UPDATED}, indent=2))  # another text, the same list
    assert list_changes(lab, timeout=1) == []


@pytest.mark.parametrize("text, said", [
    ("not json", "is not a JSON object of tool names and descriptions"),
    ('{"sync_notes": 3}', "is not a JSON object of tool names and descriptions"),
    ('["sync_notes"]', "is not a JSON object of tool names and descriptions"),
    ('{"no_such_tool": "x"}', "names 'no_such_tool', which is not one of the lab's tools"),
])
def test_a_bad_file_changes_nothing_and_is_reported_on_stderr(lab, descriptions, text, said):
    descriptions.write_text(text)
    assert list_changes(lab, timeout=1) == []
    assert description(lab) == OWN
    assert any(said in line for line in lab.stderr_lines), lab.stderr_lines


def test_over_http_the_listen_stream_carries_the_change(descriptions):
    with HttpWire.labserver("--tool-descriptions", str(descriptions)) as http:
        held = []
        listener = threading.Thread(target=lambda: held.append(HttpWire(http.url).send(LISTEN, stream_for=4)))
        listener.start()
        time.sleep(1.5)  # the stream is acknowledged before the file changes
        descriptions.write_text(json.dumps({"sync_notes": UPDATED}))
        listener.join()
        methods = [note["method"] for note in held[0].notifications]
        assert methods == ["notifications/subscriptions/acknowledged", "notifications/tools/list_changed"], methods
        assert description(http) == UPDATED
        assert mcpwire.validate(held[0].notifications[1]) == []
