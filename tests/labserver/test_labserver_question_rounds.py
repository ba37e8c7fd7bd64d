"""Question rounds (labserver.rounds) on the wire, without Node: several questions in one InputRequiredResult, a retry
that answers some of them, a second round, only what the client declared, MRTR on prompts/get; a task that asks two
questions at once and takes their answers one at a time; a tool call that asks in an MRTR round before it becomes a
task. The lab features (prepare_handout, review_epochs, sign_off_night) and the suite's fixture names over them are
served only with --conformance; the suite's own checks are mirrored here where a fixture stands for one."""

from __future__ import annotations

import time

import pytest

from mcpwire import HttpWire, frames, tasks

CAPABILITIES = frames.CLIENT_CAPABILITIES_KEY
EVERYTHING = {"elicitation": {}, "sampling": {}, "roots": {}}
LAB_FEATURES = ("prepare_handout", "review_epochs", "sign_off_night")
NOTE = "spindle-density"
TITLE = "Spindle density and overnight recall"


@pytest.fixture(scope="module")
def lab():
    with HttpWire.labserver("--conformance") as wire:
        yield wire


def can(**capabilities):
    return {CAPABILITIES: capabilities}


def accept(**content):
    return {"action": "accept", "content": content}


def sampled(text):
    return {"role": "assistant", "content": {"type": "text", "text": text}, "model": "test-model",
            "stopReason": "endTurn"}


def roots(*uris):
    return {"roots": [{"uri": uri} for uri in uris]}


def call(wire, name, arguments=None, *, answers=None, state=None, meta=None):
    params = {"name": name, "arguments": arguments or {}}
    if answers is not None:
        params["inputResponses"] = answers
    if state is not None:
        params["requestState"] = state
    return wire.request("tools/call", params, meta=can(**EVERYTHING) if meta is None else meta)


def handout(wire, answers=None, state=None, meta=None):
    return call(wire, "prepare_handout", {"note_id": NOTE}, answers=answers, state=state, meta=meta)


def asked(reply):
    """{key: method} of an InputRequiredResult, after checking it is one and carries a requestState."""
    result = reply.result
    assert result is not None and result["resultType"] == "input_required", reply.text
    assert isinstance(result["requestState"], str) and result["requestState"], result
    return {key: request["method"] for key, request in result["inputRequests"].items()}


def text_of(reply):
    result = reply.result
    assert result is not None and result["resultType"] == "complete", reply.text
    assert result.get("isError") is not True, result
    return result["content"][0]["text"]


# ---- prepare_handout: several at once, partial answers, a second round, only what was declared -----------------


def test_without_the_flag_the_lab_features_are_neither_listed_nor_callable(http_wire):
    listed = [tool["name"] for tool in http_wire.request("tools/list").result["tools"]]
    assert not set(LAB_FEATURES) & set(listed)
    result = call(http_wire, "prepare_handout", {"note_id": NOTE}).result
    assert result["isError"] is True and result["content"][0]["text"] == "Unknown tool: prepare_handout"


def test_the_handout_asks_the_user_the_model_and_the_roots_at_once(lab):
    reply = handout(lab)
    assert asked(reply) == {"reader": "elicitation/create", "summary": "sampling/createMessage",
                            "roots": "roots/list"}
    requests = reply.result["inputRequests"]
    assert requests["reader"]["params"]["message"] == f"Who is the handout on '{TITLE}' for?"
    assert requests["summary"]["params"]["messages"][0]["content"]["text"].startswith(f"# {TITLE}\n\n")
    assert "taskId" not in reply.result


def test_a_retry_that_answers_some_is_asked_again_for_the_rest_only(lab):
    first = handout(lab)
    second = handout(lab, {"reader": accept(name="Ana")}, first.result["requestState"])
    assert asked(second) == {"summary": "sampling/createMessage", "roots": "roots/list"}
    assert second.result["requestState"] != first.result["requestState"]
    done = handout(lab, {"summary": sampled("Spindles may predict recall."), "roots": roots("file:///home/ana/")},
                   second.result["requestState"])
    # Ana's answer came back only inside the sealed requestState: the last retry did not repeat it.
    assert text_of(done) == (f"Handout on '{TITLE}' for Ana: Spindles may predict recall. "
                             f"It would be written to file:///home/ana/{NOTE}-handout.md.")


