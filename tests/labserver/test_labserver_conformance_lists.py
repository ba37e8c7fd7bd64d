"""`python -m labserver --conformance` serves the server-stateless scenario's fixtures for logs and list changes
(labserver.conformance_lists): test_logging_tool logs only when asked, and the two triggers change the tool and
prompt lists and tell every listen stream that asked. Checked on the wire without Node; without the flag none of
them exists."""

from __future__ import annotations

import threading
import time

import pytest

from labserver.conformance_content import fixture
from mcpwire import HttpWire, frames, validate

TRIGGERS = {"tools": ("test_trigger_tool_change", "test_toggled_tool", "toolsListChanged"),
            "prompts": ("test_trigger_prompt_change", "test_toggled_prompt", "promptsListChanged")}
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"


@pytest.fixture(scope="module")
def lab():
    with HttpWire.labserver("--conformance") as wire:
        yield wire


def names(wire, kind):
    return [item["name"] for item in wire.request(f"{kind}/list").result[kind]]


def call(wire, name, **meta):
    reply = wire.request("tools/call", {"name": name, "arguments": {}}, meta=meta)
    assert validate(reply) == [] and reply.ok, reply.text
    return reply


def heard_while(lab, wanted, action, listen_id):
    """The notifications a listen stream asking for `wanted` carried while `action` ran on another connection."""
    listen = frames.request("subscriptions/listen", {"notifications": {key: True for key in wanted}}, id=listen_id)
    heard = []
    listener = threading.Thread(target=lambda: heard.extend(HttpWire(lab.url).send(listen, stream_for=3.0).notifications))
    listener.start()
    time.sleep(1.0)  # the acknowledgement first: the stream is subscribed before the action
    action()
    listener.join()
    assert heard and heard[0]["method"] == "notifications/subscriptions/acknowledged", heard
    return heard[1:]


def test_without_the_flag_none_is_listed(http_wire):
    assert not {"test_logging_tool", *(trigger for trigger, _, _ in TRIGGERS.values())} & set(names(http_wire, "tools"))


def test_logging_tool_is_check_notes_and_logs_only_when_asked(lab):
    quiet = call(lab, "test_logging_tool")
    assert quiet.notifications == []
    assert quiet.result["content"] == call(lab, "check_notes").result["content"]
    logged = call(lab, "test_logging_tool", **{LOG_LEVEL: "debug"})
    logs = [note["params"] for note in logged.notifications if note["method"] == "notifications/message"]
    assert logs and {log["logger"] for log in logs} == {"check_notes"}


@pytest.mark.parametrize("kind", ["tools", "prompts"])
def test_a_trigger_adds_its_entry_then_takes_it_away(lab, kind):
    trigger, toggled, _ = TRIGGERS[kind]
    before = names(lab, kind)
    assert toggled not in before
    assert call(lab, trigger).result["content"][0]["text"].startswith(f"Added the {kind[:-1]} {toggled};")
    listed = {item["name"]: item for item in lab.request(f"{kind}/list").result[kind]}
    assert list(listed) == [*before, toggled] and listed[toggled]["description"].startswith(fixture(kind[:-1]))
    assert call(lab, trigger).result["content"][0]["text"].startswith(f"Took away the {kind[:-1]} {toggled};")
    assert names(lab, kind) == before


@pytest.mark.parametrize("kind", ["tools", "prompts"])
def test_a_trigger_notifies_the_listen_streams_that_asked_and_only_those(lab, kind):
    trigger, _, wanted = TRIGGERS[kind]
    other = next(key for other_kind, (_, _, key) in TRIGGERS.items() if other_kind != kind)
    asked = heard_while(lab, [wanted], lambda: call(lab, trigger), f"listen-{kind}")
    assert [(note["method"], note["params"]["_meta"][SUBSCRIPTION_ID]) for note in asked] == [
        (f"notifications/{kind}/list_changed", f"listen-{kind}")]
    assert heard_while(lab, [other], lambda: call(lab, trigger), f"listen-not-{kind}") == []
