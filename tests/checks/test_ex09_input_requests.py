"""Exercise 09, Task 1: answers to sampling, roots and URL questions; right ones pass, typical slips are named."""

import pytest

import checks


def stub(*args):
    raise NotImplementedError("your code here")


def answer_input_request(question, summary, folder):
    if question["method"] == "sampling/createMessage":
        return {"role": "assistant", "content": {"type": "text", "text": summary}, "model": "by-hand"}
    if question["method"] == "roots/list":
        return {"roots": [{"uri": folder}]}
    return {"action": "accept"}


def written_differently(question, summary, folder):
    """Same answers, built another way: extra optional fields, a name for the root."""
    answers = {
        "sampling/createMessage": dict(model="me", role="assistant", stopReason="endTurn",
                                       content=dict(type="text", text=summary)),
        "roots/list": dict(roots=[dict(name="Exports", uri=folder)]),
        "elicitation/create": dict(action="accept"),
    }
    return answers[question["method"]]


def changed(kind, answer):
    """The right answers, except for one kind of question."""
    def wrong(question, summary, folder):
        if question["method"] == kind:
            return answer(summary, folder)
        return answer_input_request(question, summary, folder)
    return wrong


def test_right_answers_pass(verdict, lab):
    assert verdict(checks.check_input_answers, answer_input_request, lab).startswith("✓ You played the model")


def test_answers_written_differently_pass(verdict, lab):
    assert verdict(checks.check_input_answers, written_differently, lab).startswith("✓")


def test_stub_is_not_done(verdict, lab):
    assert verdict(checks.check_input_answers, stub, lab).startswith("not done yet")


def test_a_sampling_answer_without_a_model_is_named_with_the_servers_minus_32602(verdict, lab):
    wrong = changed("sampling/createMessage",
                    lambda summary, folder: {"role": "assistant", "content": {"type": "text", "text": summary}})
    out = verdict(checks.check_input_answers, wrong, lab)
    assert out.startswith("✗") and "has no model" in out and "error -32602" in out


def test_a_sampling_answer_with_a_null_model_is_named(verdict, lab):
    # A blind learner run: model None was told to put the summary in the text of the content block.
    wrong = changed("sampling/createMessage", lambda summary, folder: {
        "role": "assistant", "content": {"type": "text", "text": summary}, "model": None})
    out = verdict(checks.check_input_answers, wrong, lab)
    assert out.startswith("✗") and "has model null" in out and "model is a string" in out, out


def test_a_sampling_answer_with_an_empty_model_name_passes(verdict, lab):
    # The schema asks for a string and nothing more: "" names no model, but it is not the learner's mistake to judge.
    right = changed("sampling/createMessage", lambda summary, folder: {
        "role": "assistant", "content": {"type": "text", "text": summary}, "model": ""})
    assert verdict(checks.check_input_answers, right, lab).startswith("✓")


def test_a_root_with_path_for_uri_is_named(verdict, lab):
    # A blind learner run: {"path": folder} was told to keep the folder's scheme.
    wrong = changed("roots/list", lambda summary, folder: {"roots": [{"path": folder}]})
    out = verdict(checks.check_input_answers, wrong, lab)
    assert out.startswith("✗") and "has no uri" in out and "no other key carries the folder" in out, out


def test_a_sampling_answer_as_the_user_is_caught_although_the_server_accepts_it(verdict, lab):
    wrong = changed("sampling/createMessage", lambda summary, folder: {
        "role": "user", "content": {"type": "text", "text": summary}, "model": "m"})
    out = verdict(checks.check_input_answers, wrong, lab)
    assert "role 'user'" in out and "The server accepted it" in out


def test_a_bare_string_as_content_is_named(verdict, lab):
    wrong = changed("sampling/createMessage",
                    lambda summary, folder: {"role": "assistant", "content": summary, "model": "m"})
    assert "not a content block" in verdict(checks.check_input_answers, wrong, lab)


