"""Exercise 22's report check, what the report reads: hints, error styles, the call it makes and the cost of tools/list.
Each mistake fails on the server that shows it, with a message that says what is wrong. The rows are spread over three
files so the test runs spread them over workers: every report starts seven servers."""

import json

import pytest

import checks
from ex22_answers import report_with
from mcpwire import count_tokens

pytestmark = pytest.mark.slow  # every report starts seven servers, one of them the lab


def test_assumes_the_labs_shapes(verdict):
    def lab_shapes(command):
        return report_with(command, hint=lambda tool, name, default: tool["annotations"].get(name, default))
    out = verdict(checks.check_server_report, lab_shapes)
    assert out.startswith("✗ report raised KeyError: 'annotations' for the legacy time server")
    assert "no annotations" in out


def test_reads_a_missing_annotation_as_false(verdict):
    def missing_is_false(command):
        return report_with(command, hint=lambda tool, name, default: tool.get("annotations", {}).get(name, False))
    out = verdict(checks.check_server_report, missing_is_false)
    # Some of the lab's tools declare readOnlyHint alone, so the mistake may show on the lab already.
    assert out.startswith("✗ report says ") and "has destructiveHint = False; it is True" in out
    assert "a missing hint is not false" in out


def test_treats_every_error_as_a_json_rpc_error(verdict):
    def every_error_json_rpc(command):
        return report_with(command, error_style=lambda reply: reply.code)
    out = verdict(checks.check_server_report, every_error_json_rpc)
    assert out.startswith("✗ report says the lab server answers a call to a tool that does not exist with None; "
                          "it answers a result marked isError")
    assert "Not every error is a JSON-RPC error" in out


def test_treats_every_error_as_a_tool_error(verdict):
    def every_error_a_tool_error(command):
        return report_with(command, error_style=lambda reply: "isError" if reply.error or reply.is_tool_error else "result")
    out = verdict(checks.check_server_report, every_error_a_tool_error)
    assert out.startswith("✗ report says the time server answers a call to a tool that does not exist with 'isError'")
    assert "reply.code is -32602" in out


def test_counts_the_reply_without_its_newline(verdict):
    def no_newline(command):
        return report_with(command, cost=lambda wire, listing: (len(listing.text.encode()), count_tokens(listing.text)))
    out = verdict(checks.check_server_report, no_newline)
    assert out.startswith("✗ report says the lab server's tools/list reply is")
    assert "One short" in out


def test_measures_a_copy_made_with_json_dumps(verdict):
    def reserialized(command):
        def cost(wire, listing):
            copy = json.dumps(listing.message)
            return len(copy.encode()) + 1, count_tokens(copy)
        return report_with(command, cost=cost)
    out = verdict(checks.check_server_report, reserialized)
    assert out.startswith("✗ report says the lab server's tools/list reply is") and "a copy made with json.dumps" in out


def test_tokens_guessed_from_characters(verdict):
    def four_characters_a_token(command):
        return report_with(command, cost=lambda wire, listing: (wire.transcript[-1].bytes_down, len(listing.text) // 4))
    out = verdict(checks.check_server_report, four_characters_a_token)
    assert "tokens; it is" in out and "cl100k_base" in out


def test_calls_the_first_tool_whether_it_requires_anything_or_not(verdict):
    def first_tool(command):
        return report_with(command, pick=lambda tools: tools[0])
    out = verdict(checks.check_server_report, first_tool)
    assert out.startswith("✗ report's call without arguments on the bakery server went to opening_hours; the first "
                          "tool whose inputSchema has required properties is order_bread")
    assert "opening_hours comes first but requires nothing" in out


def test_calls_the_last_tool_with_required_properties(verdict):
    def last_requiring(command):
        return report_with(command, pick=lambda tools: [tool for tool in tools if tool["inputSchema"].get("required")][-1])
    out = verdict(checks.check_server_report, last_requiring)
    assert out.startswith("✗ report's call without arguments on the bakery server went to cancel_order")
    assert "cancel_order is not the first one with required properties" in out


def test_sends_arguments_null(verdict):
    def arguments_null(command):
        return report_with(command, bad_call=lambda tool: {"name": tool["name"], "arguments": None})
    out = verdict(checks.check_server_report, arguments_null)
    assert out.startswith("✗ report called order_bread on the bakery server with arguments null")
    assert "null is not \"no arguments\"" in out


def test_sends_every_required_argument_with_a_wrong_value(verdict):
    def wrong_values(command):
        return report_with(command, bad_call=lambda tool: {"name": tool["name"],
                                                           "arguments": dict.fromkeys(tool["inputSchema"]["required"], 7)})
    out = verdict(checks.check_server_report, wrong_values)
    assert out.startswith('✗ report called order_bread on the bakery server with arguments {"loaf":7}; the task asks '
                          "for a call with no arguments at all")


def test_finds_a_tool_error_by_the_word_in_the_reply(verdict):
    def word_error(command):
        return report_with(command, error_style=lambda reply: reply.code if reply.error else
                           ("isError" if "rror" in json.dumps(reply.result) else "result"))
    out = verdict(checks.check_server_report, word_error)
    assert out.startswith("✗ report says the bakery server answers a call to a tool that does not exist with "
                          "'isError'; it answers a result not marked isError")
    assert "Read the isError value" in out


def test_counts_characters_not_bytes(verdict):
    def characters(command):
        return report_with(command, cost=lambda wire, listing: (len(listing.text) + 1, count_tokens(listing.text)))
    out = verdict(checks.check_server_report, characters)
    assert out.startswith("✗ report says the bakery server's tools/list reply is")
    assert "its length in characters" in out and "UTF-8" in out


def test_gives_tools_list_as_a_list(verdict):
    def as_list(command):
        return {**(report := report_with(command)), "tools_list": list(report["tools_list"])}
    out = verdict(checks.check_server_report, as_list)
    assert out.startswith("✗ report's tools_list for the lab server is a list; give a tuple (bytes, tokens)")


def test_calls_the_first_tool_with_a_required_key_even_an_empty_one(verdict):
    def any_required_key(command):
        return report_with(command, pick=lambda tools: next(tool for tool in tools if "required" in tool["inputSchema"]))
    out = verdict(checks.check_server_report, any_required_key)
    assert out.startswith("✗ report's call without arguments on the bakery server went to opening_hours")
    assert "its required list is empty" in out


def test_raises_in_its_own_code_after_right_frames(verdict):
    def own_bug(command):
        return report_with(command, cost=lambda wire, listing: (wire.transcript[-1].bytes_down, int("o200k_base")))
    out = verdict(checks.check_server_report, own_bug)
    assert out.startswith("✗ report raised ValueError") and "for the lab server." in out
    assert "the error is in your own code" in out and "unknown tool" not in out


def test_reads_is_error_from_a_json_rpc_error(verdict):
    def result_only(command):
        return report_with(command, error_style=lambda reply: "isError" if reply.result["isError"] else "result")
    out = verdict(checks.check_server_report, result_only)
    # The lab answers an unknown tool with a result; the time server's -32602 has none, and the crash comes right there.
    assert out.startswith("✗ report raised TypeError: 'NoneType' object is not subscriptable for the time server.")
    assert "An unknown tool may come back as a JSON-RPC error" in out