def test_several_file_roots_open_a_second_round_that_asks_which_one(lab):
    first = handout(lab)
    answers = {"reader": accept(name="Ana"), "summary": sampled("Short."),
               "roots": roots("file:///lab/shared/", "file:///home/ana")}
    second = handout(lab, answers, first.result["requestState"])
    assert asked(second) == {"folder": "elicitation/create"}
    schema = second.result["inputRequests"]["folder"]["params"]["requestedSchema"]
    assert schema["properties"]["folder"]["enum"] == ["file:///lab/shared", "file:///home/ana"]
    done = handout(lab, {"folder": accept(folder="file:///home/ana")}, second.result["requestState"])
    assert text_of(done).endswith(f"It would be written to file:///home/ana/{NOTE}-handout.md.")


def test_an_answer_outside_the_forms_enum_is_asked_again(lab):
    answers = {"reader": accept(name="Ana"), "summary": sampled("Short."),
               "roots": roots("file:///a", "file:///b")}
    second = handout(lab, answers, handout(lab).result["requestState"])
    third = handout(lab, {"folder": accept(folder="file:///c")}, second.result["requestState"])
    assert asked(third) == {"folder": "elicitation/create"}


@pytest.mark.parametrize(("declared", "expected"), [
    ({"sampling": {}}, {"summary": "sampling/createMessage"}),
    ({"roots": {}, "elicitation": {"url": {}}}, {"roots": "roots/list"}),
    ({"elicitation": {"form": {}}}, {"reader": "elicitation/create"}),
])
def test_only_what_the_client_declared_is_asked(lab, declared, expected):
    assert asked(handout(lab, meta=can(**declared))) == expected


def test_a_client_that_can_answer_nothing_gets_the_handout_at_once_without_the_answers(lab):
    text = text_of(handout(lab, meta=can()))
    assert text == (f"Handout on '{TITLE}' for any reader: Question: does N2 spindle density (spindles per minute) "
                    "predict overnight gain on the word-pair task? (the note's first sentence: no model was asked) "
                    "It would not be written anywhere: the client shared no file:// root.")


def test_an_answer_of_the_wrong_kind_or_without_a_required_field_counts_as_missing(lab):
    state = handout(lab).result["requestState"]
    wrong = handout(lab, {"reader": sampled("Ana"), "summary": accept(text="x"), "roots": roots("file:///r")}, state)
    assert asked(wrong) == {"reader": "elicitation/create", "summary": "sampling/createMessage"}
    empty = handout(lab, {"reader": accept(nickname="Ana")}, wrong.result["requestState"])
    assert asked(empty) == {"reader": "elicitation/create", "summary": "sampling/createMessage"}


def test_a_declined_question_is_an_answer_and_unknown_keys_are_ignored(lab):
    answers = {"reader": {"action": "decline"}, "summary": sampled("Short."), "roots": roots("file:///r"),
               "not-asked": accept(name="Eve")}
    text = text_of(handout(lab, answers, handout(lab).result["requestState"]))
    assert text.startswith(f"Handout on '{TITLE}' for any reader: Short.") and "Eve" not in text


def test_a_tampered_request_state_is_refused_before_the_tool_runs(lab):
    state = handout(lab).result["requestState"]
    reply = handout(lab, {"reader": accept(name="Ana")}, state + "-TAMPERED")
    assert reply.status == 400 and reply.code == -32602
    assert reply.error["data"] == {"reason": "invalid_request_state"}


def test_a_request_state_cannot_be_moved_to_another_note(lab):
    state = handout(lab).result["requestState"]
    reply = call(lab, "prepare_handout", {"note_id": "welcome"}, answers={"reader": accept(name="Ana")}, state=state)
    assert reply.code == -32602


# ---- the suite's fixture names over the same rounds ------------------------------------------------------------


def test_the_elicitation_fixture_takes_an_answer_with_or_without_the_state_and_asks_again_without_one(lab):
    first = call(lab, "test_input_required_result_elicitation")
    assert asked(first) == {"user_name": "elicitation/create"}
    assert text_of(call(lab, "test_input_required_result_elicitation", answers={"user_name": accept(name="Alice")},
                        state=first.result["requestState"])) == "Hello, Alice!"
    extra = {"user_name": accept(name="Alice"), "unknown_extra_key": accept(foo="bar")}
    assert text_of(call(lab, "test_input_required_result_elicitation", answers=extra)) == "Hello, Alice!"
    wrong_key = call(lab, "test_input_required_result_elicitation", answers={"wrong_key": accept(data="wrong")})
    assert asked(wrong_key) == {"user_name": "elicitation/create"}