def test_a_bare_list_of_roots_is_named(verdict, lab):
    out = verdict(checks.check_input_answers, changed("roots/list", lambda summary, folder: [{"uri": folder}]), lab)
    assert "return the answer as a dict" in out and "{\"roots\": [...]}" in out


def test_a_root_without_its_scheme_is_named_with_the_servers_minus_32602(verdict, lab):
    wrong = changed("roots/list", lambda summary, folder: {"roots": [{"uri": folder.removeprefix("file://")}]})
    out = verdict(checks.check_input_answers, wrong, lab)
    assert "must be a file:// URI" in out and "error -32602" in out


def test_a_root_without_its_trailing_slash_is_named_as_such(verdict, lab):
    # The server joins the root and the file name, so the slash matters; "no more and no others" would mislead.
    wrong = changed("roots/list", lambda summary, folder: {"roots": [{"uri": folder.rstrip("/")}]})
    out = verdict(checks.check_input_answers, wrong, lab)
    assert out.startswith("✗") and "trailing slash" in out and "no more and no others" not in out, out


def test_an_extra_root_after_the_opened_folder_is_named(verdict, lab):
    wrong = changed("roots/list", lambda summary, folder: {"roots": [{"uri": folder, "name": "exports"},
                                                                     {"uri": "file:///home/user/", "name": "home"}]})
    out = verdict(checks.check_input_answers, wrong, lab)
    assert out.startswith("✗") and "file:///home/user/" in out and "no more and no others" in out, out


def test_a_url_answer_with_content_is_named(verdict, lab):
    wrong = changed("elicitation/create", lambda summary, folder: {"action": "accept", "content": {"ok": True}})
    out = verdict(checks.check_input_answers, wrong, lab)
    assert "Your accept carries content" in out and "action alone" in out


def test_a_declined_url_question_is_named(verdict, lab):
    out = verdict(checks.check_input_answers, changed("elicitation/create", lambda summary, folder: {"action": "decline"}), lab)
    assert "action 'decline'" in out


# --- the shapes the 2026-07-28 schema allows in two forms, and what is neither ---------------------

def sampled(content):
    return changed("sampling/createMessage", lambda summary, folder: {"role": "assistant", "model": "m",
                                                                      "content": content(summary)})


SAMPLING_RIGHT = [
    # CreateMessageResult.content is a block or an array of blocks; the lab reads both (SDK 2.3.0 alone takes one).
    pytest.param(sampled(lambda summary: [{"type": "text", "text": summary}]), id="content-as-an-array-of-one-block"),
    pytest.param(sampled(lambda summary: [{"type": "text", "text": summary, "annotations": {"audience": ["user"]}}]),
                 id="array-with-an-annotated-block"),
]
SAMPLING_WRONG = [
    pytest.param(sampled(lambda summary: [summary]), ("Your content array holds", "not a content block",
                                                      "or an array of blocks"), id="array-of-plain-strings"),
    pytest.param(sampled(lambda summary: {"text": summary}), ("not a content block", "type"), id="block-without-type"),
    pytest.param(sampled(lambda summary: []), ("has no text block",), id="empty-array"),
    pytest.param(sampled(lambda summary: [{"type": "image", "data": "aGk=", "mimeType": "image/png"}]),
                 ("has no text block",), id="array-without-text"),
    pytest.param(sampled(lambda summary: {"type": "text", "text": summary.encode("ascii", "replace").decode()}),
                 ("did not finish with your summary",), id="non-ascii-text-replaced"),
]


@pytest.mark.parametrize("work", SAMPLING_RIGHT)
def test_sampling_answers_in_either_schema_form_pass(verdict, lab, work):
    assert verdict(checks.check_input_answers, work, lab).startswith("✓ You played the model")


@pytest.mark.parametrize("work, phrases", SAMPLING_WRONG)
def test_sampling_answers_that_are_not_blocks_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_input_answers, work, lab)
    assert out.startswith("✗") and all(phrase in out for phrase in phrases), out
    assert "spec" not in out.lower()  # a shape the schema allows is never called forbidden
