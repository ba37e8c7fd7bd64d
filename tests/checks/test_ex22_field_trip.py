"""Exercise 22's report check: right reports pass however they are written; the reports learners really get wrong fail
on the server that shows the mistake, and say what is wrong.

The reference servers start warm here, as in a learner's check (checks/ex22_warm.py); two rows start them cold, where
the cold start is what they are about. The reports below wait long for a reply from a real server, which may start
slowly on a loaded machine, and SILENCE_S on the quiet bakery, which answers nothing before initialize: any wait shows
the rule there, so a row that meets the silence costs a second, not the 10 s a learner's report may wait.
"""

import json
import queue
import subprocess
import threading
from concurrent.futures import Future
from functools import lru_cache
from pathlib import Path

import pytest

import checks
from checks import ex22_field_trip as field_trip
from checks import ex22_recorder as recorder
from checks.ex22_field_trip import DEFAULTS, reference_reports
from labserver.warm import WARM
from mcpwire import StdioWire, WireTimeout, count_tokens, frames

pytestmark = pytest.mark.slow  # every report starts seven servers, one of them the lab
MODERN_ERRORS = (-32020, -32021, -32022)
REPLY_S = 90  # a real server's first reply waits for its start: seconds on a loaded machine, a minute cold at a load of 25
SILENCE_S = 1


def quiet(command):
    """Whether command starts the check's quiet bakery: the recorder's folder names the command it runs."""
    return "ignore" in json.loads(Path(recorder.command_path(command[-1])).read_text(encoding="utf-8"))["command"]


def probe_wait(command):
    return SILENCE_S if quiet(command) else REPLY_S


def style(reply):
    return reply.code if reply.error else ("isError" if reply.is_tool_error else "result")


def first_requiring(tools):
    return next(tool for tool in tools if tool["inputSchema"].get("required"))


def probe_waiting(wire, wait, **id):
    """The probe's reply, or None when none comes within wait."""
    try:
        return wire.request("server/discover", timeout=wait, **id)
    except WireTimeout:
        return None


def legacy_by_the_spec(reply):
    return reply is None or not ((reply.ok and "resultType" in reply.result) or reply.code in MODERN_ERRORS)


def report_with(command, *, probe=probe_waiting, fallback=legacy_by_the_spec, handshake=("initialize", "notifications/initialized"), bare=True,
                initialize=frames.legacy_initialize, modern_frame=frames.request, ids=None,
                hint=lambda tool, name, default: tool.get("annotations", {}).get(name, default),
                pick=first_requiring, bad_call=lambda tool: {"name": tool["name"], "arguments": {}},
                error_style=style, cost=lambda wire, listing: (wire.transcript[-1].bytes_down, count_tokens(listing.text)),
                timeout=REPLY_S):
    """The right report, with one step swapped for the variant a test is about. ids: an iterator of the ids for every
    request after the probe (the wire's next free integer when None); timeout: the wire's own, for every other reply."""
    with StdioWire(command, timeout=timeout) as wire:
        def next_id():
            return wire.next_id if ids is None else next(ids)

        legacy = fallback(probe(wire, probe_wait(command)))
        if legacy and "initialize" in handshake:
            wire.send(initialize(id=next_id()))
        if legacy and "notifications/initialized" in handshake:
            wire.send(frames.legacy_initialized())

        def call(method, params=None):
            if legacy and bare:
                return wire.send(frames.legacy_request(method, params, id=next_id()))
            return wire.send(modern_frame(method, params, id=next_id()))

        listing = call("tools/list")
        tools_list = cost(wire, listing)
        tools = listing.result["tools"]
        return {"era": "2025-11-25" if legacy else "2026-07-28",
                "hints": {tool["name"]: {name: hint(tool, name, default) for name, default in DEFAULTS.items()} for tool in tools},
                "unknown_tool": error_style(call("tools/call", {"name": "no_such_tool", "arguments": {}})),
                "bad_arguments": error_style(call("tools/call", bad_call(pick(tools)))),
                "tools_list": tools_list}


