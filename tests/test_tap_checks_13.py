"""Exercise 13's check against the stub, the solution, a right answer written differently and typical wrong ones."""

import asyncio
import sys

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from checks import check_three_differences
from mcpwire import StdioWire, Transcript

CLIENT_NAME = ["params", "_meta", "io.modelcontextprotocol/clientInfo", "name"]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """The SDK client's session through the tap, and the same two requests sent by StdioWire."""
    session = tmp_path_factory.mktemp("ex13") / "sdk.jsonl"
    tapped = StdioServerParameters(command=sys.executable, args=[
        "-m", "mcpwire.tap", "--out", str(session), "--", sys.executable, "-m", "labserver"])

    async def record():
        async with Client(tapped) as client:
            await client.list_tools()
            await client.call_tool("search_notes", {"query": "spindles", "limit": 1})

    asyncio.run(asyncio.wait_for(record(), 60))
    with StdioWire.labserver(timeout=30) as wire:
        wire.request("tools/list")
        wire.request("tools/call", {"name": "search_notes", "arguments": {"query": "spindles", "limit": 1}})
    return Transcript.from_jsonl(session), wire.transcript


def answer(value):
    return lambda: value


def stub():
    raise NotImplementedError("your code here")


def test_the_stub_is_not_done_yet(verdict, sessions):
    assert verdict(check_three_differences, stub, *sessions).startswith("not done yet")


def test_the_solution_passes(verdict, sessions):
    solution = [("method", "server/discover"), ("method", "initialize"), ("field", "tools/list", CLIENT_NAME)]
    assert verdict(check_three_differences, answer(solution), *sessions).startswith("✓ three real differences")


def test_a_right_answer_written_differently_passes(verdict, sessions):
    # tuples for lists, the whole clientInfo object, found on tools/call instead of tools/list
    written = (["field", "tools/call", ("params", "_meta", "io.modelcontextprotocol/clientInfo")],
               ["method", "initialize"], ("method", "server/discover"))
    assert verdict(check_three_differences, answer(written), *sessions).startswith("✓")


@pytest.mark.parametrize("findings, phrase", [
    ([("method", "tools/list"), ("method", "initialize"), ("method", "server/discover")],
     "'tools/list' is sent in both sessions"),
    ([("method", "ping"), ("method", "initialize"), ("method", "server/discover")], "sent in neither session"),
    ([("field", "tools/list", ["id"]), ("method", "initialize"), ("method", "server/discover")],
     "the id is a counter"),
    ([("field", "tools/list", ["params", "_meta", "io.modelcontextprotocol/protocolVersion"]),
      ("method", "initialize"), ("method", "server/discover")], "is \"2026-07-28\" in both sessions"),
    ([("field", "tools/list", CLIENT_NAME), ("field", "tools/call", CLIENT_NAME), ("method", "initialize")],
     "two findings are one difference"),
    ([("field", "tools/list", CLIENT_NAME[:-1]), ("field", "tools/list", CLIENT_NAME), ("method", "initialize")],
     "two findings are one difference"),
    ([("field", "initialize", ["params"]), ("method", "initialize"), ("method", "server/discover")],
     "the hand session sends no 'initialize'"),
    ([("method", "initialize"), ("method", "server/discover")], "you returned 2 findings"),
    ("initialize, discover, clientInfo", "returned a str, not a list of three findings"),
    ([("methods", "initialize"), ("method", "initialize"), ("method", "server/discover")], "is neither"),
])
def test_typical_wrong_answers_are_named(verdict, sessions, findings, phrase):
    printed = verdict(check_three_differences, answer(findings), *sessions)
    assert printed.startswith("✗") and phrase in printed


def test_an_answer_that_raises_is_reported_not_raised(verdict, sessions):
    def broken():
        return [][0]
    assert "three_differences() raised IndexError" in verdict(check_three_differences, broken, *sessions)
