"""The lab's sampling, roots, URL elicitation, bare-retry, asking-prompt and logging flows, on stdio and HTTP.

Every reply is validated against the 2026-07-28 types, and every input request against the
request type it names, because a learner writes the answers by hand from what these show.
"""

from __future__ import annotations

import pytest
from mcp_types import CreateMessageRequestParams, ElicitRequestURLParams
from lab_harness import (
    check_error,
    check_notification,
    check_result,
    http_lab,
    request as frame_for,
    retry_with,
    stdio_lab,
    text_of,
    tool_call,
)

from labserver.notes import NoteStore, bundled_samples

SAMPLING = {"sampling": {}}
ROOTS = {"roots": {}}
URL_ELICITATION = {"elicitation": {"url": {}}}
FORM_ELICITATION = {"elicitation": {"form": {}}}
SUMMARY_KEY = "labserver.input_tools:ask_summary"
ROOTS_KEY = "labserver.input_tools:ask_roots"
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Lab conventions."}, "model": "by-hand"}


class Transport:
    """One lab server and a way to send a frame: the final reply, the notifications before it, the HTTP status."""

    def __init__(self, kind, lab):
        self.kind, self.lab = kind, lab

    def exchange(self, frame):
        if self.kind == "stdio":
            self.lab.send(frame)
            reply, seen = self.lab.read_until(frame["id"])
            return reply, [m for m in seen if "id" not in m], None
        response, reply, notes = self.lab.call(frame)
        return reply, notes, response.status_code

    def result(self, method, frame):
        reply, notes, status = self.exchange(frame)
        assert status in (None, 200), (status, reply)
        return check_result(method, reply), notes


@pytest.fixture(scope="module", params=["stdio", "http"])
def server(request):
    opener = stdio_lab if request.param == "stdio" else http_lab
    with opener() as lab:
        yield Transport(request.param, lab)


def first_leg(server, frame):
    result, _ = server.result(frame["method"], frame)
    assert result["resultType"] == "input_required"
    return result


def test_summarize_note_asks_the_client_to_sample_then_uses_the_answer(server):
    frame = tool_call("s-1", "summarize_note", {"note_id": "welcome"}, capabilities=SAMPLING)
    asked = first_leg(server, frame)
    (key,) = asked["inputRequests"]
    question = asked["inputRequests"][key]
    assert key == SUMMARY_KEY and question["method"] == "sampling/createMessage"
    params = CreateMessageRequestParams.model_validate(question["params"])
    assert params.max_tokens == 120 and "Welcome to the lab notes" in params.messages[0].content.text
    done, _ = server.result("tools/call", retry_with(frame, "s-2", {key: SAMPLED}, asked["requestState"]))
    assert done["resultType"] == "complete" and text_of(done) == "Summary of welcome (by by-hand): Lab conventions."


def test_summarize_note_without_sampling_is_minus_32021_naming_sampling(server):
    reply, _, status = server.exchange(tool_call("s-3", "summarize_note", {"note_id": "welcome"}))
    error = check_error(reply, -32021)
    assert error["data"] == {"requiredCapabilities": {"sampling": {}}}
    assert status in (None, 400)


def test_a_sampling_answer_without_a_model_is_refused_as_invalid_params(server):
    frame = tool_call("s-4", "summarize_note", {"note_id": "welcome"}, capabilities=SAMPLING)
    asked = first_leg(server, frame)
    no_model = {key: value for key, value in SAMPLED.items() if key != "model"}
    reply, _, _ = server.exchange(retry_with(frame, "s-5", {SUMMARY_KEY: no_model}, asked["requestState"]))
    check_error(reply, -32602)


@pytest.mark.parametrize(("content", "summary"), [
    ([{"type": "text", "text": "Lab conventions."}], "Lab conventions."),
    ([{"type": "text", "text": "One note per file."}, {"type": "text", "text": "Tags find them."}],
     "One note per file. Tags find them."),
], ids=["one block in an array", "two text blocks"])
def test_a_sampled_answer_whose_content_is_an_array_of_blocks_is_read(server, content, summary):
    # The 2026-07-28 schema allows CreateMessageResult.content as a block or an array; SDK 2.3.0 takes one block.
    frame = tool_call("s-6", "summarize_note", {"note_id": "welcome"}, capabilities=SAMPLING)
    asked = first_leg(server, frame)
    done, _ = server.result("tools/call", retry_with(frame, "s-7", {SUMMARY_KEY: {**SAMPLED, "content": content}},
                                                     asked["requestState"]))
    assert done.get("isError") is False and text_of(done) == f"Summary of welcome (by by-hand): {summary}"


def test_an_array_answer_without_text_is_a_tool_error_saying_so(server):
    frame = tool_call("s-8", "summarize_note", {"note_id": "welcome"}, capabilities=SAMPLING)
    asked = first_leg(server, frame)
    image = [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]
    done, _ = server.result("tools/call", retry_with(frame, "s-9", {SUMMARY_KEY: {**SAMPLED, "content": image}},
                                                     asked["requestState"]))
    assert done["isError"] is True and text_of(done).endswith("The model's answer had no text to use as a summary.")


