"""Exercise 05's checks (search then read; result, tool error or protocol error): right answers pass, wrong ones name their mistake."""

import json
import unicodedata
from urllib.parse import quote

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

def classify_right(message):
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
    kind, detail = classify_right(message)
    return (kind, message["result"]["content"][0]["text"]) if kind == "result" else (kind, detail)


def test_reply_kinds_right(verdict, lab):
    assert verdict(checks.check_reply_kinds, classify_right, lab).startswith("✓ classify sorted all 17 replies")


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


def fails_naming(out, phrases):
    return out.startswith("✗") and all(phrase in out for phrase in phrases)


# --- 05 task 1 · search, then read the best hit ---------------------------------------------------------

def best_note_tags(*, query_key="query", limit=1, read="read_note", argument="note_id", empty_check=True,
                   from_hit=False, calls_after=0):
    def work(call_tool, topic):
        search = {query_key: topic} if limit is None else {query_key: topic, "limit": limit}
        hits = call_tool("search_notes", search)["result"]["structuredContent"]["hits"]
        if empty_check and not hits:
            return None
        if from_hit:
            return hits[0].get("tags")
        for _ in range(calls_after):
            call_tool("search_notes", search)
        note = call_tool(read, {argument: hits[0]["id"]})
        return note["result"]["structuredContent"]["tags"]
    return work


def best_note_tags_written_differently(call_tool, topic):
    found = call_tool("search_notes", {"limit": 1, "query": topic})["result"]["structuredContent"]
    for hit in found["hits"]:
        return list(call_tool("read_note", {"note_id": hit["id"]})["result"]["structuredContent"]["tags"])
    return None


def read_even_without_a_hit(call_tool, topic):
    hits = call_tool("search_notes", {"query": topic, "limit": 1})["result"]["structuredContent"]["hits"]
    note_id = hits[0]["id"] if hits else ""
    note = call_tool("read_note", {"note_id": note_id})["result"]
    return None if note.get("isError") else note["structuredContent"]["tags"]


def best_note_tags_by_comprehension(call_tool, topic):
    """Another style: the ids of the hits in a list, the reply read with .get, the topic sent as it came."""
    reply = call_tool("search_notes", dict(query=topic, limit=1))
    ids = [hit["id"] for hit in reply.get("result", {}).get("structuredContent", {}).get("hits", [])]
    return call_tool("read_note", dict(note_id=ids[0]))["result"]["structuredContent"]["tags"] if ids else None


def tags_from_the_text_blocks(call_tool, topic):
    """The hits and the tags parsed from the JSON text copy (found by a blind learner): works on the lab's SDK only."""
    found = call_tool("search_notes", {"query": topic, "limit": 1})
    hits = json.loads(found["result"]["content"][0]["text"])["hits"]
    if not hits:
        return None
    return json.loads(call_tool("read_note", {"note_id": hits[0]["id"]})["result"]["content"][0]["text"])["tags"]


def searched_twice(call_tool, topic):
    """The same search twice, then read_note (found by a blind learner)."""
    call_tool("search_notes", {"query": topic, "limit": 1})
    return best_note_tags()(call_tool, topic)


def best_note_tags_with_a_named_reply(call_tool, topic):
    """Right, written differently: the result member taken once, the hit unpacked, the tags copied into a list."""
    result = call_tool("search_notes", {"query": topic, "limit": 1})["result"]
    if not result["structuredContent"]["hits"]:
        return None
    [hit] = result["structuredContent"]["hits"]
    return [*call_tool("read_note", {"note_id": hit["id"]})["result"]["structuredContent"]["tags"]]