def report_by_hand(command, *, calls_open=True):
    # Right, written differently: raw lines with subprocess, a fresh process for the handshake, hints by dict merge,
    # silence read as a queue that stays empty. With calls_open=False the process for the calls gets no handshake.
    def session(lines, wait=REPLY_S):
        # Reads until every request is answered (or nothing more comes within wait) before closing stdin: a bare SDK
        # server may drop what is open at EOF.
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        process.stdin.write("".join(json.dumps(line) + "\n" for line in lines))
        process.stdin.flush()
        replies = queue.Queue()
        threading.Thread(target=lambda: [replies.put(json.loads(text)) for text in process.stdout], daemon=True).start()
        waiting, answers = {line["id"] for line in lines if "id" in line}, []
        try:
            while waiting:
                answers.append(replies.get(timeout=wait))
                waiting.discard(answers[-1].get("id"))
        except queue.Empty:
            pass
        process.stdin.close()
        process.wait(timeout=30)
        return answers

    envelope = frames.envelope()
    answered = session([{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope}}],
                       wait=probe_wait(command))
    modern = bool(answered) and ("resultType" in answered[0].get("result", {})
                                 or answered[0].get("error", {}).get("code") in MODERN_ERRORS)
    opening = [] if modern else [frames.legacy_initialize(id=0), frames.legacy_initialized()]
    params = {"_meta": envelope} if modern else {}
    listed = session([*opening, {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}])[-1]
    line = json.dumps(listed, separators=(",", ":"), ensure_ascii=False)
    tools = listed["result"]["tools"]
    needy = [tool["name"] for tool in tools if tool["inputSchema"].get("required")][0]
    calls = [{"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {**params, "name": name, "arguments": {}}}
             for n, name in ((1, "no_such_tool"), (2, needy))]
    answers = {answer["id"]: answer for answer in session([*(opening if calls_open else []), *calls])
               if answer.get("id") in (1, 2)}

    def kind(answer):
        return answer["error"]["code"] if "error" in answer else ("isError" if answer["result"].get("isError") else "result")

    return {"era": "2026-07-28" if modern else "2025-11-25",
            "hints": {tool["name"]: {**DEFAULTS, **{k: v for k, v in tool.get("annotations", {}).items() if k in DEFAULTS}}
                      for tool in tools},
            "unknown_tool": kind(answers[1]), "bad_arguments": kind(answers[2]),
            "tools_list": (len(line.encode()) + 1, count_tokens(line))}


def test_the_reference_reads_each_server_as_the_lesson_shows_it():
    reports = reference_reports()
    assert {name: report["era"] for name, report in reports.items()} == {
        "lab": "2026-07-28", "time": "2026-07-28", "git": "2026-07-28", "legacy time": "2025-11-25", "bakery": "2025-11-25",
        "strict bakery": "2025-11-25", "quiet bakery": "2025-11-25"}
    assert {name: report["unknown_tool"] for name, report in reports.items()} == {
        "lab": "isError", "time": -32602, "git": -32602, "legacy time": "isError", "bakery": "result",
        "strict bakery": "result", "quiet bakery": "result"}
    assert all(hints == DEFAULTS for hints in reports["legacy time"]["hints"].values())


def test_right(verdict):
    out = verdict(checks.check_server_report, report_with)
    assert out.startswith("✓ report is right on all seven servers") and "the 2025-11-25 servers the handshake" in out
    assert "the 2026-07-28 servers got the envelope on every request" in out


def test_right_with_servers_started_cold(verdict, monkeypatch):
    # As a host meets them: each reference server imports its SDK at the start, and so does the lab.
    monkeypatch.setenv(WARM, "")
    out = verdict(lambda report: checks.check_server_report(report, starts="cold"), report_with)
    assert out.startswith("✓ report is right on all seven servers")


def test_right_with_the_wires_own_timeout_caught_as_a_timeout_error(verdict):
    # The wire's own timeout, short on the quiet bakery and long elsewhere, as probe_waiting's wait.
    def wire_timeout(wire, wait):
        try:
            return wire.request("server/discover")
        except TimeoutError:  # WireTimeout is one
            return None
    def report(command):
        return report_with(command, probe=wire_timeout, timeout=probe_wait(command))
    assert verdict(checks.check_server_report, report).startswith("✓")


def test_keys_the_fallback_to_codes(verdict):
    # The spec: the fallback MUST NOT be keyed to one specific error code; the strict bakery answers -32600.
    def known_codes(reply):
        return reply is None or reply.code in (-32601, -32602) or (reply.ok and "resultType" not in reply.result)
    out = verdict(checks.check_server_report, lambda command: report_with(command, fallback=known_codes))
    assert out.startswith("✗ report raised TypeError") and "for the strict bakery server" in out
    assert "-32600" in out and "MUST NOT be keyed to -32601 or -32602" in out


def test_lets_the_probes_timeout_escape(verdict):
    def uncaught(wire, wait):
        return wire.request("server/discover")  # the wire's own timeout, and nothing catches the WireTimeout
    out = verdict(checks.check_server_report, lambda command: report_with(command, probe=uncaught, timeout=probe_wait(command)))
    assert out.startswith("✗ report raised WireTimeout") and "for the quiet bakery server" in out
    assert "no reply within your timeout means legacy" in out and "catch it" in out


def test_stops_waiting_before_the_lab_has_started(verdict, monkeypatch):
    # The cold start is what this row is about: a lab that imports its SDK takes seconds on a loaded machine.
    monkeypatch.setenv(WARM, "")
    def hasty(wire, wait):
        try:
            return wire.request("server/discover", timeout=0.05)  # no server starts this fast
        except WireTimeout:
            return None
    out = verdict(lambda report: checks.check_server_report(report, starts="cold"),
                  lambda command: report_with(command, probe=hasty))
    # Fallen back to initialize, the report meets the lab as a legacy server, and what it reads there breaks.
    assert out.startswith("✗ report raised") and "for the lab server" in out
    assert "stopped waiting, let it wait longer" in out


def test_right_whose_probe_gave_up_once_gets_a_second_start(verdict):
    # The lab answered the probe as 2026-07-28 after the report had stopped waiting (a server slower to start than
    # the report waits, as on a busy machine): the check starts it again before it judges. A report that gives up
    # every time fails as above.
    starts = []
    def impatient_once(wire, wait):
        starts.append(wire.command)
        return probe_waiting(wire, 0.001 if len(starts) == 1 else wait)
    out = verdict(checks.check_server_report, lambda command: report_with(command, probe=impatient_once))
    assert out.startswith("✓ report is right on all seven servers") and len(starts) == 8


def test_takes_silence_for_2026(verdict):
    def silence_is_modern(reply):
        return reply is not None and legacy_by_the_spec(reply)
    out = verdict(checks.check_server_report,
                  lambda command: report_with(command, fallback=silence_is_modern, timeout=probe_wait(command)))
    # Taken for 2026-07-28, the quiet bakery gets tools/list with the envelope and stays silent to that too.
    assert out.startswith("✗ report raised WireTimeout: no reply to id 2 (tools/list)") and "quiet bakery" in out
    assert "no reply within your timeout means legacy" in out


def named_legacy(command):
    """A blind learner's guess at the era: the legacy venv's or the bakery's name in the command line."""
    return any("legacy" in part or "bakery" in part for part in command)


def test_tells_the_era_by_the_command_line_without_a_probe(verdict):
    # A blind learner's report passed while the check's commands named .venv-legacy/ and ex22_bakery.py.
    out = verdict(checks.check_server_report,
                  lambda command: report_with(command, probe=lambda wire, wait: named_legacy(command), fallback=bool))
    assert out.startswith("✗ report sent 'tools/list' to the lab server before any server/discover: it never probed")
    assert "the check's commands all start the same recorder" in out


def test_probes_but_tells_the_era_by_the_command_line(verdict):
    # The probe reaches the wire, but its answer is not what decides: every command looks alike, so the guess says
    # 2026-07-28 everywhere, and the legacy time server shows it.
    def probe_then_guess(wire, wait):
        probe_waiting(wire, wait)
        return named_legacy(wire.command)
    out = verdict(checks.check_server_report, lambda command: report_with(command, probe=probe_then_guess, fallback=bool))
    assert out.startswith("✗ report raised TypeError") and "for the legacy time server, after a wrong frame" in out
    assert "with the 2026-07-28 envelope to the legacy time server" in out and "no handshake at all" in out


def test_pings_before_the_probe(verdict):
    # The probe comes first: the lab takes a bare first request for 2025-11-25, whatever follows.
    def ping_first(wire, wait):
        wire.send(frames.legacy_request("ping", id=wire.next_id), timeout=wait)
        return probe_waiting(wire, wait)
    out = verdict(checks.check_server_report, lambda command: report_with(command, probe=ping_first))
    assert out.startswith("✗ report sent 'ping' to the lab server before its server/discover; the probe is the first")


def test_answers_from_memory_without_starting_the_server(verdict):
    # The right answers, known beforehand and told apart by the command (here by the command the recorder runs,
    # as a learner might by the command line): nothing reached the wire.
    right = {name: {key: value for key, value in report.items() if key != "characters"}
             for name, report in reference_reports().items()}
    def remembered(command):
        started = Path(recorder.command_path(command[-1])).read_text(encoding="utf-8")
        name = ("quiet bakery" if "ignore" in started else "strict bakery" if "refuse" in started else "bakery"
                if "bakery" in started else "legacy time" if "legacy" in started else "git" if "git" in started
                else "time" if "mcp_server_time" in started else "lab")
        return right[name]
    out = verdict(checks.check_server_report, remembered)
    assert out.startswith("✗ report sent no request to the lab server, so it cannot know its era")


def test_a_server_the_check_cannot_read_itself(verdict, monkeypatch):
    # The check's own read ran out of time (a machine far busier than its waits allow): a ✗ that says so, not a
    # traceback, and the next check reads again.
    @lru_cache(maxsize=1)
    def unreadable():
        failing = Future()
        failing.set_exception(WireTimeout("no reply to id 1 (server/discover) within 120 s"))
        return dict.fromkeys(field_trip.PROBE_WAIT_S, failing)
    monkeypatch.setattr(field_trip, "reference_reading", unreadable)
    out = verdict(checks.check_server_report, report_with)
    assert out.startswith("✗ the check could not read the lab server itself (WireTimeout: no reply to id 1")
    assert "Run the check again" in out and unreadable.cache_info().currsize == 0


def test_right_written_by_hand_with_subprocess(verdict):
    assert verdict(checks.check_server_report, report_by_hand).startswith("✓")


def test_right_with_tokens_from_the_transcript(verdict):
    def transcript_tokens(command):
        return report_with(command, cost=lambda wire, listing: (wire.transcript[-1].bytes_down, wire.transcript[-1].tokens_down))
    assert verdict(checks.check_server_report, transcript_tokens).startswith("✓")


def test_assumes_the_labs_shapes(verdict):
    def lab_shapes(command):
        return report_with(command, hint=lambda tool, name, default: tool["annotations"].get(name, default))
    out = verdict(checks.check_server_report, lab_shapes)
    assert out.startswith("✗ report raised KeyError: 'annotations' for the legacy time server")
    assert "no annotations" in out


def test_reads_is_error_as_always_there(verdict):
    # The real servers here always send isError; the 2025-11-25 schema lets a result leave it out ("If not set, this
    # is assumed to be false"), and the bakery does.
    def strict_is_error(command):
        return report_with(command, error_style=lambda reply: reply.code if reply.error else (
            "isError" if reply.result["isError"] else "result"))
    out = verdict(checks.check_server_report, strict_is_error)
    assert out.startswith("✗ report raised KeyError: 'isError' for the bakery server."), out
    assert "leave isError out when it is false" in out and "Read optional fields with .get()" in out


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
    # The bakery leaves isError out; its strict sibling writes it as false, and the word is in the key.
    assert out.startswith("✗ report says the strict bakery server answers a call to a tool that does not exist with "
                          "'isError'; it answers a result not marked isError"), out
    assert "Read the isError value" in out


def test_takes_the_is_error_key_for_a_failure(verdict):
    # Found when the bakery began leaving isError out: only a result that writes it as false tells this apart.
    def key_present(command):
        return report_with(command, error_style=lambda reply: reply.code if reply.error else
                           ("isError" if "isError" in reply.result else "result"))
    out = verdict(checks.check_server_report, key_present)
    assert out.startswith("✗ report says the strict bakery server answers a call to a tool that does not exist with "
                          "'isError'; it answers a result not marked isError"), out
    assert "not whether the word or the key is somewhere in the reply" in out


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


def test_right_with_ids_of_its_own_numbers_and_strings(verdict):
    # The replies carry these ids, so tools/list's bytes are not the check's own read: "t-é-2" is 8 bytes on the wire.
    def own_ids(command):
        return report_with(command, probe=lambda wire, wait: probe_waiting(wire, wait, id=41),
                           ids=(f"t-é-{n}" for n in range(1, 100)))
    assert verdict(checks.check_server_report, own_ids).startswith("✓")


def test_right_with_bytes_from_the_payload_and_tokens_of_the_encoded_line(verdict):
    def payload_bytes(command):
        def cost(wire, listing):
            line = listing.payload + b"\n"
            return len(line), count_tokens(line.decode("utf-8").rstrip("\n"))
        return report_with(command, probe=lambda wire, wait: probe_waiting(wire, wait, id=100), cost=cost)
    assert verdict(checks.check_server_report, payload_bytes).startswith("✓")


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


def test_calls_the_first_tool_with_a_required_key_even_an_empty_one(verdict):
    def any_required_key(command):
        return report_with(command, pick=lambda tools: next(tool for tool in tools if "required" in tool["inputSchema"]))
    out = verdict(checks.check_server_report, any_required_key)
    assert out.startswith("✗ report's call without arguments on the bakery server went to opening_hours")
    assert "its required list is empty" in out


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


def test_raises_in_its_own_code_after_right_frames(verdict):
    def own_bug(command):
        return report_with(command, cost=lambda wire, listing: (wire.transcript[-1].bytes_down, int("o200k_base")))
    out = verdict(checks.check_server_report, own_bug)
    assert out.startswith("✗ report raised ValueError") and "for the lab server." in out
    assert "the error is in your own code" in out and "unknown tool" not in out


def test_sends_the_probe_without_the_envelope(verdict):
    # The lab takes a bare first request for 2025-11-25 (-32601 to server/discover), so the report falls back and
    # calls it legacy: the probe's frame is the cause, not the wait.
    def bare_probe(wire, wait):
        return wire.send(frames.legacy_request("server/discover", id=wire.next_id), timeout=wait)
    out = verdict(checks.check_server_report, lambda command: report_with(command, probe=bare_probe))
    assert out.startswith("✗ report sent 'server/discover' to the lab server without the 2026-07-28 envelope")
    assert "The probe is a 2026-07-28 request too" in out and "wait longer" not in out


def test_reads_is_error_from_a_json_rpc_error(verdict):
    def result_only(command):
        return report_with(command, error_style=lambda reply: "isError" if reply.result["isError"] else "result")
    out = verdict(checks.check_server_report, result_only)
    # The lab answers an unknown tool with a result; the time server's -32602 has none, and the crash comes right there.
    assert out.startswith("✗ report raised TypeError: 'NoneType' object is not subscriptable for the time server.")
    assert "An unknown tool may come back as a JSON-RPC error" in out
