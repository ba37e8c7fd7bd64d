"""Exercise 05 checks: a right answer passes, typical wrong answers fail with the right explanation."""

import pytest

import checks


def stub(*args):
    raise NotImplementedError("your code here")


# --- task 1: search, then read the best hit ------------------------------------------------------

def tags_of_best(call_tool, topic, *, limit=1, note_argument="note_id", check_empty=True):
    arguments = {"query": topic} if limit is None else {"query": topic, "limit": limit}
    hits = call_tool("search_notes", arguments)["result"]["structuredContent"]["hits"]
    if check_empty and not hits:
        return None
    note = call_tool("read_note", {note_argument: hits[0]["id"]})
    return note["result"]["structuredContent"]["tags"]


def test_search_then_read_right(verdict, lab):
    out = verdict(checks.check_search_then_read, tags_of_best, lab)
    assert out.startswith("✓ best_note_tags asked search_notes for one hit") and "'zebrafish' → None" in out


def test_search_then_read_with_a_string_limit(verdict, lab):
    out = verdict(checks.check_search_then_read, lambda call, topic: tags_of_best(call, topic, limit="1"), lab)
    assert out.startswith("✗") and "'1' is not of type 'integer'" in out and "pydantic converts it" in out


def test_search_then_read_asking_for_the_default_five(verdict, lab):
    out = verdict(checks.check_search_then_read, lambda call, topic: tags_of_best(call, topic, limit=None), lab)
    assert out.startswith("✗") and "no limit (the default is 5)" in out


def test_search_then_read_with_a_wrong_argument_name(verdict, lab):
    out = verdict(checks.check_search_then_read, lambda call, topic: tags_of_best(call, topic, note_argument="id"), lab)
    assert out.startswith("✗") and "'note_id' is a required property" in out and "tool error result" in out


def test_search_then_read_without_handling_no_hits(verdict, lab):
    out = verdict(checks.check_search_then_read, lambda call, topic: tags_of_best(call, topic, check_empty=False), lab)
    assert out.startswith("✗ For the topic 'zebrafish'") and "IndexError" in out and "return None" in out


# --- task 2: a result, a tool error or a protocol error ----------------------------------------------

def classify(message):
    if "error" in message:
        return ("protocol error", message["error"]["code"])
    result = message["result"]
    if result.get("isError", False):
        return ("tool error", "\n".join(block.get("text", "") for block in result.get("content", [])))
    return ("result", result.get("structuredContent"))


def classify_by_error_member_only(message):
    if "error" in message:
        return ("protocol error", message["error"]["code"])
    return ("result", message["result"].get("structuredContent"))


def classify_with_brackets(message):
    if message["result"]["isError"]:
        return ("tool error", message["result"]["content"][0]["text"])
    return ("result", message["result"]["structuredContent"])


def classify_with_text_for_results(message):
    kind, detail = classify(message)
    return (kind, message["result"]["content"][0]["text"]) if kind == "result" else (kind, detail)


def test_reply_kinds_right(verdict, lab):
    assert verdict(checks.check_reply_kinds, classify, lab).startswith("✓ classify sorted all 12 replies")


def test_reply_kinds_missing_is_error(verdict, lab):
    out = verdict(checks.check_reply_kinds, classify_by_error_member_only, lab)
    assert out.startswith("✗ The check sent sync_notes") and "this is a 'tool error'" in out and "isError" in out


def test_reply_kinds_crashing_on_an_error_reply(verdict, lab):
    out = verdict(checks.check_reply_kinds, classify_with_brackets, lab)
    assert "classify raised KeyError: 'result'" in out and '"code":-32602' in out


def test_reply_kinds_text_instead_of_structured_content(verdict, lab):
    out = verdict(checks.check_reply_kinds, classify_with_text_for_results, lab)
    assert out.startswith("✗") and "found the kind ('result')" in out and "structuredContent" in out


# --- unfinished work ------------------------------------------------------------------------------------

@pytest.mark.parametrize("check, answer", [
    (checks.check_search_then_read, stub), (checks.check_search_then_read, None),
    (checks.check_reply_kinds, stub),
], ids=["search-stub", "search-none", "classify-stub"])
def test_an_unfinished_task_is_not_done_yet(verdict, lab, check, answer):
    assert verdict(check, answer, lab).startswith("not done yet:")