SEARCH_RIGHT = [
    pytest.param(best_note_tags_with_a_named_reply, id="named-reply-unpacked-hit"),
    pytest.param(best_note_tags(), id="solution"),
    pytest.param(best_note_tags_written_differently, id="loop-over-hits"),
    pytest.param(best_note_tags_by_comprehension, id="ids-by-comprehension"),
]
SEARCH_WRONG = [
    pytest.param(best_note_tags(limit=None), ("no limit (the default is 5)",), id="no-limit"),
    pytest.param(best_note_tags(limit="1"), ("'1' is not of type 'integer'",), id="limit-as-text"),
    pytest.param(best_note_tags(limit=0), ("less than the minimum",), id="limit-zero"),
    # A blind learner run: limit True was told to write 1, not "1".
    pytest.param(best_note_tags(limit=True), ("True is not of type 'integer'", "a boolean (JSON true)"),
                 id="limit-true"),
    pytest.param(best_note_tags(query_key="q"), ("'query' is a required property",), id="query-misnamed"),
    pytest.param(best_note_tags(argument="id"), ("'note_id' is a required property",), id="note-id-misnamed"),
    pytest.param(best_note_tags(read="get_note"), ("a tool named 'get_note'",), id="tool-misnamed"),
    pytest.param(best_note_tags(empty_check=False), ("'zebrafish'", "IndexError", "return None"), id="no-hits-unhandled"),
    pytest.param(best_note_tags(from_hit=True), ("read the hit with read_note",), id="tags-from-the-hit"),
    pytest.param(best_note_tags(calls_after=5), ("called tools 6 times",), id="too-many-calls"),
    pytest.param(lambda call_tool, topic: (lambda tags: tags if tags is None else tuple(tags))(
        best_note_tags()(call_tool, topic)), ("a tuple of the right tags, not a list",), id="tags-as-tuple"),
    pytest.param(lambda call_tool, topic: best_note_tags()(call_tool, topic.split()[0]),
                 ("you searched for 'spindle', not for the topic",), id="first-word-of-the-topic"),
    # Issue 31: a second call with an empty id was told to read the error text, not to make no second call.
    pytest.param(read_even_without_a_hit, ("'zebrafish'", "the search found nothing, yet your function then called "
                                           "read_note with {\"note_id\":\"\"}", "make no second call"),
                 id="reads-an-empty-id-when-nothing-matches"),
    pytest.param(lambda call_tool, topic: best_note_tags()(call_tool, quote(topic)),
                 ("you searched for 'spindle%20density'", "Pass the topic as the query, unchanged"),
                 id="topic-url-encoded"),
    pytest.param(lambda call_tool, topic: best_note_tags()(
        call_tool, unicodedata.normalize("NFKD", topic).encode("ascii", "ignore").decode()),
                 ("For the topic 'Tomás', you searched for 'Tomas'", "letters such as á"), id="topic-folded-to-ascii"),
    # Blind learner runs: these queries found the same note, and passed although the task says the topic, unchanged.
    pytest.param(lambda call_tool, topic: best_note_tags()(call_tool, topic.lower()),
                 ("For the topic 'Tomás', you searched for 'tomás', not for the topic 'Tomás' as it is",
                  "the same note's tags came back", "case"), id="topic-lowercased"),
    pytest.param(lambda call_tool, topic: best_note_tags()(call_tool, json.dumps(topic)),
                 ("you searched for '\"actigraphy\"'", "Pass the topic as the query, unchanged"), id="topic-json-quoted"),
    pytest.param(lambda call_tool, topic: best_note_tags()(call_tool, topic + " "),
                 ("you searched for 'actigraphy '", "unchanged"), id="topic-with-a-trailing-space"),
    pytest.param(tags_from_the_text_blocks, ("For the topic 'actigraphy'", "raised JSONDecodeError",
                                             "a summary for people, not JSON", "from structuredContent"),
                 id="data-parsed-from-the-text-block"),
    pytest.param(searched_twice, ("called search_notes 2 times (with limit 1, then 1)", "One search is enough"),
                 id="searched-twice"),
    pytest.param(best_note_tags(limit=[1]), ("[1] is not of type 'integer'", "no quotes, list or fraction"),
                 id="limit-in-a-list"),
]


@pytest.mark.parametrize("work", SEARCH_RIGHT)
def test_search_then_read_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_search_then_read, work, lab).startswith("✓")


@pytest.mark.parametrize("work, phrases", SEARCH_WRONG)
def test_search_then_read_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_search_then_read, work, lab)
    assert fails_naming(out, phrases), out


# --- 05 task 2 · result, tool error or protocol error ------------------------------------------------------

def classify(*, is_error_default=False, joiner="\n", detail_text=False, pair=tuple, get_error=True):
    def work(message):
        if (get_error and "error" in message) or (not get_error and message.get("result") is None):
            return pair(("protocol error", message["error"]["code"]))
        result = message["result"]
        if result.get("isError", is_error_default):
            return pair(("tool error", joiner.join(block.get("text", "") for block in result.get("content", []))))
        if detail_text:
            return pair(("result", result["content"][0]["text"]))
        return pair(("result", result.get("structuredContent")))
    return work


