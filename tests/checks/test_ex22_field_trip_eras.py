"""Exercise 22's report check, the era and its frames: a report that probes, falls back or opens a legacy server
wrongly fails on the server that shows it, and the message names the frame. The rows are spread over three files so
the test runs spread them over workers: every report starts seven servers, one silent for its whole probe."""

import pytest

import checks
from ex22_answers import legacy_by_the_spec, report_by_hand, report_with
from mcpwire import WireTimeout, frames

pytestmark = pytest.mark.slow  # every report starts seven servers, one of them the lab


def test_keys_the_fallback_to_codes(verdict):
    # The spec: the fallback MUST NOT be keyed to one specific error code; the strict bakery answers -32600.
    def known_codes(reply):
        return reply is None or reply.code in (-32601, -32602) or (reply.ok and "resultType" not in reply.result)
    out = verdict(checks.check_server_report, lambda command: report_with(command, fallback=known_codes))
    assert out.startswith("✗ report raised TypeError") and "for the strict bakery server" in out
    assert "-32600" in out and "MUST NOT be keyed to -32601 or -32602" in out


def test_lets_the_probes_timeout_escape(verdict):
    def uncaught(wire):
        return wire.request("server/discover")  # the wire's own 30 s, and nothing catches the WireTimeout
    out = verdict(checks.check_server_report, lambda command: report_with(command, probe=uncaught))
    assert out.startswith("✗ report raised WireTimeout") and "for the quiet bakery server" in out
    assert "no reply within your timeout means legacy" in out and "catch it" in out


def test_stops_waiting_before_the_lab_has_started(verdict):
    def hasty(wire):
        try:
            return wire.request("server/discover", timeout=0.05)  # no server starts this fast
        except WireTimeout:
            return None
    out = verdict(checks.check_server_report, lambda command: report_with(command, probe=hasty))
    # Fallen back to initialize, the report meets the lab as a legacy server, and what it reads there breaks.
    assert out.startswith("✗ report raised") and "for the lab server" in out
    assert "stopped waiting, let it wait longer" in out


def test_takes_silence_for_2026(verdict):
    def silence_is_modern(reply):
        return reply is not None and legacy_by_the_spec(reply)
    out = verdict(checks.check_server_report, lambda command: report_with(command, fallback=silence_is_modern))
    # Taken for 2026-07-28, the quiet bakery gets tools/list with the envelope and stays silent to that too.
    assert out.startswith("✗ report raised WireTimeout: no reply to id 2 (tools/list)") and "quiet bakery" in out
    assert "no reply within your timeout means legacy" in out


def test_falls_back_only_on_method_not_found(verdict):
    def only_32601(command):
        return report_with(command, fallback=lambda reply: reply.code == -32601)
    out = verdict(checks.check_server_report, only_32601)
    assert out.startswith("✗ report raised TypeError") and "for the legacy time server" in out
    assert "with the 2026-07-28 envelope to the legacy time server" in out and "no handshake at all" in out
    assert "answers server/discover with -32602, not -32601" in out


def test_reports_the_era_it_asked_for(verdict):
    def era_asked_for(command):
        return {**report_with(command), "era": frames.PROTOCOL_VERSION}
    out = verdict(checks.check_server_report, era_asked_for)
    assert out.startswith("✗ report says the legacy time server speaks '2026-07-28'; it speaks '2025-11-25'")
    assert "answers server/discover with -32602, not -32601" in out


def test_takes_any_result_of_discover_for_2026(verdict):
    def any_result(command):
        return report_with(command, fallback=lambda reply: not reply.ok)
    out = verdict(checks.check_server_report, any_result)
    assert out.startswith("✗ report says the bakery server speaks '2026-07-28'; it speaks '2025-11-25'")
    assert "an empty result" in out and "not a DiscoverResult" in out


def test_keeps_the_envelope_after_the_handshake(verdict):
    def envelope_after_handshake(command):
        return report_with(command, bare=False)
    out = verdict(checks.check_server_report, envelope_after_handshake)
    # SDK 1.30.0 ignores the envelope; what the legacy time server received shows it.
    assert out.startswith("✗ report sent 'tools/list' to the legacy time server with the 2026-07-28 envelope")
    assert "frames.legacy_request" in out


