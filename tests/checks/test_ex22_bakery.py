"""Exercise 22's bakery, the check's own 2025-11-25 server: what it answers is what tells a report's mistakes apart from
the four real servers', so each trait a report is judged by is asserted here, as a learner's report meets it."""

import json
import subprocess
import sys

import pytest

from checks import ex22_bakery as bakery
from mcpwire import StdioWire, WireTimeout, frames

HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def serving(*flags):
    return StdioWire([sys.executable, bakery.__file__, *flags], timeout=30)


def call(name, arguments):
    result, error = bakery.call_tool({"name": name, "arguments": arguments})
    return error["code"] if error else ("isError" if result.get("isError") else "result")


def test_its_first_tool_requires_nothing_and_the_next_two_answer_a_bare_call_differently():
    # The first tool's required list is empty (a report that tests for the key, not for a non-empty list, picks it),
    # and the two after it answer a call without arguments with isError and with -32602.
    assert [tool["inputSchema"]["required"] for tool in bakery.TOOLS] == [[], ["loaf"], ["order_id"]]
    assert bakery.FIRST_REQUIRING == "order_bread"
    assert [call(name, {}) for name in bakery.TOOL_NAMES] == ["result", "isError", -32602]


def test_an_unknown_tool_gets_a_result_without_is_error():
    result, error = bakery.call_tool({"name": "no_such_tool", "arguments": {}})
    assert error is None and "isError" not in result and "no tool named no_such_tool" in result["content"][0]["text"]


def test_it_leaves_out_what_the_schema_lets_it_leave_out():
    # isError only when true ("If not set, this is assumed to be false"); the last tool has neither annotations nor a
    # description; the second declares one hint of four.
    assert "isError" not in bakery.call_tool({"name": "opening_hours", "arguments": {}})[0]
    assert bakery.call_tool({"name": "order_bread", "arguments": {}})[0]["isError"] is True
    last = bakery.TOOLS[-1]
    assert "annotations" not in last and "description" not in last
    assert [hint for hint in HINTS if hint in bakery.TOOLS[1]["annotations"]] == ["destructiveHint"]


def test_written_false_is_error_is_the_strict_bakerys():
    # With --false-is-error write a result that did not fail says so, as the SDKs write it: a report that takes the
    # key's presence for a failure meets one.
    assert bakery.call_tool({"name": "no_such_tool"}, write_false=True)[0]["isError"] is False
    assert bakery.call_tool({"name": "order_bread", "arguments": {}}, write_false=True)[0]["isError"] is True
    lines = json.dumps(frames.legacy_request("tools/call", {"name": "opening_hours"}, id=1)).encode() + b"\n"
    done = subprocess.run([sys.executable, bakery.__file__, "--false-is-error", "write"], input=lines,
                          capture_output=True, timeout=30)
    assert json.loads(done.stdout)["result"]["isError"] is False


def test_arguments_that_are_not_an_object_get_invalid_params():
    assert call("order_bread", ["Brezel"]) == -32602


@pytest.mark.parametrize("method", ["server/discover", "resources/list", "no/such/method"])
def test_any_method_it_does_not_know_gets_an_empty_result(method):
    # Not -32601: a result, but not a DiscoverResult (no resultType), so a probe that takes any result for
    # 2026-07-28 is wrong here.
    assert bakery.answer({"jsonrpc": "2.0", "id": 4, "method": method}) == {"jsonrpc": "2.0", "id": 4, "result": {}}


def test_initialize_is_answered_as_2025_11_25_and_a_notification_gets_nothing():
    reply = bakery.answer({"jsonrpc": "2.0", "id": "a", "method": "initialize", "params": {}})
    assert reply["id"] == "a" and reply["result"]["protocolVersion"] == "2025-11-25"
    assert bakery.answer({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None


def test_the_listing_has_more_bytes_than_characters():
    with serving() as wire:
        wire.send(frames.legacy_initialize(id=wire.next_id))
        wire.send(frames.legacy_initialized())
        listing = wire.send(frames.legacy_request("tools/list", id=wire.next_id))
        assert wire.transcript[-1].bytes_down > len(listing.text) + 1  # ä, ö, € take two or three bytes
    assert listing.result["tools"] == bakery.TOOLS


def test_the_strict_bakery_refuses_what_comes_before_initialize_and_then_serves():
    with serving("--before-initialize", "refuse") as wire:
        refused = wire.request("server/discover")
        wire.send(frames.legacy_initialize(id=wire.next_id))
        listed = wire.send(frames.legacy_request("tools/list", id=wire.next_id))
    assert refused.code == -32600 and listed.ok


def test_the_quiet_bakery_answers_nothing_before_initialize_but_a_ping():
    with serving("--before-initialize", "ignore") as wire:
        with pytest.raises(WireTimeout):
            wire.request("server/discover", timeout=1)
        assert wire.send(frames.legacy_request("ping", id=wire.next_id)).ok
        assert wire.send(frames.legacy_initialize(id=wire.next_id)).ok


def test_a_line_that_is_not_json_gets_a_parse_error_and_the_server_goes_on():
    lines = b'{"jsonrpc":\n' + json.dumps(frames.legacy_request("tools/list", id=1)).encode() + b"\n"
    done = subprocess.run([sys.executable, bakery.__file__], input=lines, capture_output=True, timeout=30)
    first, second = (json.loads(line) for line in done.stdout.splitlines())
    assert first == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    assert second["id"] == 1 and second["result"]["tools"] == bakery.TOOLS