def classify_stripping_each_text(message):
    """Each block's text stripped before the join (found by a blind learner)."""
    kind, detail = classify()(message)
    if kind != "tool error":
        return (kind, detail)
    return (kind, "\n".join(block.get("text", "").strip() for block in message["result"]["content"]))


def classify_by_match(message):
    """Right, written differently: structural pattern matching on the reply's members."""
    match message:
        case {"error": {"code": code}}:
            return ("protocol error", code)
        case {"result": {"isError": True, "content": blocks}}:
            return ("tool error", "\n".join(block["text"] for block in blocks if block.get("type") == "text"))
        case {"result": result}:
            return ("result", result.get("structuredContent"))


CLASSIFY_RIGHT = [
    pytest.param(classify(), id="solution"),
    pytest.param(classify_by_match, id="pattern-matching"),
    pytest.param(classify(pair=list), id="a-list-pair"),
    pytest.param(classify(get_error=False), id="tested-through-result"),
]
CLASSIFY_WRONG = [
    pytest.param(classify(is_error_default=True), ("classify said 'tool error'", "leaves out isError"),
                 id="missing-isError-taken-as-true"),
    pytest.param(classify(joiner=" "), ("two blocks", "joined by newlines"), id="texts-joined-by-space"),
    pytest.param(classify_stripping_each_text, ("two blocks, the second ending with a newline",
                                                "found the kind ('tool error')", "strip() takes off whitespace"),
                 id="each-text-stripped"),
    pytest.param(classify(detail_text=True), ("structuredContent",), id="text-instead-of-structured"),
    pytest.param(lambda m: ("protocol error", m["error"]["code"]) if "error" in m else ("result", m["result"]["structuredContent"]),
                 ("raised KeyError: 'structuredContent'", "isError true"), id="tool-errors-forgotten"),
    pytest.param(lambda m: ("tool error", m["error"]["message"]) if "error" in m else classify()(m),
                 ("this is a 'protocol error'", "no tool ran"), id="protocol-error-taken-for-a-tool-error"),
    pytest.param(lambda m: ("result" if "result" in m else "protocol error",), ("return a pair",), id="one-tuple"),
    pytest.param(lambda m: classify()(m) if "error" not in m else ("protocol error", str(m["error"]["code"])),
                 ("expected -32", "an integer"), id="code-as-text"),
    pytest.param(lambda m: classify()(m) if "error" in m else (
        ("result", m["result"]["structuredContent"]) if "structuredContent" in m["result"]
        else ("tool error", "\n".join(block.get("text", "") for block in m["result"]["content"]))),
        ("night_report", "this is a 'result'", "structuredContent is optional"), id="sorted-by-structured-content"),
    pytest.param(lambda m: classify()(m) if "error" in m else (
        ("result", m["result"]["structuredContent"]) if "structuredContent" in m["result"]
        else ("tool error", "\n".join(block["text"] for block in m["result"]["content"]))),
        ("night_report", "raised KeyError: 'text'", "no structuredContent", "not every block", "Decide the kind by isError"),
        id="sorted-by-structured-content-reading-text-of-every-block"),
    pytest.param(lambda m: classify()(m) if "error" in m or m["result"].get("isError") else (
        "result", m["result"]["structuredContent"]),
        ("night_report", "raised KeyError: 'structuredContent'", "no outputSchema", ".get()"),
        id="structured-content-read-as-required"),
    pytest.param(lambda m: classify()(m) if "error" in m else (
        ("tool error", "\n".join(block.get("text", "") for block in m["result"]["content"]))
        if m["result"]["content"][0].get("text", "").startswith(("Error", "Unknown tool"))
        else ("result", m["result"].get("structuredContent"))),
        ("does not start with", "this is a 'tool error'", "wording"), id="sorted-by-error-text"),
    # A blind learner run: isError, or else a text that starts with "error", passed.
    pytest.param(lambda m: classify()(m) if "error" in m or m["result"].get("isError") else (
        ("tool error", "\n".join(block.get("text", "") for block in m["result"]["content"]))
        if m["result"]["content"][0].get("text", "").lower().startswith("error")
        else ("result", m["result"].get("structuredContent"))),
        ("\"Errors found: 0\"", "this is a 'result'", "never read from the words"), id="is-error-or-error-wording"),
    pytest.param(lambda m: classify()(m) if "error" in m or m["result"].get("isError") else (
        ("tool error", "\n".join(block.get("text", "") for block in m["result"]["content"]))
        if "error" in "".join(block.get("text", "") for block in m["result"]["content"]).lower()
        else ("result", m["result"].get("structuredContent"))),
        ("search_notes for 'error'", "this is a 'result'", "never read from the words"), id="error-word-anywhere"),
]


