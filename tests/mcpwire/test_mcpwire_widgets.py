"""The widgets' logic, driven headless the way a learner drives them: `.value` edits and `Button.click()`.

Every send goes to the real lab server, over stdio and over Streamable HTTP.
"""

import html
import json
import re
import shutil
import socket
import sys
import threading

import pytest

from mcpwire import HttpWire, StdioWire, Transcript, count_tokens, frames
from mcpwire.codes import explain
from mcpwire.widgets import ConsentPrompt, FrameComposer, TranscriptView
from mcpwire.widgets.templates import RAW, template_frame

# The ClientRequest union of the official 2026-07-28 schema, written down once by hand.
CLIENT_REQUESTS_2026 = {
    "server/discover", "resources/list", "resources/templates/list", "resources/read", "subscriptions/listen",
    "prompts/list", "prompts/get", "tools/list", "tools/call", "completion/complete",
}


@pytest.fixture(scope="module", params=["stdio", "http"])
def wire(request):
    start = StdioWire.labserver if request.param == "stdio" else HttpWire.labserver
    with start() as wire:
        wire.send(frames.request("server/discover", id="warm-up"), timeout=60)  # a loaded machine starts it slowly
        yield wire


@pytest.fixture
def composer(wire):
    composer = FrameComposer(wire, timeout=5)
    yield composer
    composer.close()