def test_an_input_response_that_is_no_response_at_all_is_32602(lab):
    reply = call(lab, "test_input_required_result_elicitation", answers={"user_name": 12345})
    assert reply.code == -32602


def test_the_multi_round_fixture_asks_its_second_question_with_the_first_answer_in_the_state(lab):
    first = call(lab, "test_input_required_result_multi_round")
    assert asked(first) == {"step1": "elicitation/create"}
    second = call(lab, "test_input_required_result_multi_round", answers={"step1": accept(name="Alice")},
                  state=first.result["requestState"])
    assert asked(second) == {"step2": "elicitation/create"}
    assert second.result["inputRequests"]["step2"]["params"]["message"] == "Step 2: What is your favorite color, Alice?"
    done = call(lab, "test_input_required_result_multi_round", answers={"step2": accept(color="blue")},
                state=second.result["requestState"])
    assert text_of(done) == "Alice's favorite color: blue."


def test_the_request_state_fixture_says_state_ok_only_when_the_state_came_back(lab):
    first = call(lab, "test_input_required_result_request_state")
    with_state = call(lab, "test_input_required_result_request_state", answers={"confirm": accept(ok=True)},
                      state=first.result["requestState"])
    assert text_of(with_state) == "state-ok: the requestState came back intact; confirmed."
    without = call(lab, "test_input_required_result_request_state", answers={"confirm": accept(ok=True)})
    assert text_of(without) == "no requestState came back; confirmed."


@pytest.mark.parametrize("name", ["test_input_required_result_multiple_inputs",
                                  "test_input_required_result_capabilities"])
def test_the_several_questions_fixtures_are_the_handout_on_the_first_note(lab, name):
    assert asked(call(lab, name)) == {"reader": "elicitation/create", "summary": "sampling/createMessage",
                                      "roots": "roots/list"}
    assert asked(call(lab, name, meta=can(sampling={}))) == {"summary": "sampling/createMessage"}
    answers = {"reader": accept(name="Alice"), "summary": sampled("Hello there!"), "roots": roots("file:///test/root")}
    text = text_of(call(lab, name, answers=answers, state=call(lab, name).result["requestState"]))
    assert text == ("Handout on 'Actigraphy pipeline notes' for Alice: Hello there! "
                    "It would be written to file:///test/root/actigraphy-pipeline-handout.md.")


def test_the_sampling_and_roots_fixtures_ask_summarize_notes_and_plan_exports_questions(lab):
    first = call(lab, "test_input_required_result_sampling")
    [(key, method)] = asked(first).items()
    assert key == "labserver.conformance:ask_first_note_summary" and method == "sampling/createMessage"
    done = call(lab, "test_input_required_result_sampling", answers={key: sampled("Paris.")},
                state=first.result["requestState"])
    assert text_of(done) == "Summary: Paris."
    first = call(lab, "test_input_required_result_list_roots")
    [(key, method)] = asked(first).items()
    assert key == "labserver.input_tools:ask_roots" and method == "roots/list"
    done = call(lab, "test_input_required_result_list_roots", answers={key: roots("file:///test/root")},
                state=first.result["requestState"])
    assert text_of(done) == ("actigraphy-pipeline would be written to file:///test/root/actigraphy-pipeline.md "
                             "(usable roots: 1).")


def test_prompts_get_asks_in_a_round_too(lab):
    params = {"name": "test_input_required_result_prompt"}
    first = lab.request("prompts/get", params, meta=can(**EVERYTHING))
    assert asked(first) == {"user_context": "elicitation/create"}
    done = lab.request("prompts/get", {**params, "inputResponses": {"user_context": accept(context="test context")},
                                       "requestState": first.result["requestState"]}, meta=can(**EVERYTHING))
    assert done.result["resultType"] == "complete"
    assert done.result["messages"] == [
        {"role": "user", "content": {"type": "text", "text": "Answer with this context in mind: test context."}}]


@pytest.mark.parametrize("method", ["tools/list", "prompts/list"])
def test_a_list_never_answers_input_required(lab, method):
    assert lab.request(method, {}, meta=can(**EVERYTHING)).result["resultType"] == "complete"


# ---- tasks: two questions at once, answered one at a time; an MRTR round before the task --------------------------