@pytest.mark.parametrize("work", CLASSIFY_RIGHT)
def test_reply_kinds_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_reply_kinds, work, lab).startswith("✓ classify sorted all 17 replies")


@pytest.mark.parametrize("work, phrases", CLASSIFY_WRONG)
def test_reply_kinds_wrong_answers_name_their_mistake(verdict, lab, work, phrases):
    out = verdict(checks.check_reply_kinds, work, lab)
    assert fails_naming(out, phrases), out


def test_a_long_detail_is_cut_the_same_way_on_both_sides(verdict, lab):
    out = verdict(checks.check_reply_kinds, classify(joiner=" | "), lab)
    detail_line = out.splitlines()[0]
    assert detail_line.count("characters in all") in (0, 2) and detail_line.count("'") % 2 == 0, out


# --- found by a second blind learner run: wrong answers that passed, messages that named the wrong fault --------

def extra_search_first(call_tool, topic):
    """Searches with limit 5 'to be sure', then with limit 1, and reads the hit."""
    call_tool("search_notes", {"query": topic, "limit": 5})
    return best_note_tags()(call_tool, topic)


def read_with_an_extra_argument(call_tool, topic):
    """read_note given an argument its schema does not name: JSON Schema allows it, the lab drops it."""
    hits = call_tool("search_notes", {"query": topic, "limit": 1})["result"]["structuredContent"]["hits"]
    if not hits:
        return None
    return call_tool("read_note", {"note_id": hits[0]["id"], "limit": 1})["result"]["structuredContent"]["tags"]


@pytest.mark.parametrize("work, phrases", [
    # Was told "you asked search_notes for limit 5": true of the first call, but the fault is the second search.
    pytest.param(extra_search_first, ("called search_notes 2 times (with limit 5, then 1)", "One search is enough"),
                 id="extra-search-named-as-such"),
    # Was told the arguments "do not fit its inputSchema", which a JSON Schema validator does not say.
    pytest.param(read_with_an_extra_argument, ("pass 'limit', which its inputSchema's properties do not name",
                                               "does not forbid an extra argument", "drops it without a word"),
                 id="extra-argument-named-as-such"),
])
def test_search_then_read_second_run_wrong_answers_fail(verdict, lab, work, phrases):
    out = verdict(checks.check_search_then_read, work, lab)
    assert fails_naming(out, phrases) and "do not fit its inputSchema" not in out, out


@pytest.mark.parametrize("work", [
    pytest.param(lambda call_tool, topic: (lambda hits: None if not hits else list(call_tool(
        "read_note", {"note_id": next(iter(hits))["id"]})["result"]["structuredContent"]["tags"]))(
        call_tool("search_notes", {"limit": 1, "query": topic}).get("result", {}).get("structuredContent", {})
        .get("hits", [])), id="get-chain-and-next"),
    pytest.param(lambda call_tool, topic: best_note_tags(limit=1.0)(call_tool, topic),
                 id="limit-1.0-an-integer-to-json-schema"),
])
def test_search_then_read_second_run_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_search_then_read, work, lab).startswith("✓"), work


def classify_parsing_the_text(message):
    """Wrong: with no structuredContent, parses the first text block as JSON and calls that the data."""
    kind, detail = classify()(message)
    if kind == "result" and detail is None:
        try:
            detail = json.loads(message["result"]["content"][0]["text"])
        except ValueError:
            pass
    return (kind, detail)


def classify_adding_newlines(message):
    """Wrong: a newline after every block's text, the last one included."""
    kind, detail = classify()(message)
    if kind == "tool error":
        detail = "".join(block["text"] + "\n" for block in message["result"]["content"] if block["type"] == "text")
    return (kind, detail)