@pytest.mark.parametrize(("answer", "said"), [
    ({"action": "accept"}, "is an elicitation answer (an action), not the sampled message"),
    ({"roots": []}, "is a list of roots, not the sampled message"),
    ({**SAMPLED, "content": {"type": "tool_use", "id": "t-1", "name": "search_notes", "input": {}}},
     "is a tool_use block, but this request offered the model no tools"),
], ids=["an-elicitation-answer", "a-roots-list", "a-tool-use-block"])
def test_an_answer_of_another_kind_is_a_tool_error_in_words(server, answer, said):
    # SDK 2.3.0's own text here names an internal resolver: "received a response of the wrong kind".
    frame = tool_call("s-12", "summarize_note", {"note_id": "welcome"}, capabilities=SAMPLING)
    asked = first_leg(server, frame)
    done, _ = server.result("tools/call", retry_with(frame, "s-13", {SUMMARY_KEY: answer}, asked["requestState"]))
    assert done["isError"] is True and said in text_of(done) and "wrong kind" not in text_of(done)


def test_an_array_answer_without_the_request_state_is_asked_again(server):
    frame = tool_call("s-10", "summarize_note", {"note_id": "welcome"}, capabilities=SAMPLING)
    unasked = {SUMMARY_KEY: {**SAMPLED, "content": [{"type": "text", "text": "Lab conventions."}]}}
    again = first_leg(server, retry_with(frame, "s-11", unasked, None))
    assert list(again["inputRequests"]) == [SUMMARY_KEY]


def test_plan_export_asks_for_roots_before_reading_the_note(server):
    frame = tool_call("r-1", "plan_export", {"note_id": "no-such-note"}, capabilities=ROOTS)
    asked = first_leg(server, frame)  # the note is looked up only after the roots came
    assert asked["inputRequests"] == {ROOTS_KEY: {"method": "roots/list"}}
    roots = {"roots": [{"uri": "file:///home/you/exports/", "name": "exports"}]}
    done, _ = server.result("tools/call", retry_with(frame, "r-2", {ROOTS_KEY: roots}, asked["requestState"]))
    assert done["isError"] is True and "No note with id 'no-such-note'" in text_of(done)


def test_plan_export_names_the_file_under_the_first_root(server):
    frame = tool_call("r-3", "plan_export", {"note_id": "welcome"}, capabilities=ROOTS)
    asked = first_leg(server, frame)
    roots = {"roots": [{"uri": "file:///home/you/exports/"}, {"uri": "file:///tmp/"}]}
    done, _ = server.result("tools/call", retry_with(frame, "r-4", {ROOTS_KEY: roots}, asked["requestState"]))
    assert text_of(done) == "welcome would be written to file:///home/you/exports/welcome.md (usable roots: 2)."


def test_roots_that_are_not_file_uris_are_refused_before_the_tool_runs(server):
    frame = tool_call("r-5", "plan_export", {"note_id": "welcome"}, capabilities=ROOTS)
    asked = first_leg(server, frame)
    roots = {"roots": [{"uri": "https://example.org/notes"}]}
    reply, _, _ = server.exchange(retry_with(frame, "r-6", {ROOTS_KEY: roots}, asked["requestState"]))
    check_error(reply, -32602)


def test_plan_export_without_roots_is_minus_32021_naming_roots(server):
    reply, _, _ = server.exchange(tool_call("r-7", "plan_export", {"note_id": "welcome"}))
    assert check_error(reply, -32021)["data"] == {"requiredCapabilities": {"roots": {}}}


def test_publish_note_elicits_a_url_without_an_elicitation_id(server):
    frame = tool_call("u-1", "publish_note", {"note_id": "welcome"}, capabilities=URL_ELICITATION)
    asked = first_leg(server, frame)
    question = asked["inputRequests"]["approval"]
    params = ElicitRequestURLParams.model_validate(question["params"])
    assert question["method"] == "elicitation/create" and params.mode == "url"
    assert params.url == "https://notes-lab.example/approve/welcome" and "elicitationId" not in question["params"]
    done, _ = server.result("tools/call", retry_with(frame, "u-2", {"approval": {"action": "accept"}},
                                                     asked["requestState"]))
    assert text_of(done) == "Published welcome at https://notes-lab.example/public/welcome."


def test_publish_note_declined_publishes_nothing(server):
    frame = tool_call("u-3", "publish_note", {"note_id": "welcome"}, capabilities=URL_ELICITATION)
    asked = first_leg(server, frame)
    done, _ = server.result("tools/call", retry_with(frame, "u-4", {"approval": {"action": "decline"}},
                                                     asked["requestState"]))
    assert text_of(done).startswith("Not published")


@pytest.mark.parametrize("capabilities", [{}, {"elicitation": {}}, FORM_ELICITATION],
                         ids=["none", "bare elicitation (form only)", "form"])
