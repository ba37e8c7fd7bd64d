"""Exercise 22's report check: right reports pass however they are written, and the reference reads each server as
lesson 22 shows it. The reports learners really get wrong are in test_ex22_field_trip_eras.py and
test_ex22_field_trip_answers.py: every report starts seven servers, so the rows are spread over three files and workers."""

import pytest

import checks
from checks.ex22_field_trip import DEFAULTS, field_trip_servers, reference_reports
from ex22_answers import probe_waiting, report_by_hand, report_with, style
from mcpwire import StdioWire, WireTimeout, count_tokens, frames

pytestmark = pytest.mark.slow  # every report starts seven servers, one of them the lab


def test_the_reference_reads_each_server_as_the_lesson_shows_it():
    reports = reference_reports()
    assert {name: report["era"] for name, report in reports.items()} == {
        "lab": "2026-07-28", "time": "2026-07-28", "git": "2026-07-28", "legacy time": "2025-11-25", "bakery": "2025-11-25",
        "strict bakery": "2025-11-25", "quiet bakery": "2025-11-25"}
    assert {name: report["unknown_tool"] for name, report in reports.items()} == {
        "lab": "isError", "time": -32602, "git": -32602, "legacy time": "isError", "bakery": "result",
        "strict bakery": "result", "quiet bakery": "result"}
    assert all(hints == DEFAULTS for hints in reports["legacy time"]["hints"].values())


def test_the_bakery_tells_apart_what_the_real_servers_answer_alike():
    # Its first tool requires nothing, and its two tools with required properties answer a bare call differently.
    with field_trip_servers() as servers, StdioWire(servers["bakery"], timeout=30) as wire:
        assert wire.request("server/discover").result == {}
        wire.send(frames.legacy_initialize(id=wire.next_id))
        wire.send(frames.legacy_initialized())
        listing = wire.send(frames.legacy_request("tools/list", id=wire.next_id))
        listing_bytes = wire.transcript[-1].bytes_down
        answers = [style(wire.send(frames.legacy_request("tools/call", {"name": tool["name"], "arguments": {}}, id=wire.next_id)))
                   for tool in listing.result["tools"]]
    assert answers == ["result", "isError", -32602]
    assert listing_bytes > len(listing.text) + 1  # letters outside ASCII: more bytes than characters


def test_the_other_bakeries_refuse_or_ignore_what_comes_before_initialize():
    with field_trip_servers() as servers:
        with StdioWire(servers["strict bakery"], timeout=30) as wire:
            refused = wire.request("server/discover")
            wire.send(frames.legacy_initialize(id=wire.next_id))
            listed = wire.send(frames.legacy_request("tools/list", id=wire.next_id))
        assert refused.code == -32600 and listed.ok
        with StdioWire(servers["quiet bakery"], timeout=30) as wire:
            with pytest.raises(WireTimeout):
                wire.request("server/discover", timeout=3)
            assert wire.send(frames.legacy_initialize(id=wire.next_id)).ok


def test_right(verdict):
    out = verdict(checks.check_server_report, report_with)
    assert out.startswith("✓ report is right on all seven servers") and "the 2025-11-25 servers the handshake" in out
    assert "the 2026-07-28 servers got the envelope on every request" in out


def test_right_with_the_wires_own_timeout_caught_as_a_timeout_error(verdict):
    def wire_timeout(wire):
        try:
            return wire.request("server/discover", timeout=8)
        except TimeoutError:  # WireTimeout is one
            return None
    assert verdict(checks.check_server_report, lambda command: report_with(command, probe=wire_timeout)).startswith("✓")


def test_right_written_by_hand_with_subprocess(verdict):
    assert verdict(checks.check_server_report, report_by_hand).startswith("✓")


def test_right_with_tokens_from_the_transcript(verdict):
    def transcript_tokens(command):
        return report_with(command, cost=lambda wire, listing: (wire.transcript[-1].bytes_down, wire.transcript[-1].tokens_down))
    assert verdict(checks.check_server_report, transcript_tokens).startswith("✓")


def test_a_report_that_is_not_a_dict(verdict):
    out = verdict(checks.check_server_report, lambda command: "2026-07-28")
    assert out.startswith("✗ report returned '2026-07-28' for the lab server; return a dict with exactly the keys")


def test_stub(verdict):
    def stub(command):
        raise NotImplementedError("your code here")
    assert verdict(checks.check_server_report, stub).startswith("not done yet")
    assert verdict(checks.check_server_report, None).startswith("not done yet")


def test_right_leaving_the_arguments_key_out(verdict):
    def no_arguments_key(command):
        return report_with(command, bad_call=lambda tool: {"name": tool["name"]})
    assert verdict(checks.check_server_report, no_arguments_key).startswith("✓")


def test_right_with_the_era_read_from_supported_versions_and_bytes_from_the_text(verdict):
    def other_readings(command):
        return report_with(command, fallback=lambda reply: not (reply and reply.ok and reply.result.get("supportedVersions")),
                           cost=lambda wire, listing: (len(listing.text.encode("utf-8")) + 1, wire.transcript[-1].tokens_down))
    assert verdict(checks.check_server_report, other_readings).startswith("✓")


def test_right_with_ids_of_its_own_numbers_and_strings(verdict):
    # The replies carry these ids, so tools/list's bytes are not the check's own read: "t-é-2" is 8 bytes on the wire.
    def own_ids(command):
        return report_with(command, probe=lambda wire: probe_waiting(wire, id=41),
                           ids=(f"t-é-{n}" for n in range(1, 100)))
    assert verdict(checks.check_server_report, own_ids).startswith("✓")


def test_right_with_bytes_from_the_payload_and_tokens_of_the_encoded_line(verdict):
    def payload_bytes(command):
        def cost(wire, listing):
            line = listing.payload + b"\n"
            return len(line), count_tokens(line.decode("utf-8").rstrip("\n"))
        return report_with(command, probe=lambda wire: probe_waiting(wire, id=100), cost=cost)
    assert verdict(checks.check_server_report, payload_bytes).startswith("✓")