@pytest.mark.parametrize("work, phrases", [
    pytest.param(classify_parsing_the_text, ("its data only as JSON in a text block", "expected None",
                                             "no structuredContent, so its detail is None"),
                 id="json-text-taken-for-structured-content"),
    # Was told that strip() takes off whitespace: this answer added some and stripped nothing.
    pytest.param(classify_adding_newlines, ("whitespace the blocks do not", "nothing added after the last"),
                 id="newline-added-after-each-block"),
])
def test_reply_kinds_second_run_wrong_answers_fail(verdict, lab, work, phrases):
    out = verdict(checks.check_reply_kinds, work, lab)
    assert fails_naming(out, phrases) and "strip() takes off" not in out, out


def test_a_kind_looked_up_by_request_id_fails_on_the_next_run(verdict, lab):
    """The ids are drawn for each run: a table of id -> kind learned on one run is wrong on the next."""
    table = {}

    def learn(message):
        answer = classify()(message)
        table[message["id"]] = answer[0]
        return answer
    assert verdict(checks.check_reply_kinds, learn, lab).startswith("✓")

    def by_id(message):
        return (table.get(message["id"], "result"), classify()(message)[1])
    out = verdict(checks.check_reply_kinds, by_id, lab)
    assert out.startswith("✗") and "classify said 'result'" in out, out


@pytest.mark.parametrize("work", [
    pytest.param(lambda m: (lambda r: ("tool error", "\n".join(b["text"] for b in r["content"] if b["type"] == "text"))
                            if r.get("isError") else ("result", r.get("structuredContent"))
                            if "structuredContent" in r or "content" in r
                            else ("protocol error", m["error"]["code"]))(m.get("result", {})),
                 id="result-read-first-with-get"),
    pytest.param(lambda m: ("protocol error", m["error"]["code"]) if "result" not in m else (
        ("tool error", "\n".join(b["text"] for b in m["result"]["content"] if b.get("type") == "text"))
        if m["result"].get("isError") is True
        else ("result", m["result"]["structuredContent"] if "structuredContent" in m["result"] else None)),
                 id="is-error-is-true-and-membership"),
])
def test_reply_kinds_second_run_right_answers_pass(verdict, lab, work):
    assert verdict(checks.check_reply_kinds, work, lab).startswith("✓ classify sorted all 17 replies"), work


# --- found by a third blind learner run: a query changed by strip() passed ------------------------------------------

def test_search_then_read_with_the_topic_stripped_fails(verdict, lab):
    out = verdict(checks.check_search_then_read, lambda call_tool, topic: best_note_tags()(call_tool, topic.strip()),
                  lab)
    assert fails_naming(out, ("For the topic '  hypnogram scoring\\n', you searched for 'hypnogram scoring'",
                              "the white space at its ends is gone", "the same note's tags came back",
                              "Pass the topic as the query, unchanged")), out


# --- found by a fourth blind learner run: an empty structuredContent and a missing isError guessed at ---------------

@pytest.mark.parametrize("work, phrases", [
    pytest.param(lambda m: classify()(m) if "error" in m or m["result"].get("isError")
                 else ("result", m["result"].get("structuredContent") or None),
                 ("an empty {}", "returned the detail None; expected {}", "An empty {} is false"),
                 id="empty-structured-content-taken-for-none"),
    pytest.param(lambda m: classify()(m) if "error" in m else classify(is_error_default=True)(m)
                 if not m["result"].get("structuredContent") else classify()(m),
                 ("leaves out isError and sends no structuredContent", "classify said 'tool error'",
                  "an absent isError means false"),
                 id="missing-is-error-guessed-from-structured-content"),
])
def test_reply_kinds_fourth_run_wrong_answers_fail(verdict, lab, work, phrases):
    out = verdict(checks.check_reply_kinds, work, lab)
    assert fails_naming(out, phrases), out


def test_search_then_read_with_a_whole_float_limit_passes(verdict, lab):
    # JSON Schema 2020-12 counts 1.0 as an integer (a number whose fraction is zero): the task allows it.
    out = verdict(checks.check_search_then_read, lambda call, topic: tags_of_best(call, topic, limit=1.0), lab)
    assert out.startswith("✓ best_note_tags asked search_notes for one hit"), out