def test_publish_note_without_url_elicitation_is_minus_32021(server, capabilities):
    reply, _, _ = server.exchange(tool_call("u-5", "publish_note", {"note_id": "welcome"}, capabilities=capabilities))
    assert check_error(reply, -32021)["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}


def test_a_tampered_publish_state_is_refused(server):
    frame = tool_call("u-6", "publish_note", {"note_id": "welcome"}, capabilities=URL_ELICITATION)
    state = first_leg(server, frame)["requestState"]
    tampered = state[:-3] + ("AAA" if state[-3:] != "AAA" else "BBB")
    reply, _, _ = server.exchange(retry_with(frame, "u-7", {"approval": {"action": "accept"}}, tampered))
    check_error(reply, -32602)


def test_count_words_retries_on_state_alone_until_complete(server):
    frame = tool_call("w-1", "count_words", {})
    rounds = []
    result, _ = server.result("tools/call", frame)
    while result["resultType"] == "input_required":
        assert "inputRequests" not in result and isinstance(result["requestState"], str)
        rounds.append(result)
        params = {**frame["params"], "requestState": result["requestState"]}
        result, _ = server.result("tools/call", {**frame, "id": f"w-{len(rounds) + 1}", "params": params})
    notes = NoteStore(bundled_samples()).all()
    assert len(rounds) == 2
    assert text_of(result) == f"{sum(len(note.body.split()) for note in notes)} words in {len(notes)} notes."


def test_the_brief_prompt_asks_who_it_is_for_then_renders(server):
    frame = frame_for("p-1", "prompts/get", {"name": "brief", "arguments": {"note_id": "welcome"}},
                    capabilities=FORM_ELICITATION)
    asked = first_leg(server, frame)
    question = asked["inputRequests"]["audience"]
    assert question["params"]["requestedSchema"]["properties"]["audience"]["enum"] == ["newcomers", "reviewers"]
    answer = {"audience": {"action": "accept", "content": {"audience": "reviewers"}}}
    done, _ = server.result("prompts/get", retry_with(frame, "p-2", answer, asked["requestState"]))
    assert done["resultType"] == "complete"
    assert done["messages"][0]["content"]["text"].startswith("Brief reviewers on this lab note")


def test_the_brief_prompt_asks_again_for_an_audience_outside_the_enum(server):
    frame = frame_for("p-3", "prompts/get", {"name": "brief", "arguments": {"note_id": "welcome"}},
                    capabilities=FORM_ELICITATION)
    asked = first_leg(server, frame)
    answer = {"audience": {"action": "accept", "content": {"audience": "kids"}}}
    again, _ = server.result("prompts/get", retry_with(frame, "p-4", answer, asked["requestState"]))
    assert again["resultType"] == "input_required" and list(again["inputRequests"]) == ["audience"]


def test_the_brief_prompt_without_elicitation_is_minus_32021(server):
    reply, _, _ = server.exchange(frame_for("p-5", "prompts/get", {"name": "brief", "arguments": {"note_id": "welcome"}}))
    assert check_error(reply, -32021)["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}


def test_check_notes_sends_no_log_without_the_opt_in(server):
    _, notes, _ = server.exchange(tool_call("l-1", "check_notes", {}))
    assert [n for n in notes if n["method"] == "notifications/message"] == []


@pytest.mark.parametrize(("level", "levels"), [
    ("debug", {"debug", "info", "notice", "warning"}),
    ("notice", {"notice", "warning"}),
    ("warning", {"warning"}),
    ("error", set()),
])
def test_check_notes_logs_at_and_above_the_requested_level(server, level, levels):
    result, notes = server.result("tools/call", tool_call("l-2", "check_notes", {},
                                                          **{"io.modelcontextprotocol/logLevel": level}))
    logs = [check_notification(n) for n in notes if n["method"] == "notifications/message"]
    assert {log["level"] for log in logs} == levels
    assert all(log["logger"] == "check_notes" for log in logs)
    assert text_of(result) == "Checked 13 notes: 3 problems."


def test_an_unknown_log_level_is_invalid_params(server):
    reply, _, _ = server.exchange(tool_call("l-3", "check_notes", {}, **{"io.modelcontextprotocol/logLevel": "WARN"}))
    check_error(reply, -32602)


def test_logs_turn_the_http_reply_into_an_sse_stream():
    with http_lab() as lab:
        logged = lab.post(tool_call("l-4", "check_notes", {}, **{"io.modelcontextprotocol/logLevel": "warning"}))
        quiet = lab.post(tool_call("l-5", "check_notes", {}))
    assert logged.headers["content-type"].startswith("text/event-stream")
    assert quiet.headers["content-type"].startswith("application/json")


def test_the_server_does_not_advertise_logging_although_it_logs(server):
    result, _ = server.result("server/discover", frame_for("d-1", "server/discover"))
    assert "logging" not in result["capabilities"]  # the SDK's departure the lesson 10 note shows
