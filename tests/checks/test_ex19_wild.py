"""Exercise 19's check against the stub, the solution, a right answer written differently and typical wrong ones."""

import asyncio
import subprocess
import sys

import pytest
from mcp.client import Client

from checks import check_three_differences
from mcpwire import HttpWire, Transcript

CLIENT_NAME = ["params", "_meta", "io.modelcontextprotocol/clientInfo", "name"]


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    """The SDK client's session through the HTTP tap, and the same two requests sent by HttpWire."""
    session = tmp_path_factory.mktemp("ex13") / "sdk.jsonl"
    with HttpWire.labserver(timeout=30) as wire:
        tap = subprocess.Popen([sys.executable, "-m", "mcpwire.tap", "--http", "--upstream", wire.url,
                                "--out", str(session)], stdout=subprocess.PIPE, text=True)
        try:
            url = tap.stdout.readline().strip()

            async def record():
                async with Client(url) as client:
                    await client.list_tools()
                    await client.call_tool("search_notes", {"query": "spindles", "limit": 1})

            asyncio.run(asyncio.wait_for(record(), 60))
        finally:
            tap.terminate()
            tap.wait(timeout=10)
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
    solution = [("method", "server/discover"), ("header", "User-Agent"), ("field", "tools/list", CLIENT_NAME)]
    assert verdict(check_three_differences, answer(solution), *sessions).startswith("✓ three real differences")


def test_a_right_answer_written_differently_passes(verdict, sessions):
    # tuples for lists, the whole clientInfo object, found on tools/call instead of tools/list
    written = (["field", "tools/call", ("params", "_meta", "io.modelcontextprotocol/clientInfo")],
               ["header", "accept-encoding"], ("method", "server/discover"))
    assert verdict(check_three_differences, answer(written), *sessions).startswith("✓")


def test_three_headers_pass(verdict, sessions):
    # The SDK's httpx also sends Connection and Accept-Encoding, which HttpWire's requests never carry.
    headers = [("header", "User-Agent"), ("header", "Accept-Encoding"), ("header", "connection")]
    assert verdict(check_three_differences, answer(headers), *sessions).startswith("✓")


UA, DISCOVER = ("header", "User-Agent"), ("method", "server/discover")


@pytest.mark.parametrize("findings, phrase", [
    ([("method", "tools/list"), UA, DISCOVER], "'tools/list' is sent in both sessions"),
    ([("method", "initialize"), UA, DISCOVER], "'initialize' is sent in neither session"),
    ([("header", "content-type"), UA, DISCOVER], "the header 'content-type' is sent in both sessions"),
    ([("field", "tools/list", ["id"]), UA, DISCOVER], "the id is a counter"),
    ([("field", "tools/list", ["params", "_meta", "io.modelcontextprotocol/protocolVersion"]), UA, DISCOVER],
     "is \"2026-07-28\" in both sessions"),
    ([("field", "tools/list", CLIENT_NAME), ("field", "tools/call", CLIENT_NAME), UA],
     "into tools/call and tools/list alike, so it counts once"),
    ([DISCOVER, ("field", "tools/list", CLIENT_NAME), ("field", "tools/call", CLIENT_NAME)],
     "one difference: tools/list params._meta.io.modelcontextprotocol/clientInfo.name and tools/call params"),
    ([("field", "tools/list", CLIENT_NAME[:-1]), ("field", "tools/list", CLIENT_NAME), UA],
     "two findings are one difference"),
    ([("header", "user-agent"), UA, DISCOVER], "two findings are one difference"),
    # One name given twice is blamed on the repeat, not on fields inside fields.
    ([("header", "user-agent"), UA, DISCOVER], "the same header named twice counts once"),
    ([DISCOVER, UA, DISCOVER], "the same method named twice counts once"),
    ([("field", "tools/list", CLIENT_NAME), UA, ("field", "tools/list", CLIENT_NAME)],
     "the same field named twice counts once"),
    ([("field", "tools/list", CLIENT_NAME[:-1]), ("field", "tools/list", CLIENT_NAME), UA],
     "a field and the fields inside it count once"),
    ([("field", "server/discover", ["params"]), UA, DISCOVER], "the hand session sends no 'server/discover'"),
    ([UA, DISCOVER], "you returned 2 findings"),
    ("discover, user-agent, clientInfo", "returned a str, not a list of three findings"),
    ([("methods", "initialize"), UA, DISCOVER], "is none of"),
    # keys that are not strings: a list index, and an unhashable dict that a lookup in the frame would choke on
    ([("field", "tools/list", ["params", 0]), UA, DISCOVER], "every key in a field's path is a string"),
    ([("field", "tools/list", [{"params": "_meta"}]), UA, DISCOVER], "every key in a field's path is a string"),
    # the path as one dotted string, where the task asks for a list of keys
    ([("field", "tools/list", "params._meta.io.modelcontextprotocol/clientInfo.name"), UA, DISCOVER],
     "a field finding is (\"field\", method, [key, key, ...])"),
])
def test_typical_wrong_answers_are_named(verdict, sessions, findings, phrase):
    printed = verdict(check_three_differences, answer(findings), *sessions)
    assert printed.startswith("✗") and phrase in printed


def test_an_answer_that_raises_is_reported_not_raised(verdict, sessions):
    def broken():
        return [][0]
    assert "three_differences() raised IndexError" in verdict(check_three_differences, broken, *sessions)