def test_skips_notifications_initialized(verdict):
    def no_initialized(command):
        return report_with(command, handshake=("initialize",))
    out = verdict(checks.check_server_report, no_initialized)
    assert out.startswith("✗ report sent 'tools/list' to the legacy time server after initialize but without "
                          "notifications/initialized first")
    assert "MUST" in out and "lesson 11" in out


def test_skips_the_handshake(verdict):
    def no_handshake(command):
        return report_with(command, handshake=())
    out = verdict(checks.check_server_report, no_handshake)
    # SDK 1.30.0 refuses tools/list before initialize, so the legacy time server shows it before the bakery can;
    # the frame, not the crash it led to, is named.
    assert out.startswith("✗ report raised TypeError") and "for the legacy time server, after a wrong frame: report sent " in out
    assert "'tools/list' to the legacy time server without the handshake" in out
    assert "send initialize and notifications/initialized first" in out


def test_a_later_process_without_the_handshake(verdict):
    # SDK 1.30.0 answers those calls with -32602; the frames, not the error style, say what went wrong.
    out = verdict(checks.check_server_report, lambda command: report_by_hand(command, calls_open=False))
    assert out.startswith("✗ report sent 'tools/call' to the legacy time server without the handshake")
    assert "on each new process you start" in out


def test_initialize_without_capabilities_and_client_info(verdict):
    # SDK 1.30.0 refuses it with -32602 and still answers tools/list afterwards: only the frames show it.
    def bare_initialize(id):
        return frames.legacy_request("initialize", {"protocolVersion": "2025-11-25"}, id=id)
    out = verdict(checks.check_server_report, lambda command: report_with(command, initialize=bare_initialize))
    assert out.startswith("✗ report's initialize to the legacy time server has params {\"protocolVersion\":\"2025-11-25\"}")
    assert "capabilities (an object, {} for none) and clientInfo" in out and "-32602" in out
    assert "frames.legacy_initialize()" in out


@pytest.mark.parametrize("version", ["2025-06-18", "latest"])
def test_initialize_asking_for_another_version(verdict, version):
    # SDK 1.30.0 agrees to 2025-06-18 and counters "latest" with 2025-11-25; either way the frame asked for another era.
    def other_version(id):
        return frames.legacy_initialize(version, id=id)
    out = verdict(checks.check_server_report, lambda command: report_with(command, initialize=other_version))
    assert out.startswith(f"✗ report's initialize to the legacy time server asks for protocolVersion '{version}'")
    assert "The server answered with protocolVersion" in out and "a server that supports it answers with the same" in out


def test_sends_bare_requests_to_a_2026_server(verdict):
    out = verdict(checks.check_server_report, lambda command: report_with(command, modern_frame=frames.legacy_request))
    # The lab answers with -32602 and the report breaks on the missing result; the frame is named, not the crash.
    assert out.startswith("✗ report raised TypeError") and "for the lab server, after a wrong frame: report sent " in out
    assert "'tools/list' to the lab server without the 2026-07-28 envelope" in out and "wire.request adds it" in out


def test_names_2025_in_the_envelope_to_a_2026_server(verdict):
    def legacy_version(method, params, id):
        return frames.request(method, params, id=id, meta={frames.PROTOCOL_VERSION_KEY: "2025-11-25"})
    out = verdict(checks.check_server_report, lambda command: report_with(command, modern_frame=legacy_version))
    assert "report sent 'tools/list' to the lab server with io.modelcontextprotocol/protocolVersion = '2025-11-25'" in out
    assert "-32022" in out


def test_sends_the_probe_without_the_envelope(verdict):
    # The lab takes a bare first request for 2025-11-25 (-32601 to server/discover), so the report falls back and
    # calls it legacy: the probe's frame is the cause, not the wait.
    def bare_probe(wire):
        return wire.send(frames.legacy_request("server/discover", id=wire.next_id), timeout=10)
    out = verdict(checks.check_server_report, lambda command: report_with(command, probe=bare_probe))
    assert out.startswith("✗ report sent 'server/discover' to the lab server without the 2026-07-28 envelope")
    assert "The probe is a 2026-07-28 request too" in out and "wait longer" not in out