def poll_until(wire, task_id, *statuses, limit_s=30.0):
    ends = time.monotonic() + limit_s
    while time.monotonic() < ends:
        task = tasks.get(wire, task_id).result
        if task["status"] in statuses:
            return task
        time.sleep(0.05)
    raise AssertionError(f"task {task_id} never reached {statuses}; last seen {task}")


def start(wire, name, arguments):
    reply = call(wire, name, arguments, meta=tasks.declare({"elicitation": {}}))
    assert reply.result["resultType"] == "task", reply.text
    return reply.result["taskId"]


@pytest.mark.parametrize(("name", "arguments", "keys", "answers", "ending"), [
    ("review_epochs", {"night": "P07", "pause_ms": 0}, ["epoch-7", "epoch-14"],
     [accept(stage="REM"), accept(stage="W")],
     "Night P07 reviewed: 20 epochs; epoch 7 REM (your answer); epoch 14 W (your answer)."),
    ("multi_input", {}, ["name", "confirm"],
     [accept(name="partial-1", confirm=True), accept(name="partial-2", confirm=True)],
     "Record for partial-1: confirmed; nothing was kept."),
])
def test_a_task_holds_two_questions_and_drops_each_from_input_requests_once_answered(lab, name, arguments, keys,
                                                                                     answers, ending):
    task_id = start(lab, name, arguments)
    both = poll_until(lab, task_id, "input_required")
    assert list(both["inputRequests"]) == keys
    assert tasks.update(lab, task_id, {keys[0]: answers[0]}).result["resultType"] == "complete"
    after = tasks.get(lab, task_id).result  # at once: the answered key is gone, the other still outstanding
    assert after["status"] == "input_required" and list(after["inputRequests"]) == [keys[1]]
    assert after["lastUpdatedAt"] >= both["lastUpdatedAt"]
    tasks.update(lab, task_id, {keys[0]: answers[1], keys[1]: answers[1]})  # the first key again: ignored
    done = poll_until(lab, task_id, "completed", "failed", "cancelled")
    assert done["status"] == "completed", done
    assert done["result"]["content"][0]["text"].startswith(ending)


def test_review_epochs_runs_only_as_a_task(lab):
    reply = call(lab, "review_epochs", {"night": "P07"})
    assert reply.code == -32021


@pytest.mark.parametrize("name", ["sign_off_night", "test_tool_with_task"])
def test_a_call_asks_in_an_mrtr_round_and_becomes_a_task_on_the_retry(lab, name):
    arguments = {"night": "P07", "epochs": 3, "pause_ms": 0} if name == "sign_off_night" else {}
    meta = tasks.declare({"elicitation": {}})
    first = call(lab, name, arguments, meta=meta)
    assert asked(first) == {"signer": "elicitation/create"} and "taskId" not in first.result
    reply = call(lab, name, arguments, answers={"signer": accept(name="Alice")}, state=first.result["requestState"],
                 meta=meta)
    assert reply.result["resultType"] == "task", reply.text
    assert "requestState" not in reply.result and "inputRequests" not in reply.result
    done = poll_until(lab, reply.result["taskId"], "completed", "failed", "cancelled")
    assert done["status"] == "completed" and done["result"]["content"][0]["text"].endswith(" Signed off by Alice.")


def test_sign_off_night_without_the_extension_asks_the_same_round_then_answers_in_place(lab):
    arguments = {"night": "P08", "epochs": 2, "pause_ms": 0}
    first = call(lab, "sign_off_night", arguments, meta=can(elicitation={}))
    assert asked(first) == {"signer": "elicitation/create"}
    done = call(lab, "sign_off_night", arguments, answers={"signer": accept(name="Bo")},
                state=first.result["requestState"], meta=can(elicitation={}))
    assert "taskId" not in done.result
    assert text_of(done) == "Night P08: 2 epochs scored. W 1, N1 1. Signed off by Bo."


def test_sign_off_night_with_nobody_to_ask_becomes_a_task_at_once_unsigned(lab):
    reply = call(lab, "sign_off_night", {"night": "P07", "epochs": 1, "pause_ms": 0}, meta=tasks.declare())
    assert reply.result["resultType"] == "task", reply.text
    done = poll_until(lab, reply.result["taskId"], "completed", "failed", "cancelled")
    assert done["result"]["content"][0]["text"] == ("Night P07: 1 epoch scored. W 1. "
                                                    "Not signed off: nobody was asked who signs.")