def visible_text(markup):
    """What the page shows for some widget HTML: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def figure(markup, kind):
    return int(re.search(rf'class="mw-figure mw-{kind}">(\d+)<', markup).group(1))


def send(composer):
    composer.send_button.click()
    return composer.last_send.result(timeout=30)


def test_the_method_picker_offers_every_client_request_and_raw(composer):
    options = list(composer.method_picker.options)
    assert set(options) == CLIENT_REQUESTS_2026 | {RAW}
    assert options[-1] == RAW


@pytest.mark.parametrize("method", sorted(CLIENT_REQUESTS_2026 - {"subscriptions/listen"}))
def test_every_template_is_valid_and_the_server_answers_it(composer, method):
    composer.method_picker.value = method
    assert "✓ a valid 2026-07-28 message" in visible_text(composer.check_view.value)
    outcome = send(composer)
    assert outcome.reply.ok, outcome.reply.explain()
    assert outcome.reply_problems == []
    assert "resultType complete" in visible_text(composer.reply_view.value)


def test_an_edited_frame_is_sent_and_its_costs_are_shown(composer, wire):
    composer.method_picker.value = "tools/call"
    frame = json.loads(composer.editor.value)
    frame["params"]["arguments"] = {"query": "memory", "limit": 2}
    composer.editor.value = json.dumps(frame, indent=2)

    outcome = send(composer)

    shown = composer.reply_view.value
    exchange = wire.transcript[-1]
    payload = frames.dumps(frame)
    assert exchange.up_payloads == [payload]
    assert figure(shown, "bytes-up") == exchange.bytes_up
    assert figure(shown, "bytes-down") == exchange.bytes_down
    assert figure(shown, "tokens-up") == count_tokens(payload)
    assert figure(shown, "tokens-down") == exchange.tokens_down
    if wire.transport == "stdio":
        assert exchange.bytes_up == len(payload.encode()) + 1  # the newline that ends a stdio message
    else:
        assert "HTTP 200" in visible_text(shown)
    assert outcome.reply.result["structuredContent"]["hits"]
    assert payload in visible_text(shown)  # the exact request bytes
    assert "resultType complete" in visible_text(shown)


def test_a_broken_frame_shows_its_problems_and_is_sent_anyway(composer):
    frame = template_frame("tools/list", 41)
    frame["method"] = "tools/lisst"
    del frame["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    composer.editor.value = json.dumps(frame)

    check = visible_text(composer.check_view.value)
    assert "problem" in check and "'tools/lisst' is not a 2026-07-28 client request" in check

    outcome = send(composer)
    shown = visible_text(composer.reply_view.value)
    assert outcome.reply.error is not None
    assert "Sent anyway" in shown and "tools/lisst" in shown
    assert explain(outcome.reply.code).splitlines()[0] in shown


def test_text_that_is_not_json_goes_out_as_typed_and_the_parse_error_is_explained(composer, wire):
    composer.editor.value = '{"jsonrpc": "2.0", "id": 5,\n "method": "tools/list"'
    assert "not JSON" in visible_text(composer.check_view.value)

    outcome = send(composer)

    assert outcome.reply.code == -32700
    assert "-32700 Parse error" in visible_text(composer.reply_view.value)
    if wire.transport == "stdio":
        assert wire.transcript[-1].up == b'{"jsonrpc": "2.0", "id": 5,  "method": "tools/list"\n'
        assert "sent as one line" in visible_text(composer.reply_view.value)
    else:
        assert outcome.reply.status == 400
        assert wire.transcript[-1].up.endswith(composer.editor.value.encode())


def test_json_nested_too_deeply_to_parse_is_explained_and_goes_out_as_typed(composer, wire):
    composer.editor.value = "[" * 100_000 + "]" * 100_000
    assert "nested too deeply" in visible_text(composer.check_view.value)

    outcome = send(composer)

    # Valid JSON, however deep, is no parse error: the lab's stdio front answers -32600; the SDK's HTTP side -32700.
    assert outcome.failure is None and outcome.reply.code in (-32600, -32700)
    assert wire.transcript[-1].up_payloads == [composer.editor.value]

def test_raw_mode_sends_the_text_byte_for_byte(composer, wire):
    composer.method_picker.value = RAW
    line = '{ "jsonrpc":"2.0",  "id":"r1", "method":"tools/list", "params":' + json.dumps(
        {"_meta": frames.envelope()}) + "}"
    composer.editor.value = line

    outcome = send(composer)

    assert outcome.reply.ok and outcome.reply.id == "r1"
    assert wire.transcript[-1].up_payloads == [line]


def test_progress_notifications_that_arrive_first_are_listed(composer):
    frame = frames.request("tools/call", {"name": "reindex", "arguments": {"pause_ms": 0}}, id=77,
                           meta={"progressToken": "p77"})
    composer.editor.value = json.dumps(frame)

    outcome = send(composer)

    assert outcome.reply.ok
    assert outcome.reply.notifications
    shown = visible_text(composer.reply_view.value)
    assert "Notifications that arrived first" in shown and "notifications/progress" in shown


def test_a_raw_notification_is_never_answered_and_that_is_no_error(composer, wire):
    composer.timeout_box.value = 0.5
    composer.method_picker.value = RAW
    composer.editor.value = frames.dumps(frames.notification("notifications/cancelled", {"requestId": 999}))

    outcome = send(composer)

    if wire.transport == "stdio":
        assert outcome.reply is None
        assert "A notification is never answered" in visible_text(composer.reply_view.value)
    else:
        assert outcome.reply.status == 202 and outcome.failure is None
        assert "HTTP 202" in visible_text(composer.reply_view.value)


def test_subscriptions_listen_is_cut_off_at_the_timeout_and_says_why(composer, wire):
    composer.timeout_box.value = 1
    composer.method_picker.value = "subscriptions/listen"

    send(composer)

    shown = visible_text(composer.reply_view.value)
    if wire.transport == "stdio":
        assert "we stopped waiting after 1 s" in shown and "stays open until it is cancelled" in shown
    else:
        assert "we closed the stream after 1" in shown


def test_a_try_it_composer_opens_on_the_frame_just_sent(wire):
    frame = frames.request("resources/read", {"uri": "notes://spindle-density"}, id=12)
    composer = FrameComposer(wire, frame=frame)
    try:
        assert composer.method_picker.value == "resources/read"
        assert json.loads(composer.editor.value) == frame
        composer.edit('{"jsonrpc":"2.0","id":13,"method":"tools/list"}')
        assert composer.method_picker.value == RAW
        assert composer.editor.value == '{"jsonrpc":"2.0","id":13,"method":"tools/list"}'
    finally:
        composer.close()


def test_the_next_template_takes_the_next_free_id(composer):
    composer.method_picker.value = "tools/list"
    composer.editor.value = json.dumps(template_frame("tools/list", 300))
    send(composer)
    composer.method_picker.value = "prompts/list"
    assert json.loads(composer.editor.value)["id"] == 301


def test_history_rows_reload_the_editor_and_export_curl_and_stdin_lines(composer, tmp_path):
    composer.method_picker.value = "resources/read"
    first_text = composer.editor.value
    send(composer)
    composer.method_picker.value = RAW
    raw_line = composer.editor.value
    send(composer)

    rows = [label.replace("\u00a0", " ") for label, _ in composer.history_rows.options]
    assert len(rows) == 2 and "resources/read" in rows[0] and "(raw)" not in rows[1] and "tools/list" in rows[1]

    composer.history_rows.value = 0
    assert composer.method_picker.value == "resources/read"
    assert composer.editor.value == first_text

    composer.curl_button.click()
    assert composer.export_box.value.startswith("curl -sS -X POST ")
    assert "Mcp-Method: resources/read" in composer.export_box.value
    composer.history_rows.value = 1
    assert composer.method_picker.value == RAW and composer.editor.value == raw_line
    composer.stdin_button.click()
    assert composer.export_box.value == raw_line

    composer.save_path.value = str(tmp_path / "session.jsonl")
    composer.save_button.click()
    saved = Transcript.from_jsonl(composer.save_path.value)
    assert saved == composer.transcript and len(saved) == 2
    assert "saved 2 exchanges" in composer.save_status.value


def test_a_widget_display_stores_no_volatile_text(composer, wire):
    shown = composer._repr_mimebundle_()["text/plain"]
    assert shown == f"FrameComposer({wire.transport}, tools/list)"
    view = TranscriptView(Transcript())
    assert view._repr_mimebundle_()["text/plain"] == "TranscriptView('Transcript', 0 exchanges)"
    assert ConsentPrompt("read_note", {"note_id": "welcome"}, wire)._repr_mimebundle_()["text/plain"] == (
        "ConsentPrompt('read_note', undecided)")


# --- HTTP headers ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def http_wire():
    with HttpWire.labserver() as wire:
        yield wire


@pytest.fixture
def http_composer(http_wire):
    composer = FrameComposer(http_wire, method="tools/call")
    yield composer
    composer.close()


def test_http_headers_are_derived_from_the_frame_and_follow_it(http_composer):
    assert "Mcp-Method: tools/call\nMcp-Name: search_notes" in http_composer.headers_editor.value
    frame = json.loads(http_composer.editor.value)
    frame["params"]["name"] = "read_note"
    http_composer.editor.value = json.dumps(frame)
    assert "Mcp-Name: read_note" in http_composer.headers_editor.value
    assert "derived from the frame" in http_composer.headers_note.value


def test_a_hand_edited_header_is_sent_as_written_and_the_mismatch_explained(http_composer):
    http_composer.headers_editor.value = http_composer.headers_editor.value.replace(
        "Mcp-Name: search_notes", "Mcp-Name: read_note")
    assert "edited by hand" in http_composer.headers_note.value

    outcome = send(http_composer)

    assert b"\r\nMcp-Name: read_note\r\n" in outcome.exchange.up
    assert outcome.reply.code == -32020
    assert "Header mismatch" in visible_text(http_composer.reply_view.value)

    http_composer.derive_button.click()
    assert "Mcp-Name: search_notes" in http_composer.headers_editor.value


def test_a_deleted_header_line_is_not_sent(http_composer):
    lines = http_composer.headers_editor.value.splitlines()
    http_composer.headers_editor.value = "\n".join(line for line in lines if not line.startswith("Mcp-Method"))

    outcome = send(http_composer)

    assert b"Mcp-Method" not in outcome.exchange.up
    assert outcome.reply.status == 400


# --- servers that never answer ----------------------------------------------------------------


@pytest.fixture
def silent_stdio_wire():
    with StdioWire([sys.executable, "-c", "import sys; sys.stdin.read()"]) as wire:
        yield wire


@pytest.fixture
def silent_http_wire():
    listener = socket.create_server(("127.0.0.1", 0))
    accepted = []
    threading.Thread(target=lambda: accepted.append(listener.accept()), daemon=True).start()
    wire = HttpWire(f"http://127.0.0.1:{listener.getsockname()[1]}/mcp")
    try:
        yield wire
    finally:
        wire.close()
        for connection, _ in accepted:
            connection.close()
        listener.close()


def test_stdio_composers_have_no_header_list(silent_stdio_wire):
    composer = FrameComposer(silent_stdio_wire)
    assert composer.headers_editor.value == ""
    assert "stdio · python -c" in composer.children[1].value
    composer.close()


@pytest.mark.parametrize("silent", ["silent_stdio_wire", "silent_http_wire"])
def test_a_server_that_never_answers_ends_in_a_visible_timeout(request, silent):
    composer = FrameComposer(request.getfixturevalue(silent), timeout=0.5)
    try:
        future = composer.send()
        assert not future.done()  # the cell returns while the worker waits
        assert composer.send_button.disabled and "sending" in composer.status.value

        outcome = future.result(timeout=30)

        assert outcome.reply is None
        assert "⏱ Timeout" in visible_text(composer.reply_view.value)
        assert "within 0.5 s" in visible_text(composer.reply_view.value)
        assert not composer.send_button.disabled
    finally:
        composer.close()


def test_a_composer_started_for_you_stops_its_server_on_close():
    composer = FrameComposer(transport="stdio")
    try:
        assert send(composer).reply.ok
    finally:
        composer.close()
    assert composer.wire.returncode is not None


@pytest.mark.parametrize("start", [StdioWire.labserver, HttpWire.labserver], ids=["stdio", "http"])
def test_after_run_all_a_try_it_composer_on_a_closed_wire_starts_that_server_again(start, tmp_path):
    notes = tmp_path / "notes"
    lesson_wire = start("--apps", "--notes", str(notes))  # a lab with a flag the lesson's question depends on
    composer = FrameComposer(lesson_wire, frame=frames.request("tools/list", id=10))
    lesson_wire.close()  # what a lesson's last cell does
    shutil.rmtree(notes)  # and the lesson's notes folder may be gone by then
    try:
        outcome = send(composer)
        assert outcome.reply.ok and outcome.reply.id == 10
        assert "started that server again" in visible_text(composer.reply_view.value)
        assert "show_hypnogram" in [tool["name"] for tool in outcome.reply.result["tools"]]  # --apps kept
        assert composer.wire is not lesson_wire and not composer.wire.closed
        assert "--apps" in composer.wire.command and str(notes) not in composer.wire.command
        assert send(composer).reply.ok and "started that server again" not in visible_text(composer.reply_view.value)  # once
    finally:
        composer.close()
    assert composer.wire.closed  # the server it started stops with it


def test_an_unknown_transport_is_refused():
    with pytest.raises(ValueError, match="stdio' or 'http"):
        FrameComposer(transport="carrier-pigeon")


# --- TranscriptView ------------------------------------------------------------------------------


def test_the_transcript_view_shows_one_arrow_row_per_direction(wire):
    view = TranscriptView(wire)
    before = len(wire.transcript)
    reply = wire.request("tools/list")
    assert len(view.transcript) == before + 1
    view.refresh_button.click()

    rows = re.findall(r"<tr class='mw-(up|down|total)'>(.*?)</tr>", view.table.value)
    exchange = wire.transcript[-1]
    up = [visible_text(r) for kind, r in rows if kind == "up"][-1]
    down = [visible_text(r) for kind, r in rows if kind == "down"][-1]
    assert up.startswith(f"{len(wire.transcript)}→tools/list")
    assert f"{exchange.bytes_up}{exchange.tokens_up}" in up
    assert down.startswith("←") and f"{exchange.bytes_down}{exchange.tokens_down}" in down
    assert "complete" in down and (reply.status is None or "200 complete" in down)
    total = visible_text(rows[-1][1])
    assert f"↑{wire.transcript.totals()['bytes_up']} ↓{wire.transcript.totals()['bytes_down']}" in total


def test_the_transcript_view_shows_silence_and_errors():
    from mcpwire import Exchange
    view = TranscriptView([
        Exchange("stdio", "tools/list", 1, b"{}\n", b"", ["{}"], []),
        Exchange("stdio", None, None, b"", b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}\n',
                 [], ['{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}']),
    ])
    text = visible_text(view.table.value)
    assert "(nothing)" in text and "error -32700" in text and "(raw)" in text


def test_the_transcript_view_shows_a_reply_nested_too_deeply_to_parse():
    from mcpwire import Exchange
    deep = "[" * 100_000 + "]" * 100_000
    view = TranscriptView([Exchange("stdio", None, None, b"", deep.encode() + b"\n", [], [deep])])
    assert "nested too deeply" in visible_text(view.table.value)


# --- ConsentPrompt ------------------------------------------------------------------------------------


def test_deny_reaches_the_caller_once_and_says_so():
    decisions = []
    prompt = ConsentPrompt("delete_note", {"note_id": "welcome"}, "notes-lab (stdio)",
                           annotations={"destructiveHint": True}, on_decision=decisions.append)
    assert prompt.approved is None
    shown = visible_text(prompt.children[1].value)
    assert "delete_note" in shown and '"note_id": "welcome"' in shown and "notes-lab (stdio)" in shown
    assert "destructive" in shown

    prompt.deny_button.click()
    prompt.approve_button.click()  # too late: the first decision stands

    assert decisions == [False] and prompt.decision == "denied"
    assert "Denied" in visible_text(prompt.verdict.value)
    assert prompt.deny_button.disabled and prompt.approve_button.disabled
    assert repr(prompt) == "ConsentPrompt('delete_note', denied)"


def test_approve_from_a_tools_call_frame_names_the_wire(wire):
    frame = frames.request("tools/call", {"name": "read_note", "arguments": {"note_id": "welcome"}})
    prompt = ConsentPrompt.for_frame(frame, wire)
    prompt.approve_button.click()
    late = []
    prompt.on_decision(late.append)
    assert late == [True] and prompt.approved
    assert "Approved" in visible_text(prompt.verdict.value)
    assert ("Streamable HTTP" if wire.transport == "http" else "stdio") in visible_text(prompt.children[1].value)
